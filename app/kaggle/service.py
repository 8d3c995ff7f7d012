"""The official ``kaggle`` client's competition calls, mapped onto Podium's own services: every
permission, quota and deadline rule is the one Podium's API applies, nothing is decided here."""

import csv
import io
import re
import time
import uuid
import zipfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.auth.hosts import add_host, is_host, require_host
from app.auth.hosts import hosts as hosts_of
from app.competitions.lifecycle import publish
from app.competitions.phases import ranking_column
from app.competitions.service import get_competition_by_slug, list_competitions
from app.config import Settings
from app.datafiles import service as datafiles
from app.entry.gate import RulesNotAccepted, require_may_submit
from app.errors import BadRequest, Forbidden, NotFound, PayloadTooLarge, TooManyRequests
from app.jobs.queue import ScoringQueue
from app.kaggle import schemas as k
from app.kaggle.signing import sign, verify
from app.leaderboard.service import MAX_PAGE, BoardBlind, BoardHidden, leaderboard
from app.leaderboard.spreadsheet import safe_row
from app.models import Competition, DataFile, Submission, SubmissionStatus, Team, User
from app.models.competition import ARCHIVED
from app.storage import CHUNK, delete_blob, list_blobs, open_blob
from app.submissions import service as submissions
from app.submissions.quota import quota_for
from app.submissions.visibility import view
from app.teams.service import find_team, team_counts

UPLOAD_TTL = 3600
DOWNLOAD_TTL = 600
DEFAULT_PAGE_SIZE = 20
MAX_PAGE_SIZE = 500

T = TypeVar("T")


@dataclass(frozen=True)
class Context:
    settings: Settings
    base_url: str  # ends with "/"
    queue: ScoringQueue


def _page(items: Sequence[T], req: k.Paged) -> tuple[list[T], str]:
    """One page and the next page's token (an offset), from a page number or a token."""
    size = min(max(req.page_size or DEFAULT_PAGE_SIZE, 1), MAX_PAGE_SIZE)
    if req.page_token and req.page_token.isdigit():
        start = int(req.page_token)
    else:
        start = (max(req.page or 1, 1) - 1) * size
    end = start + size
    return list(items[start:end]), str(end) if end < len(items) else ""


def _score(value: float | None) -> str:
    return "" if value is None else repr(value)


# --- competitions ---------------------------------------------------------------------------


def list_competitions_call(
    session: Session, user: User, req: k.ListCompetitionsRequest, ctx: Context
) -> k.ListCompetitionsResponse:
    competitions = list_competitions(session, user)
    if req.search:
        needle = req.search.lower()
        competitions = [
            c
            for c in competitions
            if needle in c.slug.lower()
            or needle in c.title.lower()
            or needle in c.description.lower()
        ]
    page, next_token = _page(competitions, req)
    return k.ListCompetitionsResponse(
        competitions=[_competition(session, user, c, ctx) for c in page],
        next_page_token=next_token,
    )


def _competition(session: Session, user: User, c: Competition, ctx: Context) -> k.ApiCompetition:
    team = find_team(session, competition=c, user=user)
    rank = None
    if team is not None:
        try:
            board = leaderboard(
                session,
                competition=c,
                board="public",
                user=user,
                limit=1,
                phase_name=current_phase_name(c),
            )
        except (BoardBlind, BoardHidden):
            pass  # a rank would tell a blind (or hidden) board's order: none
        else:
            rank = board.own_row.rank if board.own_row is not None else None
    teams = team_counts(session, competition_ids=[c.id]).get(c.id, 0)
    host = session.get(User, c.created_by_id)
    # The current phase's rules: its quota and its ranking column.
    phase = c.current_phase
    ranking = ranking_column(c, phase)
    return k.ApiCompetition(
        id=c.id,
        ref=c.slug,
        title=c.title,
        url=f"{ctx.base_url}c/{c.slug}",
        description=c.description,
        category="Podium",
        deadline=c.deadline,
        team_count=teams or 0,
        user_has_entered=team is not None,
        user_rank=rank,
        merger_deadline=c.team_merge_deadline,
        enabled_date=c.start,
        max_daily_submissions=phase.daily_submission_limit
        if phase is not None
        else c.daily_submission_limit,
        max_team_size=c.max_team_size,
        evaluation_metric=ranking.metric.name if ranking.metric is not None else ranking.key,
        submissions_disabled=c.board_key is None or c.status == ARCHIVED,
        host_name=host.name if host else "",
        date_created=c.created_at,
    )


# --- data files -----------------------------------------------------------------------------


