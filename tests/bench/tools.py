"""Tool latencies: an MCP round trip through memagent, and knowledge-base retrieval.

    python -m tests.bench.tools [--quick] [--calls N] [--chunks N] [--queries N]

Prints JSON:

- `mcp_round_trip`: p50/p99 of one `tools/call` of `get_current_time` on `mcp-server-time` (stdio),
  through memagent's ToolBox (schema check, session reuse, result to text) and through a bare SDK
  `ClientSession` on a session of its own; target: memagent within 1.5x the bare SDK at p50.
- `retrieval`: p50/p99 of one search (embed the query with the lexical embedder, then score every
  chunk of the dataset) over 10,000 chunks on SQLite, through the application's `Retrieval`;
  target: p50 < 50 ms. The first search, which loads the dataset's vectors, is reported apart.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from mcp import ClientSession, StdioServerParameters, stdio_client

from application.knowledge.retrieval import Retrieval
from domain.agents.config import AgentConfig
from domain.ids import AppId, OwnerId
from domain.knowledge.datasets import Chunk, Dataset
from domain.tools.calls import ToolCall
from infrastructure.embeddings.lexical import LexicalEmbedder
from infrastructure.persistence.database import Database
from infrastructure.persistence.sqlalchemy_knowledge_base import SqlAlchemyKnowledgeBase
from infrastructure.tools.builtin import builtin_tools
from infrastructure.tools.composite import CompositeToolBox
from infrastructure.tools.mcp_client import McpServers
from infrastructure.tools.mcp_config import McpServerConfig, Transport

TIME_ARGS = ("-m", "mcp_server_time", "--local-timezone", "UTC")
OWNER = OwnerId("bench")


def summary(seconds: list[float]) -> dict[str, float]:
    ordered = sorted(seconds)
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 3),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000, 3),
        "n": len(ordered),
    }


async def timed(call: Callable[[], Awaitable[Any]], times: int, warmup: int = 5) -> list[float]:
    for _ in range(warmup):
        await call()
    seconds = []
    for _ in range(times):
        began = time.perf_counter()
        await call()
        seconds.append(time.perf_counter() - began)
    return seconds


async def mcp_report(calls: int) -> dict[str, Any]:
    """Both clients are open at once, on servers of their own, and take turns call by call, so that
    a noisy neighbour slows both alike."""
    servers = McpServers([McpServerConfig("time", Transport.STDIO, sys.executable, TIME_ARGS)], retry_interval=0)
    await servers.start()
    box = CompositeToolBox(builtin_tools(), servers)
    call = ToolCall("bench", "get_current_time", {"timezone": "Europe/Paris"})
    parameters = StdioServerParameters(command=sys.executable, args=list(TIME_ARGS))
    memagent: list[float] = []
    sdk: list[float] = []
    try:
        async with stdio_client(parameters) as streams, ClientSession(*streams) as session:
            await session.initialize()
            for _ in range(calls):
                sdk += await timed(lambda: session.call_tool("get_current_time", {"timezone": "Europe/Paris"}), 1,
                                   warmup=0 if sdk else 5)
                memagent += await timed(lambda: box.invoke(call), 1, warmup=0 if memagent else 5)
    finally:
        await servers.close()
    mine, bare = summary(memagent), summary(sdk)
    ratio = round(mine["p50_ms"] / bare["p50_ms"], 3)
    return {"memagent_toolbox": mine, "bare_sdk_session": bare, "p50_ratio": ratio, "target_ratio": 1.5,
            "meets_target": ratio <= 1.5}


def corpus(count: int, seed: int = 7) -> list[str]:
    """Paragraph-like chunks of ~120 words over a 20,000-word vocabulary (Zipf-ish)."""
    rng = random.Random(seed)
    vocabulary = [f"{rng.choice('bcdfghklmnprst')}{rng.choice('aeiou')}{rng.choice('lmnrst')}{i}"
                  for i in range(20_000)]
    weights = [1.0 / (rank + 1) for rank in range(len(vocabulary))]
    return [" ".join(rng.choices(vocabulary, weights, k=120)) for _ in range(count)]


async def retrieval_report(chunk_count: int, queries: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder:
        database = Database(f"sqlite+aiosqlite:///{Path(folder) / 'bench.db'}")
        await database.start()
        try:
            knowledge, embedder = SqlAlchemyKnowledgeBase(database), LexicalEmbedder()
            await knowledge.add_dataset(Dataset("bench", OWNER, "bench", datetime.now(UTC)))
            texts = corpus(chunk_count)
            loading = time.perf_counter()
            for start in range(0, chunk_count, 1000):  # one document per 1,000 chunks
                batch = texts[start : start + 1000]
                document = f"doc{start // 1000}"
                chunks = [Chunk(f"{document}-{i}", "bench", document, f"{document}.txt", i, t)
                          for i, t in enumerate(batch)]
                await knowledge.add_chunks(chunks, await embedder.embed(batch))
            loaded = time.perf_counter() - loading
            retrieval = Retrieval(knowledge, embedder)
            config = AgentConfig(AppId("bench"), dataset_ids=("bench",), retrieval_top_k=3)
            rng = random.Random(11)
            asks = [" ".join(rng.choice(t.split()) for _ in range(6)) for t in rng.choices(texts, k=queries + 1)]
            began = time.perf_counter()
            await retrieval.search(OWNER, config, asks[0])
            cold = time.perf_counter() - began
            pending = iter(asks[1:])
            seconds = await timed(lambda: retrieval.search(OWNER, config, next(pending)), queries, warmup=0)
        finally:
            await database.dispose()
    result = summary(seconds)
    return {"chunks": chunk_count, "embedder": embedder.name, "top_k": 3, **result,
            "first_search_ms": round(cold * 1000, 1), "load_seconds": round(loaded, 1),
            "target_p50_ms": 50, "meets_target": result["p50_ms"] < 50}


async def main(calls: int, chunks: int, queries: int) -> dict[str, Any]:
    return {"mcp_round_trip": await mcp_report(calls), "retrieval": await retrieval_report(chunks, queries)}


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="40 calls, 10,000 chunks, 50 queries")
    parser.add_argument("--calls", type=int, default=400)
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    calls, chunks, queries = (40, 10_000, 50) if args.quick else (args.calls, args.chunks, args.queries)
    print(json.dumps(asyncio.run(main(calls, chunks, queries)), indent=2))
