"""A conversation's archive ranked by its stored vectors (`SqlAlchemyArchiveIndex`), on SQLite and
PostgreSQL: one matrix product ranks as the cosine of every entry did, vectors are embedded once
(at write time) and read back, and a write, in this process or another, is seen at the next turn."""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import pytest
from sqlalchemy import event

from application.memory.long_term_recall import MemoryRecall
from domain.agents.config import AgentConfig
from domain.memory.archive import rank_archive
from domain.memory.window import MemoryPolicy
from infrastructure.embeddings.lexical import LexicalEmbedder
from infrastructure.memory.inprocess_memory_store import InProcessMemoryStore
from infrastructure.persistence.recall_matrices import ArchiveMatrix, Matrix, RecallMatrices
from infrastructure.persistence.sqlalchemy_archive_index import SqlAlchemyArchiveIndex
from infrastructure.persistence.sqlalchemy_memory_record import SqlAlchemyMemoryRecord
from infrastructure.persistence.sqlalchemy_recall_index import SqlAlchemyRecallIndex
from tests.fakes import FakeEmbedder, WordTokenizer
from tests.integration.memory_record_fixtures import (  # noqa: F401  (fixtures by name)
    World,
    entry,
    memory_db,
    memory_pg_url,
    memory_url,
)

if TYPE_CHECKING:
    from collections.abc import Hashable, Iterator

    from domain.conversations.conversation import Conversation
    from domain.memory.archive import ArchiveEntry
    from infrastructure.persistence.database import Database

pytestmark = pytest.mark.integration

TOPICS = ("holiday in Lisbon", "the garden shed roof", "a job interview on Monday", "tax forms and receipts",
          "the cat's diet", "a piano recital", "train tickets to Porto", "a leaking kitchen tap",
          "birthday presents for Sam", "the quarterly sales report", "marathon training plan", "a new laptop")
QUERIES = ("when is the piano recital", "what about the roof of the shed", "Porto train", "sales figures",
           "nothing in common at all")


class Archive:
    """One conversation's archive in the record, embedded as the upkeep embeds it."""

    def __init__(self, db: Database, conversation: Conversation) -> None:
        self.record, self.recall_index = SqlAlchemyMemoryRecord(db), SqlAlchemyRecallIndex(db)
        self.index, self.conversation = SqlAlchemyArchiveIndex(db), conversation

    async def add(self, summaries: list[str], first_minute: int = 1) -> list[ArchiveEntry]:
        entries = [entry(self.conversation.id, f"m{first_minute + n}", summary=s, minute=first_minute + n)
                   for n, s in enumerate(summaries)]
        await self.record.add_archive_entries(entries)
        return entries

    async def embed(self, entries: list[ArchiveEntry], embedder: LexicalEmbedder | FakeEmbedder) -> None:
        vectors = await embedder.embed([e.summary for e in entries])
        await self.recall_index.save_vectors(embedder.name, {e.id: v for e, v in zip(entries, vectors, strict=True)})


@pytest.fixture
async def archive(memory_db: Database) -> Archive:  # noqa: F811
    return Archive(memory_db, await World(memory_db).conversation())


async def test_one_matrix_product_ranks_as_the_cosine_of_every_entry_did(archive: Archive) -> None:
    embedder = LexicalEmbedder()
    entries = await archive.add([f"They spoke of {t}." for t in TOPICS] + ["They spoke of a piano recital."])
    await archive.embed(entries, embedder)
    compared = []
    for query in QUERIES:
        [wanted] = await embedder.embed([query])
        before = rank_archive(entries, await embedder.embed([e.summary for e in entries]), wanted, len(entries))
        found = await archive.index.ranked_archive(archive.conversation.id, embedder.name, wanted, len(entries))
        # Entries sharing nothing with the query score 0 give or take float rounding (float32 here, float64
        # there), so their order is the rounding's; those that share something rank alike.
        alike = sum(1 for r in before if (r.score or 0.0) > 1e-6)
        assert [r.entry for r in found.ranked][:alike] == [r.entry for r in before][:alike], query
        assert [r.score for r in found.ranked] == pytest.approx([r.score for r in before], abs=1e-5)
        assert (found.entries, found.unembedded) == (len(entries), [])
        compared.append(alike)
    assert min(compared[:-1]) >= 2, "each query but the last shares words with entries, to be ranked alike"


async def test_entries_with_no_vector_of_the_model_come_back_to_be_embedded(archive: Archive) -> None:
    embedded, later = await archive.add(["the garden shed"]), await archive.add(["train tickets"], first_minute=5)
    await archive.embed(embedded, LexicalEmbedder())
    [wanted] = await LexicalEmbedder().embed(["shed"])
    found = await archive.index.ranked_archive(archive.conversation.id, LexicalEmbedder().name, wanted, 3)
    assert ([r.entry for r in found.ranked], list(found.unembedded), found.entries) == (embedded, later, 2)
    another_model = await archive.index.ranked_archive(archive.conversation.id, "another", wanted, 3)
    assert (another_model.ranked, list(another_model.unembedded)) == ([], [*later, *embedded])  # newest first


