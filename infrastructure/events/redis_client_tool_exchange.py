from __future__ import annotations

import json
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from application.errors import EventStoreUnavailable
from application.ports.client_tool_exchange import ClientToolExchange, PausedTurn
from application.ports.task_control import TaskInfo
from domain.ids import AppId, ConversationId, EndUserId, MessageId, OwnerId, TaskId
from domain.tools.client_tools import ChoiceMode, ClientToolResult, Resumption, ToolChoice

if TYPE_CHECKING:
    from redis.commands.core import AsyncScript

    from infrastructure.redis_client import RedisClient

# One blocking read waits at most this long, so that a stopped turn's wait ends soon after its
# cancellation and never holds a pooled connection for a whole pause.
BLOCK_SLICE = 1.0

# Deliver once: the pause's claim key is deleted and the results pushed in one step, so two
# requests resuming the same pause cannot both succeed.
_DELIVER = """
if redis.call('DEL', KEYS[1]) == 0 then return 0 end
redis.call('RPUSH', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1
"""


def _ms(seconds: float) -> int:
    return max(1, round(seconds * 1000))


class RedisClientToolExchange(ClientToolExchange):
    """Paused turns in Redis, so that a client's results reach the turn from any API worker.

    ``{prefix}client-call:{owner}:{call_id}`` is a hash of the PausedTurns waiting for that call,
    as JSON by task id (one, except for identical requests' legacy ids);
    ``{prefix}client-pause:{task_id}:{key}`` is the pause's claim (`PausedTurn.key`: one pause of
    the turn, not a later one), deleted by the one delivery that wins;
    ``{prefix}client-results:{task_id}:{key}`` is the list the results are pushed onto and popped
    from (BLPOP, on the blocking client). Every key lapses with the pause.
    """

    def __init__(self, client: RedisClient, results_ttl: float = 60.0) -> None:
        self._client = client
        self._results_ttl_ms = _ms(results_ttl)
        self._deliver_script: AsyncScript | None = None

    def _call_key(self, owner: OwnerId, call_id: str) -> str:
        return self._client.key("client-call", owner, call_id)

    def _claim_key(self, paused: PausedTurn) -> str:
        return self._client.key("client-pause", paused.task.task_id, paused.key)

    def _results_key(self, paused: PausedTurn) -> str:
        return self._client.key("client-results", paused.task.task_id, paused.key)

    async def pause(self, paused: PausedTurn, ttl: float) -> None:
        payload = json.dumps({"task": asdict(paused.task), "call_ids": list(paused.call_ids)}, ensure_ascii=False)
        with self._client.translate(EventStoreUnavailable, f"pausing task {paused.task.task_id}"):
            async with self._client.commands.pipeline(transaction=True) as pipe:
                pipe.set(self._claim_key(paused), "1", px=_ms(ttl))
                for call_id in paused.call_ids:
                    key = self._call_key(paused.task.owner, call_id)
                    pipe.hset(key, paused.task.task_id, payload)
                    # Every pause waits as long, so the latest one's expiry outlasts the others'.
                    pipe.pexpire(key, _ms(ttl))
                await pipe.execute()

    async def find(self, owner: OwnerId, call_id: str) -> tuple[PausedTurn, ...]:
        with self._client.translate(EventStoreUnavailable, "finding a paused turn"):
            raws = await self._client.commands.hvals(self._call_key(owner, call_id))
        return tuple(paused for raw in raws if (paused := _decode_paused(raw)) is not None)

    async def deliver(self, paused: PausedTurn, resumption: Resumption) -> bool:
        keys = [self._claim_key(paused), self._results_key(paused)]
        if self._deliver_script is None:
            self._deliver_script = self._client.commands.register_script(_DELIVER)
        with self._client.translate(EventStoreUnavailable, f"resuming task {paused.task.task_id}"):
            done = await self._deliver_script(keys=keys, args=[_encode_resumption(resumption), self._results_ttl_ms])
        return bool(done)

    async def collect(self, paused: PausedTurn, wait: float) -> Resumption | None:
        key, left = self._results_key(paused), wait
        with self._client.translate(EventStoreUnavailable, f"waiting for task {paused.task.task_id}'s tool results"):
            while True:
                # BLPOP's timeout is in seconds; 0 would block for ever, so a slice is never below 1 ms.
                popped = await self._client.blocking.blpop([key], timeout=max(0.001, min(left, BLOCK_SLICE)))
                if popped is not None:
                    return _decode_resumption(popped[1])
                left -= BLOCK_SLICE
                if left <= 0:
                    return None

    async def end(self, paused: PausedTurn) -> None:
        with self._client.translate(EventStoreUnavailable, f"ending task {paused.task.task_id}'s pause"):
            async with self._client.commands.pipeline(transaction=True) as pipe:
                for call_id in paused.call_ids:
                    pipe.hdel(self._call_key(paused.task.owner, call_id), paused.task.task_id)
                pipe.delete(self._claim_key(paused), self._results_key(paused))
                await pipe.execute()


def _encode_resumption(resumption: Resumption) -> str:
    return json.dumps({
        "results": [[r.call_id, r.output] for r in resumption.results],
        "choice": [resumption.choice.mode.value, resumption.choice.name],
    }, ensure_ascii=False)


def _decode_resumption(raw: str | bytes) -> Resumption:
    data: dict[str, Any] = json.loads(raw)
    mode, name = data["choice"]
    results = tuple(ClientToolResult(str(call_id), str(output)) for call_id, output in data["results"])
    return Resumption(results, ToolChoice(ChoiceMode(mode), name))


def _decode_paused(raw: str | bytes) -> PausedTurn | None:
    """The pause, or None when it cannot be read (treated like no pause)."""
    try:
        data = json.loads(raw)
        task = data["task"]
        info = TaskInfo(
            TaskId(str(task["task_id"])), OwnerId(str(task["owner"])), ConversationId(str(task["conversation_id"])),
            MessageId(str(task["message_id"])), EndUserId(str(task.get("end_user", ""))),
            AppId(str(task.get("agent_id", ""))),
        )
        return PausedTurn(info, tuple(str(call_id) for call_id in data["call_ids"]))
    except (ValueError, TypeError, KeyError):
        return None
