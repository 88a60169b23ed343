"""A Core connection's commit runs to its end when the turn saving it is cancelled meanwhile, as a
session's does (`Database.connection`): the cancellation is raised after it, and a failure is raised."""

from __future__ import annotations

import asyncio

import pytest

from infrastructure.persistence.database import run_to_completion


async def test_a_step_whose_caller_is_cancelled_ends_before_the_cancellation_is_raised() -> None:
    release, ended = asyncio.Event(), []

    async def commit() -> None:
        await release.wait()
        ended.append(True)

    caller = asyncio.ensure_future(run_to_completion(commit()))
    await asyncio.sleep(0)
    caller.cancel()
    await asyncio.sleep(0.01)
    assert not caller.done()  # still waiting for the step, not abandoned
    release.set()
    with pytest.raises(asyncio.CancelledError):
        await caller
    assert ended == [True]


async def test_a_step_that_fails_raises_its_failure() -> None:
    async def commit() -> None:
        raise ConnectionResetError("the server went away")

    with pytest.raises(ConnectionResetError):
        await run_to_completion(commit())
