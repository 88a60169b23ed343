"""An agent's usage as the database counts it: per UTC day, per published version, in total.

Only published-agent turns count (not the debugger's) that have ended (not `running`). Their
`cost` and tokens are the turns' own model calls; `upkeep_*` are the calls made for the agent's
published conversations besides (memory upkeep, titles, follow-up questions, embeddings: the
model-call ledger's), and `total_*` both together.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from datetime import date

    from domain.ids import AppId, OwnerId


@dataclass(frozen=True, slots=True)
class UsageFigures:
    """What a set of turns cost and how it was received. The averages are None with no turn to
    average (the time to first token: with no turn that streamed any answer)."""

    conversations: int = 0
    messages: int = 0
    end_users: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost: float = 0.0
    avg_latency: float | None = None
    avg_first_token_latency: float | None = None
    likes: int = 0
    dislikes: int = 0
    upkeep_tokens: int = 0
    upkeep_cost: float = 0.0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def total_tokens(self) -> int:
        return self.tokens + self.upkeep_tokens

    @property
    def total_cost(self) -> float:
        return self.cost + self.upkeep_cost


@dataclass(frozen=True, slots=True)
class DayStats:
    day: date  # UTC
    figures: UsageFigures


@dataclass(frozen=True, slots=True)
class VersionStats:
    version: int | None  # None: turns recorded before agents had versions
    figures: UsageFigures


@dataclass(frozen=True, slots=True)
class UsageReport:
    agent_id: AppId
    first: date  # inclusive, UTC
    last: date  # inclusive, UTC
    version: int | None  # the one version asked for, or None for all
    total: UsageFigures
    days: tuple[DayStats, ...]  # oldest first
    versions: tuple[VersionStats, ...]  # newest version first


class UsageStats(Protocol):
    async def usage(
        self, agent_id: AppId, owner: OwnerId, first: date, last: date, version: int | None = None
    ) -> UsageReport:
        """The owner's turns with the agent from `first` to `last` (UTC days, both included), of
        one version or all. `days` holds only days with turns. Raises `StoreUnavailable`."""
        ...
