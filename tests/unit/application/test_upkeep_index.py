"""The recall index's upkeep after the digest of the same upkeep: it takes the conversation as the
digest saved it instead of reading it again, and a new summary, alone new, is embedded before the
index's write and kept with its vector (no write of vectors after)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from application.errors import ModelError
from application.memory.digest_turns import DigestTurns
from application.memory.extract_entities import ExtractEntities
from application.memory.index_memory import IndexMemory
from application.memory.run_upkeep import MemoryUpkeep
from domain.agents.config import AgentConfig
from domain.ids import AppId
from domain.memory.user_facts import RecallItem, RecallKind, RecallScope
from domain.memory.window import MemoryPolicy
from infrastructure.memory.composed_digester import ComposedDigester
from tests.fake_message_store import FakeMessageStore
from tests.fake_user_memory import FakeRecallIndex
from tests.fakes import FakeEmbedder, ScriptedModel
from tests.unit.application.harness import Harness

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from domain.conversations.conversation import Conversation, Message
    from domain.ids import ConversationId, MessageId, OwnerId


class CountedStore(FakeMessageStore):
    """The message record, counting reads of a conversation alone (not the digest's, with its turns)."""

    def __init__(self) -> None:
        super().__init__()
        self.conversation_reads = 0

    async def get_conversation(self, conversation_id: ConversationId, owner: OwnerId) -> Conversation | None:
        self.conversation_reads += 1
        return await super().get_conversation(conversation_id, owner)

    async def conversation_tail(
        self, conversation_id: ConversationId, owner: OwnerId, limit: int
    ) -> tuple[Conversation, list[Message]] | None:
        tail = await super().conversation_tail(conversation_id, owner, limit)
        self.conversation_reads -= 1  # its own read of the conversation, with the turns
        return tail


class RecordedIndex(FakeRecallIndex):
    """What the upkeep's index kept: each summary with the vector it came with, and the vectors
    saved after; `to_embed` is what it gives to embed."""

    def __init__(self) -> None:
        super().__init__()
        self.kept: list[tuple[str, Sequence[float] | None]] = []
        self.saved: list[Mapping[str, Sequence[float]]] = []
        self.to_embed: list[RecallItem] = []

    async def index_conversation(
        self, conversation: Conversation, sources: Sequence[MessageId], scope: RecallScope, model: str,
        summary_vector: Sequence[float] | None = None,
    ) -> list[RecallItem]:
        self.kept.append((conversation.summary, summary_vector))
        return self.to_embed

    async def save_vectors(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        self.saved.append(vectors)


class FailingEmbedder(FakeEmbedder):
    async def embed(self, texts: Sequence[str]) -> list[list[float]]:
        raise ModelError("The embedder is down.")


def upkeep_of(h: Harness, index: RecordedIndex, embedder: FakeEmbedder) -> MemoryUpkeep:
    extract = ExtractEntities(h.on_profile("entities", h.extractor), h.memory, h.policy)
    digester = h.on_profile("digest", ComposedDigester(h.summarizer, h.extractor))
    return MemoryUpkeep(
        h.memory, extract, DigestTurns(h.store, h.memory, digester, extract, h.clock, h.policy), h.fold, h.policy,
        index_memory=IndexMemory(h.store, index, embedder),
    )


async def finished_turn(h: Harness, query: str) -> Message:
    handle = await h.turn(query)
    return h.store.messages[handle.message_id]


CONFIG = AgentConfig(AppId("default"))
FOLDING = MemoryPolicy(compact_threshold=4, compact_batch=2)


async def test_the_index_takes_the_summary_the_digest_saved_without_reading_the_conversation_again() -> None:
    store, index, embedder = CountedStore(), RecordedIndex(), FakeEmbedder()
    h = Harness(ScriptedModel([]), store=store)
    finished = await finished_turn(h, "My name is Ada.")
    reads = store.conversation_reads

    await upkeep_of(h, index, embedder).run(CONFIG, [finished])

    assert store.conversation_reads == reads
    assert h.store.conversations[finished.conversation_id].summary == "My name is Ada."
    [(summary, vector)] = index.kept
    assert (summary, vector) == ("My name is Ada.", (await FakeEmbedder().embed([summary]))[0])
    assert (embedder.embedded, index.saved) == (["My name is Ada."], []), "one embedding, no vectors saved after"


async def test_a_failed_digest_leaves_the_index_to_read_the_conversation_and_embed_after_its_write() -> None:
    store, index, embedder = CountedStore(), RecordedIndex(), FakeEmbedder()
    h = Harness(ScriptedModel([]), store=store)
    finished = await finished_turn(h, "My name is Ada.")
    h.summarizer.fail = True
    index.to_embed = [RecallItem("entry", RecallKind.ARCHIVE, finished.conversation_id, "Ada's entry", ())]
    reads = store.conversation_reads

    await upkeep_of(h, index, embedder).run(CONFIG, [finished])

    assert store.conversation_reads == reads + 1
    assert index.kept == [("", None)]
    assert embedder.embedded == ["Ada's entry"]
    assert [list(saved) for saved in index.saved] == [["entry"]]


async def test_a_new_summary_the_embedder_fails_on_is_kept_without_a_vector_and_given_to_embed() -> None:
    h, index = Harness(ScriptedModel([])), RecordedIndex()
    finished = await finished_turn(h, "My name is Ada.")
    index.to_embed = [RecallItem("summary", RecallKind.SUMMARY, finished.conversation_id, "My name is Ada.", ())]

    await upkeep_of(h, index, FailingEmbedder()).run(CONFIG, [finished])

    assert index.kept == [("My name is Ada.", None)]
    assert index.saved == [], "asked again with the items to embed, it failed again: the next upkeep catches up"


async def test_after_a_fold_the_new_summary_is_embedded_with_the_new_entry_in_one_call() -> None:
    h, index, embedder = Harness(ScriptedModel([]), policy=FOLDING), RecordedIndex(), FakeEmbedder()
    conversation = (await h.turn("q1")).conversation_id
    for query in ("q2", "q3", "q4", "q5"):
        await h.turn(query, conversation)
    finished = sorted(h.store.messages.values(), key=lambda m: m.created_at)
    index.to_embed = [RecallItem("summary", RecallKind.SUMMARY, conversation, "q1 q2 q3 q4 q5", ()),
                      RecallItem("entry", RecallKind.ARCHIVE, conversation, "q1 q2", ())]

    await upkeep_of(h, index, embedder).run(AgentConfig(AppId("default"), dialog_round=3), finished)

    assert len(await h.memory.archive(conversation)) == 1
    assert index.kept == [("q1 q2 q3 q4 q5", None)]
    assert embedder.embedded == ["q1 q2 q3 q4 q5", "q1 q2"]
    assert [list(saved) for saved in index.saved] == [["summary", "entry"]]
