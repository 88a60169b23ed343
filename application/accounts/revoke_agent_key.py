"""Revoke one of an agent's keys, at once."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.accounts.key_agent import key_agent
from application.errors import NotFound

if TYPE_CHECKING:
    from application.ports.agent_store import AgentStore
    from application.ports.api_keys import ApiKeyStore
    from application.ports.runtime import Clock
    from domain.accounts.keys import ApiKey, ApiKeyId
    from domain.ids import AppId, OwnerId


class RevokeAgentKey:
    def __init__(self, keys: ApiKeyStore, agents: AgentStore, clock: Clock) -> None:
        self._keys = keys
        self._agents = agents
        self._clock = clock

    async def __call__(self, agent_id: AppId, key_id: ApiKeyId, owner: OwnerId) -> ApiKey:
        """Revoked at once; revoking twice is harmless. A key of another agent, or an account key,
        is "not found" here: this route revokes only what it lists."""
        agent = await key_agent(self._agents, agent_id, owner)
        # An agent has few keys, and a key never changes agent: checking against its list is exact.
        if not any(k.id == key_id for k in await self._keys.list_keys(agent.owner, agent_id=agent.id)):
            raise NotFound(f"Agent {agent_id!r} has no key with id {key_id!r}.")
        revoked = await self._keys.revoke(key_id, self._clock.now())
        if revoked is None:  # cannot happen: keys are never deleted
            raise NotFound(f"Agent {agent_id!r} has no key with id {key_id!r}.")
        return revoked
