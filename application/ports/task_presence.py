from typing import Protocol

from domain.ids import TaskId


class TaskPresence(Protocol):
    """Who is still there for a running turn: the worker running it, and a client following it.

    Both are leases that lapse unless renewed; any server process can read them.
    Raises `EventStoreUnavailable` when the backend fails.
    """

    async def worker_beat(self, task_id: TaskId, ttl: float) -> None:
        """The worker running the turn is alive for the next `ttl` seconds."""
        ...

    async def worker_alive(self, task_id: TaskId) -> bool: ...

    async def client_beat(self, task_id: TaskId, ttl: float) -> None:
        """A client is following the turn; the turn keeps running for `ttl` seconds without one."""
        ...

    async def client_attached(self, task_id: TaskId) -> bool: ...
