"""Creating users, issuing, listing and revoking their tokens, resolving tokens to users."""

import functools
from datetime import UTC, datetime, timedelta

from sqlalchemy import Select, String, bindparam, delete, func, literal_column, or_, select, update
from sqlalchemy.orm import Session, joinedload

from app.auth.names import check_user_name
from app.auth.tokens import hash_token, new_token
from app.errors import Conflict, Forbidden, NotFound, Unauthorized, Unprocessable
from app.models import ApiToken, Role, User, UserState, WebSession


def create_user(
    session: Session, *, name: str, role: Role, secret_key: str, email: str | None = None
) -> tuple[User, str]:
    """Create a user with a fresh token; the token is returned once and never stored. An
    ``email`` given by whoever makes the account (an admin) is taken as verified."""
    from app.auth.emails import normalise_email

    check_user_name(name)
    if session.scalar(select(User).where(User.name == name)) is not None:
        raise Conflict(f"a user named '{name}' already exists")
    address = normalise_email(email) if email is not None else None
    if address is not None and session.scalar(select(User.id).where(User.email == address)):
        raise Conflict(f"the address {address} belongs to another user")
    user = User(
        name=name,
        role=role,
        email=address,
        email_verified_at=datetime.now(UTC) if address is not None else None,
    )
    session.add(user)
    session.flush()
    token = issue_token(session, user=user, secret_key=secret_key)
    return user, token


class EmailNotVerified(Forbidden):
    code = "email_unverified"


def require_may_take_part(user: User) -> None:
    """Joining and submitting need a verified address on accounts their owners made (sign-up,
    single sign-on); browsing needs nothing."""
    if not user.may_take_part:
        raise EmailNotVerified(
            "verify your e-mail address first: follow the link we mailed you (your account page "
            "can send it again)"
        )


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


def live_token(session: Session, *, token: str, secret_key: str) -> ApiToken:
    """The unrevoked token row for ``token``, with its user (a browser signing in with it)."""
    row = session.scalar(
        select(ApiToken)
        .options(joinedload(ApiToken.user))
        .where(
            ApiToken.token_hash == hash_token(token, secret_key=secret_key),
            ApiToken.revoked_at.is_(None),
        )
    )
    if row is None or not row.user.is_active:
        raise Unauthorized("unknown or revoked token")
    return row


def user_for_token(session: Session, *, token: str, secret_key: str) -> User:
    # The user in the same round trip as the token: every API request starts here.
    user = session.scalar(user_by_token(), {"token_hash": hash_token(token, secret_key=secret_key)})
    if user is None:
        raise Unauthorized("unknown or revoked token")
    return user


@functools.cache
def user_by_token() -> Select[tuple[User]]:
    """The user holding a live token (parameter ``token_hash``). Built once: every API request
    runs it (and app.auth.token_reader runs it on the event loop)."""
    return (
        select(User)
        .join(ApiToken, ApiToken.user_id == User.id)
        .where(
            ApiToken.token_hash == bindparam("token_hash", type_=String),
            ApiToken.revoked_at.is_(None),
            # A disabled or deleted account's tokens open nothing, from its next request on.
            # A literal, not a parameter: app.auth.token_reader runs the compiled text with the
            # token's hash as its only parameter.
            User.state == literal_column(f"'{UserState.active.value}'"),
        )
    )


# --- Passwords, browser sessions and token management (the web pages use these) -------------

WEB_SESSION_DAYS = 14


def set_password(user: User, *, password: str) -> None:
    """Set the password of a user who has no sessions yet; :func:`change_password` otherwise."""
    from app.auth.passwords import hash_password, password_problem

    if (
        problem := password_problem(password, name=user.name or "", email=user.email or "")
    ) is not None:
        raise Unprocessable(f"password: {problem}")
    user.password_hash = hash_password(password)


def change_password(session: Session, *, user: User, password: str) -> int:
    """A new password, and every browser of the user signed out (whoever knew the old password
    may have signed in with it); returns how many sessions ended. Tokens are left alone."""
    set_password(user, password=password)
    return end_sessions(session, user=user)


def user_for_password(session: Session, *, name: str, password: str) -> User:
    from app.auth.passwords import verify_password

    # The name, or the verified address (people remember that one better).
    where = User.email == name.lower() if "@" in name else User.name == name
    user = session.scalar(select(User).where(where))
    if not verify_password(password, user.password_hash if user else None) or user is None:
        raise Unauthorized("wrong user name or password")
    if not user.is_active:
        raise Unauthorized("this account is disabled; ask the site's admins")
    return user


