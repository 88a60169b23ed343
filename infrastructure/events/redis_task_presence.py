from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import EventStoreUnavailable
from application.ports.task_presence import TaskPresence

if TYPE_CHECKING:
    from domain.ids import TaskId
    from infrastructure.redis_client import RedisClient


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


class RedisTaskPresence(TaskPresence):
    """Leases as Redis keys with a PX expiry, readable by every server process.

    ``{prefix}alive:{task_id}``: the worker running the turn; ``{prefix}client:{task_id}``:
    some process is streaming the turn to a client.
    """

    def __init__(self, client: RedisClient) -> None:
        self._client = client

    async def worker_beat(self, task_id: TaskId, ttl: float) -> None:
        await self._set("alive", task_id, ttl)

    async def worker_alive(self, task_id: TaskId) -> bool:
        return await self._exists("alive", task_id)

    async def client_beat(self, task_id: TaskId, ttl: float) -> None:
        await self._set("client", task_id, ttl)

    async def client_attached(self, task_id: TaskId) -> bool:
        return await self._exists("client", task_id)

    async def _set(self, kind: str, task_id: TaskId, ttl: float) -> None:
        with self._client.translate(EventStoreUnavailable, f"renewing the {kind} lease of task {task_id}"):
            await self._client.commands.set(self._client.key(kind, task_id), "1", px=_ms(ttl))

    async def _exists(self, kind: str, task_id: TaskId) -> bool:
        with self._client.translate(EventStoreUnavailable, f"reading the {kind} lease of task {task_id}"):
            return bool(await self._client.commands.exists(self._client.key(kind, task_id)))
