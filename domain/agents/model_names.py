"""Agents as OpenAI "models" (/v1/models, the `model` of /v1/chat/completions).

The platform's default agent is `memagent`. Any other agent is its name when no other agent of the
account has that name (and it is not `memagent`), else its id; its id always works too. `NAME@3`
pins published version 3 (`domain.conversations.chat_completions.parse_model`).
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from domain.agents.agent import AgentStatus
from domain.ids import DEFAULT_AGENT

if TYPE_CHECKING:
    from collections.abc import Sequence

    from domain.agents.agent import Agent
    from domain.ids import AppId

DEFAULT_MODEL = "memagent"


def model_ids(agents: Sequence[Agent]) -> list[tuple[str, Agent]]:
    """Each active agent's model id, in the order given."""
    live = [a for a in agents if a.status is AgentStatus.ACTIVE]
    names = Counter(a.name for a in live if a.id != DEFAULT_AGENT)
    named: list[tuple[str, Agent]] = []
    for agent in live:
        if agent.id == DEFAULT_AGENT:
            named.append((DEFAULT_MODEL, agent))
        elif names[agent.name] == 1 and agent.name != DEFAULT_MODEL:
            named.append((agent.name, agent))
        else:
            named.append((agent.id, agent))
    return named


def agent_named(agents: Sequence[Agent], model: str) -> AppId | None:
    """The agent a model id names: a unique name, an agent's id, or `memagent`."""
    for name, agent in model_ids(agents):
        if model in (name, agent.id):
            return agent.id
    return DEFAULT_AGENT if model == DEFAULT_MODEL else None
