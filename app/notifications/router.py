"""My notification settings, and my recent notifications."""

from fastapi import APIRouter

from app.deps import CurrentUser, SessionDep
from app.errors import error_responses
from app.notifications import preferences
from app.notifications.schemas import (
    NotificationPublic,
    NotificationSettingsPublic,
    NotificationSettingsUpdate,
)

router = APIRouter(prefix="/me", tags=["notifications"], responses=error_responses(403))


def _settings_public(session: SessionDep, user_id: int) -> NotificationSettingsPublic:
    row = preferences.stored(session, user_id)
    return NotificationSettingsPublic(
        choices=preferences.choices_of(row),
        mail=not (row is not None and row.no_mail),
        kinds={kind: what for kind, (_, what) in preferences.KINDS.items()},
    )


@router.get("/notifications", response_model=NotificationSettingsPublic)
def my_settings(user: CurrentUser, session: SessionDep) -> NotificationSettingsPublic:
    return _settings_public(session, user.id)


@router.put("/notifications", response_model=NotificationSettingsPublic)
def change_settings(
    body: NotificationSettingsUpdate, user: CurrentUser, session: SessionDep
) -> NotificationSettingsPublic:
    """Change some kinds (the others keep their value) and, with ``mail``, all mail at once."""
    preferences.update(session, user_id=user.id, choices=dict(body.choices), mail=body.mail)
    return _settings_public(session, user.id)


@router.get("/notifications/recent", response_model=list[NotificationPublic])
def recent(user: CurrentUser, session: SessionDep) -> list[NotificationPublic]:
    """My 50 latest notifications, newest first."""
    return [
        NotificationPublic(
            id=n.id, kind=n.kind, title=n.title, body=n.body, link=n.link, created_at=n.created_at
        )
        for n in preferences.recent(session, user.id)
    ]
