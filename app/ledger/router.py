from typing import Annotated

from fastapi import APIRouter, Query, Response

from app.auth.hosts import is_host
from app.deps import OptionalUser, PublicCompetitionDep, SessionDep, SettingsDep
from app.errors import error_responses
from app.ledger import service
from app.ledger.schemas import LedgerKeyPublic
from app.ledger.signing import signer_for
from app.models.types import Count

router = APIRouter(tags=["ledger"], responses=error_responses(404))


@router.get("/ledger/key", response_model=LedgerKeyPublic)
def ledger_key(settings: SettingsDep) -> LedgerKeyPublic:
    """The public key that signs receipts and chain heads (no token needed)."""
    signer = signer_for(settings.data_dir, settings.ledger_signing_key)
    return LedgerKeyPublic(public_key=signer.public_key, key_id=signer.key_id)


@router.get(
    "/competitions/{slug}/ledger",
    response_class=Response,
    responses={200: {"content": {"application/x-ndjson": {}}}},
)
def competition_ledger(
    competition: PublicCompetitionDep,
    user: OptionalUser,
    session: SessionDep,
    settings: SettingsDep,
    after: Annotated[Count, Query()] = 0,
    limit: Annotated[int, Query(ge=1, le=service.PAGE_ENTRIES)] = service.PAGE_ENTRIES,
) -> Response:
    """The competition's record as JSON lines: a header with the signed head, then the entries
    after ``after`` (at most ``limit``), sealed values opened only where revealed."""
    body = "".join(
        service.lines(
            session,
            competition=competition,
            signer=signer_for(settings.data_dir, settings.ledger_signing_key),
            host=user is not None and is_host(session, competition, user),
            after=after,
            limit=limit,
        )
    )
    return Response(body, media_type="application/x-ndjson")
