from fastapi import APIRouter

from app.auth.schemas import UserPublic
from app.deps import CurrentUser

router = APIRouter(tags=["auth"])


@router.get("/me", response_model=UserPublic)
def whoami(user: CurrentUser) -> UserPublic:
    return UserPublic.model_validate(user)
