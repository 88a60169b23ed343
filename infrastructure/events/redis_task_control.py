from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING

from application.errors import EventStoreUnavailable
from application.ports.task_control import TaskControl, TaskInfo
from domain.ids import AppId, ConversationId, EndUserId, MessageId, OwnerId, TaskId
from infrastructure.group_commit import GroupCommit

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redis.commands.core import AsyncScript

    from infrastructure.redis_client import RedisClient

# The owner check and the flag are one script so that the check cannot go stale
# between reading the registration and setting the flag (the task could expire or be
# re-registered in between). The registration is the JSON `register` writes.
_REQUEST_STOP = """
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local ok, info = pcall(cjson.decode, raw)
if not ok or type(info) ~= 'table' or info['owner'] ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], '1', 'PX', ARGV[2])
return 1
"""


def _ms(seconds: float) -> int:
    # Milliseconds (SET PX rather than SETEX) so that sub-second TTLs keep their meaning.
    return max(1, round(seconds * 1000))


class RedisTaskControl(TaskControl):
    """Task owners and stop flags in Redis, so a stop reaches whichever process runs the task.

    ``{prefix}task:{task_id}`` holds the TaskInfo as JSON for `ttl` seconds;
    ``{prefix}stop:{task_id}`` is the stop flag, kept `stop_ttl` seconds (default 600).
    Redis failures raise `EventStoreUnavailable`.
    """

    def __init__(self, client: RedisClient, stop_ttl: float = 600.0) -> None:
        if stop_ttl <= 0:
            raise ValueError("stop_ttl must be positive")
        self._client = client
        self._stop_ttl_ms = _ms(stop_ttl)
        self._stop_script: AsyncScript | None = None
        # Every running turn checks its flag a few times a second; checks that coincide (turns
        # check on a shared grid, see TurnWatch) go as one MGET.
        self._stop_checks: GroupCommit[TaskId, bool] = GroupCommit(self._check_stops)

    def _task_key(self, task_id: TaskId) -> str:
        return self._client.key("task", task_id)

    def _stop_key(self, task_id: TaskId) -> str:
        return self._client.key("stop", task_id)

    async def register(self, info: TaskInfo, ttl: float) -> None:
        payload = json.dumps(asdict(info), ensure_ascii=False)
        with self._client.translate(EventStoreUnavailable, f"registering task {info.task_id}"):
            await self._client.commands.set(self._task_key(info.task_id), payload, px=_ms(ttl))

    async def get(self, task_id: TaskId) -> TaskInfo | None:
        with self._client.translate(EventStoreUnavailable, f"reading task {task_id}"):
            raw = await self._client.commands.get(self._task_key(task_id))
        return None if raw is None else _decode_info(raw)

    async def request_stop(self, task_id: TaskId, owner: OwnerId) -> bool:
        if self._stop_script is None:
            self._stop_script = self._client.commands.register_script(_REQUEST_STOP)
        keys = [self._task_key(task_id), self._stop_key(task_id)]
        with self._client.translate(EventStoreUnavailable, f"stopping task {task_id}"):
            done = await self._stop_script(keys=keys, args=[owner, self._stop_ttl_ms])
        return bool(done)

    async def stop_requested(self, task_id: TaskId) -> bool:
        return await self._stop_checks.submit(task_id)

    async def _check_stops(self, task_ids: Sequence[TaskId]) -> list[bool]:
        with self._client.translate(EventStoreUnavailable, f"checking the stop flag of {_tasks(task_ids)}"):
            flags = await self._client.commands.mget([self._stop_key(t) for t in task_ids])
        return [flag is not None for flag in flags]


def _tasks(task_ids: Sequence[TaskId]) -> str:
    """A batch's tasks for an error message: the id of a lone one, else how many."""
    distinct = sorted(set(task_ids))
    return f"task {distinct[0]}" if len(distinct) == 1 else f"{len(distinct)} tasks"


def _decode_info(raw: str | bytes) -> TaskInfo | None:
    """The registration, or None when it cannot be read (treated like an unknown task)."""
    try:
        data = json.loads(raw)
        return TaskInfo(
            task_id=TaskId(str(data["task_id"])),
            owner=OwnerId(str(data["owner"])),
            conversation_id=ConversationId(str(data["conversation_id"])),
            message_id=MessageId(str(data["message_id"])),
            end_user=EndUserId(str(data.get("end_user", ""))),
            agent_id=AppId(str(data.get("agent_id", ""))),
        )
    except (ValueError, TypeError, KeyError):
        return None
