from fastapi import APIRouter

from app.coderun.runtime import runtime_fingerprint, runtime_info
from app.coderun.schemas import RuntimePublic
from app.deps import CurrentUser

router = APIRouter(prefix="/runtime", tags=["code competitions"])


@router.get("", response_model=RuntimePublic)
def get_runtime(user: CurrentUser) -> RuntimePublic:
    """The runtime every code submission runs in: Python's version and each package's."""
    return RuntimePublic(**runtime_info(), fingerprint=runtime_fingerprint())
