"""The agent an agent key is for: it must exist and be the owner's.

The accounts capability reads agents through the `AgentStore` port only (capabilities stay
independent), so this is its own small rule rather than `application.agents.access`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import Conflict, NotFound
from domain.agents.agent import PLATFORM_OWNER

if TYPE_CHECKING:
    from application.ports.agent_store import AgentStore
    from domain.agents.agent import Agent
    from domain.ids import AppId, OwnerId


async def key_agent(agents: AgentStore, agent_id: AppId, owner: OwnerId | None) -> Agent:
    """The agent, if `owner` owns it (any owner when None: the operator's command line).

    Another owner's agent is "not found", like one that does not exist. The platform's default
    agent belongs to no account, so no account can hold a key bound to it.
    """
    agent = await agents.get_agent(agent_id)
    if agent is None or (owner is not None and agent.owner not in (owner, PLATFORM_OWNER)):
        raise NotFound(f"Agent {agent_id!r} was not found.")
    if agent.owner == PLATFORM_OWNER:
        raise Conflict(
            f"Agent {agent_id!r} is the platform's default agent and belongs to no account, so it has no "
            "agent keys: create an agent of your own (POST /api/agents) and give it keys."
        )
    return agent
