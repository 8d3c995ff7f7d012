"""A demo competition with a generated answer key, train and test files to model, and a few
scored submissions (`make run`)."""

import io
from datetime import UTC, datetime, timedelta

import numpy as np
from sqlalchemy import select

from app.auth.service import create_user
from app.competitions.schemas import CompetitionCreate, MetricConfig
from app.competitions.service import (
    create_competition,
    sample_submission_csv,
    upload_answer_key,
)
from app.config import Settings
from app.datafiles.service import put_file
from app.db import make_engine, make_session_factory, unit_of_work
from app.jobs.queue import EagerQueue
from app.models import Competition, Role
from app.submissions.service import create_submission

DEMO_SLUG = "demo-churn"
DEMO_ROWS = 2000
HOST = "demo-host"
PARTICIPANTS = {"alice": 1.2, "bob": 0.6, "carol": 0.2}  # how much signal each one's model has


def _csv(header: list[str], columns: list[list[str]]) -> bytes:
    lines = [",".join(header)] + [",".join(row) for row in zip(*columns, strict=True)]
    return ("\n".join(lines) + "\n").encode()


def demo_files(seed: int = 7) -> tuple[bytes, dict[str, bytes]]:
    """The answer key and one submission per demo participant, deterministic for a seed."""
    rng = np.random.default_rng(seed)
    ids = [f"cust-{i:05d}" for i in range(DEMO_ROWS)]
    churned = rng.random(DEMO_ROWS) < 0.3
    usage = np.where(rng.random(DEMO_ROWS) < 0.3, "Public", "Private")
    key = _csv(
        ["customer_id", "churned", "Usage"],
        [ids, [str(int(c)) for c in churned], list(usage)],
    )
    submissions = {}
    for name, signal in PARTICIPANTS.items():
        score = signal * churned + rng.normal(0.0, 0.5, DEMO_ROWS)
        submissions[name] = _csv(["customer_id", "churned"], [ids, [f"{s:.6f}" for s in score]])
    return key, submissions


TRAIN_ROWS = 3000


def _features(rng: np.random.Generator, churned: np.ndarray) -> list[list[str]]:
    """Customer features that carry some signal about churn, as CSV columns."""
    n = len(churned)
    tenure = np.clip(rng.exponential(np.where(churned, 10.0, 30.0)), 1, 72).astype(int)
    charges = rng.normal(np.where(churned, 72.0, 60.0), 15.0, n).clip(10, 150)
    calls = rng.poisson(np.where(churned, 2.5, 1.0))
    monthly = rng.random(n) < np.where(churned, 0.8, 0.4)
    return [
        [str(t) for t in tenure],
        [f"{c:.2f}" for c in charges],
        [str(c) for c in calls],
        ["monthly" if m else "yearly" for m in monthly],
    ]


FEATURES = ["tenure_months", "monthly_charges", "support_calls", "contract"]


def demo_data_files(seed: int = 7) -> dict[str, bytes]:
    """A train set with labels and a test set for the key's customers, deterministic for a seed."""
    churned = np.random.default_rng(seed).random(DEMO_ROWS) < 0.3  # the key's labels
    rng = np.random.default_rng(seed + 1000)
    train_churned = rng.random(TRAIN_ROWS) < 0.3
    train_ids = [f"train-{i:05d}" for i in range(TRAIN_ROWS)]
    test_ids = [f"cust-{i:05d}" for i in range(DEMO_ROWS)]
    train = _csv(
        ["customer_id", *FEATURES, "churned"],
        [train_ids, *_features(rng, train_churned), [str(int(c)) for c in train_churned]],
    )
    test = _csv(["customer_id", *FEATURES], [test_ids, *_features(rng, churned)])
    return {"train.csv": train, "test.csv": test}


def seed_demo(settings: Settings, *, base_url: str = "http://127.0.0.1:8000") -> str:
    """Seed the demo once, printing its users' tokens that one time only; the hints it prints
    point at ``base_url``, where the server will listen.

    Later runs print no secrets: the tokens of the first run keep working (only their hashes are
    stored), and ``podium users token NAME`` issues another one.
    """
    factory = make_session_factory(make_engine(settings.database_url))
    lines = []
    with unit_of_work(factory) as session:
        seeded = session.scalar(select(Competition).where(Competition.slug == DEMO_SLUG))
        if seeded is not None:
            return _already_seeded(base_url)

    key_csv, submissions = demo_files()
    with unit_of_work(factory) as session:
        host, token = create_user(
            session,
            name=HOST,
            role=Role.organiser,
            secret_key=settings.secret_key,
            email=f"{HOST}@example.org",
        )
        lines.append(f"  {HOST:<10} {'organiser':<12} {token}")
        competition = create_competition(
            session,
            data=CompetitionCreate(
                slug=DEMO_SLUG,
                title="Demo: predict customer churn",
                description="A generated binary task scored by ROC AUC, with a 30/70 split.",
                metric=MetricConfig(name="roc_auc"),
                deadline=datetime.now(UTC) + timedelta(days=30),
            ),
            owner=host,
        )
        upload_answer_key(
            session,
            competition=competition,
            phase=competition.phases[0],
            source=io.BytesIO(key_csv),
            uploader=host,
            settings=settings,
        )
        files = {
            **demo_data_files(),
            "sample_submission.csv": sample_submission_csv(competition, settings),
        }
        for name, content in files.items():
            put_file(
                session,
                competition=competition,
                name=name,
                source=io.BytesIO(content),
                user=host,
                settings=settings,
            )
    queue = EagerQueue(factory, settings)
    for name, content in submissions.items():
        with unit_of_work(factory) as session:
            user, token = create_user(
                session,
                name=name,
                role=Role.participant,
                secret_key=settings.secret_key,
                email=f"{name}@example.org",
            )
            lines.append(f"  {name:<10} {'participant':<12} {token}")
            competition = session.scalar(select(Competition).where(Competition.slug == DEMO_SLUG))
            create_submission(
                session,
                competition=competition,
                user=user,
                source=io.BytesIO(content),
                filename=f"{name}.csv",
                description="demo submission",
                settings=settings,
                queue=queue,
            )
    return _report(lines, base_url)


def _report(lines: list[str], base_url: str) -> str:
    return "\n".join(
        [
            f"Seeded the demo competition '{DEMO_SLUG}'. API tokens (shown once; they keep "
            "working across restarts):",
            *lines,
            f"The leaderboard page: {base_url}/c/{DEMO_SLUG}/leaderboard",
            "Try: curl -H 'Authorization: Bearer <token>' "
            f"{base_url}/api/v1/competitions/{DEMO_SLUG}/leaderboard",
            _ANOTHER_TOKEN,
        ]
    )


_ANOTHER_TOKEN = (
    "Lost a token? `.venv/bin/podium users token NAME` issues another "
    "(`--rotate` revokes the old ones first)."
)


def _already_seeded(base_url: str) -> str:
    users = ", ".join([HOST, *PARTICIPANTS])
    return "\n".join(
        [
            f"The demo competition '{DEMO_SLUG}' is already seeded; the tokens printed when it "
            f"was first seeded still work ({users}). The leaderboard page: "
            f"{base_url}/c/{DEMO_SLUG}/leaderboard",
            _ANOTHER_TOKEN,
        ]
    )
