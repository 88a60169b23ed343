from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

from application.errors import EventStoreUnavailable
from application.ports.event_log import EventLog, LoggedEvent
from domain.conversations.thoughts import AgentThought
from domain.errors import DomainError
from domain.ids import TaskId
from infrastructure.events.local_tail import LocalTail
from infrastructure.group_commit import GroupCommit

if TYPE_CHECKING:
    from collections.abc import Sequence

    from redis.commands.core import AsyncScript

    from infrastructure.redis_client import RedisClient

log = logging.getLogger(__name__)

FIELD = "thought"

# INCRBY and XADD run in one Lua script rather than a MULTI pipeline: XADD needs the
# number INCRBY returns, which a MULTI block cannot feed forward, and a script runs
# atomically on the server, so two appends can neither share an id nor land out of
# order (XADD also refuses an id not above the stream's last one). `MAXLEN ~` trims
# in whole stream nodes, which is far cheaper than exact trimming.
# The two keys of a task are always given the same expiry (see `close`), so they vanish together.
# One call carries the appends of many tasks (see `GroupCommit`); one task's failed INCRBY or
# XADD (a counter lost while its stream lived on, a key of the wrong type) fails that task only.
# (Under Redis Cluster the keys would need a common {hash tag}; we run a single node.)
# Ids never go back: each append carries the highest id this process knows for the task, and a
# counter below it (lost to a FLUSHALL or a restart without persistence) resumes above it, so a
# follower waiting for higher ids sees the events that come after.
# A negative floor skips that many ids first: see UNSEEN_SKIP.
# KEYS: stream and counter of each append, in pairs. ARGV: max length, field name, then per
# append its number of events, the id floor, and one JSON payload per event, in order.
# Returns per append the last id, or an error message.
_APPEND = """
local out = {}
local a = 3
for k = 1, #KEYS, 2 do
  local count = tonumber(ARGV[a])
  local floor = tonumber(ARGV[a + 1])
  local current = redis.pcall('GET', KEYS[k + 1])
  if floor < 0 then
    redis.pcall('INCRBY', KEYS[k + 1], -floor)
  elseif floor > 0 and (not current or (type(current) == 'string' and (tonumber(current) or floor) < floor)) then
    redis.pcall('SET', KEYS[k + 1], floor)
  end
  local result = redis.pcall('INCRBY', KEYS[k + 1], count)
  if type(result) == 'table' then
    result = result.err
  else
    local n = result - count
    for i = 1, count do
      local ok = redis.pcall('XADD', KEYS[k], 'MAXLEN', '~', ARGV[1], '0-' .. (n + i), ARGV[2], ARGV[a + 1 + i])
      if type(ok) == 'table' and ok.err then
        result = ok.err
        break
      end
    end
  end
  a = a + count + 2
  out[#out + 1] = result
end
return out
"""

# A task's events encoded, and the last one's id when followers here already have them (`LocalTail.deliver`).
_Append = tuple[TaskId, list[bytes], int | None]

# A blocked read may overrun its BLOCK time by network latency; past this margin the
# connection is presumed dead (the blocking client has no socket read timeout).
_READ_GRACE_S = 5.0
# An append waits this long for the appends of other turns before it is sent: a few tokens' worth
# of delay buys one script call for all of them instead of one each, when many turns stream.
APPEND_LINGER_S = 0.002
LOCAL_LINGER_S = 5.0  # how long a closed task's events stay in memory for followers in this process
# The ids `append_past_unseen` skips (the sweep ending a turn whose worker died): that worker
# handed its own followers ids before Redis stored them, far fewer than this in one round trip,
# and the end must come after every one of them.
UNSEEN_SKIP = 1000


