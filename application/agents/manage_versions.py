"""Restore a published version into the draft, or make it the active one (a rollback without a new version)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.agents.access import own_agent
from application.agents.read_agents import version_of
from application.agents.share_memory import share_memory
from application.errors import Conflict
from domain.agents.agent import AgentConflict

if TYPE_CHECKING:
    from application.ports.agent_store import AgentStore
    from application.ports.memory_record import RecallIndex
    from application.ports.runtime import Clock
    from domain.agents.agent import Agent
    from domain.ids import AppId, OwnerId


class RestoreVersion:
    def __init__(self, store: AgentStore, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    async def __call__(self, agent_id: AppId, owner: OwnerId, version: int) -> Agent:
        agent = await own_agent(self._store, agent_id, owner)
        restored_from = await version_of(self._store, agent_id, version)
        try:
            restored = agent.restored(restored_from, self._clock.now())
        except AgentConflict as refused:
            raise Conflict(str(refused)) from refused
        if not await self._store.save_draft(restored, expected_revision=agent.draft.revision):
            raise Conflict("The draft changed meanwhile; read it again.")
        return restored


class ActivateVersion:
    def __init__(self, store: AgentStore, clock: Clock, sharing: RecallIndex) -> None:
        self._store = store
        self._clock = clock
        self._sharing = sharing

    async def __call__(self, agent_id: AppId, owner: OwnerId, version: int) -> Agent:
        agent = await own_agent(self._store, agent_id, owner)
        await version_of(self._store, agent_id, version)
        try:
            active = agent.activated(version, self._clock.now())
        except AgentConflict as refused:
            raise Conflict(str(refused)) from refused
        if not await self._store.update_agent(active, agent):
            raise Conflict(f"Agent {agent_id!r} changed meanwhile; read it again.")
        await share_memory(self._store, self._sharing, active)
        return active
