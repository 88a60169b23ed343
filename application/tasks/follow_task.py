"""FollowTask: replay a task's events after a given id, then follow it live."""

from __future__ import annotations

from contextlib import aclosing
from dataclasses import dataclass
from typing import TYPE_CHECKING

from application.errors import EventStoreUnavailable, NotFound

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Sequence

    from application.ports.conversation_reader import ConversationReader
    from application.ports.event_log import EventLog, LoggedEvent
    from application.ports.runtime import Clock
    from application.ports.task_control import TaskControl, TaskInfo
    from application.ports.task_presence import TaskPresence
    from application.tasks.find_task import FindTask
    from domain.accounts.viewers import Viewer
    from domain.ids import TaskId


@dataclass(frozen=True, slots=True)
class FollowTimes:
    keepalive: float = 15.0
    client_grace: float = 30.0


class FollowTask:
    def __init__(
        self, find: FindTask, tasks: TaskControl, events: EventLog, presence: TaskPresence, store: ConversationReader,
        clock: Clock, times: FollowTimes,
    ) -> None:
        self._find = find
        self._tasks = tasks
        self._store = store
        self._events = events
        self._presence = presence
        self._clock = clock
        self._times = times

    async def owned(self, task_id: TaskId, viewer: Viewer) -> TaskInfo:
        """The task if the viewer may see it and its conversation was not deleted; anyone else is
        told it does not exist (FindTask: a running turn is found even when TaskControl lost it)."""
        info = await self._find(task_id, viewer)
        if await self._store.get_conversation(info.conversation_id, info.owner) is None:
            raise NotFound(f"Task {task_id!r} was not found.")
        return info

    async def has_ended(self, task_id: TaskId, after: int) -> bool:
        """Whether the client, having seen up to `after`, has seen (or skipped past) the end. The
        event after `after - 1` must be `after` itself: a client that saw ids the log lacks (its
        worker handed them out, then died before storing them) has not seen the end that the sweep
        appended past them (EventLog.append_past_unseen)."""
        if after <= 0:
            return False
        seen = await self._events.read(task_id, after - 1, 0)
        if seen:
            return seen[0].id == after and seen[0].thought.event.is_terminal
        last = (await self._events.read(task_id, 0, 0))[-1:]  # `after` lies beyond the whole log
        return bool(last) and last[0].thought.event.is_terminal

    async def __call__(self, task_id: TaskId, after: int = 0) -> AsyncGenerator[LoggedEvent | None]:
        """Yields events one at a time up to the terminal one, and None after `keepalive` seconds of
        silence (`batches` says more). Check ownership with `owned` first."""
        async with aclosing(self.batches(task_id, after)) as batches:  # closed with this one, not later
            async for batch in batches:
                if batch is None:
                    yield None
                    continue
                for logged in batch:
                    yield logged

    async def batches(self, task_id: TaskId, after: int = 0) -> AsyncGenerator[Sequence[LoggedEvent] | None]:
        """Yields the events read together, in order, up to the terminal one (which ends the last
        batch), and None after `keepalive` seconds of silence: a stream writes each batch at once.

        While it runs it renews the task's client lease, so the turn knows someone follows it.
        Check ownership with `owned` first.
        """
        if await self.has_ended(task_id, after):
            return  # the client already has the end; following would only ping forever
        grace, keepalive = self._times.client_grace, self._times.keepalive
        beat_every = grace / 3
        gone = _VanishWatch(self._tasks, task_id, grace)
        quiet_since = last_beat = self._clock.monotonic()
        await self._presence.client_beat(task_id, grace)
        while True:
            # Wake for whichever comes first: the keep-alive that is due, or the next client beat.
            now = self._clock.monotonic()
            wait = max(0.0, min(quiet_since + keepalive, last_beat + beat_every) - now)
            batch = await self._events.read(task_id, after, wait)
            now = self._clock.monotonic()
            if now - last_beat >= beat_every:
                await self._presence.client_beat(task_id, grace)
                last_beat = now
            if not batch:
                if now - quiet_since >= keepalive:
                    quiet_since = now
                    await gone.check(now)  # a silence is also the moment to see that the task still exists
                    yield None
                continue
            quiet_since = now
            end = next((i for i, logged in enumerate(batch) if logged.thought.event.is_terminal), None)
            if end is not None:
                yield batch[: end + 1]
                return
            yield batch
            after = batch[-1].id


LOST = "The turn's events were lost by the event store; its outcome will be in the conversation's messages."


class _VanishWatch:
    """Tells a follower when its task is gone for good: the task record is missing for `grace`
    seconds. A running turn writes its record again with every lease renewal, so only a task whose
    worker and events are both lost stays missing, and its follower must end rather than ping on."""

    def __init__(self, tasks: TaskControl, task_id: TaskId, grace: float) -> None:
        self._tasks = tasks
        self._task_id = task_id
        self._grace = grace
        self._missing_since: float | None = None

    async def check(self, now: float) -> None:
        if await self._tasks.get(self._task_id) is not None:
            self._missing_since = None
            return
        if self._missing_since is None:
            self._missing_since = now
        elif now - self._missing_since >= self._grace:
            raise EventStoreUnavailable(LOST)
