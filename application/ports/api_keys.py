from datetime import datetime
from typing import Protocol

from domain.accounts.keys import ApiKey, ApiKeyId
from domain.ids import AppId, OwnerId


class ApiKeyStore(Protocol):
    """Accounts' API keys, by hash. Raises `StoreUnavailable` when the database fails."""

    async def add(self, key: ApiKey) -> None: ...

    async def find_by_hash(self, key_hash: str) -> ApiKey | None:
        """The key with this hash, revoked or not."""
        ...

    async def list_keys(self, owner: OwnerId | None = None, *, agent_id: AppId | None = None) -> list[ApiKey]:
        """Every key (of `owner` when given; only those bound to `agent_id` when given), oldest first."""
        ...

    async def revoke(self, key_id: ApiKeyId, at: datetime) -> ApiKey | None:
        """Mark the key revoked from `at` (a revoked key keeps its first time); None if unknown."""
        ...


class SecretSource(Protocol):
    """Unguessable secrets for new keys."""

    def new_secret(self) -> str:
        """At least 32 URL-safe characters from a cryptographically secure source."""
        ...
