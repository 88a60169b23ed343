"""The node types' own work inside a run: `llm` (its profile, its schema, its tokens and price, and its
calls in the cost ledger under `workflow`), `tool`, `http_request` and `code`."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from application.errors import ToolCallFailed
from application.model_calls.call_scope import CallScope, calls_for
from application.model_calls.record_model_calls import RecordModelCalls
from application.ports.chat_model import ModelChunk
from application.ports.model_metrics import ModelPurpose
from application.ports.outbound_http import OutboundRequest, OutboundResponse
from application.workflows.nodes.code import CodeWork
from application.workflows.nodes.http_request import HttpRequestWork
from application.workflows.nodes.llm import LlmWork
from application.workflows.nodes.tool import DatasetSearch, ToolWork
from application.workflows.run_workflow import RunRequest
from domain.conversations.messages import Role, Usage
from domain.ids import EndUserId, OwnerId
from domain.knowledge.datasets import Chunk, Dataset
from domain.tools.calls import ToolFailure
from domain.workflows.graph import ErrorAction, NodeType
from domain.workflows.runs import RunStatus
from infrastructure.metrics.inprocess_metrics import InProcessMetrics
from infrastructure.metrics.metered_chat_model import MeteredChatModels
from infrastructure.tools.jsonschema_check import JsonSchemaCheck
from tests.fake_model_call_ledger import FakeModelCallLedger
from tests.fake_workflows import FakeCodeSandbox, FakeTemplates, end, graph, node, start
from tests.fakes import (
    FakeChatModels,
    FakeClock,
    FakeEmbedder,
    FakeKnowledgeBase,
    FakeToolBox,
    ScriptedModel,
    SequentialIds,
    WordTokenizer,
)
from tests.unit.application.workflow_engine import ALICE, Engine

if TYPE_CHECKING:
    from collections.abc import Mapping

    from application.workflows.node_work import NodeWork

CITY = {"name": "city", "type": "string"}
USAGE = Usage(30, 12, 0.0042)
T0 = datetime(2026, 1, 1, tzinfo=UTC)
NO_DATASETS = DatasetSearch(FakeKnowledgeBase(), FakeEmbedder())


def llm_engine(models: FakeChatModels, recorder: RecordModelCalls | None = None) -> Engine:
    metered = MeteredChatModels(models, InProcessMetrics(), WordTokenizer(), recorder, purpose=ModelPurpose.WORKFLOW)
    work = LlmWork(metered, FakeTemplates(), JsonSchemaCheck(), FakeClock(), SequentialIds())
    return Engine(work={NodeType.LLM: work})


async def test_an_llm_node_answers_on_its_profile_with_its_tokens_and_price() -> None:
    model = ScriptedModel([[ModelChunk(text="Sunny "), ModelChunk(text="in Paris"), ModelChunk(usage=USAGE)]])
    engine = llm_engine(FakeChatModels(default=ScriptedModel([]), cheap=model))
    flow = graph([start(CITY), node("l1", NodeType.LLM, prompt="Weather in {{ start.city }}?", system="Be brief.",
                                    model="cheap"), end(out="{{ l1.text }}")], "start>l1", "l1>end")
    run = await engine.run(flow, city="Paris")
    assert dict(run.outputs) == {"out": "Sunny in Paris"}
    [messages] = [m for m, _ in model.calls]
    assert [(m.role, m.text) for m in messages] == [(Role.SYSTEM, "Be brief."), (Role.USER, "Weather in Paris?")]
    [l1] = [n for n in engine.store.only().nodes if n.node_id == "l1"]
    assert (l1.spent.tokens, l1.spent.price) == (42, 0.0042)
    assert dict(l1.inputs)["model"] == "cheap"
    assert (run.spent.tokens, run.spent.price) == (42, 0.0042)


async def test_an_llm_node_with_a_schema_gives_the_parsed_answer_and_fails_on_one_that_does_not_match() -> None:
    schema = {"type": "object", "properties": {"score": {"type": "integer"}}, "required": ["score"]}
    model = ScriptedModel([[ModelChunk(text='```json\n{"score": 4}\n```')], [ModelChunk(text='{"score": "high"}')]])
    engine = llm_engine(FakeChatModels(default=model))
    flow = graph([start(), node("l1", NodeType.LLM, prompt="Rate it", output_schema=schema),
                  end(score="{{ l1.json.score }}")], "start>l1", "l1>end")
    good = await engine.run(flow)
    assert dict(good.outputs) == {"score": 4}
    assert "JSON Schema" in model.calls[0][0][0].text  # the system prompt asks for the schema
    bad = await engine.run(flow)
    assert bad.status is RunStatus.FAILED
    assert bad.error is not None
    assert "does not match the output schema" in bad.error


async def test_an_llm_node_takes_the_calling_agents_profile_by_default_and_fails_on_an_unknown_one() -> None:
    agents_own = ScriptedModel([[ModelChunk(text="from the agent's model")]])
    engine = llm_engine(FakeChatModels(default=ScriptedModel([]), mine=agents_own))
    flow = graph([start(), node("l1", NodeType.LLM, prompt="hi"), end(out="{{ l1.text }}")], "start>l1", "l1>end")
    run = await engine.run_workflow(RunRequest(ALICE, EndUserId(""), "wf1", 1, flow, model="mine"))
    assert dict(run.outputs) == {"out": "from the agent's model"}
    run = await engine.run_workflow(RunRequest(ALICE, EndUserId(""), "wf1", 1, flow, model="gone"))
    assert run.error == "node l1 failed: The model profile 'gone' is not configured on this server."


async def test_an_llm_nodes_calls_go_to_the_ledger_as_workflow_calls_of_the_runs_account() -> None:
    ledger = FakeModelCallLedger()
    recorder = RecordModelCalls(ledger, FakeClock(), SequentialIds())
    model = ScriptedModel([[ModelChunk(text="hi"), ModelChunk(usage=USAGE)]] * 2)
    engine = llm_engine(FakeChatModels(default=model), recorder)
    flow = graph([start(), node("l1", NodeType.LLM, prompt="hi"), end(out="{{ l1.text }}")], "start>l1", "l1>end")
    await engine.run(flow)
    with calls_for(CallScope(owner="bob", agent_id="ada", conversation_id="c1", message_id="m1")):
        await engine.run(flow)  # an agent's turn called it: the turn's scope is billed
    await recorder.flush()
    assert [(c.purpose, c.owner, c.agent_id, c.conversation_id, c.message_id, c.usage.price) for c in ledger.calls] == [
        ("workflow", "alice", "", None, None, 0.0042), ("workflow", "bob", "ada", "c1", None, 0.0042)]


async def test_a_tool_node_calls_the_tool_with_its_rendered_arguments_and_keeps_their_types() -> None:
    async def forecast(arguments: Mapping[str, Any]) -> str:
        return f"{arguments['city']} for {arguments['days']} days"

    tools = FakeToolBox({"forecast": forecast})
    engine = Engine(work={NodeType.TOOL: ToolWork(tools, FakeTemplates(), SequentialIds(), NO_DATASETS)})
    flow = graph([start(CITY, {"name": "days", "type": "integer"}),
                  node("t1", NodeType.TOOL, tool="forecast", arguments={"city": "{{ start.city }}",
                                                                        "days": "{{ start.days }}", "units": "metric"}),
                  end(out="{{ t1.result }}")], "start>t1", "t1>end")
    run = await engine.run(flow, city="Oslo", days=3)
    assert dict(run.outputs) == {"out": "Oslo for 3 days"}
    assert dict(tools.invoked[0].arguments) == {"city": "Oslo", "days": 3, "units": "metric"}


async def test_a_tool_that_fails_is_a_node_failure_its_on_error_handles() -> None:
    async def broken(arguments: Mapping[str, Any]) -> str:
        raise ToolCallFailed(ToolFailure.UNAVAILABLE, "the server is down")

    engine = Engine(work={NodeType.TOOL: ToolWork(FakeToolBox({"t": broken}), FakeTemplates(), SequentialIds(),
                                                  NO_DATASETS)})
    flow = graph([start(), node("t1", NodeType.TOOL, tool="t", on_error=ErrorAction.BRANCH),
                  node("sorry", template="{{ t1.error }}"), end(out="{{ sorry.output }}")],
                 "start>t1", "t1>sorry:error", "sorry>end")
    run = await engine.run(flow)
    assert dict(run.outputs) == {"out": "unavailable: the server is down"}


class FakeHttp:
    def __init__(self, response: OutboundResponse) -> None:
        self.response = response
        self.sent: list[OutboundRequest] = []

    async def send(self, request: OutboundRequest) -> OutboundResponse:
        self.sent.append(request)
        return self.response


async def test_an_http_request_node_sends_its_rendered_request_and_parses_a_json_body() -> None:
    http = FakeHttp(OutboundResponse(201, '{"id": 7}'))
    engine = Engine(work={NodeType.HTTP_REQUEST: HttpRequestWork(http, FakeTemplates())})
    request = node("h", NodeType.HTTP_REQUEST, method="POST", url="https://api.example/{{ start.city }}",
                   headers={"X-City": "{{ start.city }}"}, body='{"q": "{{ start.city }}"}', timeout=3)
    flow = graph([start(CITY), request,
                  end(status="{{ h.status }}", id="{{ h.json.id }}")], "start>h", "h>end")
    run = await engine.run(flow, city="Rome")
    assert dict(run.outputs) == {"status": 201, "id": 7}
    assert http.sent == [
        OutboundRequest("POST", "https://api.example/Rome", (("X-City", "Rome"),), '{"q": "Rome"}', 3.0)]


async def test_an_http_response_that_is_no_json_has_none_as_its_json() -> None:
    engine = Engine(work={NodeType.HTTP_REQUEST: HttpRequestWork(FakeHttp(OutboundResponse(404, "nope")),
                                                                 FakeTemplates())})
    flow = graph([start(), node("h", NodeType.HTTP_REQUEST, method="GET", url="https://x.example"),
                  end(status="{{ h.status }}", json="{{ h.json }}", body="{{ h.body }}")], "start>h", "h>end")
    run = await engine.run(flow)
    assert dict(run.outputs) == {"status": 404, "json": None, "body": "nope"}


async def test_a_code_node_gets_its_evaluated_inputs_and_each_key_it_returns_is_an_output() -> None:
    work: NodeWork = CodeWork(FakeCodeSandbox(), FakeTemplates())
    engine = Engine(work={NodeType.CODE: work})
    flow = graph([start({"name": "numbers", "type": "array"}),
                  node("c", NodeType.CODE, code="def main(numbers): ...", inputs={"numbers": "start.numbers"}),
                  end(total="{{ c.total }}", count="{{ c.count }}")], "start>c", "c>end")
    run = await engine.run(flow, numbers=[1, 2, 3])
    assert dict(run.outputs) == {"total": 6, "count": 3}


async def test_a_dataset_retrieval_node_searches_the_named_datasets_of_the_runs_account_only() -> None:
    knowledge = FakeKnowledgeBase()
    for dataset, owner in (("ds-alice", ALICE), ("ds-bob", OwnerId("bob"))):
        await knowledge.add_dataset(Dataset(dataset, owner, dataset, T0))
        chunk = Chunk(f"{dataset}-c", dataset, "doc", f"{dataset}.md", 0, f"visas of {dataset}")
        await knowledge.add_chunks([chunk], await FakeEmbedder().embed([chunk.text]))
    work = ToolWork(FakeToolBox({}), FakeTemplates(), SequentialIds(), DatasetSearch(knowledge, FakeEmbedder()))
    flow = graph([start(CITY), node("r", NodeType.TOOL, tool="dataset_retrieval", datasets=["ds-alice", "ds-bob"],
                                    arguments={"query": "visas for {{ start.city }}"}),
                  end(found="{{ r.result }}")], "start>r", "r>end")
    run = await Engine(work={NodeType.TOOL: work}).run(flow, city="Oslo")
    assert [p["document"] for p in json.loads(run.outputs["found"])] == ["ds-alice.md"]
