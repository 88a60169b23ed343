"""The platform's `default` agent, kept in step with the MEMAGENT_AGENT__* settings at every start.

On the first start it is created from the settings and published as version 1. When the
settings differ from its latest version at a later start, they are published as the next
version, with a note naming the fields that changed: configuring by environment keeps working.
Several workers starting at once are safe: one creates or publishes, the others find it done.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from application.errors import Conflict, InvalidInput
from domain.agents.agent import PLATFORM_OWNER, Agent, AgentDraft, AgentStatus
from domain.agents.config_codec import InvalidConfig, config_diff, config_from_dict, config_to_dict
from domain.ids import DEFAULT_AGENT

if TYPE_CHECKING:
    from application.ports.agent_store import AgentStore
    from application.ports.runtime import Clock
    from domain.agents.agent import AgentVersion
    from domain.agents.config import AgentConfig

log = logging.getLogger(__name__)

CREATED = "Created from the MEMAGENT_AGENT__* settings."


class EnsureDefaultAgent:
    def __init__(self, store: AgentStore, clock: Clock) -> None:
        self._store = store
        self._clock = clock

    async def __call__(self, config: AgentConfig) -> int:
        """The default agent's active version once it matches `config`. Settings that no agent
        config may hold are refused (`InvalidInput`), naming each problem."""
        try:
            config_from_dict(DEFAULT_AGENT, config_to_dict(config))
        except InvalidConfig as invalid:
            raise InvalidInput(f"The MEMAGENT_AGENT__* settings: {'; '.join(invalid.problems)}.") from invalid
        agent = await self._store.get_agent(DEFAULT_AGENT)
        if agent is None:
            agent = await self._create(config)
            if agent is None:  # another worker created it first
                return await self(config)
        if agent.owner != PLATFORM_OWNER:
            raise Conflict(f"An agent {DEFAULT_AGENT!r} of account {agent.owner!r} holds the default agent's id.")
        last = await self._store.get_version(DEFAULT_AGENT, agent.latest_version) if agent.latest_version else None
        if last is not None and last.config == config:
            return agent.active_version or last.version
        changed = ", ".join(field for field, _, _ in config_diff(last.config, config)) if last else ""
        note = f"The MEMAGENT_AGENT__* settings changed: {changed}." if last else CREATED
        return await self._publish(agent, last, config, note)

    async def _create(self, config: AgentConfig) -> Agent | None:
        now = self._clock.now()
        agent = Agent(DEFAULT_AGENT, PLATFORM_OWNER, "default", "The agent of the MEMAGENT_AGENT__* settings.",
                      AgentStatus.ACTIVE, AgentDraft(1, config, now), 0, None, now, now)
        try:
            await self._store.add_agent(agent)
        except Conflict:
            return None
        return agent

    async def _publish(self, agent: Agent, last: AgentVersion | None, config: AgentConfig, note: str) -> int:
        now = self._clock.now()
        drafted = agent.with_draft(config, agent.draft.revision, now)
        published, version = drafted.published(note, last, now)
        saved = await self._store.save_draft(drafted, agent.draft.revision)
        if saved and await self._store.publish(published, version):
            log.info("the default agent is at version %d: %s", version.version, note)
            return version.version
        return await self(config)  # another worker got there first: look again
