"""The model-call ledger's entries, what they add up to, and spending budgets.

A `ModelCall` is one call to a model, with what it consumed (`usage`: its tokens, its price in USD,
and `estimated` when the tokens were counted here because the server reported none). A turn's own
calls (`purpose` "chat") name their message; the others (upkeep, titles, follow-up questions,
embeddings) only their conversation, or nothing when no conversation was being served.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from domain.errors import DomainError

if TYPE_CHECKING:
    from datetime import datetime

    from domain.conversations.messages import Usage

CHAT = "chat"  # the purpose of a turn's own calls; every other purpose is upkeep of some kind
MAX_BUDGET_USD = 1_000_000_000.0


@dataclass(frozen=True, slots=True)
class ModelCall:
    id: str
    created_at: datetime
    owner: str  # the account billed ("" when no account was being served)
    agent_id: str
    conversation_id: str | None
    message_id: str | None
    purpose: str
    profile: str
    model: str
    usage: Usage
    latency: float  # seconds from the call's start to its end
    status: str  # ok, error or cancelled
    agent_version: int | None = None
    debug: bool = False  # a call of a debugger conversation (an agent's draft)


@dataclass(frozen=True, slots=True)
class PurposeUsage:
    """The calls of one purpose added up; `estimated` counts the calls priced on local counts."""

    purpose: str
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    estimated: int = 0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


def cost_of(prompt_tokens: int, completion_tokens: int, input_price: float, output_price: float) -> float:
    """USD a call's tokens cost at prices in USD per million tokens."""
    return (prompt_tokens * input_price + completion_tokens * output_price) / 1_000_000


@dataclass(frozen=True, slots=True)
class Budget:
    """USD an account or an agent may spend per UTC day and per UTC month (None: no limit)."""

    daily_usd: float | None = None
    monthly_usd: float | None = None

    def __post_init__(self) -> None:
        for limit in (self.daily_usd, self.monthly_usd):
            if limit is not None and not (math.isfinite(limit) and 0 <= limit <= MAX_BUDGET_USD):
                raise DomainError(f"a budget is a number of USD from 0 to {MAX_BUDGET_USD:g}")

    @property
    def is_set(self) -> bool:
        return self.daily_usd is not None or self.monthly_usd is not None
