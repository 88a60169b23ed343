"""Create an agent: its draft (revision 1) from the config given, completed with the defaults."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from application.agents.config_input import read_config
from application.errors import InvalidInput
from domain.agents.agent import Agent, AgentDraft, AgentStatus
from domain.errors import DomainError
from domain.ids import DEFAULT_AGENT, AppId

if TYPE_CHECKING:
    from application.ports.agent_store import AgentStore
    from application.ports.runtime import Clock, IdGenerator
    from domain.ids import OwnerId


AGENT_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")


class CreateAgent:
    def __init__(self, store: AgentStore, clock: Clock, ids: IdGenerator) -> None:
        self._store = store
        self._clock = clock
        self._ids = ids

    async def __call__(
        self, owner: OwnerId, name: str, description: str = "", config: object = None, agent_id: str | None = None
    ) -> Agent:
        """`agent_id`: keep a known id (an agent imported from a file); else a new one is made."""
        if agent_id is not None and not AGENT_ID.fullmatch(agent_id):
            raise InvalidInput("An agent id has 1 to 64 letters, digits, '_' or '-'.")
        if agent_id == DEFAULT_AGENT:
            raise InvalidInput(f"The id {DEFAULT_AGENT!r} is the default agent's, which the settings manage.")
        agent_id = AppId(agent_id or self._ids.new_id())
        draft_config = read_config(agent_id, {} if config is None else config)
        now = self._clock.now()
        try:
            agent = Agent(
                agent_id, owner, name.strip(), description.strip(), AgentStatus.ACTIVE,
                AgentDraft(1, draft_config, now), 0, None, now, now,
            )
        except DomainError as broken:
            raise InvalidInput(str(broken)) from broken
        await self._store.add_agent(agent)
        return agent
