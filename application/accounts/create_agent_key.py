"""Create an agent key: an account's key bound to one of its agents, for a front end serving its
end users. Like every key it is shown once; only its hash is stored."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.accounts.key_agent import key_agent

if TYPE_CHECKING:
    from application.accounts.create_api_key import CreateApiKey, CreatedKey
    from application.ports.agent_store import AgentStore
    from domain.ids import AppId, OwnerId


class CreateAgentKey:
    def __init__(self, create: CreateApiKey, agents: AgentStore) -> None:
        self._create = create
        self._agents = agents

    async def __call__(self, name: str, agent_id: AppId, owner: OwnerId | None = None) -> CreatedKey:
        """A key of the agent's owner bound to `agent_id`. `owner`: the account asking (over HTTP);
        None on the operator's command line, where the key goes to whoever owns the agent."""
        agent = await key_agent(self._agents, agent_id, owner)
        return await self._create(name, agent.owner, agent_id=agent.id)
