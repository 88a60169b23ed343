"""Recall across a user's conversations as their number grows (issue 39, item 2): a new conversation's
recall right after the user's previous conversation was upkept, on SQLite.

    python -m tests.bench.recall_growth [--quick] [--sizes 200,1000,5000] [--runs 60] [--dimension 384]

For each size N: one user with N earlier conversations, each with its summary embedded and shared with
the account's recall (rows inserted in bulk, as an upkeep would have left them, stamped a minute apart
as a user's conversations come: what changed is read from `LATE_COMMIT_S` before the kept newest).
Each run first writes, untimed, what the upkeep of the user's latest conversation leaves (a new
conversation and its summary item with its vector, a minute later), then times
`SqlAlchemyRecallIndex.similar` for a new conversation of the user:
- `kept`: an index that ranked before and keeps the user's matrix, which reads what was written since
  and puts it in (`Matrix.updated`);
- `whole`, the floor it is measured against: an index with no kept matrix, which reads every vector of
  the user, as each new conversation of a user did before the matrix took updates;
- `unchanged`: the kept index once more, nothing written since: its version alone.
Printed as JSON: p50 and p99 in ms per size and way, `kept` over `whole`, and how `kept` moves from the
smallest size to the largest (constant in N is the target; `whole` grows with it).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import secrets
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import insert

from domain.conversations.conversation import Conversation
from domain.ids import AppId, ConversationId, EndUserId, OwnerId
from domain.memory.user_facts import FactHolder, RecallKind, RecallScope
from infrastructure.persistence.database import Database
from infrastructure.persistence.memory_rows import MemoryItemRow, summary_item_id
from infrastructure.persistence.recall_matrices import VECTOR
from infrastructure.persistence.rows import ConversationRow, conversation_values
from infrastructure.persistence.sqlalchemy_recall_index import SqlAlchemyRecallIndex
from tests.bench.timing import percentile

OWNER, USER, AGENT, MODEL = OwnerId("bench-owner"), EndUserId("bench-user"), AppId("bench-agent"), "bench-embedder"
HOLDER = FactHolder(OWNER, USER)  # the account's recall: every agent's shared items
START = datetime(2026, 1, 1, tzinfo=UTC)


class User:
    """The user's conversations in the database, each with its summary embedded and shared."""

    def __init__(self, database: Database, dimension: int) -> None:
        self.database, self.dimension, self.count = database, dimension, 0
        self.random = np.random.default_rng(39)

    async def add(self, n: int) -> None:
        conversations, items = [], []
        for _ in range(n):
            self.count += 1
            at = START + timedelta(minutes=self.count)  # a user's conversations come minutes apart
            conversation = Conversation(id=ConversationId(secrets.token_hex(8)), app_id=AGENT, owner=OWNER,
                                        created_at=at, updated_at=at, end_user=USER, summary=f"summary {self.count}")
            conversations.append(conversation_values(conversation))
            items.append({
                "id": summary_item_id(conversation.id), "conversation_id": conversation.id, "owner": OWNER,
                "end_user": USER, "agent_id": AGENT, "kind": RecallKind.SUMMARY.value, "text": conversation.summary,
                "source_message_ids": "[]", "created_at": at, "model": MODEL, "vector": self.vector(),
                "recall_scope": RecallScope.ACCOUNT.value, "changed_at": at,
            })
        async with self.database.transaction("bench: a user's conversations") as session:
            await session.execute(insert(ConversationRow), conversations)
            await session.execute(insert(MemoryItemRow), items)

    def vector(self) -> bytes:
        return self.random.standard_normal(self.dimension).astype(VECTOR).tobytes()

    def query(self) -> list[float]:
        return [float(x) for x in self.random.standard_normal(self.dimension)]


async def recall(index: SqlAlchemyRecallIndex, user: User) -> float:
    query, turn = user.query(), ConversationId(secrets.token_hex(8))  # a new conversation's turn
    started = time.perf_counter()
    found = await index.similar(HOLDER, MODEL, query, 3, turn)
    spent = (time.perf_counter() - started) * 1000
    assert len(found) == 3, found
    return spent


async def measure(database: Database, user: User, runs: int) -> dict[str, Any]:
    """`runs` rounds, the ways taking turns, each after a write of the user's latest upkeep."""
    kept = SqlAlchemyRecallIndex(database)
    await recall(kept, user)  # the matrix read once, and kept
    times: dict[str, list[float]] = {"kept": [], "whole": [], "unchanged": []}
    for round_ in range(runs + 3):  # the first three warm the statement caches up
        await user.add(1)
        spent = {"kept": await recall(kept, user)}
        await user.add(1)
        spent["whole"] = await recall(SqlAlchemyRecallIndex(database), user)
        await recall(kept, user)  # the kept matrix takes that write in, untimed
        spent["unchanged"] = await recall(kept, user)
        if round_ >= 3:
            for way, ms in spent.items():
                times[way].append(ms)
    figures: dict[str, Any] = {"conversations": user.count}
    for way, spent_ms in times.items():
        figures[f"{way}_p50_ms"], figures[f"{way}_p99_ms"] = percentile(spent_ms, 0.5), percentile(spent_ms, 0.99)
    figures["kept_over_whole_p50"] = round(figures["kept_p50_ms"] / figures["whole_p50_ms"], 3)
    return figures


async def main(sizes: list[int], runs: int, dimension: int) -> dict[str, Any]:
    report: dict[str, Any] = {"backend": "sqlite", "dimension": dimension, "runs": runs, "sizes": []}
    with tempfile.TemporaryDirectory() as folder:
        database = Database(f"sqlite+aiosqlite:///{Path(folder) / 'recall.db'}")
        await database.start()
        try:
            user = User(database, dimension)
            for size in sizes:
                await user.add(size - user.count)
                report["sizes"].append(await measure(database, user, runs))
        finally:
            await database.dispose()
    first, last = report["sizes"][0], report["sizes"][-1]
    report["from_smallest_to_largest"] = {
        way: round(last[f"{way}_p50_ms"] / first[f"{way}_p50_ms"], 2) for way in ("kept", "whole", "unchanged")
    }
    return report


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="sizes 100,1000 and 15 runs")
    parser.add_argument("--sizes", default="200,1000,5000")
    parser.add_argument("--runs", type=int, default=60)
    parser.add_argument("--dimension", type=int, default=384, help="the local embedder's (all-MiniLM-L6-v2)")
    args = parser.parse_args()
    sizes, runs = ([100, 1000], 15) if args.quick else ([int(s) for s in args.sizes.split(",")], args.runs)
    if sizes != sorted(sizes):
        sys.exit("--sizes: from the smallest to the largest")
    print(json.dumps(asyncio.run(main(sizes, runs, args.dimension)), indent=2))
