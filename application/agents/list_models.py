"""The caller's agents as OpenAI models (`GET /v1/models`, and the `model` of a completion).

An account sees the platform's default agent (`memagent`) and its own active agents; an agent key
only its own agent. Only an agent that can answer is a model: one with a published version (a
draft-only agent is listed nowhere and named as a model is `ModelNotFound`, saying to publish it).
`resolve` turns a model id (`NAME`, an agent id, `memagent`, each optionally with `@<version>`)
into the agent and pinned version, or `ModelNotFound`. A listed name is taken whole first, so an
agent whose name holds an `@` is reached by the id the listing shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.agents.read_agents import ListAgents
from application.errors import ModelNotFound
from domain.agents.model_names import agent_named, model_ids
from domain.conversations.chat_completions import parse_model
from domain.errors import DomainError

if TYPE_CHECKING:
    from application.ports.agent_store import AgentStore
    from domain.agents.agent import Agent
    from domain.ids import AppId, OwnerId

SEE_THE_LIST = "see GET /v1/models"


class ListModels:
    def __init__(self, store: AgentStore) -> None:
        self._agents = ListAgents(store)

    async def __call__(self, owner: OwnerId, key_agent: AppId | None = None) -> list[tuple[str, Agent]]:
        """The models the caller may use, as (model id, agent)."""
        return [(name, agent) for name, agent in await self._named(owner, key_agent)
                if agent.active_version is not None]

    async def _named(self, owner: OwnerId, key_agent: AppId | None) -> list[tuple[str, Agent]]:
        """Every live agent the caller sees, published or not: a name is unique among all of them,
        so a model id does not change when a namesake's draft is published."""
        named = model_ids(await self._agents(owner))
        return [(name, agent) for name, agent in named if key_agent is None or agent.id == key_agent]

    async def resolve(self, owner: OwnerId, key_agent: AppId | None, model: str) -> tuple[Agent, int | None]:
        """The agent and pinned version `model` names, among those the caller sees."""
        agents = [agent for _, agent in await self._named(owner, key_agent)]
        whole = agent_named(agents, model)
        if whole is not None:
            name, version = model, None
        else:
            try:
                name, version = parse_model(model)
            except DomainError as bad:
                raise ModelNotFound(f"The model {model!r} does not exist: {bad}; {SEE_THE_LIST}.") from bad
        found = whole or agent_named(agents, name)
        agent = next((a for a in agents if a.id == found), None)
        if agent is None:
            raise ModelNotFound(f"The model {model!r} does not exist or is not yours: {SEE_THE_LIST}.")
        if agent.active_version is None:
            raise ModelNotFound(f"The model {model!r} is an agent with no published version yet: publish it "
                                "to use it as a model.")
        if version is not None and version > agent.latest_version:
            raise ModelNotFound(f"The model {model!r} pins version {version}; the agent's latest is "
                                f"{agent.latest_version}.")
        return agent, version

    async def find(self, owner: OwnerId, key_agent: AppId | None, model: str) -> tuple[AppId, int | None]:
        """The id of the agent and the pinned version `model` names (`resolve`)."""
        agent, version = await self.resolve(owner, key_agent, model)
        return agent.id, version
