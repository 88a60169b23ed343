"""Lazy memory upkeep (issue 21): when the waiting turns are upkept (count, tokens, idleness, before a
fold), with the real use cases over fakes, an injected sleep and a fake clock."""

from __future__ import annotations

import asyncio

import pytest

from application.memory.schedule_upkeep import UpkeepScheduler
from application.memory.upkeep_rule import EVERY_TURN, UpkeepRule
from domain.agents.config import AgentConfig
from domain.conversations.conversation import Message
from domain.errors import DomainError
from domain.ids import AppId, ConversationId, MessageId
from domain.memory.window import MemoryPolicy
from tests.fakes import CollectingSpawner, FakeClock, ScriptedModel
from tests.unit.application.harness import OWNER, Harness

CONFIG = AgentConfig(AppId("default"), dialog_round=10, history_max_tokens=3000)


class ManualSleep:
    """An idle delay that ends when the test says so."""

    def __init__(self) -> None:
        self.asked: list[float] = []
        self.over = asyncio.Event()

    async def __call__(self, seconds: float) -> None:
        self.asked.append(seconds)
        await self.over.wait()


def world(policy: MemoryPolicy | None = None) -> Harness:
    """Turns saved by the harness, whose own upkeep is off: the tests schedule theirs."""
    return Harness(ScriptedModel([]), CONFIG, memory_tiers=False, policy=policy or MemoryPolicy())


async def turns(h: Harness, *queries: str) -> list[Message]:
    conversation: ConversationId | None = None
    done: list[Message] = []
    for query in queries:
        handle = await h.turn(query, conversation)
        conversation = ConversationId(handle.conversation_id)
        message = await h.store.get_message(MessageId(handle.message_id), OWNER)
        assert message is not None
        done.append(message)
    return done


def scheduler(
    h: Harness, rule: UpkeepRule, sleep: ManualSleep | None = None
) -> tuple[UpkeepScheduler, CollectingSpawner]:
    spawner = CollectingSpawner()
    return UpkeepScheduler(h.upkeep, spawner, FakeClock(), rule, sleep=sleep or ManualSleep()), spawner


async def flushed(upkeep: UpkeepScheduler, spawner: CollectingSpawner) -> None:
    """`flush`, with the upkeeps it spawns run by the collecting spawner."""
    flushing = asyncio.ensure_future(upkeep.flush())
    await asyncio.sleep(0)
    await spawner.run_all()
    await flushing


# --- the rule -------------------------------------------------------------------------------


def test_waiting_turns_are_due_at_the_count_but_never_past_the_window() -> None:
    rule = UpkeepRule(every_turns=4)
    assert not rule.due(3, 10, CONFIG)
    assert rule.due(4, 10, CONFIG)
    assert rule.due(2, 10, AgentConfig(AppId("a"), dialog_round=2)), "dialog_round 2: the window holds two"
    assert rule.due(1, 10, AgentConfig(AppId("a"), dialog_round=0)), "no window: every turn"


def test_waiting_turns_are_due_at_the_token_budget_or_half_the_windows() -> None:
    assert UpkeepRule(every_turns=9, token_budget=500).due(2, 500, CONFIG)
    assert not UpkeepRule(every_turns=9, token_budget=500).due(2, 499, CONFIG)
    small_window = AgentConfig(AppId("a"), history_max_tokens=400)
    assert UpkeepRule(every_turns=9, token_budget=500).due(2, 200, small_window)
    assert not UpkeepRule(every_turns=9).due(2, 1499, CONFIG)
    assert UpkeepRule(every_turns=9).due(2, 1500, CONFIG)


def test_a_rule_out_of_range_is_refused() -> None:
    with pytest.raises(DomainError):
        UpkeepRule(every_turns=0)
    with pytest.raises(DomainError):
        UpkeepRule(idle_seconds=-1)


# --- the scheduler --------------------------------------------------------------------------


async def test_turns_wait_until_the_count_and_one_upkeep_digests_them_all_in_one_call() -> None:
    h = world()
    done = await turns(h, "My name is Ada.", "I live in Porto.", "ok cool", "I'm vegetarian.")
    upkeep, spawner = scheduler(h, UpkeepRule(every_turns=4))
    for message in done[:3]:
        upkeep.after_end(CONFIG, message)
    assert spawner.spawned == [], "three turns wait: no upkeep, no idle delay (idle_seconds 0)"
    upkeep.after_end(CONFIG, done[3])
    await spawner.run_all()
    assert h.summarizer.updates == [("", [m.id for m in done])], "one summary update for the four turns"
    assert h.extractor.seen == [m.query for m in done], "and the entities of each turn, from the same digest"


