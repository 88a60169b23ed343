"""The AgentStore contract, proven identically on SQLite and PostgreSQL.

Every test that takes `store` runs once per backend (see db_fixtures.database_url). Owners and
ids are fresh per test, and the agent tables are emptied afterwards on the shared PostgreSQL.
"""

from __future__ import annotations

import asyncio
import json
import logging
import uuid
from collections.abc import AsyncIterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta, timezone
from typing import TYPE_CHECKING

import pytest
from sqlalchemy import text

from application.errors import Conflict, StoreUnavailable
from domain.agents.agent import Agent, AgentDraft, AgentStatus
from domain.agents.config import AgentConfig, ModelParams
from domain.agents.config_codec import config_to_dict
from domain.agents.review import KeywordReview
from domain.ids import AppId, OwnerId
from infrastructure.persistence.database import Database
from infrastructure.persistence.sqlalchemy_agent_store import SqlAlchemyAgentStore
from tests.integration.db_fixtures import (  # noqa: F401  (fixtures are used by name)
    database,
    database_url,
    pg_database_url,
    sqlite_url,
)

if TYPE_CHECKING:
    from pathlib import Path

pytestmark = pytest.mark.integration

T0 = datetime(2026, 1, 1, tzinfo=UTC)
RACERS = 12


def _owner() -> OwnerId:
    return OwnerId(f"owner-{uuid.uuid4().hex}")


def full_config(agent_id: AppId) -> AgentConfig:
    """A config with every field away from its default."""
    return AgentConfig(
        app_id=agent_id, preset_prompt="You are Ada, a terse travel agent. 你好", dialog_round=4,
        history_max_tokens=1500, tool_names=("weather", "calculator"), max_tool_rounds=7,
        input_review=KeywordReview(("password",), "I cannot discuss that."),
        output_review=KeywordReview(("secret", "token"), "I cannot discuss that."),
        summary_enabled=False, stream_thoughts=True, dataset_ids=("ds-1", "ds-2"), retrieval_top_k=9,
        retrieval_min_score=0.25, language="zh", model="fast", model_params=ModelParams(0.3, 512, 0.9),
        entities_enabled=False, opening_statement="Where to?", suggested_questions=("Paris?", "Rome?"),
    )


def new_agent(owner: OwnerId | None = None, at: datetime = T0, **changes: object) -> Agent:
    agent_id = AppId(f"agent-{uuid.uuid4().hex}")
    made = Agent(
        id=agent_id, owner=owner or _owner(), name="Ada", description="Plans trips.", status=AgentStatus.ACTIVE,
        draft=AgentDraft(1, AgentConfig(agent_id), at), latest_version=0, pinned_version=None,
        created_at=at, updated_at=at,
    )
    return replace(made, **changes)  # type: ignore[arg-type]


def prompted(agent: Agent, prompt: str) -> AgentConfig:
    return replace(agent.draft.config, preset_prompt=prompt)


@pytest.fixture
async def store(database: Database) -> AsyncIterator[SqlAlchemyAgentStore]:  # noqa: F811
    yield SqlAlchemyAgentStore(database)
    if not database.is_sqlite:
        async with database.engine.begin() as connection:
            await connection.execute(text("TRUNCATE agent_versions, agents"))


# --- agents --------------------------------------------------------------------------------------


async def test_agent_round_trips_every_field_and_config_field_as_utc(store: SqlAlchemyAgentStore) -> None:
    paris = timezone(timedelta(hours=1))
    at = datetime(2026, 3, 1, 9, 30, 15, 123456, paris)
    agent = new_agent(at=at, description="Plans trips. Ünïcode ✓")
    agent = replace(agent, draft=AgentDraft(3, full_config(agent.id), at + timedelta(minutes=5)))
    await store.add_agent(agent)

    loaded = await store.get_agent(agent.id)

    assert loaded == agent
    assert loaded is not None
    assert loaded.created_at.tzinfo == UTC
    assert loaded.draft.updated_at.tzinfo == UTC


