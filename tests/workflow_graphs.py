"""Workflow graphs for the tests, and template reading with Jinja2 itself (what the Templates
adapter does), so that the domain's checks are proven against the real template language."""

from __future__ import annotations

import copy
from typing import Any

from jinja2 import TemplateSyntaxError, meta
from jinja2.sandbox import ImmutableSandboxedEnvironment

_ENV = ImmutableSandboxedEnvironment()


def names_in(template: str) -> frozenset[str]:
    return frozenset(meta.find_undeclared_variables(_ENV.parse(template)))


def problem_in(template: str) -> str | None:
    try:
        _ENV.parse(template)
    except TemplateSyntaxError as broken:
        return f"template syntax: {broken.message}"
    return None


SIMPLE: dict[str, Any] = {
    "nodes": [
        {"id": "start", "type": "start",
         "inputs": [{"name": "city", "type": "string", "description": "Where", "required": True}]},
        {"id": "greet", "type": "template", "template": "Hello {{ start.city }}"},
        {"id": "end", "type": "end", "outputs": {"text": "{{ greet.output }}"}},
    ],
    "edges": [{"source": "start", "target": "greet"}, {"source": "greet", "target": "end"}],
}


def simple(**changes: Any) -> dict[str, Any]:
    graph = copy.deepcopy(SIMPLE)
    graph.update(changes)
    return graph


def every_node_type() -> dict[str, Any]:
    """A graph with a node of each type, retry and on_error included."""
    return {
        "nodes": [
            {"id": "start", "type": "start", "inputs": [
                {"name": "city", "type": "string", "enum": ["Paris", "Rome"], "default": "Paris"},
                {"name": "days", "type": "integer", "required": False},
            ]},
            {"id": "l1", "type": "llm", "prompt": "Rate {{ start.city }}", "system": "Be terse.", "model": "fast",
             "output_schema": {"type": "object"}, "retry": {"count": 2, "backoff": 0.5},
             "on_error": {"action": "default", "value": {"text": "?"}}},
            {"id": "check", "type": "if_else", "cases": [{"id": "good", "when": "l1.json.score > 3"}]},
            {"id": "weather", "type": "tool", "tool": "weather", "arguments": {"city": "{{ start.city }}", "n": 3},
             "on_error": {"action": "branch"}},
            {"id": "fetch", "type": "http_request", "method": "POST", "url": "https://example.com/{{ start.city }}",
             "headers": {"X-Day": "{{ start.days }}"}, "body": "{{ weather.result }}", "timeout": 5},
            {"id": "each", "type": "iteration", "items": "fetch.json.items", "parallelism": 2, "body": {
                "nodes": [
                    {"id": "shout", "type": "template", "template": "{{ index }}: {{ item }} in {{ start.city }}"},
                    {"id": "body_end", "type": "end", "outputs": {"line": "{{ shout.output }}"}},
                ],
                "edges": [{"source": "shout", "target": "body_end"}],
            }},
            {"id": "count", "type": "code", "code": "def main(lines):\n    return {'n': len(lines)}",
             "inputs": {"lines": "each.outputs"}},
            {"id": "sorry", "type": "template", "template": "No weather for {{ start.city }}"},
            {"id": "end", "type": "end", "outputs": {"n": "{{ count.n }}"}},
            {"id": "end_else", "type": "end", "outputs": {"text": "{{ l1.text }}"}},
        ],
        "edges": [
            {"source": "start", "target": "l1"}, {"source": "l1", "target": "check"},
            {"source": "check", "target": "weather", "branch": "good"},
            {"source": "check", "target": "end_else", "branch": "else"},
            {"source": "weather", "target": "fetch"}, {"source": "weather", "target": "sorry", "branch": "error"},
            {"source": "sorry", "target": "end_else"},
            {"source": "fetch", "target": "each"}, {"source": "each", "target": "count"},
            {"source": "count", "target": "end"},
        ],
    }
