"""Revoke an API key, at once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import NotFound

if TYPE_CHECKING:
    from application.ports.api_keys import ApiKeyStore
    from application.ports.runtime import Clock
    from domain.accounts.keys import ApiKey, ApiKeyId


class RevokeApiKey:
    def __init__(self, keys: ApiKeyStore, clock: Clock) -> None:
        self._keys = keys
        self._clock = clock

    async def __call__(self, key_id: ApiKeyId) -> ApiKey:
        """Revoked at once: the next request with it is refused. Revoking twice is harmless."""
        revoked = await self._keys.revoke(key_id, self._clock.now())
        if revoked is None:
            raise NotFound(f"No API key has id {key_id!r}.")
        return revoked