class RedisEventLog(EventLog):
    """Each task's events in a Redis stream, so any server process can follow any task.

    Events of task T live in the stream ``{prefix}events:T`` with ids ``0-1``, ``0-2``…,
    allocated from the counter ``{prefix}events:T:seq``; the event id is the sequence
    part, so ``read(after=n)`` is ``XREAD BLOCK wait STREAMS key 0-n``. Each entry holds
    the AgentThought as JSON. Streams are trimmed to about `max_len` entries (default
    10 000). Redis failures raise `EventStoreUnavailable`.

    Appends of all tasks share round trips (`GroupCommit`, after a 2 ms linger): a round trip
    that fails fails the appends of every turn in it, and a slow one holds back the next batch,
    as one slow Redis would hold back every turn's own call anyway.

    A follower in the process that runs the task reads what this process appends from memory
    (`LocalTail`) instead of a blocking XREAD per event, until a few seconds after the task
    closes; everyone else, and any later replay, reads the stream. It gets the events as they are
    queued for Redis, not once Redis has stored them: under load, waiting for the batch's linger
    and round trip made up most of a streamed delta's delay. Should Redis then not store them,
    the turn fails with an error event (unless they were its end) whose id comes after every id
    those followers saw (the next append's id floor), and they read the stream from there; the
    events they saw are missing from the record, as the events of any failed append are.
    """

    def __init__(self, client: RedisClient, max_len: int = 10_000) -> None:
        if max_len <= 0:
            raise ValueError("max_len must be positive")
        self._client = client
        self._max_len = max_len
        self._append_script: AsyncScript | None = None
        self._local = LocalTail(max_len)
        self._last_ids: dict[TaskId, int] = {}  # per task this process appends to: the highest id so far
        self._appends: GroupCommit[_Append, int] = GroupCommit(self._append_batch, APPEND_LINGER_S)

    def _keys(self, task_id: TaskId) -> tuple[str, str]:
        stream = self._client.key("events", task_id)
        return stream, f"{stream}:seq"

    def _script(self) -> AsyncScript:
        # Registered on first use so that building the adapter does not build the client.
        if self._append_script is None:
            self._append_script = self._client.commands.register_script(_APPEND)
        return self._append_script

    async def open(self, task_id: TaskId) -> None:
        self._local.open(task_id)

    async def append(self, task_id: TaskId, thought: AgentThought) -> int:
        return await self.append_many(task_id, [thought])

    async def append_many(self, task_id: TaskId, thoughts: Sequence[AgentThought]) -> int:
        return await self.append_soon(task_id, thoughts)

    async def append_past_unseen(self, task_id: TaskId, thought: AgentThought) -> int:
        if task_id not in self._last_ids:  # a negative floor skips ids (the script)
            self._last_ids[task_id] = -UNSEEN_SKIP
        return await self.append(task_id, thought)

    def append_soon(self, task_id: TaskId, thoughts: Sequence[AgentThought]) -> asyncio.Future[int]:
        if not thoughts:
            raise ValueError("an append needs at least one event")
        try:  # before anyone sees them: an event that cannot be encoded (a lone surrogate) fails its own append
            payloads = [json.dumps(t.to_dict(), ensure_ascii=False).encode() for t in thoughts]
        except (TypeError, ValueError) as failure:
            log.warning("task %s: an event cannot be encoded: %s", task_id, failure)
            refused: asyncio.Future[int] = asyncio.get_running_loop().create_future()
            refused.set_exception(EventStoreUnavailable("An event of the turn could not be stored."))
            return refused
        delivered = self._local.deliver(task_id, thoughts)
        if delivered is not None:
            self._last_ids[task_id] = delivered  # a later append's floor: above what followers here saw
        return self._appends.enqueue((task_id, payloads, delivered))

    async def _append_batch(self, appends: Sequence[_Append]) -> list[int | BaseException]:
        """One script call for the appends of every task that queued behind the last one."""
        keys: list[str] = []
        args: list[Any] = [self._max_len, FIELD]
        for task_id, payloads, delivered in appends:
            keys.extend(self._keys(task_id))
            floor = self._last_ids.get(task_id, 0) if delivered is None else delivered - len(payloads)
            args.extend([len(payloads), floor, *payloads])
        replies = await self._run_script(keys, args, sorted({task_id for task_id, _, _ in appends}))
        return [self._appended(task_id, delivered, reply)
                for (task_id, _, delivered), reply in zip(appends, replies, strict=True)]

    async def _run_script(self, keys: list[str], args: list[Any], tasks: list[TaskId]) -> list[Any]:
        where = f"task {tasks[0]}" if len(tasks) == 1 else f"{len(tasks)} tasks"
        try:
            with self._client.translate(EventStoreUnavailable, f"appending to {where}"):
                replies: list[Any] = await self._script()(keys=keys, args=args)
        except BaseException:
            # Redis may hold the events though the reply was lost: local followers must read it from now on.
            for task_id in tasks:
                self._local.forget(task_id)
            raise
        return replies

    def _appended(self, task_id: TaskId, delivered: int | None, reply: Any) -> int | BaseException:
        if isinstance(reply, int):
            if delivered is not None and reply != delivered:  # another process appended meanwhile: the record decides
                log.warning("task %s: the log stored events up to id %s where this process had %s",
                            task_id, reply, delivered)
                self._local.forget(task_id)
            self._last_ids[task_id] = max(reply, self._last_ids.get(task_id, 0))
            return reply
        self._local.forget(task_id)
        log.warning("Redis at %s refused an event of task %s: %s", self._client.safe_url, task_id, reply)
        return EventStoreUnavailable("The event store refused an event of the turn; try again shortly.")

    async def read(self, task_id: TaskId, after: int, wait: float) -> list[LoggedEvent]:
        local = await self._local.read(task_id, after, wait)
        if local is not None:
            return local
        stream, _ = self._keys(task_id)
        streams: dict[Any, Any] = {stream: f"0-{max(after, 0)}"}
        with self._client.translate(EventStoreUnavailable, f"reading task {task_id}"):
            if wait <= 0:
                # No BLOCK argument at all: "BLOCK 0" would mean wait forever.
                reply = await self._client.commands.xread(streams)
            else:
                async with asyncio.timeout(wait + _READ_GRACE_S):
                    reply = await self._client.blocking.xread(streams, block=max(1, round(wait * 1000)))
        return [_decode_entry(task_id, entry_id, fields) for entry_id, fields in _entries(reply, stream)]

    async def close(self, task_id: TaskId, retention: float) -> None:
        # Followers here get a moment to read the end from memory; later readers go to the stream.
        linger = min(LOCAL_LINGER_S, retention)
        asyncio.get_running_loop().call_later(linger, self._forget, task_id)
        ttl_ms = max(1, round(retention * 1000))
        with self._client.translate(EventStoreUnavailable, f"closing task {task_id}"):
            async with self._client.commands.pipeline(transaction=True) as pipe:
                for key in self._keys(task_id):
                    pipe.pexpire(key, ttl_ms)
                await pipe.execute()


    def _forget(self, task_id: TaskId) -> None:
        self._local.forget(task_id)
        self._last_ids.pop(task_id, None)


def _entries(reply: Any, stream: str) -> list[tuple[str, dict[str, str]]]:
    """The entries of `stream` in an XREAD reply (RESP2 list or RESP3 map)."""
    if not reply:
        return []
    if isinstance(reply, dict):
        # RESP3 (``?protocol=3`` in the URL): {stream: [[entry, ...]]}.
        return [entry for entries in reply.get(stream) or [] for entry in entries]
    return [entry for name, entries in reply if name == stream for entry in entries]


def _decode_entry(task_id: TaskId, entry_id: str, fields: dict[str, str]) -> LoggedEvent:
    try:
        thought = AgentThought.from_dict(json.loads(fields[FIELD]))
        return LoggedEvent(int(entry_id.partition("-")[2]), thought)
    except (ValueError, TypeError, KeyError, DomainError) as exc:
        # A log entry we cannot read is a broken log, not a missing event: say so.
        log.warning("event %s of task %s is unreadable: %s", entry_id, task_id, exc)
        raise EventStoreUnavailable("The turn's event log holds an event that cannot be read.") from exc
