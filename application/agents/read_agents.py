"""Reading agents: the caller's (with the platform's own), one agent, its versions, a diff of two.

Read-only queries, one use case each, sharing the visibility rule of `access`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from application.agents.access import visible_agent
from application.errors import NotFound
from domain.agents.agent import PLATFORM_OWNER
from domain.agents.config_codec import config_diff
from domain.ids import DEFAULT_AGENT

if TYPE_CHECKING:
    from application.ports.agent_store import AgentStore
    from domain.agents.agent import Agent, AgentVersion
    from domain.ids import AppId, OwnerId


class ListAgents:
    def __init__(self, store: AgentStore) -> None:
        self._store = store

    async def __call__(self, owner: OwnerId) -> list[Agent]:
        """The caller's agents, newest first, after the platform's default agent."""
        platform = await self._store.get_agent(DEFAULT_AGENT)
        mine = await self._store.list_agents(owner)
        return ([platform] if platform is not None and platform.owner == PLATFORM_OWNER else []) + mine


class GetAgent:
    def __init__(self, store: AgentStore) -> None:
        self._store = store

    async def __call__(self, agent_id: AppId, owner: OwnerId) -> Agent:
        return await visible_agent(self._store, agent_id, owner)


class ListVersions:
    def __init__(self, store: AgentStore) -> None:
        self._store = store

    async def __call__(self, agent_id: AppId, owner: OwnerId) -> list[AgentVersion]:
        await visible_agent(self._store, agent_id, owner)
        return await self._store.list_versions(agent_id)


class GetVersion:
    def __init__(self, store: AgentStore) -> None:
        self._store = store

    async def __call__(self, agent_id: AppId, owner: OwnerId, version: int) -> AgentVersion:
        await visible_agent(self._store, agent_id, owner)
        return await version_of(self._store, agent_id, version)


class DiffVersions:
    def __init__(self, store: AgentStore) -> None:
        self._store = store

    async def __call__(self, agent_id: AppId, owner: OwnerId, a: int, b: int) -> list[dict[str, Any]]:
        """The config fields that differ between versions `a` and `b`, with both values."""
        await visible_agent(self._store, agent_id, owner)
        before, after = await version_of(self._store, agent_id, a), await version_of(self._store, agent_id, b)
        return [{"field": f, "a": x, "b": y} for f, x, y in config_diff(before.config, after.config)]


async def version_of(store: AgentStore, agent_id: AppId, version: int) -> AgentVersion:
    found = await store.get_version(agent_id, version) if version >= 1 else None
    if found is None:
        raise NotFound(f"Agent {agent_id!r} has no version {version}.")
    return found
