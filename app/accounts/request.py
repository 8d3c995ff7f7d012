"""The request around an account service: where links point, the limits, the client's address."""

from typing import Annotated

from fastapi import Depends, Request

from app.accounts.service import Context
from app.auth.throttle import client_address


async def account_context(request: Request) -> Context:
    settings = request.app.state.settings
    return Context(
        settings=settings,
        base_url=settings.public_url or str(request.base_url),
        limits=request.app.state.account_limits,
        address=client_address(request.scope),
    )


AccountContext = Annotated[Context, Depends(account_context)]
