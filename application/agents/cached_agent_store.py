"""An AgentStore with the agents kept in process for a moment: a turn's config costs no read.

A turn reads its agent (which version is active, the draft for the debugger) at every start; a
read costs about a millisecond, most of it in the database driver, while an agent changes rarely.
So agents read here are kept for `ttl` seconds, for turns and reads. Every change made through
this store drops the agent (before and after the write), so the process that saved a draft or
published a version runs it from its next turn; another process sees the change within `ttl`.
The use cases that change agents read through `fresh()`, never from the cache, so a change always
starts from the agent as it is. Versions never change, and `ResolveConfig` keeps them apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.ports.agent_store import AgentStore

if TYPE_CHECKING:
    from application.ports.runtime import Clock
    from domain.agents.agent import Agent, AgentVersion
    from domain.ids import AppId, OwnerId

MAX_CACHED = 10_000


class CachedAgentStore(AgentStore):
    def __init__(self, store: AgentStore, clock: Clock, ttl: float = 2.0) -> None:
        self._store = store
        self._clock = clock
        self._ttl = ttl
        self._agents: dict[AppId, tuple[Agent | None, float]] = {}

    async def get_agent(self, agent_id: AppId) -> Agent | None:
        now = self._clock.monotonic()
        cached = self._agents.get(agent_id)
        if cached is not None and now - cached[1] < self._ttl:
            return cached[0]
        agent = await self._store.get_agent(agent_id)
        if len(self._agents) >= MAX_CACHED:
            self._agents.clear()  # rare; the next reads refill it
        self._agents[agent_id] = (agent, now)
        return agent

    def fresh(self) -> AgentStore:
        """This store as the use cases that change agents see it: every read goes to the database
        (a change must start from the agent as it is), and writes drop the cached agent."""
        return _FreshAgents(self)

    def forget(self, agent_id: AppId) -> None:
        self._agents.pop(agent_id, None)

    async def add_agent(self, agent: Agent) -> None:
        try:
            await self._store.add_agent(agent)
        finally:
            self.forget(agent.id)

    async def list_agents(self, owner: OwnerId) -> list[Agent]:
        return await self._store.list_agents(owner)

    # A read that ran while a write was on its way may have cached the old agent: dropped after it.
    async def update_agent(self, agent: Agent, read: Agent) -> bool:
        try:
            return await self._store.update_agent(agent, read)
        finally:
            self.forget(agent.id)

    async def save_draft(self, agent: Agent, expected_revision: int) -> bool:
        try:
            return await self._store.save_draft(agent, expected_revision)
        finally:
            self.forget(agent.id)

    async def publish(self, agent: Agent, version: AgentVersion) -> bool:
        try:
            return await self._store.publish(agent, version)
        finally:
            self.forget(agent.id)

    async def get_version(self, agent_id: AppId, version: int) -> AgentVersion | None:
        return await self._store.get_version(agent_id, version)

    async def list_versions(self, agent_id: AppId) -> list[AgentVersion]:
        return await self._store.list_versions(agent_id)


class _FreshAgents(AgentStore):
    def __init__(self, cached: CachedAgentStore) -> None:
        self._cached = cached
        self._store = cached._store

    async def get_agent(self, agent_id: AppId) -> Agent | None:
        return await self._store.get_agent(agent_id)

    async def add_agent(self, agent: Agent) -> None:
        await self._cached.add_agent(agent)

    async def list_agents(self, owner: OwnerId) -> list[Agent]:
        return await self._store.list_agents(owner)

    async def update_agent(self, agent: Agent, read: Agent) -> bool:
        return await self._cached.update_agent(agent, read)

    async def save_draft(self, agent: Agent, expected_revision: int) -> bool:
        return await self._cached.save_draft(agent, expected_revision)

    async def publish(self, agent: Agent, version: AgentVersion) -> bool:
        return await self._cached.publish(agent, version)

    async def get_version(self, agent_id: AppId, version: int) -> AgentVersion | None:
        return await self._store.get_version(agent_id, version)

    async def list_versions(self, agent_id: AppId) -> list[AgentVersion]:
        return await self._store.list_versions(agent_id)
