"""Creating users, issuing, listing and revoking their tokens, resolving tokens to users."""

from datetime import UTC, datetime, timedelta

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from app.auth.tokens import hash_token, new_token
from app.errors import Conflict, NotFound, Unauthorized, Unprocessable
from app.models import ApiToken, Role, User, WebSession


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
    # The user in the same round trip as the token: every API request starts here.
    user = session.scalar(
        select(User)
        .join(ApiToken, ApiToken.user_id == User.id)
        .where(
            ApiToken.token_hash == hash_token(token, secret_key=secret_key),
            ApiToken.revoked_at.is_(None),
        )
    )
    if user is None:
        raise Unauthorized("unknown or revoked token")
    return user


# --- Passwords, browser sessions and token management (the web pages use these) -------------

WEB_SESSION_DAYS = 14


def set_password(user: User, *, password: str) -> None:
    from app.auth.passwords import MIN_PASSWORD_LENGTH, hash_password

    if len(password) < MIN_PASSWORD_LENGTH:
        raise Unprocessable(f"a password needs at least {MIN_PASSWORD_LENGTH} characters")
    user.password_hash = hash_password(password)


def user_for_password(session: Session, *, name: str, password: str) -> User:
    from app.auth.passwords import verify_password

    user = session.scalar(select(User).where(User.name == name))
    if not verify_password(password, user.password_hash if user else None) or user is None:
        raise Unauthorized("wrong user name or password")
    return user


def start_web_session(session: Session, *, user: User, secret_key: str) -> str:
    """A new browser session for ``user``; the returned secret goes into the cookie only."""
    secret = new_token()
    now = datetime.now(UTC)
    session.add(
        WebSession(
            user_id=user.id,
            token_hash=hash_token(secret, secret_key=secret_key),
            created_at=now,
            expires_at=now + timedelta(days=WEB_SESSION_DAYS),
        )
    )
    session.flush()
    return secret


def user_for_web_session(session: Session, *, secret: str, secret_key: str) -> User | None:
    row = session.scalar(
        select(WebSession).where(WebSession.token_hash == hash_token(secret, secret_key=secret_key))
    )
    if row is None or row.expires_at <= datetime.now(UTC):
        return None
    return row.user


def end_web_session(session: Session, *, secret: str, secret_key: str) -> None:
    session.execute(
        delete(WebSession).where(WebSession.token_hash == hash_token(secret, secret_key=secret_key))
    )


def user_named(session: Session, name: str) -> User:
    user = session.scalar(select(User).where(User.name == name))
    if user is None:
        raise NotFound(f"no user named '{name}'")
    return user


def tokens_of(session: Session, *, user: User) -> list[ApiToken]:
    """The user's tokens, newest first, revoked ones included (their secrets are not kept)."""
    return list(
        session.scalars(
            select(ApiToken)
            .where(ApiToken.user_id == user.id)
            .order_by(ApiToken.created_at.desc(), ApiToken.id.desc())
        )
    )


def revoke_tokens(session: Session, *, user: User) -> int:
    """Revoke every live token of the user; returns how many there were."""
    result = session.execute(
        update(ApiToken)
        .where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
        .values(revoked_at=datetime.now(UTC))
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


def revoke_own_token(session: Session, *, user: User, token_id: int) -> ApiToken:
    """Revoke one of the user's own tokens; anyone else's is reported as not existing."""
    token = session.get(ApiToken, token_id)
    if token is None or token.user_id != user.id:
        raise NotFound(f"no token {token_id}")
    if token.revoked_at is None:
        token.revoked_at = datetime.now(UTC)
        session.flush()
    return token


def rotate_token(session: Session, *, user: User, secret_key: str, revoke: bool) -> str:
    """A new token for the user, after revoking their existing ones when ``revoke``."""
    if revoke:
        revoke_tokens(session, user=user)
    return issue_token(session, user=user, secret_key=secret_key)


def users_with_token_counts(session: Session) -> list[tuple[User, int]]:
    """Every user and how many live tokens they hold, in one query."""
    live = func.count(ApiToken.id)
    rows = session.execute(
        select(User, live)
        .outerjoin(ApiToken, (ApiToken.user_id == User.id) & ApiToken.revoked_at.is_(None))
        .group_by(User.id)
        .order_by(User.name)
    ).all()
    return [(user, int(count)) for user, count in rows]
