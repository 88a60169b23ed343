"""The config a stored message ran, for work done after its turn (follow-ups, background jobs)."""

from typing import Protocol

from domain.agents.config import AgentConfig
from domain.conversations.conversation import Message


class MessageConfigs(Protocol):
    async def config_ran(self, message: Message) -> AgentConfig:
        """Its published version's config, else (a debugger turn) the agent's draft as it is now,
        since drafts keep no history. `NotFound` when the agent is gone."""
        ...
