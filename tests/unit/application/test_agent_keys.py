"""Agent keys (an account's key bound to one of its agents) and an agent's parameters, on fakes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from application.accounts.authenticate import Authenticate
from application.accounts.create_agent_key import CreateAgentKey
from application.accounts.create_api_key import CreateApiKey
from application.accounts.list_agent_keys import ListAgentKeys
from application.accounts.revoke_agent_key import RevokeAgentKey
from application.agents.read_parameters import ReadParameters
from application.agents.resolve_config import ResolveConfig
from application.errors import Conflict, Forbidden, InvalidInput, NotFound, NotPublished, Unauthorized
from domain.accounts.keys import ApiKeyId
from domain.agents.agent import AgentStatus
from domain.agents.config import AgentConfig, ModelCapabilities
from domain.ids import DEFAULT_AGENT, AppId, OwnerId
from tests.fakes import (
    CountingSecrets,
    FakeAgentStore,
    FakeApiKeyStore,
    FakeChatModels,
    FakeClock,
    ScriptedModel,
    SequentialIds,
)

ALICE, BOB = OwnerId("alice"), OwnerId("bob")
ADA, BEN = AppId("ada"), AppId("ben")


class Kit:
    def __init__(self) -> None:
        ada = AgentConfig(app_id=ADA, opening_statement="Hello, I am Ada.", suggested_questions=("Who are you?",),
                          model="vision", suggested_questions_after_answer=True)
        self.agents = FakeAgentStore.publishing(ada, owner=ALICE)
        ben = FakeAgentStore.publishing(AgentConfig(app_id=BEN), owner=BOB)
        self.agents.agents |= ben.agents
        self.agents.versions |= ben.versions
        platform = FakeAgentStore.publishing(AgentConfig(app_id=DEFAULT_AGENT))
        self.agents.agents |= platform.agents
        self.agents.versions |= platform.versions
        self.keys, self.clock = FakeApiKeyStore(), FakeClock()
        account_keys = CreateApiKey(self.keys, CountingSecrets(), self.clock, SequentialIds())
        self.create_account_key = account_keys
        self.create = CreateAgentKey(account_keys, self.agents)
        self.list = ListAgentKeys(self.keys, self.agents)
        self.revoke = RevokeAgentKey(self.keys, self.agents, self.clock)
        self.authenticate = Authenticate(self.keys, require_keys=True)
        models = FakeChatModels(default=ScriptedModel([]),
                                vision=ScriptedModel([], ModelCapabilities(tool_call=True, image_input=True)))
        self.parameters = ReadParameters(self.agents, ResolveConfig(self.agents, models), models)


async def test_an_agent_key_is_its_agents_owners_and_authenticates_as_bound_to_the_agent() -> None:
    kit = Kit()
    created = await kit.create("Ada's web page", ADA, ALICE)
    assert (created.key.owner, created.key.agent_id, created.key.name) == (ALICE, ADA, "Ada's web page")
    assert created.raw not in repr(created)
    caller = await kit.authenticate(f"Bearer {created.raw}")
    assert (caller.owner, caller.agent_id) == (ALICE, ADA)
    with pytest.raises(Forbidden):
        caller.account("list the account's agents")


async def test_the_command_line_gives_the_key_to_whoever_owns_the_agent() -> None:
    kit = Kit()
    created = await kit.create("Ben's kiosk", BEN)
    assert (created.key.owner, created.key.agent_id) == (BOB, BEN)


@pytest.mark.parametrize(("agent", "owner"), [(AppId("nobody"), ALICE), (BEN, ALICE), (AppId("nobody"), None)])
async def test_an_unknown_or_another_owners_agent_gets_no_key(agent: AppId, owner: OwnerId | None) -> None:
    kit = Kit()
    with pytest.raises(NotFound) as refused:
        await kit.create("stolen", agent, owner)
    assert refused.value.message == f"Agent {agent!r} was not found."
    assert kit.keys.keys == {}


@pytest.mark.parametrize("owner", [ALICE, None])
async def test_the_platforms_default_agent_has_no_agent_keys(owner: OwnerId | None) -> None:
    kit = Kit()
    with pytest.raises(Conflict) as refused:
        await kit.create("default", DEFAULT_AGENT, owner)
    assert "create an agent of your own" in refused.value.message
    assert kit.keys.keys == {}


async def test_an_agent_keys_name_is_checked_like_any_keys_name() -> None:
    with pytest.raises(InvalidInput):
        await Kit().create("   ", ADA, ALICE)


async def test_an_agents_keys_are_listed_without_its_owners_account_keys_or_other_agents_keys() -> None:
    kit = Kit()
    await kit.create_account_key("alice's laptop", ALICE)
    first = await kit.create("one", ADA, ALICE)
    second = await kit.create("two", ADA)
    await kit.create("ben's", BEN, BOB)
    assert [k.id for k in await kit.list(ADA, ALICE)] == [first.key.id, second.key.id]
    assert [k.id for k in await kit.list(ADA)] == [first.key.id, second.key.id]
    with pytest.raises(NotFound):
        await kit.list(ADA, BOB)


async def test_revoking_an_agent_key_stops_it_at_once_and_only_the_agents_own_keys_are_revoked_here() -> None:
    kit = Kit()
    ada_key = await kit.create("ada", ADA, ALICE)
    account = await kit.create_account_key("alice's laptop", ALICE)
    bens = await kit.create("ben's", BEN, BOB)
    for agent, key_id, owner in ((ADA, account.key.id, ALICE), (ADA, bens.key.id, ALICE),
                                 (BEN, bens.key.id, ALICE), (ADA, ApiKeyId("nope"), ALICE)):
        with pytest.raises(NotFound):
            await kit.revoke(agent, key_id, owner)
    assert all(k.is_active for k in kit.keys.keys.values())

    revoked = await kit.revoke(ADA, ada_key.key.id, ALICE)
    again = await kit.revoke(ADA, ada_key.key.id, ALICE)
    assert revoked.revoked_at is not None
    assert again.revoked_at == revoked.revoked_at
    assert [k.revoked_at for k in await kit.list(ADA, ALICE)] == [revoked.revoked_at]
    with pytest.raises(Unauthorized):
        await kit.authenticate(f"Bearer {ada_key.raw}")


async def test_parameters_are_those_of_the_active_published_version() -> None:
    kit = Kit()
    found = await kit.parameters(ADA, ALICE)
    assert (found.name, found.version, found.opening_statement) == ("ada", 1, "Hello, I am Ada.")
    assert found.suggested_questions == ("Who are you?",)
    assert (found.accepts_images, found.suggested_questions_after_answer) == (True, True)
    # A draft that changes them shows nothing until it is published.
    ada = kit.agents.agents[ADA]
    kit.agents.agents[ADA] = replace(ada, draft=replace(ada.draft, config=replace(ada.draft.config, model="default")))
    assert (await kit.parameters(ADA, ALICE, ADA)).accepts_images is True
    ben = await kit.parameters(BEN, BOB)
    assert (ben.accepts_images, ben.suggested_questions_after_answer, ben.suggested_questions) == (False, False, ())


async def test_parameters_are_for_the_agents_own_key_and_its_owner_only() -> None:
    kit = Kit()
    with pytest.raises(Forbidden) as refused:
        await kit.parameters(BEN, BOB, ADA)  # a key bound to Ada, whatever its owner
    assert refused.value.message.startswith("This key is bound to agent 'ada'")
    with pytest.raises(NotFound):
        await kit.parameters(BEN, ALICE)
    with pytest.raises(NotFound):
        await kit.parameters(AppId("nobody"), ALICE)


async def test_an_unpublished_or_archived_agent_has_no_parameters() -> None:
    kit = Kit()
    ada = kit.agents.agents[ADA]
    kit.agents.agents[ADA] = replace(ada, latest_version=0)
    with pytest.raises(NotPublished):
        await kit.parameters(ADA, ALICE)
    kit.agents.agents[ADA] = replace(ada, status=AgentStatus.ARCHIVED)
    with pytest.raises(Conflict):
        await kit.parameters(ADA, ALICE)
