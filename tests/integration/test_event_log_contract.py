"""The EventLog contract, run against every adapter (in-process, the unit tests' double of it, Redis)."""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace
from typing import TYPE_CHECKING

import pytest

from application.errors import EventStoreUnavailable
from domain.conversations.thoughts import AgentThought, ThoughtEvent
from domain.ids import ConversationId, MessageId, TaskId, ThoughtId
from infrastructure.events import redis_event_log
from infrastructure.events.inprocess_event_log import InProcessEventLog
from infrastructure.events.redis_event_log import RedisEventLog
from tests.doubles import FailingEventLog
from tests.fakes import FakeClock
from tests.integration.redis_fixtures import dead_redis_client, redis_client  # noqa: F401

if TYPE_CHECKING:
    from application.ports.event_log import EventLog
    from infrastructure.redis_client import RedisClient

pytestmark = pytest.mark.integration

TASK = TaskId("task-1")


@pytest.fixture(params=["inprocess", "inprocess-double", "redis"])
def log(request: pytest.FixtureRequest) -> EventLog:
    if request.param == "inprocess":
        return InProcessEventLog()
    if request.param == "inprocess-double":  # the unit tests' double, with no failures asked for
        return FailingEventLog()
    return RedisEventLog(request.getfixturevalue("redis_client"))


def delta(answer: str, task_id: TaskId = TASK) -> AgentThought:
    return AgentThought(
        id=ThoughtId("th-1"),
        task_id=task_id,
        conversation_id=ConversationId("c-1"),
        message_id=MessageId("m-1"),
        event=ThoughtEvent.AGENT_MESSAGE,
        answer=answer,
    )


async def answers(log: EventLog, task_id: TaskId = TASK, after: int = 0) -> list[tuple[int, str]]:
    return [(e.id, e.thought.answer) for e in await log.read(task_id, after=after, wait=0)]


async def test_event_ids_start_at_one_and_are_monotonic(log: EventLog) -> None:
    ids = [await log.append(TASK, delta(a)) for a in ("Hel", "lo", "!")]
    assert ids == [1, 2, 3]
    assert await answers(log) == [(1, "Hel"), (2, "lo"), (3, "!")]


async def test_the_end_of_a_turn_whose_worker_died_comes_after_the_log_and_is_read_after_any_id(
    log: EventLog,
) -> None:
    await log.append_many(TASK, [delta("a"), delta("b")])
    end = await log.append_past_unseen(TASK, delta("gone"))
    assert end > 2  # on Redis far past: ids its worker handed out unstored may lie between
    assert await answers(log, after=2) == [(end, "gone")]
    assert await log.append(TASK, delta("later")) == end + 1