async def test_a_config_is_stored_as_the_codec_json_text(store: SqlAlchemyAgentStore, database: Database) -> None:  # noqa: F811
    agent = new_agent()
    agent = replace(agent, draft=replace(agent.draft, config=full_config(agent.id)))
    await store.add_agent(agent)

    async with database.engine.connect() as connection:
        stored = (await connection.execute(text("SELECT draft_config FROM agents WHERE id = :id"), {"id": agent.id}))
        raw = stored.scalar_one()

    assert json.loads(raw) == config_to_dict(agent.draft.config)


async def test_an_unknown_agent_is_none(store: SqlAlchemyAgentStore) -> None:
    assert await store.get_agent(AppId("nobody")) is None
    assert await store.get_version(AppId("nobody"), 1) is None
    assert await store.list_versions(AppId("nobody")) == []


async def test_a_duplicate_id_is_a_conflict_and_keeps_the_first(store: SqlAlchemyAgentStore) -> None:
    first = new_agent()
    await store.add_agent(first)

    with pytest.raises(Conflict, match="already exists"):
        await store.add_agent(replace(first, name="Impostor", owner=_owner()))

    assert await store.get_agent(first.id) == first


async def test_list_agents_gives_the_owners_agents_newest_first_archived_too(store: SqlAlchemyAgentStore) -> None:
    alice, bob = _owner(), _owner()
    older = new_agent(alice, T0)
    archived = new_agent(alice, T0 + timedelta(hours=1), status=AgentStatus.ARCHIVED)
    newest = new_agent(alice, T0 + timedelta(hours=2))
    for agent in (archived, new_agent(bob, T0 + timedelta(hours=3)), newest, older):
        await store.add_agent(agent)

    assert [a.id for a in await store.list_agents(alice)] == [newest.id, archived.id, older.id]
    assert await store.list_agents(_owner()) == []


async def test_update_agent_stores_name_description_status_and_pin_but_not_the_draft(
    store: SqlAlchemyAgentStore,
) -> None:
    agent = await _published_twice(store, new_agent())
    stale = replace(agent, draft=replace(agent.draft, revision=1, config=AgentConfig(agent.id)), latest_version=1)
    later = T0 + timedelta(days=1)
    changed = replace(stale, name="Ada II", description="", status=AgentStatus.ARCHIVED, pinned_version=1,
                      updated_at=later)

    assert await store.update_agent(changed, agent)  # from `agent` as read: the stale parts are not written

    loaded = await store.get_agent(agent.id)
    assert loaded == replace(agent, name="Ada II", description="", status=AgentStatus.ARCHIVED, pinned_version=1,
                             updated_at=later)


async def test_an_update_from_a_stale_read_is_false_and_writes_nothing(store: SqlAlchemyAgentStore) -> None:
    agent = await _published_twice(store, new_agent())
    archived = agent.with_status(AgentStatus.ARCHIVED, T0 + timedelta(days=1))
    assert await store.update_agent(archived, agent)
    activated = agent.activated(1, T0 + timedelta(days=2))  # started from the agent before the archive
    assert not await store.update_agent(activated, agent)
    loaded = await store.get_agent(agent.id)
    assert loaded is not None
    assert (loaded.status, loaded.pinned_version) == (AgentStatus.ARCHIVED, None)


async def test_update_agent_can_release_a_pin(store: SqlAlchemyAgentStore) -> None:
    agent = await _published_twice(store, new_agent())
    pinned = agent.activated(1, T0 + timedelta(days=1))
    assert await store.update_agent(pinned, agent)

    released = pinned.activated(2, T0 + timedelta(days=2))
    assert await store.update_agent(released, pinned)

    loaded = await store.get_agent(agent.id)
    assert loaded is not None
    assert loaded.pinned_version is None
    assert loaded.active_version == 2


# --- drafts --------------------------------------------------------------------------------------


