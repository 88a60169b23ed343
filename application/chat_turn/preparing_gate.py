"""PreparingGate: how many turns of this process read their memory and assemble their prompt at once.

Why a bound: preparing a turn (the window, recall, the prompt) is most of its CPU, and it runs on
the event loop that also relays every other turn's chunks. Two hundred turns started together
would each take their slice before any stream moves on, and the chunks already streaming wait
behind them (tests/bench/sse_load.py, N = 200: a p99 added delay per chunk of 6x the floor's so).
A turn waiting here has sent nothing yet, and it is let in as soon as another has its prompt,
before that one's model request goes out, so a slow model never holds the gate
(docs/ARCHITECTURE.md §3).
"""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


class PreparingGate:
    """`limit` turns at once; 0 lets every turn in."""

    __slots__ = ("_limit", "_slots")

    def __init__(self, limit: int = 0) -> None:
        if limit < 0:
            raise ValueError("the preparing gate's limit is 0 (none) or more")
        self._limit = limit
        self._slots: WeakKeyDictionary[asyncio.AbstractEventLoop, asyncio.Semaphore] = WeakKeyDictionary()

    @property
    def limit(self) -> int:
        return self._limit

    @asynccontextmanager
    async def held(self) -> AsyncIterator[None]:
        """Waits for a slot and holds it until the block ends, however it ends."""
        if self._limit == 0:
            yield
            return
        async with self._semaphore():
            yield

    def _semaphore(self) -> asyncio.Semaphore:
        # One per event loop: a semaphore binds to the first loop that waits on it, and the
        # container outlives a test's loop; a closed loop's entry goes with the loop.
        loop = asyncio.get_running_loop()
        slots = self._slots.get(loop)
        if slots is None:
            slots = self._slots[loop] = asyncio.Semaphore(self._limit)
        return slots
