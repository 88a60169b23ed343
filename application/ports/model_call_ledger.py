"""The model-call ledger: every model call, written in batches, read back added up."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime

    from domain.billing.model_calls import ModelCall, PurposeUsage


class ModelCallLedger(Protocol):
    async def add(self, calls: Sequence[ModelCall]) -> None:
        """Write the calls in one transaction; a call already written (by its id) is left as it is, so
        a batch tried again writes none twice. Raises `StoreUnavailable`."""
        ...

    async def conversation_usage(self, conversation_id: str) -> list[PurposeUsage]:
        """The conversation's calls added up by purpose (only purposes it has), by purpose name."""
        ...

    async def spent(self, owner: str, since: datetime, agent_id: str | None = None) -> float:
        """USD the owner's calls (of one agent, or of all) cost from `since` on."""
        ...
