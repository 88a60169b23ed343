"""Authenticate: who is asking, from the request's `Authorization` header.

With keys required, every request must carry `Authorization: Bearer <key>` of an active key.
In single-user mode (the embedded default, bound to loopback) a request without a key is the
local owner, and so is one whose Bearer token is not a memagent key (`sk-anything`, as users of
vLLM, Ollama and LM Studio type into their clients). A memagent key (`mk_…`) that is sent is still
checked and used, so keys can be tried locally; a wrong one is refused in both modes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from application.errors import Forbidden, Unauthorized
from domain.accounts.keys import KEY_PREFIX, ApiKeyId, hash_api_key, looks_like_key
from domain.ids import AppId, OwnerId

if TYPE_CHECKING:
    from application.ports.api_keys import ApiKeyStore

LOCAL_OWNER = OwnerId("local")
HOW_TO_AUTHENTICATE = (
    "Send `Authorization: Bearer <key>`; an operator creates keys with `memagent keys create <name>`."
)


@dataclass(frozen=True, slots=True)
class Caller:
    """Who sent a request: an account, through an account key or an agent key (`agent_id`).
    `key_id`: the key's id (None: no key was sent), which the key's rate limits count under."""

    owner: OwnerId
    agent_id: AppId | None = None
    key_id: ApiKeyId | None = None

    def account(self, what: str) -> OwnerId:
        """The owner, for what only an account key may do; an agent key is `Forbidden`."""
        if self.agent_id is not None:
            raise Forbidden(
                f"This key is bound to agent {self.agent_id!r}: it may chat with it, read its parameters and "
                f"manage its end users' conversations, not {what}. Use an account key."
            )
        return self.owner


class Authenticate:
    def __init__(self, keys: ApiKeyStore, *, require_keys: bool) -> None:
        self._keys = keys
        self._require_keys = require_keys

    @property
    def require_keys(self) -> bool:
        return self._require_keys

    async def __call__(self, authorization: str | None) -> Caller:
        """Who the request acts for; raises `Unauthorized` otherwise."""
        scheme, _, token = (authorization or "").strip().partition(" ")
        if scheme.lower() != "bearer":
            # No header, or another scheme (e.g. Basic from a proxy in front): no key was sent.
            if self._require_keys:
                raise Unauthorized(f"An API key is required. {HOW_TO_AUTHENTICATE}")
            return Caller(LOCAL_OWNER)
        token = token.strip()
        if not self._require_keys and not token.startswith(KEY_PREFIX):
            return Caller(LOCAL_OWNER)  # a placeholder a local client insists on sending, not a key
        # The lookup is by the hash of what was sent, so its timing tells nothing about stored keys.
        if looks_like_key(token):
            key = await self._keys.find_by_hash(hash_api_key(token))
            if key is not None and key.matches(token):
                return Caller(key.owner, key.agent_id, key.id)
        raise Unauthorized(f"The API key is not valid or was revoked. {HOW_TO_AUTHENTICATE}")
