"""Who may scrape the metrics: an account key, or the metrics token (MEMAGENT_METRICS__TOKEN), for
a Prometheus server that should hold no account's key. An agent key may not: the metrics are the
whole service's. In single-user mode, as for every route, a request without a key may."""

from __future__ import annotations

import hashlib
import hmac
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from application.accounts.authenticate import Authenticate


class AuthorizeScrape:
    def __init__(self, authenticate: Authenticate, token: str | None) -> None:
        self._authenticate = authenticate
        # Only its digest is kept: equal lengths make the comparison's time independent of the token.
        self._token = hashlib.sha256(token.encode()).digest() if token else None

    async def __call__(self, authorization: str | None) -> None:
        """Raises `Unauthorized` (no valid key or token) or `Forbidden` (an agent key)."""
        if self._token is not None and self._is_token(authorization or ""):
            return
        caller = await self._authenticate(authorization)
        caller.account("the metrics")

    def _is_token(self, authorization: str) -> bool:
        scheme, _, sent = authorization.strip().partition(" ")
        digest = hashlib.sha256(sent.strip().encode()).digest()
        return scheme.lower() == "bearer" and self._token is not None and hmac.compare_digest(digest, self._token)
