"""When the turns that upkeep has not taken care of yet must be upkept (docs/ARCHITECTURE.md §3 step 7).

Upkeep need not follow every turn: the short-term window carries the turns not summarised yet, so
nothing is lost while it waits, as long as the window still holds all of them. They are upkept:
- when they are `every_turns` (never more than the window's `dialog_round`, so none leaves it);
- or when their tokens reach `token_budget` or half the window's `history_max_tokens` (the window
  drops its oldest pairs past that budget; half of it leaves room for the next turn, which may
  come before the upkeep is done);
- or when the conversation has been idle `idle_seconds` (0: never by idleness alone);
- and always before a fold: folds run only inside an upkeep, after its digest.

`EVERY_TURN` is the rule of an upkeep after each turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from domain.errors import DomainError

if TYPE_CHECKING:
    from domain.agents.config import AgentConfig


@dataclass(frozen=True, slots=True)
class UpkeepRule:
    every_turns: int = 1
    token_budget: int = 0  # 0: by the window's budget only
    idle_seconds: float = 0.0

    def __post_init__(self) -> None:
        if self.every_turns < 1 or self.token_budget < 0 or self.idle_seconds < 0:
            raise DomainError("every_turns must be >= 1; token_budget and idle_seconds cannot be negative")

    def due(self, turns: int, tokens: int, config: AgentConfig) -> bool:
        """Whether `turns` waiting turns of `tokens` tokens in all must be upkept now."""
        if turns >= max(1, min(self.every_turns, config.dialog_round)):
            return True
        budgets = [b for b in (self.token_budget, config.history_max_tokens // 2) if b > 0]
        return tokens >= min(budgets, default=0)

    @property
    def waits(self) -> bool:
        """Whether a turn may be left for later (else each is upkept at once)."""
        return self.every_turns > 1


EVERY_TURN = UpkeepRule()
