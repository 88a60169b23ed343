"""The SDK's in-memory task store, bounded: a process keeps its last `max_tasks` A2A tasks for
`tasks/get` and forgets the oldest first. What a task ran stays in memagent's record either way:
its conversation and message, with their steps."""

from __future__ import annotations

from collections import OrderedDict
from typing import TYPE_CHECKING

from a2a.server.tasks import InMemoryTaskStore, TaskStore

if TYPE_CHECKING:
    from a2a.server.context import ServerCallContext
    from a2a.types import ListTasksRequest, ListTasksResponse, Task


class BoundedTaskStore(TaskStore):
    def __init__(self, max_tasks: int) -> None:
        self._tasks = InMemoryTaskStore()
        self._max = max_tasks
        self._order: OrderedDict[str, ServerCallContext] = OrderedDict()  # task id -> a context that owns it

    async def save(self, task: Task, context: ServerCallContext) -> None:
        await self._tasks.save(task, context)
        self._order[task.id] = context
        self._order.move_to_end(task.id)
        while len(self._order) > self._max:
            oldest, owner = self._order.popitem(last=False)
            await self._tasks.delete(oldest, owner)

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        return await self._tasks.get(task_id, context)

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        return await self._tasks.list(params, context)

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        self._order.pop(task_id, None)
        await self._tasks.delete(task_id, context)
