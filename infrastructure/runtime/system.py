"""The real clock, ids and background-task spawner."""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
import uuid
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from application.ports.api_keys import SecretSource
from application.ports.runtime import Clock, IdGenerator, TaskSpawner

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from domain.ids import TaskId

log = logging.getLogger(__name__)


class SystemClock(Clock):
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()


class UuidGenerator(IdGenerator):
    def new_id(self) -> str:
        return uuid.uuid4().hex


class AsyncioSpawner(TaskSpawner):
    """Runs turns as asyncio tasks of this process, keeping references so they are not collected."""

    def __init__(self) -> None:
        self._tasks: dict[TaskId, asyncio.Task[None]] = {}

    def spawn(self, task_id: TaskId, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(work, name=f"turn-{task_id}")
        self._tasks[task_id] = task
        task.add_done_callback(lambda done: self._forget(task_id, done))

    def is_running(self, task_id: TaskId) -> bool:
        return task_id in self._tasks

    def _forget(self, task_id: TaskId, done: asyncio.Task[None]) -> None:
        self._tasks.pop(task_id, None)
        if not done.cancelled() and done.exception() is not None:
            log.error("turn task %s crashed", task_id, exc_info=done.exception())

    async def drain(self, grace: float) -> None:
        """On shutdown: give running turns `grace` seconds, then cancel them (they persist as stop)."""
        running = list(self._tasks.values())
        if not running:
            return
        _, pending = await asyncio.wait(running, timeout=grace)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=5)


class TokenSecrets(SecretSource):
    """Secrets for API keys from the operating system's CSPRNG: 32 bytes, 43 URL-safe characters."""

    def new_secret(self) -> str:
        return secrets.token_urlsafe(32)
