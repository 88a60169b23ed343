"""ConfigRan: the config a stored message ran, from the agent store (versions never change)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import NotFound
from application.ports.message_configs import MessageConfigs

if TYPE_CHECKING:
    from application.ports.agent_store import AgentStore
    from domain.agents.config import AgentConfig
    from domain.conversations.conversation import Message


class ConfigRan(MessageConfigs):
    def __init__(self, agents: AgentStore) -> None:
        self._agents = agents

    async def config_ran(self, message: Message) -> AgentConfig:
        agent_id = message.agent_id
        if message.agent_version is not None:
            version = await self._agents.get_version(agent_id, message.agent_version)
            if version is not None:
                return version.config
        else:
            agent = await self._agents.get_agent(agent_id)
            if agent is not None:
                return agent.draft.config
        raise NotFound(f"The agent {agent_id!r} that answered message {message.id!r} was not found.")
