"""Save an agent's draft over the revision its editor read: a newer one is a conflict, never overwritten."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.agents.access import own_agent
from application.agents.config_input import read_config
from application.errors import Conflict

if TYPE_CHECKING:
    from application.ports.agent_store import AgentStore
    from application.ports.runtime import Clock
    from domain.agents.agent import Agent
    from domain.ids import AppId, OwnerId

from domain.agents.agent import AgentConflict


class SaveDraft:
    def __init__(self, store: AgentStore, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    async def __call__(self, agent_id: AppId, owner: OwnerId, revision: int, config: object) -> Agent:
        """The agent with its new draft (revision + 1)."""
        agent = await own_agent(self._store, agent_id, owner)
        draft_config = read_config(agent_id, config)
        try:
            saved = agent.with_draft(draft_config, revision, self._clock.now())
        except AgentConflict as refused:
            raise Conflict(str(refused)) from refused
        if not await self._store.save_draft(saved, expected_revision=revision):
            raise Conflict(f"The draft changed while it was being saved over revision {revision}; read it again.")
        return saved
