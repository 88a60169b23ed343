"""PreparingGate: how many turns of this process read their memory and assemble their prompt at once.

Why a bound: preparing a turn (the window, recall, the prompt) is most of its CPU, and it runs on
the event loop that also relays every other turn's chunks. Two hundred turns started together
would each take their slice before any stream moves on, and the chunks already streaming wait
behind them (tests/bench/sse_load.py measured a p99 added delay per chunk of 4x the floor so).
A turn waiting here has sent nothing yet, and it is let in as soon as another has its prompt,
before that one's model request goes out, so a slow model never holds the gate
(docs/ARCHITECTURE.md §3).
"""

from __future__ import annotations

import asyncio
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import AsyncIterator


class PreparingGate:
    """`limit` turns at once; 0 lets every turn in."""

    __slots__ = ("_limit", "_loop", "_slots")

    def __init__(self, limit: int = 0) -> None:
        if limit < 0:
            raise ValueError("the preparing gate's limit is 0 (none) or more")
        self._limit = limit
        self._loop: asyncio.AbstractEventLoop | None = None
        self._slots: asyncio.Semaphore | None = None

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
        # One per event loop: the container outlives a test's loop, and a semaphore bound to a
        # closed loop would fail the next one's turns.
        loop = asyncio.get_running_loop()
        if self._slots is None or self._loop is not loop:
            self._loop, self._slots = loop, asyncio.Semaphore(self._limit)
        return self._slots
