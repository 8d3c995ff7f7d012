from fastapi import APIRouter

from app.auth.schemas import UserPublic
from app.deps import CurrentUser
from app.errors import error_responses

router = APIRouter(tags=["auth"], responses=error_responses(404))


@router.get("/me", response_model=UserPublic)
def whoami(user: CurrentUser) -> UserPublic:
    return UserPublic.model_validate(user)
