"""ApiKeyStore on SQLAlchemy 2 async: the `api_keys` table on SQLite or PostgreSQL."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import select, update

from application.ports.api_keys import ApiKeyStore
from infrastructure.persistence.rows import ApiKeyRow, api_key_from_domain, api_key_to_domain, utc

if TYPE_CHECKING:
    from datetime import datetime

    from domain.accounts.keys import ApiKey, ApiKeyId
    from domain.ids import AppId, OwnerId
    from infrastructure.persistence.database import Database


class SqlAlchemyApiKeyStore(ApiKeyStore):
    """Each method is one transaction; every database failure surfaces as `StoreUnavailable`."""

    def __init__(self, database: Database) -> None:
        self._db = database

    async def add(self, key: ApiKey) -> None:
        async with self._db.transaction("add_api_key") as session:
            session.add(api_key_from_domain(key))

    async def find_by_hash(self, key_hash: str) -> ApiKey | None:
        async with self._db.transaction("find_api_key") as session:
            row = await session.scalar(select(ApiKeyRow).where(ApiKeyRow.key_hash == key_hash))
        return api_key_to_domain(row) if row is not None else None

    async def list_keys(self, owner: OwnerId | None = None, *, agent_id: AppId | None = None) -> list[ApiKey]:
        query = select(ApiKeyRow).order_by(ApiKeyRow.created_at, ApiKeyRow.id)
        if owner is not None:
            query = query.where(ApiKeyRow.owner == owner)
        if agent_id is not None:
            query = query.where(ApiKeyRow.agent_id == agent_id)
        async with self._db.transaction("list_api_keys") as session:
            rows = (await session.scalars(query)).all()
        return [api_key_to_domain(row) for row in rows]

    async def revoke(self, key_id: ApiKeyId, at: datetime) -> ApiKey | None:
        async with self._db.transaction("revoke_api_key") as session:
            # Only a key not yet revoked changes, so a second revoke keeps the first time.
            await session.execute(
                update(ApiKeyRow)
                .where(ApiKeyRow.id == key_id, ApiKeyRow.revoked_at.is_(None))
                .values(revoked_at=utc(at))
                .execution_options(synchronize_session=False)
            )
            row = await session.scalar(select(ApiKeyRow).where(ApiKeyRow.id == key_id))
        return api_key_to_domain(row) if row is not None else None
