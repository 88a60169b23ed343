"""RecordModelCalls: each model call into the ledger, in the background, batched.

`record` is synchronous and cheap (it never waits on the database): the metered decorators call it
as a call ends, from a `finally` that may be running a cancellation. The calls go into a queue that
one writer task drains: the calls that arrive while a batch is written go together in the next, so
a busy server writes one transaction per round trip, not one per call. A batch that fails is logged
and dropped (the database counts its failure, `store_error("database")`); a turn never waits on
or fails for the ledger. `flush` waits for the queue to be written (a shutdown, a test). A turn that
saves its own calls with its outcome (`call_scope.turn_scope(keep_calls=True)`) has them kept in its
scope instead, and hands back to `write` those its save could not keep.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
from typing import TYPE_CHECKING

from application.best_effort import best_effort
from application.model_calls.call_scope import current_scope
from domain.model_calls import CHAT, ModelCall

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.ports.model_call_ledger import ModelCallLedger
    from application.ports.runtime import Clock, IdGenerator
    from domain.messages import Usage

log = logging.getLogger(__name__)

MAX_BATCH = 500  # calls per transaction


class RecordModelCalls:
    def __init__(self, ledger: ModelCallLedger, clock: Clock, ids: IdGenerator) -> None:
        self._ledger = ledger
        self._clock = clock
        self._ids = ids
        self._queued: list[ModelCall] = []
        self._writer: asyncio.Task[None] | None = None

    def record(self, purpose: str, profile: str, model: str, usage: Usage, latency: float, status: str) -> None:
        """One call that ended, for the scope it served (`call_scope`). Never raises."""
        scope = current_scope()
        chat = purpose == CHAT
        if scope is not None and chat:
            scope.add_chat(usage)
        call = ModelCall(
            id=self._ids.new_id(), created_at=self._clock.now(), owner=scope.owner if scope else "",
            agent_id=scope.agent_id if scope else "", conversation_id=scope.conversation_id if scope else None,
            message_id=scope.message_id if scope and chat else None, purpose=purpose, profile=profile, model=model,
            usage=usage, latency=round(max(latency, 0.0), 6), status=status,
            agent_version=scope.agent_version if scope else None, debug=scope.debug if scope else False,
        )
        if chat and scope is not None and scope.keep(call):  # saved with the turn's outcome
            return
        self.write([call])

    def write(self, calls: Sequence[ModelCall]) -> None:
        """Queue calls for the writer (a turn's kept calls its save could not keep). Never raises."""
        if not calls:
            return
        self._queued.extend(calls)
        if self._writer is None:
            try:
                # A context of its own: the writer serves every turn, not the one that happened to start it
                # (its log lines and spans must not carry that turn's ids).
                self._writer = asyncio.get_running_loop().create_task(
                    self._write_all(), name="model-call-ledger", context=contextvars.Context())
            except RuntimeError:  # no event loop: nothing can write them any more
                log.error("%d model call(s) were not recorded: no event loop", len(self._queued))
                self._queued.clear()

    async def flush(self) -> None:
        """Until every call recorded so far is written (or its batch failed)."""
        while self._writer is not None:
            await asyncio.shield(self._writer)

    async def _write_all(self) -> None:
        try:
            while self._queued:
                batch, self._queued = self._queued[:MAX_BATCH], self._queued[MAX_BATCH:]
                _, failed = await best_effort(self._ledger.add(batch), None, f"recording {len(batch)} model call(s)")
                if failed is not None:
                    log.error("%d model call(s) are missing from the ledger: %s", len(batch), failed)
        finally:
            self._writer = None
