"""Accounts: who calls (API keys) and managing their keys."""

from application.accounts.authenticate import Authenticate
from application.accounts.create_api_key import CreateApiKey, CreatedKey
from application.accounts.list_api_keys import ListApiKeys
from application.accounts.revoke_api_key import RevokeApiKey

__all__ = ["Authenticate", "CreateApiKey", "CreatedKey", "ListApiKeys", "RevokeApiKey"]
