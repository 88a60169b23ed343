"""Group commit: the calls that arrive while one batch is in flight go together in the next.

A Redis command costs the client far more CPU than the server (building the command, taking a
pool connection, parsing the reply), so two hundred turns that each append their own events
spend most of a core in the client alone. Batching them makes that cost per batch: a busy
server sends everything that queued behind the previous round trip in one, and a short linger
(how long the first call after an idle spell waits) lets calls that come close together, but
not at once, share a batch too.
"""

from __future__ import annotations

import asyncio
import copy
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")

# Runs one batch: a result (or an exception, which fails only that item) per item, in order.
BatchRunner = Callable[[Sequence[Item]], Awaitable[Sequence[Result | BaseException]]]


class GroupCommit(Generic[Item, Result]):
    """At most one batch in flight; `submit` waits for its item's result. `linger`: how long the
    first call after an idle spell waits for company before its batch is sent.

    An item is sent even if its caller is cancelled meanwhile: it may already be on the wire,
    and the runner's own bookkeeping must see every item it was given.
    """

    def __init__(self, run: BatchRunner[Item, Result], linger: float = 0.0) -> None:
        self._run = run
        self._linger = linger
        self._queued: list[tuple[Item, asyncio.Future[Result]]] = []
        self._sender: asyncio.Task[None] | None = None

    async def submit(self, item: Item) -> Result:
        return await self.enqueue(item)

    def enqueue(self, item: Item) -> asyncio.Future[Result]:
        """`submit` without waiting: the future gets the item's result."""
        future: asyncio.Future[Result] = asyncio.get_running_loop().create_future()
        self._queued.append((item, future))
        if self._sender is None:
            self._sender = asyncio.create_task(self._send_all())
        return future

    async def _send_all(self) -> None:
        try:
            if self._linger > 0:
                await asyncio.sleep(self._linger)
            while self._queued:
                batch, self._queued = self._queued, []
                await self._send(batch)
        except asyncio.CancelledError:  # the loop is shutting down: nobody waits in vain
            for _, future in self._queued:
                future.cancel()
            self._queued = []
            raise
        finally:
            self._sender = None

    async def _send(self, batch: list[tuple[Item, asyncio.Future[Result]]]) -> None:
        try:
            results = list(await self._run([item for item, _ in batch]))
            if len(results) != len(batch):
                raise RuntimeError(f"a batch of {len(batch)} got {len(results)} results")
        except asyncio.CancelledError:
            for _, future in batch:
                future.cancel()
            raise
        except BaseException as failure:  # the whole batch failed: every caller hears why
            results = [_copy_for_a_caller(failure) for _ in batch]
        for (_, future), result in zip(batch, results, strict=True):
            if future.done():  # its caller was cancelled
                continue
            if isinstance(result, BaseException):
                future.set_exception(result)
            else:
                future.set_result(result)


def _copy_for_a_caller(failure: BaseException) -> BaseException:
    """A copy of a batch's failure, chained to it, for one caller: each caller raises it in its own
    task, and one shared exception would collect every task's frames in its traceback."""
    try:
        copied = copy.copy(failure)
    except Exception:  # an exception that cannot be rebuilt from its args is shared as it is
        return failure
    copied.__cause__ = failure
    return copied
