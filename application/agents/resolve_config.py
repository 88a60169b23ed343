"""Which config a turn runs, decided once at its start by its entry point.

The debugger runs the agent's draft; every other entry point runs its active version, or the
version a request pins. Resolving costs one indexed read (the agent): versions never change, so
they are kept in process once read.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from application.agents.access import own_agent, visible_agent
from application.agents.read_agents import version_of
from application.errors import Conflict, NotPublished
from domain.conversations.conversation import EntryPoint

if TYPE_CHECKING:
    from application.ports.agent_store import AgentStore
    from application.ports.chat_models import ChatModels
    from domain.agents.agent import Agent, AgentVersion
    from domain.agents.config import AgentConfig
    from domain.ids import AppId, OwnerId

CACHED_VERSIONS = 1024


@dataclass(frozen=True, slots=True)
class ResolvedConfig:
    config: AgentConfig
    agent_id: AppId
    version: int | None  # the published version it runs; None for the draft
    draft_revision: int | None  # the draft revision it runs (the debugger)


class ResolveConfig:
    def __init__(self, store: AgentStore, models: ChatModels) -> None:
        self._store = store
        self._models = models
        self._versions: OrderedDict[tuple[AppId, int], AgentVersion] = OrderedDict()

    async def __call__(
        self, agent_id: AppId, owner: OwnerId, entry: EntryPoint, version: int | None = None
    ) -> ResolvedConfig:
        if entry is EntryPoint.DEBUGGER:
            agent = await own_agent(self._store, agent_id, owner)
            self._runnable(agent)
            return self._checked(ResolvedConfig(agent.draft.config, agent.id, None, agent.draft.revision))
        agent = await visible_agent(self._store, agent_id, owner)
        self._runnable(agent)
        wanted = version or agent.active_version
        if wanted is None:
            raise NotPublished(f"Agent {agent_id!r} has no published version yet: publish its draft first.")
        found = await self._version(agent.id, wanted)
        return self._checked(ResolvedConfig(found.config, agent.id, found.version, None))

    def _checked(self, resolved: ResolvedConfig) -> ResolvedConfig:
        config = resolved.config
        if self._models.get(config.model) is None:
            raise Conflict(f"The agent's model profile {config.model!r} is not configured on this server.")
        # Its memory would otherwise go unkept, turn after turn, with nothing but a log line to say so.
        if self._models.get(config.upkeep_model) is None:
            raise Conflict(f"The agent's memory model profile {config.upkeep_model!r} is not configured on this "
                           "server.")
        return resolved

    @staticmethod
    def _runnable(agent: Agent) -> None:
        if agent.archived:
            raise Conflict(f"Agent {agent.id!r} is archived: unarchive it first.")

    async def _version(self, agent_id: AppId, version: int) -> AgentVersion:
        key = (agent_id, version)
        cached = self._versions.get(key)
        if cached is not None:
            self._versions.move_to_end(key)
            return cached
        found = await version_of(self._store, agent_id, version)
        self._versions[key] = found
        if len(self._versions) > CACHED_VERSIONS:
            self._versions.popitem(last=False)
        return found