def start_web_session(
    session: Session, *, user: User, secret_key: str, token: ApiToken | None = None
) -> str:
    """A new browser session for ``user``, signed in with ``token`` (None: the password); the
    returned secret goes into the cookie only."""
    secret = new_token()
    now = datetime.now(UTC)
    session.add(
        WebSession(
            user_id=user.id,
            token_hash=hash_token(secret, secret_key=secret_key),
            token_id=token.id if token is not None else None,
            created_at=now,
            last_seen_at=now,
            expires_at=now + timedelta(days=WEB_SESSION_DAYS),
        )
    )
    session.flush()
    return secret


# How stale "last seen" may get: refreshing it costs a write, so not on every page.
LAST_SEEN_EVERY = timedelta(minutes=5)


def web_session_for(
    session: Session, *, secret: str, secret_key: str, refresh: bool = False
) -> WebSession | None:
    """The live session behind a cookie, with its user: not expired, and its token (if it was
    opened with one) not revoked. ``refresh`` updates its last-seen time when it is stale."""
    row = session.scalar(
        select(WebSession)
        .options(joinedload(WebSession.user))
        .outerjoin(ApiToken, ApiToken.id == WebSession.token_id)
        .where(
            WebSession.token_hash == hash_token(secret, secret_key=secret_key),
            # Revocation deletes the sessions too; this holds for a token revoked any other way.
            or_(WebSession.token_id.is_(None), ApiToken.revoked_at.is_(None)),
        )
    )
    now = datetime.now(UTC)
    if row is None or row.expires_at <= now or not row.user.is_active:
        return None
    if refresh and now - row.last_seen_at > LAST_SEEN_EVERY:
        row.last_seen_at = now
        session.flush()
    return row


def end_web_session(session: Session, *, secret: str, secret_key: str) -> None:
    session.execute(
        delete(WebSession).where(WebSession.token_hash == hash_token(secret, secret_key=secret_key))
    )


def end_sessions(session: Session, *, user: User) -> int:
    """Sign every browser of the user out; returns how many sessions there were."""
    result = session.execute(delete(WebSession).where(WebSession.user_id == user.id))
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


def sessions_of(session: Session, *, user: User) -> list[WebSession]:
    """The user's browser sessions, oldest first, with the token each was opened with."""
    return list(
        session.scalars(
            select(WebSession)
            .options(joinedload(WebSession.token))
            .where(WebSession.user_id == user.id)
            .order_by(WebSession.created_at, WebSession.id)
        )
    )


# Minting a token is the one thing a stolen cookie must not do quietly: a browser that signed
# in longer ago than this gives the password again (or, with no password, signs in again).
RECENT_SIGN_IN = timedelta(minutes=10)


class SignInAgain(Forbidden):
    code = "reauthentication_required"


def confirm_recent_sign_in(web_session: WebSession, *, password: str) -> None:
    """Pass when the browser signed in within :data:`RECENT_SIGN_IN`, or ``password`` is the
    user's password; refuse otherwise, saying what to do. A wrong password is
    :class:`Unauthorized`, so the sign-in throttle counts it like any other."""
    from app.auth.passwords import verify_password

    if datetime.now(UTC) - web_session.created_at <= RECENT_SIGN_IN:
        return
    user = web_session.user
    minutes = int(RECENT_SIGN_IN.total_seconds() // 60)
    if user.password_hash is None:
        raise SignInAgain(
            f"you signed in more than {minutes} minutes ago: sign in again to make a token"
        )
    if not password:
        raise SignInAgain(
            f"you signed in more than {minutes} minutes ago: enter your password to make a token"
        )
    if not verify_password(password, user.password_hash):
        raise Unauthorized("wrong password: enter your password to make a token")


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
    """Revoke every live token of the user, signing out the browsers opened with them; returns
    how many tokens there were."""
    result = session.execute(
        update(ApiToken)
        .where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))
        .values(revoked_at=datetime.now(UTC))
    )
    session.execute(
        delete(WebSession).where(WebSession.user_id == user.id, WebSession.token_id.is_not(None))
    )
    return int(result.rowcount or 0)  # type: ignore[attr-defined]


def revoke_user(session: Session, *, user: User) -> int:
    """Revoke every token of the user and sign out every browser of theirs, however it signed
    in; returns how many tokens were live."""
    count = revoke_tokens(session, user=user)
    end_sessions(session, user=user)
    return count


def revoke_own_token(session: Session, *, user: User, token_id: int) -> ApiToken:
    """Revoke one of the user's own tokens and sign out the browsers opened with it; anyone
    else's is reported as not existing."""
    token = session.get(ApiToken, token_id)
    if token is None or token.user_id != user.id:
        raise NotFound(f"no token {token_id}")
    if token.revoked_at is None:
        token.revoked_at = datetime.now(UTC)
        session.flush()
    session.execute(delete(WebSession).where(WebSession.token_id == token.id))
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
