"""RecordModelCalls: each model call into the ledger, in the background, batched, kept while the
database is down.

`record` is synchronous and cheap (it never waits on the database): the metered decorators call it
as a call ends, from a `finally` that may be running a cancellation. The calls go into a queue that
one writer task drains: the calls that arrive while a batch is written go together in the next, so
a busy server writes one transaction per round trip, not one per call. A turn never waits on or
fails for the ledger. A turn that saves its own calls with its outcome
(`call_scope.turn_scope(keep_calls=True)`) has them kept in its scope instead, and hands back to
`write` those its save could not keep.

The ledger is the accounts' bill, so a batch the database could not take (`StoreUnavailable`: down,
restarting, failing over) is kept at the head of the queue and tried again, with a growing back-off,
until it is written; the ledger leaves a call it already holds as it is (by id), so a try whose
commit was lost with its connection writes nothing twice. The queue holds at most `max_pending`
calls: past that, the calls that come are dropped and counted, with one log line as the dropping
starts and one with the count once the backlog is written. A batch the database refused (a value it
cannot hold) or that met a bug is logged and dropped: trying it again would fail the same way.

`flush` waits for the queue to be written (a test); `close` is the shutdown's last flush: one more
try at once, then what the database still does not take is logged as lost. What is queued lives in
this process alone: a process that dies (killed, out of memory) loses the calls it had not written.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from typing import TYPE_CHECKING

from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, wait_exponential_jitter

from application.errors import ApplicationError, StoreUnavailable
from application.model_calls.call_scope import current_scope
from domain.billing.model_calls import CHAT, ModelCall

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.ports.model_call_ledger import ModelCallLedger
    from application.ports.runtime import Clock, IdGenerator
    from domain.conversations.messages import Usage

log = logging.getLogger(__name__)

MAX_BATCH = 500  # calls per transaction
MAX_PENDING = 50_000  # calls kept while the database is down: about 35 MB


class RecordModelCalls:
    """`backoff`: the first and the longest wait, in seconds, between tries of a batch."""

    def __init__(
        self, ledger: ModelCallLedger, clock: Clock, ids: IdGenerator,
        backoff: tuple[float, float] = (0.5, 10.0), max_pending: int = MAX_PENDING,
    ) -> None:
        self._ledger = ledger
        self._clock = clock
        self._ids = ids
        self._backoff = backoff
        self._max_pending = max_pending
        self._queued: list[ModelCall] = []
        self._writer: asyncio.Task[None] | None = None
        self._closing = False
        self._wake: asyncio.Future[None] | None = None  # set while the writer waits to try again
        self._dropped = 0  # calls dropped past `max_pending` since the backlog was last written

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
        room = self._max_pending - len(self._queued)
        if len(calls) > room:  # the queue is full only while a writer runs: it is never left unwritten
            self._drop(len(calls) - room)
            calls = calls[:room]
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
        """Until every call recorded so far is written (or its batch refused)."""
        while self._writer is not None:
            await asyncio.shield(self._writer)

    async def close(self) -> None:
        """The shutdown's last flush: a batch waiting to be tried again is tried at once, and what the
        database still does not take is logged as lost (nothing will be left to write it). The
        recorder works on after it (an app started again with the same container)."""
        self._closing = True
        if self._wake is not None and not self._wake.done():
            self._wake.set_result(None)
        try:
            await self.flush()
        finally:
            self._closing = False

    def _drop(self, count: int) -> None:
        if self._dropped == 0:
            log.error("the ledger's writer holds %d model call(s) the database has not taken: calls past "
                      "that are dropped until it takes them", self._max_pending)
        self._dropped += count

    async def _write_all(self) -> None:
        try:
            while self._queued:
                batch = self._queued[:MAX_BATCH]
                if await self._write(batch):
                    del self._queued[:len(batch)]
                else:  # the database is still down at shutdown: the rest would fail the same way
                    log.error("%d model call(s) are missing from the ledger: the database was unavailable "
                              "at shutdown", len(self._queued))
                    self._queued.clear()
            if self._dropped:
                log.error("%d model call(s) are missing from the ledger: dropped while the database was "
                          "unavailable", self._dropped)
                self._dropped = 0
        finally:
            self._writer = None

    async def _write(self, batch: list[ModelCall]) -> bool:
        """Writes the batch, trying again while the database is unavailable; False when it still was
        at shutdown. A batch refused otherwise is logged and dropped (True: done with it)."""
        try:
            async for attempt in self._attempts():
                with attempt:
                    await self._ledger.add(batch)
            if attempt.retry_state.attempt_number > 1:
                log.info("the ledger's writer wrote %d kept model call(s): the database took them again", len(batch))
        except StoreUnavailable:
            return False
        except ApplicationError as failure:
            log.error("%d model call(s) are missing from the ledger: %s", len(batch), failure.message)
        except Exception:
            log.exception("%d model call(s) are missing from the ledger", len(batch))
        return True

    def _attempts(self) -> AsyncRetrying:
        first, longest = self._backoff
        return AsyncRetrying(
            retry=retry_if_exception_type(StoreUnavailable),
            stop=lambda _: self._closing,
            wait=wait_exponential_jitter(multiplier=first, max=longest, jitter=first),
            sleep=self._pause,
            before_sleep=self._waiting,
            reraise=True,
        )

    def _waiting(self, state: RetryCallState) -> None:
        if state.attempt_number == 1:  # one line per outage, not one per try
            log.warning("the ledger's writer keeps %d model call(s) until the database takes them: %s",
                        len(self._queued), state.outcome.exception() if state.outcome else "")

    async def _pause(self, seconds: float) -> None:
        """The back-off between two tries, cut short by `close`."""
        self._wake = asyncio.get_running_loop().create_future()
        try:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._wake, seconds)
        finally:
            self._wake = None
