"""Waiting for a record to settle: read it again, with a growing pause, until it says what is
awaited or `limit` seconds have passed. Used where a request waits on a turn running elsewhere
(a stop, a delete): the turn ends in another task or process, and only its record says so."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

T = TypeVar("T")

FIRST_PAUSE = 0.04
LONGEST_PAUSE = 0.5


async def settled(read: Callable[[], Awaitable[T]], done: Callable[[T], bool], limit: float) -> T:
    """The first reading `done` accepts, or the last one when `limit` seconds have passed."""
    waited, pause = 0.0, FIRST_PAUSE / 2
    while True:
        value = await read()
        if done(value) or waited >= limit:
            return value
        pause = min(pause * 2, LONGEST_PAUSE, limit - waited)
        await asyncio.sleep(pause)
        waited += pause