async def test_save_draft_over_the_current_revision_stores_it(store: SqlAlchemyAgentStore) -> None:
    agent = new_agent()
    await store.add_agent(agent)
    saved = agent.with_draft(full_config(agent.id), agent.draft.revision, T0 + timedelta(minutes=1))

    assert await store.save_draft(saved, agent.draft.revision) is True

    assert await store.get_agent(agent.id) == saved


async def test_save_draft_over_a_stale_revision_is_false_and_changes_nothing(store: SqlAlchemyAgentStore) -> None:
    agent = new_agent()
    await store.add_agent(agent)
    first = agent.with_draft(prompted(agent, "first"), agent.draft.revision, T0 + timedelta(minutes=1))
    assert await store.save_draft(first, agent.draft.revision)

    late = agent.with_draft(prompted(agent, "late"), agent.draft.revision, T0 + timedelta(minutes=2))
    assert await store.save_draft(late, agent.draft.revision) is False

    assert await store.get_agent(agent.id) == first


async def test_save_draft_of_an_unknown_agent_is_false(store: SqlAlchemyAgentStore) -> None:
    agent = new_agent()
    assert await store.save_draft(agent.with_draft(agent.draft.config, 1, T0), 1) is False
    assert await store.get_agent(agent.id) is None


async def test_of_concurrent_draft_saves_over_one_revision_exactly_one_wins(store: SqlAlchemyAgentStore) -> None:
    agent = new_agent()
    await store.add_agent(agent)
    editors = [
        agent.with_draft(prompted(agent, f"editor {n}"), agent.draft.revision, T0 + timedelta(seconds=n))
        for n in range(RACERS)
    ]

    results = await asyncio.gather(*(store.save_draft(edit, agent.draft.revision) for edit in editors))

    assert results.count(True) == 1
    assert await store.get_agent(agent.id) == editors[results.index(True)]


# --- versions ------------------------------------------------------------------------------------


async def _published_twice(store: SqlAlchemyAgentStore, agent: Agent) -> Agent:
    """The agent after v1 ("one") and v2 ("two") were published, each over its own draft."""
    await store.add_agent(agent)
    for number, prompt in enumerate(("one", "two"), start=1):
        at = T0 + timedelta(hours=number)
        drafted = agent.with_draft(prompted(agent, prompt), agent.draft.revision, at)
        assert await store.save_draft(drafted, agent.draft.revision)
        last = await store.get_version(agent.id, agent.latest_version) if agent.latest_version else None
        agent, version = drafted.published(f"release {prompt}", last, at)
        assert await store.publish(agent, version)
    return agent


async def test_publishing_v1_then_v2_stores_both_and_points_the_agent_at_the_latest(
    store: SqlAlchemyAgentStore,
) -> None:
    agent = await _published_twice(store, new_agent())

    loaded = await store.get_agent(agent.id)
    assert loaded == agent
    assert loaded is not None
    assert (loaded.latest_version, loaded.active_version) == (2, 2)
    versions = await store.list_versions(agent.id)
    assert [(v.version, v.note, v.config.preset_prompt) for v in versions] == [
        (2, "release two", "two"), (1, "release one", "one"),
    ]
    assert await store.get_version(agent.id, 1) == versions[1]
    assert await store.get_version(agent.id, 3) is None


async def test_a_version_round_trips_every_config_field(store: SqlAlchemyAgentStore) -> None:
    agent = new_agent()
    await store.add_agent(agent)
    drafted = agent.with_draft(full_config(agent.id), agent.draft.revision, T0)
    assert await store.save_draft(drafted, agent.draft.revision)
    published, version = drafted.published("  first  ", None, T0 + timedelta(minutes=1))

    assert await store.publish(published, version)

    assert await store.get_version(agent.id, 1) == version
    assert version.config == full_config(agent.id)


