"""Publish an agent's draft as its next version, which then runs for everyone but the debugger."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.agents.access import own_agent
from application.agents.share_memory import share_memory
from application.errors import Conflict, InvalidInput
from domain.agents.agent import AgentConflict

if TYPE_CHECKING:
    from application.agents.check_config import ConfigCheck
    from application.ports.agent_store import AgentStore
    from application.ports.memory_record import RecallIndex
    from application.ports.runtime import Clock
    from domain.agents.agent import AgentVersion
    from domain.ids import AppId, OwnerId


class PublishAgent:
    def __init__(self, store: AgentStore, check: ConfigCheck, clock: Clock, sharing: RecallIndex) -> None:
        self._store = store
        self._check = check
        self._clock = clock
        self._sharing = sharing

    async def __call__(self, agent_id: AppId, owner: OwnerId, note: str = "") -> AgentVersion:
        """The new version. An invalid draft is refused with every problem; an unchanged one is a conflict."""
        agent = await own_agent(self._store, agent_id, owner)
        problems = await self._check.problems(agent.draft.config, owner)
        if problems:
            raise InvalidInput(f"The draft cannot be published: {'; '.join(problems)}.")
        last = await self._store.get_version(agent_id, agent.latest_version) if agent.latest_version else None
        try:
            published, version = agent.published(note, last, self._clock.now())
        except AgentConflict as refused:
            raise Conflict(str(refused)) from refused
        if not await self._store.publish(published, version):
            raise Conflict("Another version was published meanwhile; read the agent again.")
        await share_memory(self._store, self._sharing, published)
        return version
