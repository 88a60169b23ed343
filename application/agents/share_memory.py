"""After an agent's active config changed (a publish, an activation): its published conversations'
items reach the recall its new config says (`domain.user_memory.recall_scope_of`), at once — not
only once each conversation has its next turn. A failure is logged; the next upkeep of each
conversation shares its items again."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.best_effort import best_effort
from domain.user_memory import recall_scope_of

if TYPE_CHECKING:
    from application.ports.agent_store import AgentStore
    from application.ports.memory_record import RecallIndex
    from domain.agents import Agent


async def share_memory(store: AgentStore, sharing: RecallIndex, agent: Agent) -> None:
    active = agent.active_version
    version = await store.get_version(agent.id, active) if active is not None else None
    if version is not None:
        work = sharing.share_agent(agent.owner, agent.id, recall_scope_of(version.config))
        await best_effort(work, None, f"sharing the memory of agent {agent.id}")
