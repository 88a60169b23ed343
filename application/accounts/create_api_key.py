"""Create an API key: the key is shown once; only its hash is stored."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from application.errors import InvalidInput
from domain.accounts.keys import ApiKey, ApiKeyId, check_owner, hash_api_key, make_raw_key
from domain.errors import DomainError
from domain.ids import AppId, OwnerId

if TYPE_CHECKING:
    from application.ports.api_keys import ApiKeyStore, SecretSource
    from application.ports.runtime import Clock, IdGenerator


@dataclass(frozen=True, slots=True)
class CreatedKey:
    key: ApiKey
    raw: str  # to show once; only `key.key_hash` is stored

    def __repr__(self) -> str:  # a created key printed by accident must not leak the secret
        return f"CreatedKey(key={self.key!r}, raw='mk_***')"


class CreateApiKey:
    def __init__(self, keys: ApiKeyStore, secrets: SecretSource, clock: Clock, ids: IdGenerator) -> None:
        self._keys = keys
        self._secrets = secrets
        self._clock = clock
        self._ids = ids

    async def __call__(self, name: str, owner: str | None = None, *, agent_id: AppId | None = None) -> CreatedKey:
        """A new key named `name`, for `owner`, or for a new account when no owner is given; bound to
        `agent_id` when given (`CreateAgentKey` checks that the agent is the owner's)."""
        try:
            account = check_owner(owner) if owner is not None else OwnerId(self._ids.new_id())
            raw = make_raw_key(self._secrets.new_secret())
            key = ApiKey(
                id=ApiKeyId(self._ids.new_id()), owner=account, name=name.strip(),
                key_hash=hash_api_key(raw), created_at=self._clock.now(), agent_id=agent_id,
            )
        except DomainError as broken:
            raise InvalidInput(str(broken)) from broken
        await self._keys.add(key)
        return CreatedKey(key, raw)
