"""Prune over the in-process fakes: each kind past its age goes in bounded batches and the rest
stays; a deleted conversation goes with its memory, event logs and the workflow runs its messages
called, children first; direct workflow runs go by their age, node runs first; a dry run counts
exactly what a run then removes; a prune while another holds the lock removes nothing."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import pytest

from application.retention.prune import Prune
from domain.conversations.messages import Role, text_msg
from domain.conversations.thoughts import AgentThought, ThoughtEvent
from domain.ids import ConversationId, MessageId, TaskId, ThoughtId
from domain.retention import BatchLimits, PruneCounts, PruneKind, RetentionPolicy
from infrastructure.events.inprocess_event_log import InProcessEventLog
from infrastructure.memory.inprocess_memory_store import InProcessMemoryStore
from infrastructure.persistence.prune_locks import InProcessPruneLock
from tests.fake_pruning import FakePruneStore, Row
from tests.fakes import FakeClock

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
DAY = timedelta(days=1)
POLICY = RetentionPolicy(prompt_snapshots=30 * DAY, steps=90 * DAY, deleted_conversations=30 * DAY,
                         model_calls=400 * DAY, workflow_runs=60 * DAY)


def ago(days: float) -> datetime:
    return NOW - days * DAY


@dataclass
class World:
    store: FakePruneStore
    lock: InProcessPruneLock
    memory: InProcessMemoryStore
    events: InProcessEventLog
    clock: FakeClock

    def prune(self, policy: RetentionPolicy = POLICY, size: int = 2) -> Prune:
        return Prune(self.store, self.lock, self.memory, self.events, self.clock, policy, BatchLimits(size, 0.0))

    def conversation(self, name: str, deleted_days_ago: float | None, messages: int = 1, steps: int = 1) -> None:
        self.store.conversations[name] = ago(deleted_days_ago) if deleted_days_ago is not None else None
        for m in range(messages):
            message = f"{name}-m{m}"
            self.store.messages[message] = Row(ago(100), name, "prompt", task_id=f"{message}-task")
            for s in range(steps):
                self.store.steps[f"{message}-s{s}"] = Row(ago(100), message, "prompt")

    def workflow_run(self, name: str, started_days_ago: float, message: str = "", nodes: int = 2) -> None:
        """A run with its node runs; `message`: the turn's message whose tool call started it."""
        self.store.workflow_runs[name] = Row(ago(started_days_ago), message)
        for n in range(nodes):
            self.store.node_runs[f"{name}-n{n}"] = Row(ago(started_days_ago), name)

    async def logged(self, task: str) -> None:
        thought = AgentThought(ThoughtId("t"), TaskId(task), ConversationId("c"), MessageId("m"),
                               ThoughtEvent.AGENT_END)
        await self.events.append(TaskId(task), thought)

    async def log_kept(self, task: str) -> bool:
        return bool(await self.events.read(TaskId(task), 0, 0))


@pytest.fixture
def world() -> World:
    clock = FakeClock(start=NOW, step=0)
    return World(FakePruneStore(), InProcessPruneLock(), InProcessMemoryStore(),
                 InProcessEventLog(clock=clock.monotonic), clock)


async def test_steps_past_their_age_go_in_batches_of_the_limit_and_younger_ones_stay(world: World) -> None:
    for n, days in enumerate([91, 92, 93, 94, 95, 89]):
        world.store.steps[f"s{n}"] = Row(ago(days), "m")

    report = await world.prune(size=2)()

    assert sorted(world.store.steps) == ["s5"]
    assert report.counts == PruneCounts(steps=5)
    assert [(b.kind, b.rows) for b in report.batches] == [(PruneKind.STEPS, 2)] * 2 + [(PruneKind.STEPS, 1)]
    assert world.store.removed[:2] == ["s4", "s3"]  # oldest first


async def test_prompt_snapshots_are_emptied_past_their_age_and_the_rows_stay(world: World) -> None:
    world.store.steps.update(old=Row(ago(31), "m", "prompt"), young=Row(ago(29), "m", "prompt"))
    world.store.messages.update(m=Row(ago(45), "c", "prompt"), m2=Row(ago(1), "c", "prompt"))

    report = await world.prune()()

    assert {k: r.prompt for k, r in world.store.steps.items()} == {"old": "", "young": "prompt"}
    assert {k: r.prompt for k, r in world.store.messages.items()} == {"m": "", "m2": "prompt"}
    assert report.counts == PruneCounts(prompt_snapshots=2)


async def test_model_calls_past_their_age_go(world: World) -> None:
    world.store.model_calls.update(old=ago(401), kept=ago(399))
    assert (await world.prune()()).counts == PruneCounts(model_calls=1)
    assert list(world.store.model_calls) == ["kept"]


async def test_a_conversation_deleted_long_enough_ago_goes_with_its_memory_and_logs_children_first(
    world: World,
) -> None:
    world.conversation("gone", deleted_days_ago=31, messages=3, steps=2)
    world.conversation("recent", deleted_days_ago=29)
    world.conversation("live", deleted_days_ago=None)
    for conversation in ("gone", "recent"):
        now = datetime(2026, 5, 1, tzinfo=UTC)
        await world.memory.save_window(ConversationId(conversation), [text_msg("u", Role.USER, "hi", now)])
    await world.logged("gone-m0-task")
    await world.logged("recent-m0-task")

    report = await world.prune(RetentionPolicy(None, None, 30 * DAY, None), size=2)()

    assert sorted(world.store.conversations) == ["live", "recent"]
    assert not any(k.startswith("gone") for k in [*world.store.messages, *world.store.steps])
    assert report.counts == PruneCounts(deleted_conversations=1, conversation_messages=3, conversation_steps=6)
    assert world.store.removed[-1] == "gone"  # its row last, once nothing points at it
    assert all(rows <= 2 for _, rows in world.store.calls)
    assert await world.memory.get_window(ConversationId("gone")) is None
    assert await world.memory.get_window(ConversationId("recent")) is not None
    world.clock.advance(1.0)
    assert not await world.log_kept("gone-m0-task")
    assert await world.log_kept("recent-m0-task")


