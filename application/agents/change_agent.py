"""Change an agent: its name and description, archive it or bring it back."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.agents.access import own_agent
from application.errors import Conflict, InvalidInput
from domain.agents.agent import AgentConflict, AgentStatus
from domain.errors import DomainError

if TYPE_CHECKING:
    from application.ports.agent_store import AgentStore
    from application.ports.runtime import Clock
    from domain.agents.agent import Agent
    from domain.ids import AppId, OwnerId


class ChangeAgent:
    def __init__(self, store: AgentStore, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    async def __call__(
        self, agent_id: AppId, owner: OwnerId, *, name: str | None = None, description: str | None = None,
        status: AgentStatus | None = None,
    ) -> Agent:
        """An archived agent takes nothing but `status: active` (unarchive)."""
        read, now = await own_agent(self._store, agent_id, owner), self._clock.now()
        agent = read
        try:
            if status is not None:
                agent = agent.with_status(status, now)
            if name is not None or description is not None:
                agent = agent.described(name, description, now)
        except AgentConflict as refused:
            raise Conflict(str(refused)) from refused
        except DomainError as broken:
            raise InvalidInput(str(broken)) from broken
        if not await self._store.update_agent(agent, read):
            raise Conflict(f"Agent {agent_id!r} changed meanwhile; read it again.")
        return agent
