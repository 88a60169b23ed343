"""The ApiKeyStore contract on SQLite and PostgreSQL, and the `api_keys` schema on both.

Every test that takes `keys` runs once per backend (see db_fixtures.database_url).
"""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta, timezone
from typing import TYPE_CHECKING

import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect, text

from application.errors import StoreUnavailable
from domain.accounts.keys import ApiKey, ApiKeyId, hash_api_key
from domain.ids import AppId, OwnerId
from infrastructure.persistence.database import Database
from infrastructure.persistence.migrate import alembic_config, run_migrations
from infrastructure.persistence.rows import Base
from infrastructure.persistence.sqlalchemy_api_key_store import SqlAlchemyApiKeyStore
from infrastructure.persistence.urls import normalise_url
from tests.integration.db_fixtures import (  # noqa: F401  (fixtures are used by name)
    database,
    database_url,
    migrated_url,
    pg_database_url,
    sqlite_url,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

pytestmark = pytest.mark.integration

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def key(n: int, owner: str = "alice", at: datetime = T0, agent: str | None = None) -> ApiKey:
    return ApiKey(
        id=ApiKeyId(f"key{n}"), owner=OwnerId(owner), name=f"key number {n}",
        key_hash=hash_api_key(f"mk_{n:043d}"), created_at=at, agent_id=AppId(agent) if agent else None,
    )


@pytest.fixture
async def keys(database: Database) -> AsyncIterator[SqlAlchemyApiKeyStore]:  # noqa: F811
    yield SqlAlchemyApiKeyStore(database)
    if not database.is_sqlite:  # the PostgreSQL database is shared by the session
        async with database.engine.begin() as connection:
            await connection.execute(text("DELETE FROM api_keys"))


async def test_a_key_is_found_by_its_hash_with_every_field_as_utc(keys: SqlAlchemyApiKeyStore) -> None:
    paris = timezone(timedelta(hours=2))
    added = key(1, at=datetime(2026, 6, 1, 14, 0, tzinfo=paris))
    await keys.add(added)
    found = await keys.find_by_hash(added.key_hash)
    assert found == added
    assert found is not None
    assert found.created_at.tzinfo == UTC
    assert await keys.find_by_hash(hash_api_key("mk_other")) is None


async def test_list_is_oldest_first_and_filters_by_owner(keys: SqlAlchemyApiKeyStore) -> None:
    await keys.add(key(3, "bob", T0 + timedelta(seconds=3)))
    await keys.add(key(1, "alice", T0 + timedelta(seconds=1)))
    await keys.add(key(2, "alice", T0 + timedelta(seconds=2)))
    assert [k.id for k in await keys.list_keys()] == ["key1", "key2", "key3"]
    assert [k.id for k in await keys.list_keys(OwnerId("alice"))] == ["key1", "key2"]
    assert await keys.list_keys(OwnerId("nobody")) == []


async def test_an_agent_key_keeps_its_agent_and_lists_filter_by_agent(keys: SqlAlchemyApiKeyStore) -> None:
    await keys.add(key(1, "alice", T0 + timedelta(seconds=1)))
    await keys.add(key(2, "alice", T0 + timedelta(seconds=2), agent="ada"))
    await keys.add(key(3, "alice", T0 + timedelta(seconds=3), agent="ben"))
    await keys.add(key(4, "bob", T0 + timedelta(seconds=4), agent="ada"))  # no such mix is made; the filter is exact
    assert await keys.find_by_hash(key(2).key_hash) == key(2, "alice", T0 + timedelta(seconds=2), agent="ada")
    found = await keys.find_by_hash(key(1).key_hash)
    assert found is not None
    assert found.agent_id is None
    assert [k.id for k in await keys.list_keys(agent_id=AppId("ada"))] == ["key2", "key4"]
    assert [k.id for k in await keys.list_keys(OwnerId("alice"), agent_id=AppId("ada"))] == ["key2"]
    assert [k.id for k in await keys.list_keys(OwnerId("alice"))] == ["key1", "key2", "key3"]
    assert await keys.list_keys(OwnerId("alice"), agent_id=AppId("nobody")) == []


async def test_revoke_marks_the_key_once_and_unknown_ids_are_none(keys: SqlAlchemyApiKeyStore) -> None:
    await keys.add(key(1))
    first = await keys.revoke(ApiKeyId("key1"), T0 + timedelta(days=1))
    second = await keys.revoke(ApiKeyId("key1"), T0 + timedelta(days=2))
    assert first is not None
    assert first.revoked_at == T0 + timedelta(days=1)
    assert second == first
    assert await keys.find_by_hash(key(1).key_hash) == first
    assert await keys.revoke(ApiKeyId("nope"), T0) is None


async def test_two_keys_with_one_hash_cannot_both_be_stored(keys: SqlAlchemyApiKeyStore) -> None:
    await keys.add(key(1))
    clash = ApiKey(id=ApiKeyId("other"), owner=OwnerId("bob"), name="x", key_hash=key(1).key_hash, created_at=T0)
    with pytest.raises(StoreUnavailable) as failure:
        await keys.add(clash)
    assert "\n" not in failure.value.message
    assert [k.owner for k in await keys.list_keys()] == ["alice"]


async def test_an_unreachable_database_is_store_unavailable() -> None:
    db = Database("postgresql+asyncpg://postgres:s3cret-pw@127.0.0.1:1/x")
    try:
        with pytest.raises(StoreUnavailable) as failure:
            await SqlAlchemyApiKeyStore(db).find_by_hash(key(1).key_hash)
    finally:
        await db.dispose()
    assert "s3cret-pw" not in failure.value.message


async def test_the_migrated_api_keys_table_matches_the_rows(migrated_url: str) -> None:  # noqa: F811
    db = Database(migrated_url)
    try:
        await db.check_migrated()
        async with db.engine.connect() as connection:
            diffs, indexes = await connection.run_sync(
                lambda sync: (
                    compare_metadata(MigrationContext.configure(sync), Base.metadata),
                    {ix["name"]: ix["unique"] for ix in inspect(sync).get_indexes("api_keys")},
                )
            )
    finally:
        await db.dispose()
    assert diffs == []
    assert indexes == {"ix_api_keys_key_hash": True, "ix_api_keys_owner": False, "ix_api_keys_agent_id": False}


async def test_an_embedded_database_from_before_keys_is_upgraded_at_start(tmp_path: Path) -> None:
    url = sqlite_url(tmp_path / "old" / "memagent.db")

    def first_release_schema() -> None:  # Alembic drives its own event loop
        run_migrations(url)
        command.downgrade(alembic_config(normalise_url(url)), "0001")

    await asyncio.to_thread(first_release_schema)
    db = Database(url)
    try:
        async with db.engine.connect() as connection:
            before = await connection.run_sync(lambda sync: set(inspect(sync).get_table_names()))
        assert "api_keys" not in before
        await db.start()
        await db.check_migrated()
        store = SqlAlchemyApiKeyStore(db)
        await store.add(key(1))
        assert await store.find_by_hash(key(1).key_hash) == key(1)
    finally:
        await db.dispose()
