"""The embedding cache's single flight: lookups of a text already on its way share its one request,
and its failure, which is not kept."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from application.errors import ModelError
from application.memory.cached_embedder import CachedEmbedder
from infrastructure.memory.inprocess_memory_store import InProcessEmbeddingCache
from tests.fakes import FakeEmbedder


class GatedEmbedder(FakeEmbedder):
    """Each request waits for `gate`; `failures` requests fail first. `requests`: the batches asked for."""

    def __init__(self, failures: int = 0) -> None:
        super().__init__()
        self.gate = asyncio.Event()
        self.failures = failures
        self.requests: list[list[str]] = []

    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.requests.append(list(texts))
        await self.gate.wait()
        if self.failures:
            self.failures -= 1
            raise ModelError("The embedding server could not be reached.")
        return await super().embed(texts)


async def started(*calls: object) -> list[asyncio.Task[list[list[float]]]]:
    tasks = [asyncio.ensure_future(call) for call in calls]  # type: ignore[call-overload]
    await asyncio.sleep(0.01)  # each has asked, and waits on the gate
    return tasks


async def test_two_concurrent_lookups_of_one_text_share_one_request() -> None:
    inner = GatedEmbedder()
    cached = CachedEmbedder(inner, InProcessEmbeddingCache())
    archive, earlier = await started(cached.embed(["where do I live?"]), cached.embed(["where do I live?"]))
    inner.gate.set()
    assert await archive == await earlier == await FakeEmbedder().embed(["where do I live?"])
    assert inner.requests == [["where do I live?"]]


async def test_a_batch_joins_the_text_in_flight_and_asks_only_for_the_rest() -> None:
    inner = GatedEmbedder()
    cached = CachedEmbedder(inner, InProcessEmbeddingCache())
    query, batch = await started(cached.embed(["the query"]), cached.embed(["an entry", "the query"]))
    inner.gate.set()
    assert (await batch)[1] == (await query)[0]
    assert inner.requests == [["the query"], ["an entry"]]


async def test_a_failure_reaches_every_waiter_and_is_not_kept() -> None:
    inner = GatedEmbedder(failures=1)
    cached = CachedEmbedder(inner, InProcessEmbeddingCache())
    first, second = await started(cached.embed(["hello"]), cached.embed(["hello"]))
    inner.gate.set()
    for waiter in (first, second):
        with pytest.raises(ModelError, match="could not be reached"):
            await waiter
    assert await cached.embed(["hello"]) == await FakeEmbedder().embed(["hello"])  # asked again
    assert inner.requests == [["hello"], ["hello"]]


async def test_a_cancelled_waiter_leaves_the_shared_request_to_the_others() -> None:
    inner = GatedEmbedder()
    cached = CachedEmbedder(inner, InProcessEmbeddingCache())
    stopped, waiting = await started(cached.embed(["hello"]), cached.embed(["hello"]))
    stopped.cancel()
    await asyncio.sleep(0)
    inner.gate.set()
    assert await waiting == await FakeEmbedder().embed(["hello"])
    assert stopped.cancelled()
    assert await cached.embed(["hello"]) == await waiting  # from the cache now
    assert inner.requests == [["hello"]]
