"""Warming a memory cache with what the record holds (recorded_memory_store.py, recorded_user_facts.py).

Whoever read the record before another's write may cache that older copy after the other's newer
one; so the record is read again after each warming, and the cache warmed again until the record
still reads as cached: the last warming then holds every write committed before it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeVar

from application.best_effort import best_effort

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

Copy = TypeVar("Copy")
WARM_ROUNDS = 3  # caching, then checking the record still reads the same


async def warm_as_recorded(
    copy: Copy, warm: Callable[[Copy], Awaitable[None]], read: Callable[[], Awaitable[Copy]],
    drop: Callable[[], Awaitable[None]], what: str,
) -> None:
    """Cache `copy` (just read from the record) until the record reads as cached. Should the record
    keep changing, or fail to read, the cache holds none, and the next read takes the record's. A
    cache that fails ends it (logged): the reader already has its copy."""
    for _ in range(WARM_ROUNDS):
        _, failed = await best_effort(warm(copy), None, f"caching {what}")
        if failed is not None:
            return
        again, failed = await best_effort(read(), copy, f"checking the cached {what}")
        if again == copy and failed is None:
            return
        if failed is not None:  # unchecked, the copy may predate a write (or a forget) that came between
            break
        copy = again
    await best_effort(drop(), None, f"dropping the cached {what}")