async def test_direct_workflow_runs_past_their_age_go_with_their_node_runs_first_and_the_rest_stay(
    world: World,
) -> None:
    world.conversation("live", deleted_days_ago=None)
    for name, days in (("old", 61), ("older", 90), ("young", 59)):
        world.workflow_run(name, days)
    world.workflow_run("called", 200, message="live-m0")  # a turn's: it stays while its message does

    report = await world.prune(RetentionPolicy(None, None, None, None, workflow_runs=60 * DAY), size=3)()

    assert sorted(world.store.workflow_runs) == ["called", "young"]
    assert sorted(world.store.node_runs) == ["called-n0", "called-n1", "young-n0", "young-n1"]
    assert report.counts == PruneCounts(workflow_runs=2, node_runs=4)
    assert [(b.kind, b.rows) for b in report.batches] == [(PruneKind.WORKFLOW_RUNS, n) for n in (3, 1, 1, 1)]
    # In turn: a batch of node runs, the oldest run's first, then each run they left empty.
    assert world.store.removed == ["older-n0", "older-n1", "old-n0", "older", "old-n1", "old"]


async def test_a_deleted_conversation_takes_the_workflow_runs_its_messages_called_before_its_messages(
    world: World,
) -> None:
    world.conversation("gone", deleted_days_ago=31, messages=2)
    world.conversation("live", deleted_days_ago=None)
    world.workflow_run("gone-r0", 300, message="gone-m0", nodes=3)
    world.workflow_run("gone-r1", 1, message="gone-m1")  # however young
    world.workflow_run("kept", 300, message="live-m0")
    world.workflow_run("direct", 300)  # no age for direct runs in this policy

    report = await world.prune(RetentionPolicy(None, None, 30 * DAY, None), size=2)()

    assert sorted(world.store.workflow_runs) == ["direct", "kept"]
    assert not any(n.startswith("gone") for n in world.store.node_runs)
    assert report.counts == PruneCounts(deleted_conversations=1, conversation_messages=2, conversation_steps=2,
                                        conversation_workflow_runs=2, conversation_node_runs=5)
    removed = world.store.removed
    assert max(removed.index(r) for r in ("gone-r0", "gone-r1")) < min(removed.index(m) for m in ("gone-m0", "gone-m1"))
    assert all(rows <= 2 for _, rows in world.store.calls)


async def test_a_dry_run_counts_exactly_what_the_run_then_removes_and_removes_nothing(world: World) -> None:
    world.conversation("gone", deleted_days_ago=40, messages=2, steps=2)  # old steps and prompts: counted once
    world.conversation("live", deleted_days_ago=None, messages=2, steps=1)
    world.store.steps.update(mid=Row(ago(60), "live-m0", "prompt"), young=Row(ago(5), "live-m0", "prompt"))
    world.store.messages["fresh"] = Row(ago(5), "live", "prompt", task_id="t")
    world.store.model_calls.update(old=ago(500), kept=ago(5))
    world.workflow_run("called", 100, message="gone-m0", nodes=1)
    world.workflow_run("direct", 100, nodes=3)
    world.workflow_run("recent", 5)
    before = (dict(world.store.steps), dict(world.store.messages), dict(world.store.conversations),
              dict(world.store.workflow_runs), dict(world.store.node_runs))

    dry = await world.prune()(dry_run=True)
    assert dry.dry_run
    assert (dict(world.store.steps), dict(world.store.messages), dict(world.store.conversations),
            dict(world.store.workflow_runs), dict(world.store.node_runs)) == before

    done = await world.prune()()
    assert done.counts == dry.counts == PruneCounts(
        deleted_conversations=1, conversation_messages=2, conversation_steps=4, steps=2, prompt_snapshots=3,
        model_calls=1, conversation_workflow_runs=1, conversation_node_runs=1, workflow_runs=1, node_runs=3,
    )


async def test_a_prune_while_another_holds_the_lock_skips_and_removes_nothing(world: World) -> None:
    world.store.steps["old"] = Row(ago(200), "m")
    async with world.lock.exclusive() as held:
        assert held
        report = await world.prune()()
    assert report.skipped
    assert report.counts == PruneCounts()
    assert "old" in world.store.steps
    assert not (await world.prune()()).skipped  # released: the next one prunes
    assert "old" not in world.store.steps


async def test_kinds_kept_for_good_are_left_alone(world: World) -> None:
    world.conversation("gone", deleted_days_ago=1000)
    world.store.model_calls["old"] = ago(5000)
    world.workflow_run("direct", 5000)
    report = await world.prune(RetentionPolicy(None, None, None, None))()
    assert report.counts == PruneCounts()
    assert "gone" in world.store.conversations
    assert (list(world.store.workflow_runs), len(world.store.node_runs)) == (["direct"], 2)
    assert len(world.store.steps) == 1
    assert list(world.store.model_calls) == ["old"]
