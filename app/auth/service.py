"""Creating users and resolving bearer tokens to users."""

from sqlalchemy import select
from sqlalchemy.orm import Session

from app.auth.tokens import hash_token, new_token
from app.errors import Conflict, Unauthorized
from app.models import ApiToken, Role, User


def create_user(session: Session, *, name: str, role: Role, secret_key: str) -> tuple[User, str]:
    """Create a user with a fresh token; the token is returned once and never stored."""
    if session.scalar(select(User).where(User.name == name)) is not None:
        raise Conflict(f"a user named '{name}' already exists")
    user = User(name=name, role=role)
    session.add(user)
    session.flush()
    token = issue_token(session, user=user, secret_key=secret_key)
    return user, token


def issue_token(session: Session, *, user: User, secret_key: str) -> str:
    token = new_token()
    session.add(
        ApiToken(
            user_id=user.id,
            token_hash=hash_token(token, secret_key=secret_key),
            prefix=token[:10],
        )
    )
    session.flush()
    return token


def user_for_token(session: Session, *, token: str, secret_key: str) -> User:
    row = session.scalar(
        select(ApiToken).where(
            ApiToken.token_hash == hash_token(token, secret_key=secret_key),
            ApiToken.revoked_at.is_(None),
        )
    )
    if row is None:
        raise Unauthorized("unknown or revoked token")
    return row.user
