"""Users and API tokens: who the caller is, and the caller's own tokens."""

from fastapi import APIRouter

from app.auth import service
from app.auth.schemas import TokenPublic, UserPublic
from app.deps import CurrentUser, IdPath, SessionDep
from app.errors import error_responses

router = APIRouter(tags=["auth"])


@router.get("/me", response_model=UserPublic)
def whoami(user: CurrentUser) -> UserPublic:
    return UserPublic.model_validate(user)


@router.get("/auth/tokens", response_model=list[TokenPublic])
def my_tokens(user: CurrentUser, session: SessionDep) -> list[TokenPublic]:
    return [TokenPublic.model_validate(t) for t in service.tokens_of(session, user=user)]


@router.delete(
    "/auth/tokens/{token_id}", response_model=TokenPublic, responses=error_responses(404)
)
def revoke_token(token_id: IdPath, user: CurrentUser, session: SessionDep) -> TokenPublic:
    token = service.revoke_own_token(session, user=user, token_id=token_id)
    return TokenPublic.model_validate(token)
