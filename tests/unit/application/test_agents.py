"""The agents' use cases over the fake agent store: owners, drafts, publishing, resolving a turn's config."""

from __future__ import annotations

from dataclasses import replace

import pytest

from application.agents.cached_agent_store import CachedAgentStore
from application.agents.change_agent import ChangeAgent
from application.agents.check_config import ConfigCheck
from application.agents.create_agent import CreateAgent
from application.agents.ensure_default_agent import EnsureDefaultAgent
from application.agents.manage_versions import ActivateVersion, RestoreVersion
from application.agents.publish_agent import PublishAgent
from application.agents.read_agents import DiffVersions, ListAgents
from application.agents.resolve_config import ResolveConfig
from application.agents.save_draft import SaveDraft
from application.errors import Conflict, InvalidInput, NotFound, NotPublished
from domain.accounts.keys import check_owner
from domain.agents.agent import Agent, AgentStatus
from domain.agents.config import AgentConfig
from domain.conversations.conversation import EntryPoint
from domain.errors import DomainError
from domain.ids import DEFAULT_AGENT, AppId, OwnerId
from domain.memory.user_facts import RecallScope
from tests.fake_user_memory import FakeRecallIndex
from tests.fakes import (
    FakeAgentStore,
    FakeChatModels,
    FakeClock,
    FakeKnowledgeBase,
    FakeToolBox,
    ScriptedModel,
    SequentialIds,
)

ALICE, MALLORY = OwnerId("alice"), OwnerId("mallory")


class Kit:
    def __init__(self) -> None:
        self.store, self.clock, self.ids = FakeAgentStore(), FakeClock(), SequentialIds()
        self.models = FakeChatModels(default=ScriptedModel([]), other=ScriptedModel([]))

        async def noop(args: object) -> str:
            return ""

        check = ConfigCheck(FakeToolBox({"calculator": noop}), FakeKnowledgeBase(), self.models)
        self.create = CreateAgent(self.store, self.clock, self.ids)
        self.save = SaveDraft(self.store, self.clock)
        self.sharing = FakeRecallIndex()
        self.publish = PublishAgent(self.store, check, self.clock, self.sharing)
        self.resolve = ResolveConfig(self.store, self.models)


async def test_an_agent_is_its_owners_only_and_another_account_is_told_it_does_not_exist() -> None:
    kit = Kit()
    made = await kit.create(ALICE, "Ada", config={"preset_prompt": "Be Ada."})
    assert made.draft.revision == 1
    for attempt in (kit.save(made.id, MALLORY, 1, {}), kit.publish(made.id, MALLORY),
                    kit.resolve(made.id, MALLORY, EntryPoint.DEBUGGER)):
        with pytest.raises(NotFound):
            await attempt
    assert [a.id for a in await ListAgents(kit.store)(MALLORY)] == []


async def test_the_debugger_runs_the_draft_and_everyone_else_the_active_version() -> None:
    kit = Kit()
    made = await kit.create(ALICE, "Ada", config={"preset_prompt": "one"})
    with pytest.raises(NotPublished):
        await kit.resolve(made.id, ALICE, EntryPoint.API)
    await kit.publish(made.id, ALICE, "first")
    await kit.save(made.id, ALICE, 1, {"preset_prompt": "two"})
    draft = await kit.resolve(made.id, ALICE, EntryPoint.DEBUGGER)
    published = await kit.resolve(made.id, ALICE, EntryPoint.API)
    assert (draft.config.preset_prompt, draft.draft_revision, draft.version) == ("two", 2, None)
    assert (published.config.preset_prompt, published.version) == ("one", 1)
    await kit.publish(made.id, ALICE)
    assert (await kit.resolve(made.id, ALICE, EntryPoint.API)).config.preset_prompt == "two"
    pinned = await kit.resolve(made.id, ALICE, EntryPoint.API, version=1)
    assert (pinned.config.preset_prompt, pinned.version) == ("one", 1)
    with pytest.raises(NotFound):
        await kit.resolve(made.id, ALICE, EntryPoint.API, version=9)


async def test_a_stale_draft_is_a_conflict_and_overwrites_nothing() -> None:
    kit = Kit()
    made = await kit.create(ALICE, "Ada")
    await kit.save(made.id, ALICE, 1, {"preset_prompt": "first editor"})
    with pytest.raises(Conflict, match="revision 2, not 1"):
        await kit.save(made.id, ALICE, 1, {"preset_prompt": "second editor"})
    assert kit.store.agents[made.id].draft.config.preset_prompt == "first editor"


async def test_publishing_an_invalid_draft_lists_every_problem_and_nothing_new_is_a_conflict() -> None:
    kit = Kit()
    made = await kit.create(ALICE, "Ada", config={"tools": ["teleport"], "datasets": ["d9"], "model": "gpt-9"})
    with pytest.raises(InvalidInput) as refused:
        await kit.publish(made.id, ALICE)
    for problem in ("tools: no tool named 'teleport'", "datasets: no dataset 'd9'", "model: no model profile"):
        assert problem in refused.value.message
    fixed = await kit.save(made.id, ALICE, 1, {"tools": ["calculator"], "model": "other"})
    assert (await kit.publish(fixed.id, ALICE)).version == 1
    with pytest.raises(Conflict, match="Nothing changed"):
        await kit.publish(fixed.id, ALICE)


async def test_a_memory_model_not_configured_is_refused_at_publish_and_at_a_turn_of_the_draft() -> None:
    kit = Kit()
    made = await kit.create(ALICE, "Ada", config={"memory": {"model": "gone"}})
    with pytest.raises(InvalidInput, match=r"memory.model: no model profile named 'gone' \(known: default, other\)"):
        await kit.publish(made.id, ALICE)
    with pytest.raises(Conflict, match="memory model profile 'gone' is not configured"):
        await kit.resolve(made.id, ALICE, EntryPoint.DEBUGGER)
    fixed = await kit.save(made.id, ALICE, 1, {"memory": {"model": "other"}})
    assert (await kit.publish(fixed.id, ALICE)).version == 1


