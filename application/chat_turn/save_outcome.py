"""Saving a finished turn: its outcome, steps and own model calls in one transaction, retried while
the database is down.

A database that is unavailable when a turn ends (a restart, a failover) is waited for, with
backoff, for at most `retry_for` seconds before the terminal event goes out. If it is still down
then, the turn ends with an `error` event that carries the streamed answer and the true cause;
the record stays running, and the sweep (application/tasks/sweep_stale_turns.py) finishes it
from that event once the database is back, so neither the answer nor the cause is lost.

An outcome the database refuses (a value it cannot hold) is saved as a bare error instead, so
the conversation takes its next turn at once.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from tenacity import AsyncRetrying, retry_if_exception_type, stop_after_delay, wait_exponential_jitter

from application.errors import ApplicationError, StoreUnavailable

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.model_calls.record_model_calls import RecordModelCalls
    from application.ports.turn_record import TurnRecord
    from domain.billing.model_calls import ModelCall
    from domain.conversations.conversation import Message, MessageAgentThought

log = logging.getLogger(__name__)


class SaveOutcome:
    """`ledger`: the turn's own model calls are saved with its outcome, and those a failed save
    could not keep are handed to the ledger's writer, which keeps them until the database takes
    them (record_model_calls.py); None: the writer records them all."""

    def __init__(self, store: TurnRecord, retry_for: float = 10.0, ledger: RecordModelCalls | None = None) -> None:
        self._store = store
        self._retry_for = retry_for
        self._ledger = ledger

    @property
    def keeps_calls(self) -> bool:
        return self._ledger is not None

    async def __call__(
        self, finished: Message, steps: Sequence[MessageAgentThought], calls: Sequence[ModelCall] = ()
    ) -> ApplicationError | None:
        """Stores the outcome with its steps and calls; the failure that kept it from being stored, or None."""
        try:
            async for attempt in self._attempts():
                with attempt:
                    await self._store.finish_message(finished, steps, calls)
        except ApplicationError as failure:
            log.error("turn %s: could not save its outcome: %s", finished.task_id, failure.message)
            self.unsaved(calls)
            return failure
        except Exception:  # whatever went wrong, the turn must still end with an event and a status
            log.exception("turn %s: could not save its outcome", finished.task_id)
            self.unsaved(calls)
            return ApplicationError("An internal error kept the turn's outcome from being saved.")
        except BaseException:  # cancelled (a shutdown draining its turns): the writer still records them
            self.unsaved(calls)
            raise
        return None

    def unsaved(self, calls: Sequence[ModelCall]) -> None:
        """Calls kept for a save that did not keep them: the ledger's writer records them."""
        if self._ledger is not None:
            self._ledger.write(calls)

    async def bare(self, message: Message) -> None:
        """Saves `message` (a bare error) without steps; a failure is left to the sweep."""
        try:
            await self._store.finish_message(message, [])
        except Exception:
            log.exception("turn %s: could not save even a bare error", message.task_id)

    def _attempts(self) -> AsyncRetrying:
        return AsyncRetrying(
            retry=retry_if_exception_type(StoreUnavailable),
            stop=stop_after_delay(self._retry_for),
            wait=wait_exponential_jitter(multiplier=0.2, max=2.0, jitter=0.1),
            before_sleep=lambda state: log.warning("a turn's save failed; retrying (attempt %d)", state.attempt_number),
            reraise=True,
        )
