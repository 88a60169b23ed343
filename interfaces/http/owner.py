"""Who is asking: the owner of the request's API key (`Authorization: Bearer <key>`).

In single-user mode (`MEMAGENT_AUTH__REQUIRE_KEYS` false, loopback only) a request without a key
is the local owner; see `application.accounts.authenticate`.
"""

from typing import Annotated

from dependency_injector.wiring import Provide, inject
from fastapi import Depends, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from application.accounts.authenticate import Authenticate
from domain.ids import OwnerId
from interfaces.http.key_gate import OWNER_STATE

# Declares the scheme in OpenAPI (the /docs "Authorize" button); the raw header is checked below,
# so that a malformed one is refused rather than read as "no key".
_bearer = HTTPBearer(auto_error=False, bearerFormat="mk_…", description="A key from `memagent keys create`.")


@inject
async def current_owner(
    request: Request,
    authenticate: Annotated[Authenticate, Depends(Provide["authenticate"])],
    _documented: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)] = None,
) -> OwnerId:
    # `KeyGate` has checked the key before the body was read; this is for a request it did not see.
    owner: OwnerId | None = request.scope.get("state", {}).get(OWNER_STATE)
    if owner is not None:
        return owner
    return await authenticate(request.headers.get("authorization"))
