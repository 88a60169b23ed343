"""A workflow's graph is checked as a whole: every problem comes back at once, named by its path."""

from __future__ import annotations

from typing import Any

import pytest

from domain.workflows.graph import ErrorAction, Graph, NodeType, Retry
from domain.workflows.problems import WorkflowInvalid
from domain.workflows.validation import parse_graph
from tests.workflow_graphs import every_node_type, names_in, problem_in, simple


def problems_of(raw: Any) -> dict[str, str]:
    with pytest.raises(WorkflowInvalid) as invalid:
        parse_graph(raw, names_in, problem_in)
    return {p.path: p.message for p in invalid.value.problems}


def test_a_graph_with_every_node_type_parses_with_its_body_as_a_graph_and_its_policies() -> None:
    graph = parse_graph(every_node_type(), names_in, problem_in)

    assert [n.type for n in graph.nodes][:7] == [
        NodeType.START, NodeType.LLM, NodeType.IF_ELSE, NodeType.TOOL, NodeType.HTTP_REQUEST, NodeType.ITERATION,
        NodeType.CODE,
    ]
    assert graph.node("l1").retry == Retry(2, 0.5)
    assert graph.node("l1").on_error.action is ErrorAction.DEFAULT
    assert graph.node("l1").config["prompt"] == "Rate {{ start.city }}"
    body = graph.node("each").config["body"]
    assert isinstance(body, Graph)
    assert [n.id for n in body.nodes] == ["shout", "body_end"]
    assert graph.order()[0] == "start"


def test_an_unknown_node_type_or_field_is_named_by_its_path() -> None:
    raw = simple()
    raw["nodes"][1] = {"id": "greet", "type": "translate", "template": "x"}
    raw["nodes"][2]["colour"] = "blue"
    raw["nodes"][0]["retry"] = {"count": 1}  # only the nodes whose work can fail take a retry
    raw["extra"] = 1

    problems = problems_of(raw)

    assert "unknown node type 'translate'" in problems["nodes[1].type"]
    assert "not a field of a end node" in problems["nodes[2].colour"]
    assert "not a field of a start node" in problems["nodes[0].retry"]
    assert "not a field of a graph" in problems["extra"]


def test_missing_and_mistyped_fields_are_named_by_their_paths() -> None:
    raw = every_node_type()
    nodes = raw["nodes"]
    del nodes[1]["prompt"]
    nodes[4].update(method="FETCH", timeout=0, headers={"X": 1})
    nodes[5]["parallelism"] = 0
    nodes[1]["output_schema"] = "object"
    nodes[3]["retry"] = {"count": -1}
    nodes[3]["on_error"] = {"action": "default"}
    nodes[2]["cases"] = [{"id": "else", "when": "true"}, {"id": "x"}]

    problems = problems_of(raw)

    assert problems["nodes[1].prompt"].startswith("missing")
    assert {"nodes[4].method", "nodes[4].timeout", "nodes[4].headers.X", "nodes[5].parallelism",
            "nodes[1].output_schema", "nodes[3].retry", "nodes[3].on_error.value", "nodes[2].cases[0].id",
            "nodes[2].cases[1].when"} <= set(problems)


def test_node_ids_are_unique_in_the_whole_workflow_and_well_formed() -> None:
    raw = every_node_type()
    raw["nodes"][5]["body"]["nodes"][0]["id"] = "l1"  # a body's node with an outer node's id
    raw["nodes"][7]["id"] = "9lives"
    raw["nodes"][9]["id"] = "item"

    problems = problems_of(raw)

    assert "taken by another node" in problems["nodes[5].body.nodes[0].id"]
    assert "starting with a letter" in problems["nodes[7].id"]
    assert "what an iteration's body reads" in problems["nodes[9].id"]


def test_an_edge_to_a_missing_node_is_named_by_its_end() -> None:
    raw = simple(edges=[{"source": "start", "target": "greet"}, {"source": "greet", "target": "nowhere"},
                        {"source": "ghost", "target": "end", "weight": 2}])

    problems = problems_of(raw)

    assert problems["edges[1].target"] == "no node 'nowhere' in this graph"
    assert problems["edges[2].source"] == "no node 'ghost' in this graph"
    assert "not a field of an edge" in problems["edges[2].weight"]


def test_a_cycle_is_refused_naming_its_nodes() -> None:
    raw = simple()
    raw["nodes"].insert(2, {"id": "again", "type": "template", "template": "{{ greet.output }}"})
    raw["edges"] += [{"source": "greet", "target": "again"}, {"source": "again", "target": "greet"}]

    problems = problems_of(raw)

    assert "a cycle" in problems["edges"]
    assert "greet, again" in problems["edges"]


def test_a_template_may_read_only_nodes_that_run_before_it() -> None:
    raw = simple()
    raw["nodes"].insert(2, {"id": "aside", "type": "template", "template": "{{ greet.output }} and {{ later.text }}"})
    raw["nodes"].insert(3, {"id": "later", "type": "template", "template": "{{ aside.output }} {{ item }}"})
    raw["edges"] += [{"source": "start", "target": "aside"}, {"source": "start", "target": "later"}]

    problems = problems_of(raw)

    assert problems["nodes[2].template"] == "reads `greet` and `later`, nodes that do not run before it"  # siblings
    assert problems["nodes[3].template"] == ("reads `aside`, a node that does not run before it; "
                                             "reads `item`, which only an iteration's body has")
    assert set(problems) == {"nodes[2].template", "nodes[3].template"}


