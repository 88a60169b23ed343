"""Authenticate: who is asking, from the request's `Authorization` header.

With keys required, every request must carry `Authorization: Bearer <key>` of an active key.
In single-user mode (the embedded default, bound to loopback) a request without a key is the
local owner, but a Bearer key that is sent is still checked and used, so keys can be tried
locally; a wrong key is refused in both modes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import Unauthorized
from domain.accounts import hash_api_key, looks_like_key
from domain.ids import OwnerId

if TYPE_CHECKING:
    from application.ports.api_keys import ApiKeyStore

LOCAL_OWNER = OwnerId("local")
HOW_TO_AUTHENTICATE = (
    "Send `Authorization: Bearer <key>`; an operator creates keys with `memagent keys create <name>`."
)


class Authenticate:
    def __init__(self, keys: ApiKeyStore, *, require_keys: bool) -> None:
        self._keys = keys
        self._require_keys = require_keys

    @property
    def require_keys(self) -> bool:
        return self._require_keys

    async def __call__(self, authorization: str | None) -> OwnerId:
        """The owner the request acts for; raises `Unauthorized` otherwise."""
        scheme, _, token = (authorization or "").strip().partition(" ")
        if scheme.lower() != "bearer":
            # No header, or another scheme (e.g. Basic from a proxy in front): no key was sent.
            if self._require_keys:
                raise Unauthorized(f"An API key is required. {HOW_TO_AUTHENTICATE}")
            return LOCAL_OWNER
        token = token.strip()
        # The lookup is by the hash of what was sent, so its timing tells nothing about stored keys.
        if looks_like_key(token):
            key = await self._keys.find_by_hash(hash_api_key(token))
            if key is not None and key.matches(token):
                return key.owner
        raise Unauthorized(f"The API key is not valid or was revoked. {HOW_TO_AUTHENTICATE}")
