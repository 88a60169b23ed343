"""Accounts and their API keys.

An account is an `OwnerId`: everything a request creates belongs to the owner of the key it
was sent with. A key is shown once, when it is made, and only its hash is kept.
"""

from __future__ import annotations

import hashlib
import hmac
import string
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, NewType

from domain.errors import DomainError
from domain.ids import AppId, OwnerId

if TYPE_CHECKING:
    from datetime import datetime

ApiKeyId = NewType("ApiKeyId", str)

KEY_PREFIX = "mk_"
# `secrets.token_urlsafe(32)` gives 43 characters of this alphabet: 256 random bits.
MIN_SECRET_CHARS = 32
MAX_KEY_CHARS = 256
_SECRET_ALPHABET = frozenset(string.ascii_letters + string.digits + "-_")
MAX_NAME_CHARS = 100
MAX_OWNER_CHARS = 255
_HEX = frozenset("0123456789abcdef")


def make_raw_key(secret: str) -> str:
    """The key as handed to its user: `mk_<secret>`. The secret must be long and random."""
    if len(secret) < MIN_SECRET_CHARS or not set(secret) <= _SECRET_ALPHABET:
        raise DomainError(f"a key secret must be at least {MIN_SECRET_CHARS} URL-safe characters")
    return KEY_PREFIX + secret


def looks_like_key(raw: str) -> bool:
    """Whether `raw` has the shape of a key at all; anything else is refused without a lookup."""
    secret = raw.removeprefix(KEY_PREFIX)
    return (
        raw.startswith(KEY_PREFIX)
        and len(raw) <= MAX_KEY_CHARS
        and len(secret) >= MIN_SECRET_CHARS
        and set(secret) <= _SECRET_ALPHABET
    )


def hash_api_key(raw: str) -> str:
    """The stored form of a key: SHA-256, hex.

    A fast, unsalted hash is right here, unlike for passwords: a key carries 256 random bits,
    so there is no dictionary to try and no way to brute-force it however cheap each guess is,
    and an unsalted digest can be looked up by an index on every request.
    """
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


RESERVED_OWNER = "platform"  # domain.agents.agent.PLATFORM_OWNER


def check_owner(owner: str) -> OwnerId:
    """An owner id as given on the command line: non-empty, printable, no spaces, ≤ 255 chars."""
    if not owner or len(owner) > MAX_OWNER_CHARS or not owner.isprintable() or any(c.isspace() for c in owner):
        raise DomainError(f"an owner id must be 1 to {MAX_OWNER_CHARS} printable characters without spaces")
    if owner == RESERVED_OWNER:
        raise DomainError(f"the owner id {RESERVED_OWNER!r} is the platform's own (it owns the default agent)")
    return OwnerId(owner)


@dataclass(frozen=True, slots=True)
class ApiKey:
    """One key of an account. Revoked keys stay listed, and never authenticate again."""

    id: ApiKeyId
    owner: OwnerId
    name: str
    key_hash: str
    created_at: datetime
    revoked_at: datetime | None = None
    # An agent key: it may only chat with this agent and reach its end users' conversations.
    agent_id: AppId | None = None

    def __post_init__(self) -> None:
        if not self.id:
            raise DomainError("an API key needs an id")
        check_owner(self.owner)
        # Not `str.isprintable`: it refuses a soft hyphen, a no-break space, the joiner inside an
        # emoji and every character a newer Unicode assigns; a name only must not be blank or
        # hold a control character (what the API's names refuse too).
        if not self.name.strip() or len(self.name) > MAX_NAME_CHARS or any(c < " " or c == "\x7f" for c in self.name):
            raise DomainError(
                f"a key name must be 1 to {MAX_NAME_CHARS} characters, not only white space, without control characters"
            )
        if len(self.key_hash) != 64 or not set(self.key_hash) <= _HEX:
            raise DomainError("a key hash must be a SHA-256 hex digest")
        for value, what in ((self.created_at, "created_at"), (self.revoked_at, "revoked_at")):
            if value is not None and value.tzinfo is None:
                raise DomainError(f"{what} must be timezone-aware")

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None

    def matches(self, raw: str) -> bool:
        """Whether `raw` is this key and the key still authenticates."""
        return self.is_active and hmac.compare_digest(hash_api_key(raw), self.key_hash)

    def revoke(self, at: datetime) -> ApiKey:
        """Revoked from `at`; revoking again keeps the first time."""
        return self if self.revoked_at is not None else replace(self, revoked_at=at)