async def test_a_recall_embeds_the_query_only_once_the_entries_have_their_vectors(memory_db: Database) -> None:  # noqa: F811
    archive = Archive(memory_db, await World(memory_db).conversation())
    embedder = FakeEmbedder()  # it keeps every text it embedded
    entries = await archive.add(["the garden shed", "train tickets", "tax forms"])
    await archive.embed(entries, embedder)
    recall = MemoryRecall(InProcessMemoryStore(), archive.record, embedder, WordTokenizer(), MemoryPolicy(),
                          archive=archive.index)
    embedder.embedded.clear()
    for query in ("shed", "tickets", "forms"):
        recalled = await recall.recall(archive.conversation, AgentConfig(archive.conversation.app_id), query, [])
        assert recalled.report["archive_entries"] == 3
    assert embedder.embedded == ["shed", "tickets", "forms"]
    [new] = await archive.add(["a piano recital"], first_minute=9)  # folded, not indexed yet: embedded here
    recalled = await recall.recall(archive.conversation, AgentConfig(archive.conversation.app_id), "piano", [])
    assert embedder.embedded[-2:] == ["piano", new.summary]
    assert recalled.memory.archive[0] == new.summary


async def test_a_write_is_seen_at_the_next_ranking_in_this_process_and_another(memory_db: Database) -> None:  # noqa: F811
    archive = Archive(memory_db, await World(memory_db).conversation())
    elsewhere = SqlAlchemyArchiveIndex(memory_db)  # another worker, with matrices of its own
    archive.index = SqlAlchemyArchiveIndex(memory_db, matrices := CountingMatrices())
    embedder, conversation_id = LexicalEmbedder(), archive.conversation.id
    [wanted] = await embedder.embed(["piano"])

    async def best(index: SqlAlchemyArchiveIndex) -> list[str]:
        found = await index.ranked_archive(conversation_id, embedder.name, wanted, 1)
        return [r.entry.summary for r in found.ranked]

    await archive.embed(await archive.add(["the garden shed"]), embedder)
    assert await best(archive.index) == await best(elsewhere) == ["the garden shed"]
    assert await best(archive.index) == ["the garden shed"]
    assert matrices.reads == 1, "nothing written: the matrix kept in process is used again"
    await archive.embed(await archive.add(["a piano recital"], first_minute=5), embedder)  # a fold, then its vector
    assert await best(archive.index) == await best(elsewhere) == ["a piano recital"]
    await archive.record.forget_conversation(conversation_id)
    assert await best(archive.index) == await best(elsewhere) == []
    assert matrices.reads == 3


async def test_an_unchanged_archive_is_ranked_in_one_query_its_version_from_the_index_alone(
    memory_db: Database,  # noqa: F811
) -> None:
    archive = Archive(memory_db, await World(memory_db).conversation())
    embedder = LexicalEmbedder()
    await archive.embed(await archive.add(["the garden shed", "train tickets", "tax forms"]), embedder)
    [wanted] = await embedder.embed(["shed"])
    await archive.index.ranked_archive(archive.conversation.id, embedder.name, wanted, 2)  # the matrix read
    with statements(memory_db) as seen:
        found = await archive.index.ranked_archive(archive.conversation.id, embedder.name, wanted, 2)
    assert [r.entry.summary for r in found.ranked][:1] == ["the garden shed"]
    assert (found.entries, len(found.ranked)) == (3, 2)
    assert len(seen) == 1, "the best entries and the archive's version in one round trip"
    await assert_version_from_index(memory_db, seen[0], "ix_memory_items_conversation")


@contextmanager
def statements(db: Database) -> Iterator[list[tuple[str, Any]]]:
    """The statements the database runs meanwhile, with their parameters."""
    seen: list[tuple[str, Any]] = []

    def record(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        seen.append((statement, parameters))

    event.listen(db.engine.sync_engine, "before_cursor_execute", record)
    try:
        yield seen
    finally:
        event.remove(db.engine.sync_engine, "before_cursor_execute", record)


async def assert_version_from_index(db: Database, statement: tuple[str, Any], index: str) -> None:
    """On SQLite, the version in `statement` is read from `index` alone, not from the rows (whose
    columns after the vector lie on overflow pages). PostgreSQL's plan for a table this small is
    its own choice, so it is not asserted there."""
    if not db.is_sqlite:
        return
    sql, parameters = statement
    async with db.engine.connect() as connection:
        plan = [row[-1] for row in await connection.exec_driver_sql(f"EXPLAIN QUERY PLAN {sql}", parameters)]
    assert f"SEARCH memory_items USING COVERING INDEX {index}" in " ".join(plan), plan


class CountingMatrices(RecallMatrices):
    """The real matrices, counting the ones read from the database."""

    reads = 0

    def put(self, key: Hashable, matrix: Matrix | ArchiveMatrix) -> None:
        self.reads += 1
        super().put(key, matrix)


async def test_the_newest_entries_are_the_fallback_with_the_count(archive: Archive) -> None:
    entries = await archive.add(["first", "second", "", "third"])
    found = await archive.index.newest_archive(archive.conversation.id, 2)
    assert ([r.entry for r in found.ranked], found.entries) == ([entries[3], entries[1]], 3)
    assert all(r.score is None for r in found.ranked)
