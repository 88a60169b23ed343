"""Who is asking: the caller of the request's API key (`Authorization: Bearer <key>`), and the
reach it has: the whole account, one end user (`user`), or an agent key's end user.

In single-user mode (`MEMAGENT_AUTH__REQUIRE_KEYS` false, loopback only) a request without a key
is the local owner; see `application.accounts.authenticate`.
"""

from typing import Annotated

from dependency_injector.wiring import inject
from fastapi import Depends, Query, Request, Security
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from application.accounts.authenticate import Authenticate, Caller
from application.errors import Forbidden, InvalidInput
from domain.accounts.viewers import MAX_END_USER_CHARS, Viewer, check_end_user
from domain.errors import DomainError
from domain.ids import OwnerId
from interfaces.http.key_gate import CALLER_STATE
from interfaces.http.provided import Provided
from interfaces.http.schemas import UnicodeText

# Declares the scheme in OpenAPI (the /docs "Authorize" button); the raw header is checked below,
# so that a malformed one is refused rather than read as "no key".
_bearer = HTTPBearer(auto_error=False, bearerFormat="mk_…", description="A key from `memagent keys create`.")

USER_DESCRIPTION = (
    "The end user acted for: a front end's own opaque id for its user. Required with an agent key; "
    "with an account key, without it the request reaches every end user of the account."
)
EndUser = Annotated[UnicodeText, Query(min_length=1, max_length=MAX_END_USER_CHARS, description=USER_DESCRIPTION)]


@inject
async def current_caller(
    request: Request,
    authenticate: Annotated[Authenticate, Depends(Provided["authenticate"])],
    _documented: Annotated[HTTPAuthorizationCredentials | None, Security(_bearer)] = None,
) -> Caller:
    # `KeyGate` has checked the key before the body was read; this is for a request it did not see.
    caller: Caller | None = request.scope.get("state", {}).get(CALLER_STATE)
    if caller is not None:
        return caller
    return await authenticate(request.headers.get("authorization"))


async def current_owner(caller: Annotated[Caller, Depends(current_caller)]) -> OwnerId:
    """The account, for the routes only an account key may use."""
    return caller.account("this request")


def viewer_of(caller: Caller, user: str | None) -> Viewer:
    """The reach of a request that names `user` (or not)."""
    if user is None:
        if caller.agent_id is not None:
            raise Forbidden("An agent key acts for one end user: name it in `user` (the body of a POST, "
                            "the query parameter `?user=` otherwise).")
        return Viewer(caller.owner)
    try:
        end_user = check_end_user(user)
    except DomainError as bad:
        raise InvalidInput(f"{bad}.") from bad
    return Viewer(caller.owner, end_user, caller.agent_id)


async def current_viewer(caller: Annotated[Caller, Depends(current_caller)], user: EndUser | None = None) -> Viewer:
    """The reach of a request without a body, from `?user=`."""
    return viewer_of(caller, user)
