from __future__ import annotations

import json
from datetime import UTC, datetime

from domain.agents.agent import Agent, AgentDraft, AgentStatus, AgentVersion
from domain.agents.config import AgentConfig, ModelParams
from domain.agents.config_codec import config_to_dict
from domain.conversations.conversation import Conversation, Message
from domain.ids import AppId, ConversationId, MessageId, OwnerId, TaskId
from infrastructure.persistence.agent_rows import (
    AgentRow,
    AgentVersionRow,
    agent_header_values,
    agent_to_domain,
    agent_values,
    version_to_domain,
    version_values,
)
from infrastructure.persistence.rows import (
    OUTCOME_COLUMNS,
    conversation_from_domain,
    conversation_to_domain,
    message_from_domain,
    message_outcome_values,
    message_to_domain,
    message_values,
)
from infrastructure.persistence.turn_statements import OPEN_MESSAGE

AT = datetime(2026, 1, 1, tzinfo=UTC)


def test_the_finish_statement_sets_every_outcome_column() -> None:
    message = Message(MessageId("m"), ConversationId("c"), OwnerId("o"), TaskId("t"), "q", AT, AT)
    assert set(OUTCOME_COLUMNS) == set(message_outcome_values(message))


# --- agents as data ------------------------------------------------------------------------------


def test_a_conversation_and_a_message_map_what_the_turn_ran_both_ways() -> None:
    conversation = Conversation(ConversationId("c"), AppId("a"), OwnerId("o"), AT, AT, is_debug=True)
    message = Message(
        MessageId("m"), ConversationId("c"), OwnerId("o"), TaskId("t"), "q", AT, AT,
        agent_version=None, draft_revision=7, entry_point="debugger",
    )

    assert conversation_to_domain(conversation_from_domain(conversation)) == conversation
    assert message_to_domain(message_from_domain(message)) == message
    assert message_values(message)["entry_point"] == "debugger"


def test_the_prebuilt_turn_insert_writes_every_message_value() -> None:
    message = Message(MessageId("m"), ConversationId("c"), OwnerId("o"), TaskId("t"), "q", AT, AT, agent_version=3)
    inserted = {column.name for column in OPEN_MESSAGE.table.columns if column.name != "seq"}
    assert {"agent_version", "draft_revision", "entry_point"} <= inserted
    assert inserted == set(message_values(message))


def _agent() -> Agent:
    agent_id = AppId("ada")
    config = AgentConfig(agent_id, preset_prompt="Be brief.", tool_names=("weather",), model_params=ModelParams(0.5))
    return Agent(
        id=agent_id, owner=OwnerId("o"), name="Ada", description="", status=AgentStatus.ARCHIVED,
        draft=AgentDraft(4, config, AT), latest_version=2, pinned_version=1, created_at=AT, updated_at=AT,
    )


def test_an_agent_maps_both_ways_with_its_config_as_codec_json() -> None:
    agent = _agent()
    row = AgentRow(**agent_values(agent))

    assert agent_to_domain(row) == agent
    assert json.loads(row.draft_config) == config_to_dict(agent.draft.config)


def test_update_agent_writes_neither_the_draft_nor_the_latest_version() -> None:
    assert set(agent_header_values(_agent())) == {"name", "description", "status", "pinned_version", "updated_at"}


def test_a_version_maps_both_ways() -> None:
    agent = _agent()
    version = AgentVersion(agent.id, 2, "second", agent.draft.config, AT)

    assert version_to_domain(AgentVersionRow(**version_values(version))) == version