def list_data_files_call(
    session: Session, user: User, req: k.ListDataFilesRequest, ctx: Context
) -> k.ListDataFilesResponse:
    competition = get_competition_by_slug(session, req.competition_name, user)
    files = datafiles.list_files(session, competition=competition, user=user)
    page, next_token = _page(files, req)
    return k.ListDataFilesResponse(
        files=[
            k.ApiDataFile(
                ref=f.name,
                name=f.name,
                total_bytes=f.size_bytes,
                url=f"{ctx.base_url}api/v1/competitions/{competition.slug}/files/{f.name}",
                creation_date=f.created_at,
            )
            for f in page
        ],
        next_page_token=next_token,
    )


def download_data_file_call(
    session: Session, user: User, req: k.DownloadDataFileRequest, ctx: Context
) -> str:
    """A signed URL for one file; the client follows the redirect to it."""
    competition = get_competition_by_slug(session, req.competition_name, user)
    datafile = datafiles.get_file(session, competition=competition, user=user, name=req.file_name)
    token = sign(
        {"p": "file", "f": datafile.id, "all": not datafiles.is_released(datafile, _now())},
        secret_key=ctx.settings.secret_key,
        ttl_seconds=DOWNLOAD_TTL,
    )
    return f"{ctx.base_url}api/v1/kaggle/blobs/{token}/{datafile.name}"


def download_data_files_call(
    session: Session, user: User, req: k.CompetitionRequest, ctx: Context
) -> str:
    """A signed URL for every file as one zip (the client names it after the URL's suffix)."""
    competition = get_competition_by_slug(session, req.competition_name, user)
    if not datafiles.list_files(session, competition=competition, user=user):
        raise NotFound(f"'{competition.slug}' has no data files")
    # A host's bundle holds the hidden inputs too; a participant's never does.
    token = sign(
        {"p": "bundle", "c": competition.id, "all": is_host(session, competition, user)},
        secret_key=ctx.settings.secret_key,
        ttl_seconds=DOWNLOAD_TTL,
    )
    return f"{ctx.base_url}api/v1/kaggle/blobs/{token}/{competition.slug}.zip"


def signed_file(session: Session, token: str, settings: Settings) -> DataFile:
    payload = verify(token, secret_key=settings.secret_key, purpose="file")
    datafile = session.get(DataFile, int(payload["f"]))
    # A link made for a public file does not open it once a host has hidden it (or held it back
    # for a phase that has not started).
    if (
        datafile is not None
        and not datafiles.is_released(datafile, _now())
        and not payload.get("all")
    ):
        datafile = None
    if datafile is None:
        raise NotFound("this file no longer exists")
    return datafile


def is_bundle(token: str, settings: Settings) -> bool:
    try:
        verify(token, secret_key=settings.secret_key, purpose="bundle")
    except NotFound:
        return False
    return True


def signed_bundle(session: Session, token: str, settings: Settings) -> list[DataFile]:
    """Every file a signed bundle URL stands for."""
    payload = verify(token, secret_key=settings.secret_key, purpose="bundle")
    query = select(DataFile).where(DataFile.competition_id == int(payload["c"]))
    files = list(session.scalars(query.order_by(DataFile.name)))
    if payload.get("all"):
        return files
    # A participant's bundle: the files released now, none hidden or held for a later phase.
    now = _now()
    return [f for f in files if datafiles.is_released(f, now)]


def _now() -> datetime:
    return datetime.now(UTC)


class _Sink:
    """A write-only, unseekable file for ``zipfile``: what is written is taken out in pieces."""

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def write(self, data: bytes) -> int:
        self._parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def close(self) -> None:
        pass

    def take(self) -> bytes:
        out = b"".join(self._parts)
        self._parts.clear()
        return out


_STORED = (".zip", ".gz", ".bz2", ".xz", ".zst", ".parquet", ".7z", ".png", ".jpg", ".jpeg")


def zip_stream(files: list[DataFile], settings: Settings) -> Iterator[bytes]:
    """The files as one zip, produced while it is sent: nothing is staged on disk or in memory."""
    # Read now: the chunks are made after the request's session has closed.
    return _zip_chunks([(f.name, f.storage_key, f.created_at) for f in files], settings)


