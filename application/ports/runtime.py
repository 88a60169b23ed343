"""Small ports for what a use case must not take from the world by itself."""

from collections.abc import Coroutine
from datetime import datetime
from typing import Any, Protocol

from domain.ids import TaskId


class Clock(Protocol):
    def now(self) -> datetime:
        """Timezone-aware current time."""
        ...

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin, for latencies."""
        ...


class IdGenerator(Protocol):
    def new_id(self) -> str: ...


class Tokenizer(Protocol):
    def count(self, text: str) -> int: ...


class TaskSpawner(Protocol):
    """Runs a turn in the background so that it outlives the request that started it."""

    def spawn(self, task_id: TaskId, work: Coroutine[Any, Any, None]) -> None: ...

    def is_running(self, task_id: TaskId) -> bool:
        """Whether this process is running the task right now."""
        ...
