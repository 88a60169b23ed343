"""List API keys: names and ids, never the keys."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from application.ports.api_keys import ApiKeyStore
    from domain.accounts.keys import ApiKey
    from domain.ids import OwnerId


class ListApiKeys:
    def __init__(self, keys: ApiKeyStore) -> None:
        self._keys = keys

    async def __call__(self, owner: OwnerId | None = None) -> list[ApiKey]:
        return await self._keys.list_keys(owner)