def _zip_chunks(entries: list[tuple[str, str, datetime]], settings: Settings) -> Iterator[bytes]:
    sink = _Sink()
    with zipfile.ZipFile(sink, "w", allowZip64=True) as archive:
        for name, key, created_at in entries:
            entry = zipfile.ZipInfo(name, date_time=created_at.astimezone(UTC).timetuple()[:6])
            # Compressing an already compressed file again gains nothing.
            stored = name.lower().endswith(_STORED)
            entry.compress_type = zipfile.ZIP_STORED if stored else zipfile.ZIP_DEFLATED
            with open_blob(key, settings=settings) as source:
                with archive.open(entry, "w", force_zip64=True) as target:
                    while chunk := source.read(CHUNK):
                        target.write(chunk)
                        if out := sink.take():
                            yield out
            if out := sink.take():
                yield out
    if out := sink.take():
        yield out


# --- submitting -----------------------------------------------------------------------------


MAX_PENDING_UPLOADS = 3


def _staged_key(user_id: int, nonce: str) -> str:
    return f"kaggle-uploads/{user_id}/{nonce}"


def make_room(prefix: str, budget: int, settings: Settings, refusal: str) -> None:
    """Forget the expired staged files under ``prefix`` (a user's); refuse a new one while
    ``budget`` are pending, so bytes PUT and never handed over cannot fill the disk.
    ``refusal`` is the 429's words, ``{pending}`` the count."""
    now = time.time()
    pending = 0
    for key, modified in list_blobs(prefix, settings=settings):
        if now - modified > UPLOAD_TTL:
            delete_blob(key, settings=settings)
        else:
            pending += 1
    if pending >= budget:
        raise TooManyRequests(refusal.format(pending=pending))


def _make_room_for_an_upload(user: User, settings: Settings) -> None:
    make_room(
        f"kaggle-uploads/{user.id}",
        MAX_PENDING_UPLOADS,
        settings,
        "you have {pending} uploads that were never submitted; they expire within an hour",
    )


def start_submission_upload_call(
    session: Session, user: User, req: k.StartSubmissionUploadRequest, ctx: Context
) -> k.StartSubmissionUploadResponse:
    competition = get_competition_by_slug(session, req.competition_name, user, writing=True)
    require_entrant(session, competition=competition, user=user, action="submit")
    limit = ctx.settings.max_upload_bytes
    if req.content_length > limit:
        raise PayloadTooLarge(f"the file is larger than the {limit:,}-byte upload limit")
    _make_room_for_an_upload(user, ctx.settings)
    token = sign(
        {
            "p": "upload",
            "u": user.id,
            "c": competition.id,
            "n": uuid.uuid4().hex,
            "f": req.file_name[:255] or "submission.csv",
        },
        secret_key=ctx.settings.secret_key,
        ttl_seconds=UPLOAD_TTL,
    )
    return k.StartSubmissionUploadResponse(
        token=token, create_url=f"{ctx.base_url}api/v1/kaggle/uploads/{token}"
    )


# Kaggle's own words (and status) for a competition whose rules the caller has not accepted.
KAGGLE_RULES = "You must accept this competition's rules before you'll be able to {action}."


def require_entrant(session: Session, *, competition: Competition, user: User, action: str) -> None:
    """Refused before any byte is sent: the rules (Kaggle's 403 and words), or registration."""
    if is_host(session, competition, user):
        return
    try:
        require_may_submit(session, competition=competition, user=user)
    except RulesNotAccepted as refusal:
        raise Forbidden(
            KAGGLE_RULES.format(action=action), extra={"rules_url": refusal.extra["rules_url"]}
        ) from None


def staged_upload_key(token: str, settings: Settings) -> str:
    payload = verify(token, secret_key=settings.secret_key, purpose="upload")
    return _staged_key(int(payload["u"]), str(payload["n"]))


def create_submission_call(
    session: Session, user: User, req: k.CreateSubmissionRequest, ctx: Context
) -> k.CreateSubmissionResponse:
    competition = get_competition_by_slug(session, req.competition_name, user, writing=True)
    payload = verify(req.blob_file_tokens, secret_key=ctx.settings.secret_key, purpose="upload")
    if payload.get("u") != user.id or payload.get("c") != competition.id:
        raise NotFound("this upload belongs to another user or competition")
    key = _staged_key(user.id, str(payload["n"]))
    try:
        with open_blob(key, settings=ctx.settings) as source:
            upload = submissions.create_submission(
                session,
                competition=competition,
                user=user,
                source=source,
                filename=str(payload["f"]),
                description=req.submission_description or "",
                settings=ctx.settings,
                queue=ctx.queue,
            )
    finally:
        delete_blob(key, settings=ctx.settings)  # an upload makes one submission at most
    if upload.refusal is not None:
        raise upload.refusal  # recorded: the failed submission is kept in the team's history
    return k.CreateSubmissionResponse(
        message=f"Successfully submitted to {competition.title}", ref=upload.submission.id
    )


