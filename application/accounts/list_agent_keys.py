"""List an agent's keys: names and ids, never the keys."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.accounts.key_agent import key_agent

if TYPE_CHECKING:
    from application.ports.agent_store import AgentStore
    from application.ports.api_keys import ApiKeyStore
    from domain.accounts.keys import ApiKey
    from domain.ids import AppId, OwnerId


class ListAgentKeys:
    def __init__(self, keys: ApiKeyStore, agents: AgentStore) -> None:
        self._keys = keys
        self._agents = agents

    async def __call__(self, agent_id: AppId, owner: OwnerId | None = None) -> list[ApiKey]:
        """The keys bound to the owner's agent (revoked ones too), oldest first; `owner` None: any owner's."""
        agent = await key_agent(self._agents, agent_id, owner)
        return await self._keys.list_keys(agent.owner, agent_id=agent.id)
