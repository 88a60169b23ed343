from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

import pytest

from infrastructure.group_commit import GroupCommit

if TYPE_CHECKING:
    from collections.abc import Sequence


class Recorder:
    """Runs batches on demand: each batch waits until the test releases it."""

    def __init__(self) -> None:
        self.batches: list[list[int]] = []
        self.release = asyncio.Event()
        self.fail_batch: BaseException | None = None

    async def run(self, items: Sequence[int]) -> list[int | BaseException]:
        self.batches.append(list(items))
        await self.release.wait()
        if self.fail_batch is not None:
            raise self.fail_batch
        return [ValueError(f"odd {n}") if n % 2 else n * 10 for n in items]


async def test_calls_queued_behind_a_batch_in_flight_go_together_in_the_next() -> None:
    recorder = Recorder()
    commit = GroupCommit(recorder.run)
    first = asyncio.create_task(commit.submit(0))
    await asyncio.sleep(0)
    await asyncio.sleep(0)
    later = [asyncio.create_task(commit.submit(n)) for n in (2, 4, 6)]
    await asyncio.sleep(0)
    recorder.release.set()
    assert await first == 0
    assert await asyncio.gather(*later) == [20, 40, 60]
    assert recorder.batches == [[0], [2, 4, 6]]


async def test_an_item_enqueued_without_waiting_goes_with_the_next_batch() -> None:
    recorder = Recorder()
    commit = GroupCommit(recorder.run)
    first = commit.enqueue(0)
    await asyncio.sleep(0)
    later = [commit.enqueue(n) for n in (2, 4)]
    recorder.release.set()
    assert await asyncio.gather(first, *later) == [0, 20, 40]
    assert recorder.batches == [[0], [2, 4]]


async def test_an_item_that_fails_fails_only_its_caller() -> None:
    recorder = Recorder()
    recorder.release.set()
    commit = GroupCommit(recorder.run)
    results = await asyncio.gather(commit.submit(1), commit.submit(2), return_exceptions=True)
    assert isinstance(results[0], ValueError)
    assert results[1] == 20
    assert recorder.batches == [[1, 2]]


async def test_a_failed_batch_fails_every_caller_in_it_and_the_next_batch_runs() -> None:
    recorder = Recorder()
    recorder.fail_batch = ConnectionError("down")
    recorder.release.set()
    commit = GroupCommit(recorder.run)
    results = await asyncio.gather(commit.submit(2), commit.submit(4), return_exceptions=True)
    assert all(isinstance(r, ConnectionError) and str(r) == "down" for r in results)
    assert results[0] is not results[1]  # each caller raises its own copy, chained to the one failure
    assert results[0].__cause__ is results[1].__cause__ is not None
    recorder.fail_batch = None
    assert await commit.submit(6) == 60


async def test_a_cancelled_caller_leaves_its_item_in_the_batch_and_the_others_answered() -> None:
    recorder = Recorder()
    commit = GroupCommit(recorder.run)
    gone = asyncio.create_task(commit.submit(2))
    stays = asyncio.create_task(commit.submit(4))
    await asyncio.sleep(0)
    gone.cancel()
    recorder.release.set()
    assert await stays == 40
    with pytest.raises(asyncio.CancelledError):
        await gone
    assert recorder.batches == [[2, 4]]


async def test_a_runner_that_answers_the_wrong_number_of_results_fails_the_batch() -> None:
    async def short(items: Sequence[int]) -> list[int | BaseException]:
        return []

    commit: GroupCommit[int, int] = GroupCommit(short)
    with pytest.raises(RuntimeError, match="a batch of 1 got 0 results"):
        await commit.submit(1)


async def test_a_lingering_batch_takes_the_calls_that_come_while_it_waits() -> None:
    recorder = Recorder()
    recorder.release.set()
    commit = GroupCommit(recorder.run, linger=0.2)
    first = asyncio.create_task(commit.submit(2))
    await asyncio.sleep(0.01)
    second = asyncio.create_task(commit.submit(4))
    assert await asyncio.gather(first, second) == [20, 40]
    assert recorder.batches == [[2, 4]]