# --- following submissions ------------------------------------------------------------------

_STATUS = {
    # The client knows no running state: a code run is pending until it is scored or failed.
    SubmissionStatus.queued: "PENDING",
    SubmissionStatus.running: "PENDING",
    SubmissionStatus.scoring: "PENDING",
    SubmissionStatus.scored: "COMPLETE",
    SubmissionStatus.failed: "ERROR",
}


def _submission(session: Session, user: User, s: Submission) -> k.ApiSubmission:
    seen = view(session, submission=s, competition=s.competition, user=user)
    return k.ApiSubmission(
        ref=s.id,
        total_bytes=s.size_bytes,
        date=s.created_at,
        description=s.description,
        error_description=seen.error or "",
        file_name=s.filename,
        public_score=_score(seen.public_score),
        private_score=_score(getattr(seen, "private_score", None)),
        status=_STATUS[s.status],
        submitted_by=s.user.name,
        team_name=s.team.name,
    )


def list_submissions_call(
    session: Session, user: User, req: k.ListSubmissionsRequest, ctx: Context
) -> k.ListSubmissionsResponse:
    competition = get_competition_by_slug(session, req.competition_name, user)
    mine = submissions.team_submissions(session, competition=competition, user=user)
    page, next_token = _page(mine, req)
    return k.ListSubmissionsResponse(
        submissions=[_submission(session, user, s) for s in page], next_page_token=next_token
    )


def get_submission_call(
    session: Session, user: User, req: k.GetSubmissionRequest, ctx: Context
) -> k.ApiSubmission:
    submission = submissions.visible_submission(session, submission_id=req.ref, user=user)
    return _submission(session, user, submission)


def list_competition_hosts_call(
    session: Session, user: User, req: k.CompetitionRequest, ctx: Context
) -> k.ApiListCompetitionHostsResponse:
    """``kaggle competitions hosts``: the competition's hosts, for its hosts only (as
    ``GET /api/v1/competitions/{slug}/hosts``)."""
    competition = get_competition_by_slug(session, req.competition_name, user)
    require_host(session, competition, user)
    return k.ApiListCompetitionHostsResponse(
        hosts=[
            k.ApiCompetitionHost(
                id=h.user.id,
                user_name=h.user.name,
                display_name=f"{h.user.name} ({h.role.value})",
                profile_url=f"{ctx.base_url}c/{competition.slug}/host/hosts",
            )
            for h in hosts_of(session, competition=competition)
        ]
    )


def add_competition_host_call(
    session: Session, user: User, req: k.AddCompetitionHostRequest, ctx: Context
) -> k.Message:
    """``kaggle competitions host-add``: a co-host, added by the owner (as
    ``POST /api/v1/competitions/{slug}/hosts``, with its refusals)."""
    competition = get_competition_by_slug(session, req.competition_name, user)
    add_host(session, competition=competition, name=req.user_name, actor=user)
    return k.Message()


def get_competition_settings_call(
    session: Session, user: User, req: k.CompetitionRequest, ctx: Context
) -> k.CompetitionSettings:
    """``kaggle competitions settings get``: what Kaggle's settings and Podium's share, for
    the hosts (the rest of Podium's settings: ``GET /api/v1/competitions/{slug}``)."""
    competition = get_competition_by_slug(session, req.competition_name, user)
    require_host(session, competition, user)
    brief = next(
        (line.strip() for line in competition.description.splitlines() if line.strip()), ""
    )
    return k.CompetitionSettings(
        title=competition.title,
        brief_description=brief[:200],
        competition_name=competition.slug,
        deadline=competition.deadline,
        team_merger_explicit_deadline=competition.team_merge_deadline,
        disable_submissions=competition.status == ARCHIVED,
    )


def launch_competition_call(
    session: Session, user: User, req: k.LaunchCompetitionRequest, ctx: Context
) -> k.Message:
    """``kaggle competitions launch``: publish a draft once its launch checklist passes (as
    ``POST /api/v1/competitions/{slug}/publish``: hosts only, the same refusals)."""
    competition = get_competition_by_slug(session, req.competition_name, user)
    require_host(session, competition, user)
    if req.future_time:
        raise BadRequest(
            "Podium has no launch scheduled for later: launch now (without --at), and the "
            "competition's phases open at their own start dates"
        )
    publish(session, competition=competition, actor=user, settings=ctx.settings)
    return k.Message()


