"""Saving a finished turn: its outcome and steps in one transaction, retried while the database is down.

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

    from application.ports.message_store import MessageStore
    from domain.conversation import Message, MessageAgentThought

log = logging.getLogger(__name__)


class SaveOutcome:
    def __init__(self, store: MessageStore, retry_for: float = 10.0) -> None:
        self._store = store
        self._retry_for = retry_for

    async def __call__(self, finished: Message, steps: Sequence[MessageAgentThought]) -> ApplicationError | None:
        """Stores the outcome with its steps; the failure that kept it from being stored, or None."""
        try:
            async for attempt in self._attempts():
                with attempt:
                    await self._store.finish_message(finished, steps)
        except ApplicationError as failure:
            log.error("turn %s: could not save its outcome: %s", finished.task_id, failure.message)
            return failure
        except Exception:  # whatever went wrong, the turn must still end with an event and a status
            log.exception("turn %s: could not save its outcome", finished.task_id)
            return ApplicationError("An internal error kept the turn's outcome from being saved.")
        return None

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
