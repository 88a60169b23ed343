"""After an agent's active config changed (a publish, an activation): its published conversations'
items reach the recall its new config says (`AgentConfig.recall_scope`), at once — not
only once each conversation has its next turn. A failure is logged; the next upkeep of each
conversation shares its items again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.best_effort import best_effort

if TYPE_CHECKING:
    from application.ports.agent_store import AgentStore
    from application.ports.memory_record import RecallIndex
    from domain.agents.agent import Agent


async def share_memory(store: AgentStore, sharing: RecallIndex, agent: Agent) -> None:
    active = agent.active_version
    version = await store.get_version(agent.id, active) if active is not None else None
    if version is not None:
        work = sharing.share_agent(agent.owner, agent.id, version.config.recall_scope)
        await best_effort(work, None, f"sharing the memory of agent {agent.id}")
