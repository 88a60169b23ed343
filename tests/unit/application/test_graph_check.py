"""GraphCheck: code the sandbox would never run is a problem where the workflow is saved, named by its
path (inside an iteration's body too), beside a graph whose code may run."""

import pytest

from application.errors import InvalidWorkflow
from application.workflows.graph_check import GraphCheck
from tests.fake_workflows import FakeCodeSandbox, FakeTemplates
from tests.fakes import FakeChatModels, FakeKnowledgeBase, FakeToolBox

REFUSED = "def main():\n    return {'pid': __import__('os').getpid()}\n"
FINE = "def main(**inputs):\n    return {'n': 1}\n"


def check() -> GraphCheck:
    return GraphCheck(FakeTemplates(), FakeCodeSandbox(), FakeToolBox({}), FakeKnowledgeBase(), FakeChatModels())


def with_code(code: str, body_code: str) -> dict[str, object]:
    body = {"nodes": [{"id": "inner", "type": "code", "code": body_code}, {"id": "bend", "type": "end", "outputs": {}}],
            "edges": [{"source": "inner", "target": "bend"}]}
    return {
        "nodes": [
            {"id": "start", "type": "start", "inputs": []},
            {"id": "c", "type": "code", "code": code},
            {"id": "loop", "type": "iteration", "items": "[1, 2]", "body": body},
            {"id": "end", "type": "end", "outputs": {}},
        ],
        "edges": [{"source": "start", "target": "c"}, {"source": "c", "target": "loop"},
                  {"source": "loop", "target": "end"}],
    }


def test_code_the_sandbox_would_refuse_is_named_by_its_path_when_saved() -> None:
    with pytest.raises(InvalidWorkflow) as refused:
        check().parsed(with_code(REFUSED, REFUSED))
    assert [p.path for p in refused.value.problems] == ["nodes[1].code", "nodes[2].body.nodes[0].code"]
    assert "`__import__` is not allowed" in refused.value.message


def test_code_the_sandbox_may_run_is_saved() -> None:
    graph = check().parsed(with_code(FINE, FINE))
    assert [n.id for n in graph.nodes] == ["start", "c", "loop", "end"]
