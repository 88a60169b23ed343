"""A workflow's inputs: the tool's parameters as JSON Schema, and a run's values checked against
them, every wrong input named at once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from domain.workflows.inputs import check_inputs, input_schema
from domain.workflows.problems import InputsInvalid
from domain.workflows.validation import parse_graph
from tests.workflow_graphs import every_node_type, names_in, problem_in, simple

if TYPE_CHECKING:
    from domain.workflows.graph import Node


def start_of(raw: dict[str, Any]) -> Node:
    return parse_graph(raw, names_in, problem_in).start


def test_the_tool_parameters_are_the_start_inputs_as_json_schema() -> None:
    schema = input_schema(start_of(every_node_type()))

    assert schema == {
        "type": "object",
        "properties": {
            "city": {"type": "string", "enum": ["Paris", "Rome"], "default": "Paris"},
            "days": {"type": "integer"},
        },
        "required": [],
        "additionalProperties": False,
    }
    simple_schema = input_schema(start_of(simple()))
    assert simple_schema["required"] == ["city"]
    assert simple_schema["properties"]["city"]["description"] == "Where"


def test_defaults_are_filled_and_optional_inputs_may_be_left_out() -> None:
    assert check_inputs(start_of(every_node_type()), {}) == {"city": "Paris"}
    assert check_inputs(start_of(every_node_type()), {"city": "Rome", "days": 3.0}) == {"city": "Rome", "days": 3.0}


def test_missing_mistyped_unlisted_and_unknown_inputs_are_each_named() -> None:
    with pytest.raises(InputsInvalid) as missing:
        check_inputs(start_of(simple()), {"town": "Paris"})
    assert {p.path: p.message for p in missing.value.problems} == {
        "inputs.town": "the workflow has no such input",
        "inputs.city": "a required input is missing",
    }

    with pytest.raises(InputsInvalid) as wrong:
        check_inputs(start_of(every_node_type()), {"city": "Oslo", "days": True})
    problems = {p.path: p.message for p in wrong.value.problems}
    assert problems == {"inputs.city": "one of 'Paris', 'Rome'", "inputs.days": "of type integer, not boolean"}
    assert "inputs.city: one of 'Paris', 'Rome'" in str(wrong.value)