async def test_an_idle_conversation_is_upkept_after_the_delay_and_a_newer_turn_supersedes_it() -> None:
    h = world()
    done = await turns(h, "My name is Ada.", "I live in Porto.")
    sleep = ManualSleep()
    upkeep, spawner = scheduler(h, UpkeepRule(every_turns=4, idle_seconds=5.0), sleep)
    upkeep.after_end(CONFIG, done[0])
    upkeep.after_end(CONFIG, done[1])
    assert [str(t) for t in spawner.spawned] == [f"upkeep-idle-{done[0].id}", f"upkeep-idle-{done[1].id}"]
    sleep.over.set()
    await spawner.run_all()
    assert sleep.asked == [5.0, 5.0]
    assert h.summarizer.updates == [("", [done[0].id, done[1].id])], "the older delay gave way: one upkeep"


async def test_flush_upkeeps_the_waiting_turns_now() -> None:
    h = world()
    [message] = await turns(h, "My name is Ada.")
    upkeep, spawner = scheduler(h, UpkeepRule(every_turns=4))
    upkeep.after_end(CONFIG, message)
    await flushed(upkeep, spawner)
    assert h.summarizer.updates == [("", [message.id])]


async def test_every_turn_that_joins_an_upkeep_waiting_for_the_lock_is_digested() -> None:
    h = world()
    done = await turns(h, *(f"My favourite number is {n}." for n in range(8)))  # more than SUMMARY_CATCH_UP
    upkeep, spawner = scheduler(h, EVERY_TURN)
    async with h.memory.exclusive(done[0].conversation_id):  # another upkeep of the conversation runs
        upkeep.after_end(CONFIG, done[0])
        running = asyncio.ensure_future(spawner.run_all())
        for _ in range(5):
            await asyncio.sleep(0)  # the upkeep starts and waits for the lock
        for message in done[1:]:
            upkeep.after_end(CONFIG, message)
        assert len(spawner.spawned) == 1, "the later turns joined the waiting upkeep"
    await running
    assert h.extractor.seen == [m.query for m in done], "none skipped, the first ones included"


async def test_the_upkeep_of_a_fold_digests_the_turns_first() -> None:
    h = world(MemoryPolicy(compact_threshold=4, compact_batch=2))
    done = await turns(h, "My name is Ada.", "I live in Porto.", "ok", "I'm vegetarian.", "I work at Acme.")
    upkeep, spawner = scheduler(h, UpkeepRule(every_turns=5))
    for message in done:
        upkeep.after_end(CONFIG, message)
    await spawner.run_all()
    [(_, digested)] = h.summarizer.updates
    assert h.summarizer.condensed == [[done[0].id, done[1].id]], "the store passed its threshold: a fold"
    assert set(h.summarizer.condensed[0]) <= set(digested), "what the fold took out, the summary holds"


async def test_inline_entities_still_land_before_the_turn_ends_and_are_not_asked_again() -> None:
    h = world(MemoryPolicy(inline_entities=True))
    [message] = await turns(h, "My name is Ada.")
    upkeep, spawner = scheduler(h, UpkeepRule(every_turns=4))
    await upkeep.before_end(CONFIG, message)
    assert h.extractor.seen == ["My name is Ada."], "extracted before the terminal event"
    upkeep.after_end(CONFIG, message)
    await flushed(upkeep, spawner)
    assert h.summarizer.updates == [("", [message.id])]
    assert h.extractor.seen == ["My name is Ada."]


async def test_digesting_the_same_turns_twice_changes_nothing() -> None:
    h = world()
    done = await turns(h, "My name is Ada.", "I live in Porto.")
    await h.upkeep.run(CONFIG, done)
    conversation = await h.store.get_conversation(done[0].conversation_id, OWNER)
    assert conversation is not None
    await h.upkeep.run(CONFIG, done)
    again = await h.store.get_conversation(done[0].conversation_id, OWNER)
    assert again is not None
    assert again.summary == conversation.summary
    assert len(h.summarizer.updates) == 1, "the second run found nothing after the cursor: no model call"
    assert h.extractor.seen == ["My name is Ada.", "I live in Porto."]
