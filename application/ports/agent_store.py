"""Where agents, their drafts and their published versions are kept (the database)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from domain.agents.agent import Agent, AgentVersion
    from domain.ids import AppId, OwnerId


class AgentStore(Protocol):
    """Every method raises `StoreUnavailable` when the database fails."""

    async def add_agent(self, agent: Agent) -> None:
        """Store a new agent (its draft included); `Conflict` if its id is taken."""
        ...

    async def get_agent(self, agent_id: AppId) -> Agent | None:
        """The agent, whoever owns it (the use cases check the owner), or None. One indexed read."""
        ...

    async def list_agents(self, owner: OwnerId) -> list[Agent]:
        """The owner's agents, archived ones too, newest first."""
        ...

    async def update_agent(self, agent: Agent, read: Agent) -> bool:
        """Store the agent's name, description, status and pinned version, if the stored agent's
        status, pinned and latest version are still those of `read` (the agent the change started
        from), atomically; False (and nothing written) when another change came first."""
        ...

    async def save_draft(self, agent: Agent, expected_revision: int) -> bool:
        """Store `agent.draft` if the stored draft is still at `expected_revision`, atomically;
        False (and nothing written) when another save came first."""
        ...

    async def publish(self, agent: Agent, version: AgentVersion) -> bool:
        """Store `version` and the agent pointing at it in one transaction, if the stored agent's
        latest version is still `version.version - 1`; False (nothing written) otherwise."""
        ...

    async def get_version(self, agent_id: AppId, version: int) -> AgentVersion | None: ...

    async def list_versions(self, agent_id: AppId) -> list[AgentVersion]:
        """Newest first."""
        ...
