from __future__ import annotations

import json

from application.ports.chat_model import ModelChunk
from domain.agents.config import AgentConfig
from domain.conversations.messages import ToolResultBlock
from domain.ids import AppId, OwnerId
from domain.knowledge.datasets import Chunk, Dataset
from domain.tools.calls import ToolCall
from tests.fakes import T0, FakeEmbedder, ScriptedModel
from tests.unit.application.harness import OWNER, Harness

ANSWER = [ModelChunk(text="From the handbook: 25 days.")]


async def with_chunks(h: Harness, owner: OwnerId, dataset_id: str, texts: list[str]) -> None:
    await h.knowledge.add_dataset(Dataset(dataset_id, owner, "handbook", T0))
    chunks = [Chunk(f"{dataset_id}-{i}", dataset_id, "doc1", "handbook.md", i, t) for i, t in enumerate(texts)]
    await h.knowledge.add_chunks(chunks, await FakeEmbedder().embed(texts))


def search(query: str) -> list[ModelChunk]:
    return [ModelChunk(tool_calls=(ToolCall("r1", "dataset_retrieval", {"query": query}),))]


async def test_an_agent_with_datasets_gets_a_retrieval_tool_whose_calls_publish_dataset_retrieval() -> None:
    model = ScriptedModel([search("holiday days per year"), ANSWER])
    h = Harness(model, AgentConfig(AppId("default"), dataset_ids=("kb1",), retrieval_top_k=1))
    await with_chunks(h, OWNER, "kb1", ["holiday: 25 days per year", "parking is behind the building"])
    handle = await h.turn("how many holiday days do I get?")
    assert [t.name for t in model.calls[0][1]] == ["dataset_retrieval"]
    logged = await h.log.read(handle.task_id, 0, 0)
    retrieval = [e.thought for e in logged if e.thought.event.value == "dataset_retrieval"]
    assert len(retrieval) == 1
    cited = json.loads(retrieval[0].observation)
    assert cited[0]["text"] == "holiday: 25 days per year"
    assert cited[0]["document"] == "handbook.md"
    seen = model.calls[1][0][-1].content[0]
    assert isinstance(seen, ToolResultBlock)
    assert "25 days" in seen.output


async def test_retrieval_never_searches_another_owners_dataset() -> None:
    model = ScriptedModel([search("holiday"), ANSWER])
    h = Harness(model, AgentConfig(AppId("default"), dataset_ids=("theirs",)))
    await with_chunks(h, OwnerId("mallory"), "theirs", ["holiday: secret"])
    handle = await h.turn("holiday?")
    logged = await h.log.read(handle.task_id, 0, 0)
    retrieval = [e.thought for e in logged if e.thought.event.value == "dataset_retrieval"]
    assert json.loads(retrieval[0].observation) == []


async def test_an_agent_without_datasets_has_no_retrieval_tool() -> None:
    model = ScriptedModel([ANSWER])
    h = Harness(model)
    await h.turn("hi")
    assert model.calls[0][1] == []
