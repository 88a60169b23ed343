"""Who may see and change an agent: its owner; everyone may see and run the platform's own."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import Conflict, NotFound
from domain.agents.agent import PLATFORM_OWNER

if TYPE_CHECKING:
    from application.ports.agent_store import AgentStore
    from domain.agents.agent import Agent
    from domain.ids import AppId, OwnerId


async def visible_agent(store: AgentStore, agent_id: AppId, owner: OwnerId) -> Agent:
    """The agent if `owner` may see it; anyone else is told it does not exist."""
    agent = await store.get_agent(agent_id)
    if agent is None or agent.owner not in (owner, PLATFORM_OWNER):
        raise NotFound(f"Agent {agent_id!r} was not found.")
    return agent


async def own_agent(store: AgentStore, agent_id: AppId, owner: OwnerId) -> Agent:
    """The agent if `owner` may change it. The platform's agent follows the MEMAGENT_AGENT__* settings."""
    agent = await visible_agent(store, agent_id, owner)
    if agent.owner != owner:
        raise Conflict(f"Agent {agent_id!r} is managed by the MEMAGENT_AGENT__* settings; change them instead.")
    return agent