def test_a_body_reads_its_item_and_what_its_iteration_may_and_the_workflow_cannot_read_the_body() -> None:
    raw = every_node_type()
    body = raw["nodes"][5]["body"]
    body["nodes"][0]["template"] = "{{ item }} {{ fetch.status }} {{ each.outputs }} {{ count.n }}"
    raw["nodes"][8]["outputs"] = {"n": "{{ shout.output }}"}

    problems = problems_of(raw)

    # Its own iteration's outputs and what runs after the iteration are not there yet; `item` and `fetch` are.
    assert problems["nodes[5].body.nodes[0].template"] == "reads `count` and `each`, nodes that do not run before it"
    assert problems["nodes[8].outputs.n"] == "reads `shout`, a node that does not run before it"
    assert len(problems) == 2


def test_a_template_that_does_not_parse_is_named_by_its_path() -> None:
    raw = simple()
    raw["nodes"][1]["template"] = "Hello {{ start.city "

    assert problems_of(raw)["nodes[1].template"].startswith("template syntax:")


def test_exactly_one_start_whose_id_is_start_and_at_least_one_end() -> None:
    no_start = simple()
    no_start["nodes"][0]["type"] = "template"
    no_start["nodes"][0]["template"] = "x"
    del no_start["nodes"][0]["inputs"]
    assert problems_of(no_start)["nodes"] == "no start node: a workflow has exactly one"

    two = simple()
    two["nodes"].append({"id": "begin", "type": "start"})
    two["edges"].append({"source": "begin", "target": "end"})
    assert "a second start node" in problems_of(two)["nodes[3].type"]

    renamed = simple()
    renamed["nodes"][0]["id"] = "begin"
    renamed["edges"][0]["source"] = "begin"
    assert "the start node's id is 'start'" in problems_of(renamed)["nodes[0].id"]

    no_end = simple(nodes=simple()["nodes"][:2], edges=simple()["edges"][:1])
    assert problems_of(no_end)["nodes"].startswith("no end node")


def test_an_iteration_body_has_no_start_and_at_least_one_end() -> None:
    raw = every_node_type()
    raw["nodes"][5]["body"] = {"nodes": [{"id": "inner", "type": "start"}], "edges": []}

    problems = problems_of(raw)

    assert "has no start node" in problems["nodes[5].body.nodes[0].type"]
    assert problems["nodes[5].body.nodes"].startswith("no end node")


def test_if_else_edges_name_its_cases_or_else_and_only_if_else_edges_name_a_case() -> None:
    raw = every_node_type()
    raw["edges"][2]["branch"] = "great"
    raw["edges"][4]["branch"] = "good"
    raw["edges"].append({"source": "check", "target": "sorry"})

    problems = problems_of(raw)

    assert "one of its cases or else (else, good)" in problems["edges[2].branch"]
    assert "only an if_else's edges name a case" in problems["edges[4].branch"]
    assert "edges[10].branch" in problems


def test_the_error_branch_and_on_error_branch_go_together() -> None:
    raw = every_node_type()
    raw["nodes"][3]["on_error"] = {"action": "fail"}  # its `error` edge now leaves a node that never branches
    raw["nodes"][4]["on_error"] = {"action": "branch"}  # and this one has no `error` edge

    problems = problems_of(raw)

    assert "only an if_else's edges" in problems["edges[5].branch"]
    assert "add one" in problems["nodes[4].on_error"]


def test_every_node_but_the_start_is_reached_and_nothing_leads_into_start_or_out_of_an_end() -> None:
    raw = simple()
    raw["nodes"].insert(2, {"id": "orphan", "type": "template", "template": "x"})
    raw["edges"] += [{"source": "orphan", "target": "start"}, {"source": "end", "target": "greet"}]

    problems = problems_of(raw)

    assert "no edge leads to it" in problems["nodes[2]"]
    assert problems["edges[2].target"] == "nothing runs before the start node"
    assert "no edge leaves it" in problems["edges[3].source"]


def test_start_inputs_are_checked_name_type_enum_and_default() -> None:
    raw = simple()
    raw["nodes"][0]["inputs"] = [
        {"name": "9city", "type": "string"},
        {"name": "days", "type": "date"},
        {"name": "mood", "type": "string", "enum": ["calm", 3]},
        {"name": "size", "type": "integer", "enum": [1, 2], "default": 3},
        {"name": "size", "type": "boolean", "default": "yes", "required": True, "colour": "x"},
    ]

    problems = problems_of(raw)

    assert set(problems) == {
        "nodes[0].inputs[0].name", "nodes[0].inputs[1].type", "nodes[0].inputs[2].enum",
        "nodes[0].inputs[3].default", "nodes[0].inputs[4].default", "nodes[0].inputs[4].required",
        "nodes[0].inputs[4].name", "nodes[0].inputs[4].colour",
    }


def test_a_graph_that_is_not_an_object_of_nodes_is_one_problem() -> None:
    assert problems_of([]) == {"": "a graph is an object {nodes: [...], edges: [...]}"}
    assert "nodes[0]" in problems_of({"nodes": ["start"], "edges": "none"})


def test_every_problem_is_in_the_message_with_its_path() -> None:
    raw = simple(edges=[{"source": "start", "target": "nowhere"}])
    with pytest.raises(WorkflowInvalid) as invalid:
        parse_graph(raw, names_in, problem_in)

    assert str(invalid.value).startswith("The workflow is not valid: ")
    for problem in invalid.value.problems:
        assert f"{problem.path}: {problem.message}" in str(invalid.value)
