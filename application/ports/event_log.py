from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import Protocol

from domain.conversations.thoughts import AgentThought
from domain.ids import TaskId


@dataclass(frozen=True, slots=True)
class LoggedEvent:
    """An event as stored in a task's log; `id` is monotonic within the task, from 1."""

    id: int
    thought: AgentThought


class EventLog(Protocol):
    """Per-task, append-only, replayable event logs.

    Raises `EventStoreUnavailable` when the backend fails.
    """

    async def open(self, task_id: TaskId) -> None:
        """This process starts the task and will append its events from id 1: followers here may
        wait for them without asking a server. Never fails."""
        ...

    async def append(self, task_id: TaskId, thought: AgentThought) -> int:
        """Append an event and return its id."""
        ...

    async def append_past_unseen(self, task_id: TaskId, thought: AgentThought) -> int:
        """Append the end of a turn whose worker died, with an id past any that worker may have
        handed its own followers before they were stored; return it."""
        ...

    async def append_many(self, task_id: TaskId, thoughts: Sequence[AgentThought]) -> int:
        """Append events in order, at once (one round trip where there is a server); the last one's id."""
        ...

    def append_soon(self, task_id: TaskId, thoughts: Sequence[AgentThought]) -> Awaitable[int]:
        """`append_many` without waiting: the events are queued behind every earlier append, and
        readers in this process may get them from now on. Await the result for the last one's id
        once they are stored (or the failure)."""
        ...

    async def read(self, task_id: TaskId, after: int, wait: float) -> list[LoggedEvent]:
        """Events with id > `after`, waiting up to `wait` seconds when there are none yet."""
        ...

    async def close(self, task_id: TaskId, retention: float) -> None:
        """The task ended: keep its log for `retention` seconds, then drop it."""
        ...