async def test_append_many_stores_events_in_order_with_consecutive_ids(log: EventLog) -> None:
    await log.append(TASK, delta("a"))
    assert await log.append_many(TASK, [delta("b"), delta("c"), delta("d")]) == 4
    assert await log.append(TASK, delta("e")) == 5
    assert await answers(log) == [(1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e")]


async def test_concurrent_appends_get_distinct_ids_in_log_order(log: EventLog) -> None:
    ids = await asyncio.gather(*(log.append(TASK, delta(str(n))) for n in range(50)))
    assert sorted(ids) == list(range(1, 51))
    logged = await answers(log)
    assert [event_id for event_id, _ in logged] == list(range(1, 51))
    assert dict(logged) == {event_id: str(n) for n, event_id in enumerate(ids)}


async def test_append_soon_queues_in_order_behind_earlier_appends_and_gives_the_last_id(log: EventLog) -> None:
    await log.open(TASK)
    first = log.append_soon(TASK, [delta("a"), delta("b")])
    second = log.append_soon(TASK, [delta("c")])
    assert await second == 3
    assert await first == 2
    assert await answers(log) == [(1, "a"), (2, "b"), (3, "c")]


async def test_an_event_queued_with_append_soon_wakes_a_waiting_reader(log: EventLog) -> None:
    await log.open(TASK)
    waiting = asyncio.create_task(log.read(TASK, after=0, wait=5))
    await asyncio.sleep(0.05)
    stored = log.append_soon(TASK, [delta("a")])
    assert [(e.id, e.thought.answer) for e in await asyncio.wait_for(waiting, 2)] == [(1, "a")]
    assert await stored == 1


async def test_read_after_n_replays_exactly_what_follows_n(log: EventLog) -> None:
    for a in "abcde":
        await log.append(TASK, delta(a))
    assert await answers(log, after=2) == [(3, "c"), (4, "d"), (5, "e")]
    assert await answers(log, after=5) == []


async def test_read_waits_for_a_late_append_and_returns_it(log: EventLog) -> None:
    await log.append(TASK, delta("early"))

    async def append_later() -> None:
        await asyncio.sleep(0.2)
        await log.append(TASK, delta("late"))

    writer = asyncio.create_task(append_later())
    started = time.monotonic()
    events = await log.read(TASK, after=1, wait=5)
    await writer
    assert [(e.id, e.thought.answer) for e in events] == [(2, "late")]
    assert time.monotonic() - started < 2


async def test_a_follower_of_an_opened_task_gets_its_first_event(log: EventLog) -> None:
    await log.open(TASK)
    first = asyncio.create_task(log.read(TASK, after=0, wait=5))
    await asyncio.sleep(0.05)
    await log.append_many(TASK, [delta("a"), delta("b")])
    assert [(e.id, e.thought.answer) for e in await asyncio.wait_for(first, 2)] == [(1, "a"), (2, "b")]
    assert await answers(log) == [(1, "a"), (2, "b")]


async def test_read_with_a_short_wait_returns_nothing_when_idle(log: EventLog) -> None:
    await log.append(TASK, delta("only"))
    started = time.monotonic()
    assert await log.read(TASK, after=1, wait=0.2) == []
    assert 0.15 <= time.monotonic() - started < 2


async def test_read_without_wait_does_not_block(log: EventLog) -> None:
    started = time.monotonic()
    assert await log.read(TaskId("idle-task"), after=0, wait=0) == []
    assert time.monotonic() - started < 0.1


async def test_many_waiting_readers_are_all_woken_by_one_append(log: EventLog) -> None:
    readers = [asyncio.create_task(log.read(TASK, after=0, wait=5)) for _ in range(300)]
    await asyncio.sleep(0.3)  # let every reader start waiting
    started = time.monotonic()
    await log.append(TASK, delta("news"))
    results = await asyncio.wait_for(asyncio.gather(*readers), timeout=4)
    assert time.monotonic() - started < 2
    assert all([(e.id, e.thought.answer) for e in r] == [(1, "news")] for r in results)


async def test_agent_thought_round_trips_with_every_field(log: EventLog) -> None:
    thought = AgentThought(
        id=ThoughtId("th-9"),
        task_id=TASK,
        conversation_id=ConversationId("c-9"),
        message_id=MessageId("m-9"),
        event=ThoughtEvent.AGENT_ACTION,
        thought="I should look it up — «vite»",
        observation="22 °C, sunny",
        tool="weather",
        tool_input={"city": "Paris", "days": [1, 2], "opts": {"unit": "C", "exact": True}},
        message='[{"role": "user", "content": "météo ?"}]',
        message_token_count=41,
        answer="Il fait 22 °C.",
        answer_token_count=9,
        total_token_count=50,
        total_price=0.000123,
        latency=1.25,
    )
    await log.append(TASK, thought)
    [event] = await log.read(TASK, after=0, wait=0)
    assert event.thought == thought
    assert event.thought.to_dict() == thought.to_dict()


def agent_end(finish_reason: str) -> AgentThought:
    return replace(delta("Done."), id=ThoughtId("th-end"), event=ThoughtEvent.AGENT_END, finish_reason=finish_reason)


@pytest.mark.parametrize("reason", ["stop", "length", "content_filter"])
async def test_an_agent_ends_finish_reason_survives_the_log(log: EventLog, reason: str) -> None:
    await log.append_many(TASK, [delta("Done."), agent_end(reason)])
    assert [e.thought.finish_reason for e in await log.read(TASK, after=0, wait=0)] == ["", reason]


async def test_redis_another_process_reads_the_finish_reason_from_the_stream(
    redis_client: RedisClient,  # noqa: F811
) -> None:
    appender, elsewhere = RedisEventLog(redis_client), RedisEventLog(redis_client)
    end = agent_end("content_filter")
    await appender.append_many(TASK, [delta("Done."), end])
    [_, stored] = await redis_client.commands.xrange(redis_client.key("events", TASK))
    assert json.loads(stored[1][redis_event_log.FIELD])["finish_reason"] == "content_filter"
    assert [e.thought for e in await elsewhere.read(TASK, after=1, wait=0)] == [end]  # decoded, not from memory


async def test_two_tasks_logs_are_separate(log: EventLog) -> None:
    other = TaskId("task-2")
    assert await log.append(TASK, delta("a")) == 1
    assert await log.append(other, delta("x", other)) == 1
    assert await log.append(TASK, delta("b")) == 2
    assert await answers(log) == [(1, "a"), (2, "b")]
    assert await answers(log, other) == [(1, "x")]


async def test_close_with_retention_expires_the_log(log: EventLog) -> None:
    await log.append(TASK, delta("bye"))
    await log.close(TASK, retention=0.2)
    assert await answers(log) == [(1, "bye")]  # kept during the retention
    await asyncio.sleep(0.5)
    assert await answers(log) == []


async def test_closing_an_unknown_task_is_harmless(log: EventLog) -> None:
    await log.close(TaskId("never-seen"), retention=1)


async def test_inprocess_retention_runs_on_its_clock() -> None:
    time = FakeClock(step=0)
    log, other = InProcessEventLog(clock=time.monotonic), TaskId("task-2")
    await log.append(TASK, delta("bye"))
    await log.append(other, delta("x", other))
    await log.close(TASK, retention=30)
    await log.close(other, retention=10)
    await log.close(other, retention=60)  # closed again: the later retention counts
    time.advance(29)
    assert await answers(log) == [(1, "bye")]
    time.advance(2)
    assert await answers(log) == []
    assert await answers(log, other) == [(1, "x")]
    time.advance(30)
    assert await answers(log, other) == []
    assert await log.append(TASK, delta("again")) == 1  # a dropped log starts afresh


async def test_the_double_counts_appends_records_opens_and_fails_on_demand() -> None:
    log = FailingEventLog()
    await log.open(TASK)
    log.failures = 1
    with pytest.raises(EventStoreUnavailable):
        await log.append(TASK, delta("lost"))
    assert await log.append_many(TASK, [delta("a"), delta("b")]) == 2
    assert (log.opened, log.appends) == ([TASK], 2)
    assert await answers(log) == [(1, "a"), (2, "b")]


async def test_redis_close_expires_both_stream_and_counter(redis_client: RedisClient) -> None:  # noqa: F811
    await RedisEventLog(redis_client).append(TASK, delta("a"))
    await RedisEventLog(redis_client).close(TASK, retention=30)
    for key in (redis_client.key("events", TASK), redis_client.key("events", TASK) + ":seq"):
        assert 0 < await redis_client.commands.pttl(key) <= 30_000


async def test_redis_ids_resume_above_the_last_one_when_redis_lost_the_log(
    redis_client: RedisClient,  # noqa: F811
) -> None:
    appender, other = RedisEventLog(redis_client), RedisEventLog(redis_client)
    await appender.open(TASK)
    assert await appender.append_many(TASK, [delta("a"), delta("b"), delta("c")]) == 3
    waiting = asyncio.create_task(other.read(TASK, 3, wait=5))  # a follower elsewhere, waiting for more
    await asyncio.sleep(0.1)
    # What a FLUSHALL or a restart without persistence does to the task: both keys are gone.
    await redis_client.commands.delete(redis_client.key("events", TASK), redis_client.key("events", TASK) + ":seq")
    assert await appender.append(TASK, delta("d")) == 4  # never 1 again
    assert [(e.id, e.thought.answer) for e in await waiting] == [(4, "d")]
    assert [e.id for e in await other.read(TASK, 0, 0)] == [4]


async def test_another_process_replays_and_follows_what_the_appender_serves_from_memory(
    redis_client: RedisClient,  # noqa: F811
) -> None:
    appender, elsewhere = RedisEventLog(redis_client), RedisEventLog(redis_client)
    await appender.open(TASK)
    await appender.append_many(TASK, [delta("a"), delta("b")])
    assert await answers(elsewhere) == await answers(appender) == [(1, "a"), (2, "b")]

    async def append_later() -> None:
        await asyncio.sleep(0.1)
        await appender.append(TASK, delta("c"))

    late = asyncio.create_task(append_later())
    followed = await asyncio.gather(elsewhere.read(TASK, 2, wait=5), appender.read(TASK, 2, wait=5))
    await late
    assert [[(e.id, e.thought.answer) for e in events] for events in followed] == [[(3, "c")], [(3, "c")]]


async def test_a_closed_tasks_events_stay_in_memory_briefly_then_are_read_from_the_stream(
    redis_client: RedisClient, monkeypatch: pytest.MonkeyPatch  # noqa: F811
) -> None:
    monkeypatch.setattr(redis_event_log, "LOCAL_LINGER_S", 0.05)
    appender = RedisEventLog(redis_client)
    await appender.open(TASK)
    await appender.append_many(TASK, [delta("a"), delta("end")])
    await appender.close(TASK, retention=30)
    await redis_client.commands.delete(redis_client.key("events", TASK))  # tell memory and stream apart
    assert await answers(appender) == [(1, "a"), (2, "end")]  # a follower here still reads the end
    await asyncio.sleep(0.2)
    assert await answers(appender) == []  # the stream's (emptied) record


async def test_redis_log_is_trimmed_to_about_max_len(redis_client: RedisClient) -> None:  # noqa: F811
    log = RedisEventLog(redis_client, max_len=10)
    for n in range(400):
        await log.append(TASK, delta(str(n)))
    logged = await answers(log)
    assert len(logged) < 400
    assert logged[-1] == (400, "399")


async def test_redis_failure_raises_event_log_unavailable() -> None:
    client = dead_redis_client()
    log = RedisEventLog(client)
    try:
        calls = (
            lambda: log.append(TASK, delta("a")),
            lambda: log.read(TASK, 0, 0),
            lambda: log.read(TASK, 0, 0.2),
            lambda: log.close(TASK, 1),
        )
        for call in calls:
            with pytest.raises(EventStoreUnavailable) as caught:
                await call()
            assert "s3cret-pass" not in caught.value.message
    finally:
        await client.close()


async def test_redis_appends_of_many_tasks_share_a_round_trip_and_fail_one_by_one(
    redis_client: RedisClient,  # noqa: F811
) -> None:
    log = RedisEventLog(redis_client)
    broken, fine = TaskId("task-broken"), TaskId("task-fine")
    await log.append_many(broken, [delta("a", broken), delta("b", broken)])
    await redis_client.commands.set(redis_client.key("events", broken) + ":seq", "x")  # INCRBY fails on it
    before = (await redis_client.commands.info("commandstats")).get("cmdstat_evalsha", {}).get("calls", 0)
    results = await asyncio.gather(
        log.append(broken, delta("c", broken)),
        *(log.append(fine, delta(str(n), fine)) for n in range(20)),
        return_exceptions=True,
    )
    after = (await redis_client.commands.info("commandstats")).get("cmdstat_evalsha", {}).get("calls", 0)
    assert isinstance(results[0], EventStoreUnavailable)
    assert sorted(results[1:]) == list(range(1, 21))  # type: ignore[type-var]
    assert after - before <= 2  # the first call alone, then everything that queued behind it
    assert [e.thought.answer for e in await log.read(fine, 0, 0)] == [str(n) for n in range(20)]


async def test_redis_an_event_that_cannot_be_stored_fails_its_own_append_only(
    redis_client: RedisClient,  # noqa: F811
) -> None:
    log = RedisEventLog(redis_client)
    garbled, wrong_type, fine = TaskId("task-garbled"), TaskId("task-wrong-type"), TaskId("task-fine")
    await redis_client.commands.rpush(redis_client.key("events", wrong_type) + ":seq", "not a counter")
    results = await asyncio.gather(
        log.append(garbled, delta("half an emoji \ud83d", garbled)),  # a lone surrogate has no UTF-8
        log.append(wrong_type, delta("x", wrong_type)),
        log.append(fine, delta("ok", fine)),
        return_exceptions=True,
    )
    assert isinstance(results[0], EventStoreUnavailable)
    assert isinstance(results[1], EventStoreUnavailable)
    assert results[2] == 1
    assert await answers(log, fine) == [(1, "ok")]
    assert await redis_client.commands.exists(redis_client.key("events", garbled)) == 0


async def test_redis_a_follower_of_an_opened_task_waits_in_memory_not_in_a_blocking_read(
    redis_client: RedisClient,  # noqa: F811
) -> None:
    log = RedisEventLog(redis_client)

    async def xreads() -> int:
        stats = await redis_client.commands.info("commandstats")
        return int(stats.get("cmdstat_xread", {}).get("calls", 0))

    before = await xreads()
    await log.open(TASK)
    first = asyncio.create_task(log.read(TASK, after=0, wait=5))
    await asyncio.sleep(0.05)
    await log.append(TASK, delta("a"))
    assert [(e.id, e.thought.answer) for e in await asyncio.wait_for(first, 2)] == [(1, "a")]
    assert await xreads() == before


async def test_redis_a_follower_here_gets_an_event_before_redis_has_stored_it(
    redis_client: RedisClient,  # noqa: F811
) -> None:
    log = RedisEventLog(redis_client)
    await log.open(TASK)
    appending = asyncio.create_task(log.append(TASK, delta("a")))
    await asyncio.sleep(0)  # queued for Redis, and waiting for company (the batch's linger)
    assert await answers(log) == [(1, "a")]
    assert await redis_client.commands.exists(redis_client.key("events", TASK)) == 0
    assert await appending == 1
    assert await answers(RedisEventLog(redis_client)) == [(1, "a")]  # then in the record, with that id


async def test_redis_after_a_failed_append_a_follower_here_reads_the_next_events_from_the_record(
    redis_client: RedisClient,  # noqa: F811
) -> None:
    log, counter = RedisEventLog(redis_client), redis_client.key("events", TASK) + ":seq"
    await log.open(TASK)
    assert await log.append(TASK, delta("a")) == 1
    await redis_client.commands.set(counter, "x")  # INCRBY fails on it
    with pytest.raises(EventStoreUnavailable):
        await log.append(TASK, delta("lost"))  # followers here saw it as event 2
    assert await answers(log, after=1) == []  # the record's: the tail in memory is gone
    await redis_client.commands.delete(counter)
    assert await log.append(TASK, delta("error")) == 3  # above every id a follower here saw
    assert await answers(log, after=2) == [(3, "error")]


async def test_redis_an_unopened_task_is_read_from_the_record_whatever_this_process_appended(
    redis_client: RedisClient,  # noqa: F811
) -> None:
    appender = RedisEventLog(redis_client)
    first = appender.append_soon(TASK, [delta("a")])  # e.g. the sweep's: never handed out from memory
    second = appender.append_soon(TASK, [delta("b")])
    assert (await first, await second) == (1, 2)
    await redis_client.commands.delete(redis_client.key("events", TASK))  # tell memory and stream apart
    assert await answers(appender) == []


async def test_redis_when_another_process_appended_meanwhile_followers_here_read_the_record(
    redis_client: RedisClient,  # noqa: F811
) -> None:
    appender, sweeper = RedisEventLog(redis_client), RedisEventLog(redis_client)
    await appender.open(TASK)
    assert await appender.append(TASK, delta("a")) == 1
    assert await sweeper.append(TASK, delta("swept")) == 2  # e.g. a sweep that took the turn for dead
    assert await appender.append(TASK, delta("b")) == 3  # the record's id, not the 2 given here
    assert await answers(appender) == [(1, "a"), (2, "swept"), (3, "b")]


async def test_redis_an_event_that_cannot_be_stored_never_reaches_a_follower_here(
    redis_client: RedisClient,  # noqa: F811
) -> None:
    log = RedisEventLog(redis_client)
    await log.open(TASK)
    with pytest.raises(EventStoreUnavailable):
        await log.append(TASK, delta("half an emoji \ud83d"))
    assert await answers(log) == []
    assert await log.append(TASK, delta("ok")) == 1
