"""The model-call ledger in memory: the test double of `ModelCallLedger` (the SQL adapter is the
real one), with a database that can be down for a number of writes, or until told otherwise."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import StoreUnavailable
from application.ports.model_call_ledger import ModelCallLedger
from domain.billing.model_calls import PurposeUsage

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from domain.billing.model_calls import ModelCall

DOWN = "The database is unavailable; try again shortly."


class FakeModelCallLedger(ModelCallLedger):
    def __init__(self, failing: int = 0) -> None:
        self.calls: list[ModelCall] = []  # each call once, as written
        self.tries = 0  # every `add`, written or not
        self.failing = failing  # this many writes fail (the database is down), then they work again
        self.down = False  # every write fails until this is False again
        self.refuse: Exception | None = None  # raised by the next write instead of writing

    async def add(self, calls: Sequence[ModelCall]) -> None:
        self.tries += 1
        if self.refuse is not None:
            refused, self.refuse = self.refuse, None
            raise refused
        if self.down or self.failing > 0:
            self.failing = max(self.failing - 1, 0)
            raise StoreUnavailable(DOWN)
        held = {c.id for c in self.calls}
        self.calls.extend(c for c in calls if c.id not in held)  # a call already there is left as it is

    async def conversation_usage(self, conversation_id: str) -> list[PurposeUsage]:
        by_purpose: dict[str, PurposeUsage] = {}
        for c in self.calls:
            if c.conversation_id != conversation_id:
                continue
            p = by_purpose.get(c.purpose, PurposeUsage(c.purpose))
            by_purpose[c.purpose] = PurposeUsage(
                c.purpose, p.calls + 1, p.prompt_tokens + c.usage.prompt_tokens,
                p.completion_tokens + c.usage.completion_tokens, p.cost + c.usage.price,
                p.estimated + int(c.usage.estimated),
            )
        return [by_purpose[name] for name in sorted(by_purpose)]

    async def spent(self, owner: str, since: datetime, agent_id: str | None = None) -> float:
        return sum(c.usage.price for c in self.calls if c.owner == owner and c.created_at >= since
                   and (agent_id is None or c.agent_id == agent_id))


class SpentLedger(ModelCallLedger):
    """A ledger whose every account and agent has spent `usd` this period (a budget check reads it)."""

    def __init__(self, usd: float) -> None:
        self.usd = usd

    async def add(self, calls: Sequence[ModelCall]) -> None:
        raise AssertionError("a budget check writes nothing")

    async def conversation_usage(self, conversation_id: str) -> list[PurposeUsage]:
        return []

    async def spent(self, owner: str, since: datetime, agent_id: str | None = None) -> float:
        return self.usd