async def test_unknown_fields_are_refused_naming_them() -> None:
    with pytest.raises(InvalidInput, match="colour: unknown field"):
        await Kit().create(ALICE, "Ada", config={"colour": "red"})


async def test_restore_activate_diff_and_archive() -> None:
    kit = Kit()
    made = await kit.create(ALICE, "Ada", config={"preset_prompt": "one"})
    await kit.publish(made.id, ALICE)
    await kit.save(made.id, ALICE, 1, {"preset_prompt": "two"})
    await kit.publish(made.id, ALICE)
    await ActivateVersion(kit.store, kit.clock, kit.sharing)(made.id, ALICE, 1)
    assert (await kit.resolve(made.id, ALICE, EntryPoint.API)).version == 1
    restored = await RestoreVersion(kit.store, kit.clock)(made.id, ALICE, 1)
    assert (restored.draft.config.preset_prompt, restored.draft.revision) == ("one", 3)
    diff = await DiffVersions(kit.store)(made.id, ALICE, 1, 2)
    assert diff == [{"field": "preset_prompt", "a": "one", "b": "two"}]
    change = ChangeAgent(kit.store, kit.clock)
    await change(made.id, ALICE, status=AgentStatus.ARCHIVED)
    for refused in (kit.resolve(made.id, ALICE, EntryPoint.API), kit.save(made.id, ALICE, 3, {}),
                    change(made.id, ALICE, name="New")):
        with pytest.raises(Conflict, match="archived"):
            await refused
    assert (await change(made.id, ALICE, status=AgentStatus.ACTIVE, name="New")).name == "New"


async def test_the_default_agent_follows_the_settings_with_a_version_whose_note_says_what_changed() -> None:
    kit = Kit()
    ensure = EnsureDefaultAgent(kit.store, kit.clock)
    settings = AgentConfig(DEFAULT_AGENT, preset_prompt="Hello.")
    assert await ensure(settings) == 1
    assert await ensure(settings) == 1  # the same settings: nothing new
    assert await ensure(AgentConfig(DEFAULT_AGENT, preset_prompt="Hi.", dialog_round=3)) == 2
    [latest, first] = await kit.store.list_versions(DEFAULT_AGENT)
    assert first.note == "Created from the MEMAGENT_AGENT__* settings."
    assert latest.note == "The MEMAGENT_AGENT__* settings changed: preset_prompt, memory.dialog_round."
    everyone = await kit.resolve(DEFAULT_AGENT, MALLORY, EntryPoint.API)  # runnable by every account
    assert everyone.config.preset_prompt == "Hi."
    with pytest.raises(Conflict, match="MEMAGENT_AGENT__"):
        await kit.save(DEFAULT_AGENT, ALICE, 2, {})  # but changed by nobody through the API


async def test_an_agent_is_read_once_per_moment_and_a_change_here_shows_at_once() -> None:
    class CountingStore(FakeAgentStore):
        reads = 0

        async def get_agent(self, agent_id: AppId) -> Agent | None:
            self.reads += 1
            return await super().get_agent(agent_id)

    store, clock = CountingStore(), FakeClock(step=0)
    cached = CachedAgentStore(store, clock, ttl=2.0)
    made = await CreateAgent(cached, clock, SequentialIds())(ALICE, "Ada", config={"preset_prompt": "one"})
    for _ in range(5):
        await cached.get_agent(made.id)
    assert store.reads == 1
    await SaveDraft(cached, clock)(made.id, ALICE, 1, {"preset_prompt": "two"})  # reads once, then drops it
    assert (await cached.get_agent(made.id)).draft.config.preset_prompt == "two"  # type: ignore[union-attr]
    reads = store.reads
    await store.save_draft(replace(made, draft=replace(made.draft, revision=3)), 2)  # another process's change
    await cached.get_agent(made.id)
    assert store.reads == reads  # not seen yet: within the moment
    clock.advance(2.1)
    assert (await cached.get_agent(made.id)).draft.revision == 3  # type: ignore[union-attr]


async def test_settings_no_agent_config_may_hold_are_refused_for_the_default_agent_at_start() -> None:
    kit = Kit()
    with pytest.raises(InvalidInput, match=r"MEMAGENT_AGENT__\* settings: max_tool_rounds"):
        await EnsureDefaultAgent(kit.store, kit.clock)(AgentConfig(DEFAULT_AGENT, max_tool_rounds=25))
    assert kit.store.agents == {}


async def test_the_default_agents_id_and_owner_are_reserved() -> None:
    kit = Kit()
    with pytest.raises(InvalidInput, match="default agent"):
        await kit.create(ALICE, "Mine", agent_id="default")
    with pytest.raises(DomainError, match="platform"):
        check_owner("platform")


async def test_the_agents_conversations_reach_the_recall_its_active_config_says() -> None:
    kit = Kit()
    made = await kit.create(ALICE, "Ada", config={"memory": {"user_memory": False}})
    await kit.publish(made.id, ALICE)
    await kit.save(made.id, ALICE, 1, {"memory": {"user_scope": "agent"}})
    await kit.publish(made.id, ALICE)
    await ActivateVersion(kit.store, kit.clock, kit.sharing)(made.id, ALICE, 1)
    assert kit.sharing.agents_shared == [
        (ALICE, made.id, RecallScope.NONE), (ALICE, made.id, RecallScope.AGENT), (ALICE, made.id, RecallScope.NONE)
    ]