def download_submission_call(
    session: Session, user: User, req: k.DownloadSubmissionRequest, ctx: Context
) -> str:
    """A signed URL for a submission's file: its team's members and its hosts only (anyone
    else finds no such submission), as ``GET /api/v1/submissions/{id}/file``."""
    submission = submissions.visible_submission(session, submission_id=req.submission_id, user=user)
    if not submission.path:
        raise NotFound(f"submission {submission.id} has no file (refused at upload, not kept)")
    token = sign(
        {"p": "submission", "s": submission.id},
        secret_key=ctx.settings.secret_key,
        ttl_seconds=DOWNLOAD_TTL,
    )
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", submission.filename).strip("._") or "submission"
    return f"{ctx.base_url}api/v1/kaggle/blobs/{token}/{name[:120]}"


def signed_submission(session: Session, token: str, settings: Settings) -> Submission | None:
    """The submission a signed URL stands for; None when the token is not a submission's."""
    try:
        payload = verify(token, secret_key=settings.secret_key, purpose="submission")
    except NotFound:
        return None
    submission = session.get(Submission, int(payload["s"]))
    if submission is None or not submission.path:
        raise NotFound("this file no longer exists")
    return submission


def get_submission_limits_call(
    session: Session, user: User, req: k.CompetitionRequest, ctx: Context
) -> k.ApiSubmissionLimits:
    competition = get_competition_by_slug(session, req.competition_name, user)
    team = find_team(session, competition=competition, user=user)
    quota = quota_for(session, competition=competition, team=team, now=datetime.now(UTC))
    daily_left = quota.daily_limit - quota.used_today
    return k.ApiSubmissionLimits(
        num_today=quota.used_today,
        num_total=quota.used_total,
        num_allowed_now=quota.remaining_today,
        limited_by_total=quota.total_limit is not None
        and quota.total_limit - quota.used_total < daily_left,
    )


# --- leaderboard ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _BoardRow:
    rank: int | None
    team_id: int
    team_name: str
    date: datetime
    score: str
    entries: int


def current_phase_name(competition: Competition) -> str | None:
    """The kaggle client knows no phases: its routes serve the current one, whatever other
    board the API would pick for a reader without a phase."""
    phase = competition.current_phase
    return phase.name if phase is not None else None


def _board_rows(session: Session, user: User, competition: Competition) -> list[_BoardRow]:
    """The current phase's public board by its ranking column (a blind phase's is refused with
    ``board_blind`` until it ends, a hidden one's with ``board_hidden``, as on the API)."""
    board = leaderboard(
        session,
        competition=competition,
        board="public",
        user=user,
        limit=MAX_PAGE,
        phase_name=current_phase_name(competition),
    )
    names = [row.team for row in board.rows]
    ids: dict[str, int] = {
        name: team_id
        for name, team_id in session.execute(
            select(Team.name, Team.id).where(
                Team.competition_id == competition.id, Team.name.in_(names)
            )
        )
    }
    return [
        _BoardRow(
            rank=row.rank,
            team_id=ids.get(row.team, 0),
            team_name=row.team,
            date=row.last_submission_at,
            # The ranking column at its precision (the row's score on a Ladder board).
            score=_score(row.scores.get(board.sort, row.score) if board.sort else row.score),
            entries=row.entries,
        )
        for row in board.rows
    ]


def get_leaderboard_call(
    session: Session, user: User, req: k.GetLeaderboardRequest, ctx: Context
) -> k.GetLeaderboardResponse:
    competition = get_competition_by_slug(session, req.competition_name, user)
    rows = _board_rows(session, user, competition)
    page, next_token = _page(rows, k.Paged(page_token=req.page_token, page_size=req.page_size))
    return k.GetLeaderboardResponse(
        submissions=[
            k.ApiLeaderboardSubmission(
                team_id=r.team_id, team_name=r.team_name, submission_date=r.date, score=r.score
            )
            for r in page
        ],
        next_page_token=next_token,
    )


def leaderboard_zip(
    session: Session, user: User, req: k.CompetitionRequest, ctx: Context
) -> tuple[str, bytes]:
    """The public board as Kaggle ships it: a zip holding one CSV."""
    competition = get_competition_by_slug(session, req.competition_name, user)
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(
        ["Rank", "TeamId", "TeamName", "LastSubmissionDate", "Score", "SubmissionCount"]
    )
    for r in _board_rows(session, user, competition):
        writer.writerow(
            safe_row(
                [
                    "" if r.rank is None else r.rank,
                    r.team_id,
                    r.team_name,
                    r.date.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S"),
                    r.score,
                    r.entries,
                ]
            )
        )
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(f"{competition.slug}-publicleaderboard.csv", text.getvalue())
    return f"{competition.slug}.zip", out.getvalue()
