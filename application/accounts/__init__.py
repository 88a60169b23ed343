"""Accounts: who calls (API keys) and managing their keys, agent keys included."""

from application.accounts.authenticate import Authenticate
from application.accounts.create_agent_key import CreateAgentKey
from application.accounts.create_api_key import CreateApiKey, CreatedKey
from application.accounts.list_agent_keys import ListAgentKeys
from application.accounts.list_api_keys import ListApiKeys
from application.accounts.revoke_agent_key import RevokeAgentKey
from application.accounts.revoke_api_key import RevokeApiKey

__all__ = [
    "Authenticate", "CreateAgentKey", "CreateApiKey", "CreatedKey", "ListAgentKeys", "ListApiKeys",
    "RevokeAgentKey", "RevokeApiKey",
]
