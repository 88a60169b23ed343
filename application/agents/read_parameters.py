"""What a front end needs to draw an agent's chat before the first turn: its name, opening
statement, suggested questions, whether it takes images, whether it suggests follow-ups.

They are those of the config the agent's end users talk to: its active published version, so an
unpublished agent has none (`NotPublished`). An agent key reads only its own agent's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from application.agents.access import visible_agent
from application.errors import Conflict, Forbidden
from domain.conversations.conversation import EntryPoint

if TYPE_CHECKING:
    from application.agents.resolve_config import ResolveConfig
    from application.ports.agent_store import AgentStore
    from application.ports.chat_models import ChatModels
    from domain.ids import AppId, OwnerId


@dataclass(frozen=True, slots=True)
class AgentParameters:
    agent_id: AppId
    name: str
    version: int
    opening_statement: str
    suggested_questions: tuple[str, ...]
    accepts_images: bool  # the model of the config takes images: a front end may offer uploads
    suggested_questions_after_answer: bool


class ReadParameters:
    def __init__(self, store: AgentStore, resolve: ResolveConfig, models: ChatModels) -> None:
        self._store = store
        self._resolve = resolve
        self._models = models

    async def __call__(self, agent_id: AppId, owner: OwnerId, key_agent: AppId | None = None) -> AgentParameters:
        """`key_agent`: the agent the caller's key is bound to (None for an account key)."""
        if key_agent is not None and key_agent != agent_id:
            raise Forbidden(f"This key is bound to agent {key_agent!r}: it may not read agent {agent_id!r}.")
        agent = await visible_agent(self._store, agent_id, owner)
        # The API's own resolution: archived, unpublished or unconfigured-model agents answer as chat would.
        resolved = await self._resolve(agent.id, owner, EntryPoint.API)
        model = self._models.get(resolved.config.model)
        if model is None or resolved.version is None:  # ResolveConfig has refused both already
            raise Conflict(f"Agent {agent_id!r} cannot run its published config on this server.")
        config = resolved.config
        return AgentParameters(
            agent_id=agent.id, name=agent.name, version=resolved.version,
            opening_statement=config.opening_statement, suggested_questions=config.suggested_questions,
            accepts_images=model.capabilities.image_input,
            suggested_questions_after_answer=config.suggested_questions_after_answer,
        )