async def test_publishing_releases_a_pin(store: SqlAlchemyAgentStore) -> None:
    agent = await _published_twice(store, new_agent())
    pinned = agent.activated(1, T0 + timedelta(days=1))
    assert await store.update_agent(pinned, agent)

    drafted = pinned.with_draft(prompted(pinned, "three"), pinned.draft.revision, T0 + timedelta(days=2))
    assert await store.save_draft(drafted, pinned.draft.revision)
    third, version = drafted.published("three", await store.get_version(agent.id, 2), T0 + timedelta(days=2))
    assert await store.publish(third, version)

    loaded = await store.get_agent(agent.id)
    assert loaded is not None
    assert (loaded.latest_version, loaded.pinned_version, loaded.active_version) == (3, None, 3)


async def test_a_publish_over_a_stale_latest_version_is_false_and_writes_nothing(
    store: SqlAlchemyAgentStore,
) -> None:
    agent = new_agent()
    await store.add_agent(agent)
    first, v1 = agent.published("first", None, T0)
    assert await store.publish(first, v1)

    stale, again = replace(agent, draft=replace(agent.draft, config=prompted(agent, "other"))).published(
        "again", None, T0 + timedelta(minutes=1)
    )
    assert again.version == 1
    assert await store.publish(stale, again) is False

    assert await store.get_agent(agent.id) == first
    assert await store.list_versions(agent.id) == [v1]


async def test_of_concurrent_publishes_over_one_latest_version_exactly_one_wins(store: SqlAlchemyAgentStore) -> None:
    agent = new_agent()
    await store.add_agent(agent)
    racers = [
        replace(agent, draft=replace(agent.draft, config=prompted(agent, f"racer {n}"))).published(
            f"racer {n}", None, T0 + timedelta(seconds=n)
        )
        for n in range(RACERS)
    ]

    results = await asyncio.gather(*(store.publish(published, version) for published, version in racers))

    assert results.count(True) == 1
    winner, version = racers[results.index(True)]
    assert await store.get_agent(agent.id) == replace(winner, draft=agent.draft)  # a publish writes no draft
    assert await store.list_versions(agent.id) == [version]


async def test_published_versions_are_immutable(store: SqlAlchemyAgentStore) -> None:
    agent = new_agent()
    await store.add_agent(agent)
    drafted = agent.with_draft(full_config(agent.id), agent.draft.revision, T0)
    assert await store.save_draft(drafted, agent.draft.revision)
    first, v1 = drafted.published("first", None, T0)
    assert await store.publish(first, v1)

    redrafted = first.with_draft(prompted(first, "changed"), first.draft.revision, T0 + timedelta(hours=1))
    assert await store.save_draft(redrafted, first.draft.revision)
    second, v2 = redrafted.published("second", v1, T0 + timedelta(hours=2))
    assert await store.publish(second, v2)

    assert await store.get_version(agent.id, 1) == v1
    assert v1.config == full_config(agent.id)
    assert (await store.get_agent(agent.id)) == second


# --- failures ------------------------------------------------------------------------------------


@pytest.fixture(params=["sqlite", "postgresql"])
def unreachable_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        blocker = tmp_path / "not-a-folder"
        blocker.write_text("a file where the database folder should be")
        return sqlite_url(blocker / "memagent.db")
    return "postgresql+asyncpg://postgres:s3cret-pw@127.0.0.1:1/x"


async def test_an_unreachable_database_is_store_unavailable_in_a_plain_sentence(
    unreachable_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    db = Database(unreachable_url)
    store = SqlAlchemyAgentStore(db)  # constructing it touches nothing
    try:
        with caplog.at_level(logging.WARNING, "infrastructure.persistence.errors"):
            calls = (lambda: store.get_agent(AppId("a")), lambda: store.list_agents(OwnerId("o")),
                     lambda: store.add_agent(new_agent()))
            for call in calls:
                with pytest.raises(StoreUnavailable) as failure:
                    await call()
                assert failure.value.message == "The database is unavailable; try again shortly."
    finally:
        await db.dispose()

    logged = [r.getMessage() for r in caplog.records if r.name == "infrastructure.persistence.errors"]
    assert any("add_agent" in line for line in logged)
    assert all("s3cret-pw" not in line for line in logged)
