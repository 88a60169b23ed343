"""The fields each node type takes, and the check of each field's value as JSON gives it.

A field's templates (a prompt, a URL, an end output) and expressions (a condition, an iteration's
items, a code node's inputs) are collected as `Text`s: `validation` checks what each one reads.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from domain.workflows.graph import ELSE_BRANCH, ERROR_BRANCH, ErrorAction, NodeType, OnError, Retry
from domain.workflows.inputs import declaration_problems
from domain.workflows.problems import Problem

if TYPE_CHECKING:
    from collections.abc import Mapping

CASE_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")  # an end output's, an argument's or a code input's name
METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE", "HEAD")
MAX_TEXT = 100_000  # a template, a prompt, a piece of code
MAX_TIMEOUT = 600.0
MAX_PARALLELISM = 64
MAX_RETRIES = 10
MAX_BACKOFF = 60.0
DATASET_RETRIEVAL = "dataset_retrieval"  # the tool that searches a `tool` node's `datasets`


class Kind(enum.Enum):
    NAME = "a non-empty string"
    CODE = "Python source defining main(**inputs)"
    TEMPLATE = "a template (a string)"
    EXPRESSION = "an expression (a string)"
    TEMPLATES = "an object of templates"
    EXPRESSIONS = "an object of expressions"
    ARGUMENTS = "an object of JSON values, its strings templates"
    SCHEMA = "a JSON Schema (an object)"
    METHOD = f"one of {', '.join(METHODS)}"
    TIMEOUT = f"seconds, more than 0 and at most {MAX_TIMEOUT:g}"
    PARALLELISM = f"an integer from 1 to {MAX_PARALLELISM}"
    DATASETS = "a non-empty list of dataset ids"
    CASES = "a non-empty list of cases, each {id, when}"
    INPUTS = "a list of inputs"
    GRAPH = "a graph {nodes, edges}"


@dataclass(frozen=True, slots=True)
class Field:
    kind: Kind
    required: bool = True


@dataclass(frozen=True, slots=True)
class Text:
    """A template or an expression of a node, where it is."""

    path: str
    text: str
    expression: bool = False


FIELDS: dict[NodeType, dict[str, Field]] = {
    NodeType.START: {"inputs": Field(Kind.INPUTS, required=False)},
    NodeType.END: {"outputs": Field(Kind.TEMPLATES)},
    NodeType.LLM: {"prompt": Field(Kind.TEMPLATE), "system": Field(Kind.TEMPLATE, required=False),
                   "model": Field(Kind.NAME, required=False), "output_schema": Field(Kind.SCHEMA, required=False)},
    NodeType.TOOL: {"tool": Field(Kind.NAME), "arguments": Field(Kind.ARGUMENTS, required=False),
                    "datasets": Field(Kind.DATASETS, required=False)},
    NodeType.TEMPLATE: {"template": Field(Kind.TEMPLATE)},
    NodeType.IF_ELSE: {"cases": Field(Kind.CASES)},
    NodeType.HTTP_REQUEST: {
        "method": Field(Kind.METHOD), "url": Field(Kind.TEMPLATE), "headers": Field(Kind.TEMPLATES, required=False),
        "body": Field(Kind.TEMPLATE, required=False), "timeout": Field(Kind.TIMEOUT, required=False),
    },
    NodeType.ITERATION: {"items": Field(Kind.EXPRESSION), "body": Field(Kind.GRAPH),
                         "parallelism": Field(Kind.PARALLELISM, required=False)},
    NodeType.CODE: {"code": Field(Kind.CODE), "inputs": Field(Kind.EXPRESSIONS, required=False)},
}
COMMON_FIELDS = ("id", "type")
WORK_FIELDS = ("retry", "on_error")  # only on the node types whose work can fail on its own


def allowed_fields(kind: NodeType) -> tuple[str, ...]:
    return (*COMMON_FIELDS, *FIELDS[kind], *(WORK_FIELDS if kind.works_outside else ()))


def field_problems(kind: NodeType, raw: Mapping[str, Any], path: str, texts: list[Text]) -> list[Problem]:
    """What is wrong with the node's own fields (not `body`, which `validation` reads as a graph);
    its templates and expressions are added to `texts`."""
    allowed = allowed_fields(kind)
    problems = [Problem(f"{path}.{name}", f"not a field of a {kind} node (fields: {', '.join(allowed)})")
                for name in raw if name not in allowed]
    for name, field in FIELDS[kind].items():
        if name not in raw:
            if field.required:
                problems.append(Problem(f"{path}.{name}", f"missing: {field.kind.value}"))
        elif field.kind is not Kind.GRAPH:
            problems += _value_problems(field.kind, raw[name], f"{path}.{name}", texts)
    if kind is NodeType.TOOL:
        problems += _retrieval_problems(raw, path)
    return problems


def _value_problems(kind: Kind, value: Any, path: str, texts: list[Text]) -> list[Problem]:
    if kind is Kind.INPUTS:
        return declaration_problems(value, path)
    if kind is Kind.CASES:
        return _case_problems(value, path, texts)
    if kind in (Kind.TEMPLATES, Kind.EXPRESSIONS, Kind.ARGUMENTS):
        return _mapping_problems(kind, value, path, texts)
    if kind in (Kind.TEMPLATE, Kind.EXPRESSION, Kind.NAME, Kind.CODE):
        if not isinstance(value, str) or not value.strip() or len(value) > MAX_TEXT:
            return [Problem(path, f"{kind.value}, of 1 to {MAX_TEXT} characters")]
        if kind in (Kind.TEMPLATE, Kind.EXPRESSION):
            texts.append(Text(path, value, expression=kind is Kind.EXPRESSION))
        return []
    return [] if _plain_value_fits(kind, value) else [Problem(path, kind.value)]


def _plain_value_fits(kind: Kind, value: Any) -> bool:
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if kind is Kind.SCHEMA:
        return isinstance(value, dict)
    if kind is Kind.METHOD:
        return value in METHODS
    if kind is Kind.TIMEOUT:
        return number and 0 < value <= MAX_TIMEOUT
    if kind is Kind.PARALLELISM:
        return isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= MAX_PARALLELISM
    return isinstance(value, list) and bool(value) and all(isinstance(v, str) and v for v in value)  # DATASETS


def _mapping_problems(kind: Kind, value: Any, path: str, texts: list[Text]) -> list[Problem]:
    if not isinstance(value, dict):
        return [Problem(path, kind.value)]
    problems: list[Problem] = []
    for key, item in value.items():
        at = f"{path}.{key}"
        if not KEY.fullmatch(key):
            problems.append(Problem(at, "a name of letters, digits, '_' or '-', not starting with a digit"))
        elif isinstance(item, str):
            texts.append(Text(at, item, expression=kind is Kind.EXPRESSIONS))
        elif kind is not Kind.ARGUMENTS:
            problems.append(Problem(at, "a string"))
    return problems


def _case_problems(value: Any, path: str, texts: list[Text]) -> list[Problem]:
    if not isinstance(value, list) or not value:
        return [Problem(path, Kind.CASES.value)]
    problems: list[Problem] = []
    seen: set[str] = set()
    for index, case in enumerate(value):
        at = f"{path}[{index}]"
        if not isinstance(case, dict):
            problems.append(Problem(at, "a case is an object {id, when}"))
            continue
        problems += [Problem(f"{at}.{key}", "not a field of a case (fields: id, when)")
                     for key in case if key not in ("id", "when")]
        case_id = case.get("id")
        if not isinstance(case_id, str) or not CASE_ID.fullmatch(case_id) or case_id in (ELSE_BRANCH, ERROR_BRANCH):
            problems.append(Problem(f"{at}.id", f"1 to 64 letters, digits, '_' or '-', not {ELSE_BRANCH!r} "
                                                f"nor {ERROR_BRANCH!r}"))
        elif case_id in seen:
            problems.append(Problem(f"{at}.id", f"the case {case_id!r} is declared twice"))
        else:
            seen.add(case_id)
        problems += _value_problems(Kind.EXPRESSION, case.get("when"), f"{at}.when", texts)
    return problems


def _retrieval_problems(raw: Mapping[str, Any], path: str) -> list[Problem]:
    if raw.get("tool") == DATASET_RETRIEVAL and "datasets" not in raw:
        return [Problem(f"{path}.datasets", f"the {DATASET_RETRIEVAL} tool searches the datasets named here")]
    if raw.get("tool") != DATASET_RETRIEVAL and "datasets" in raw:
        return [Problem(f"{path}.datasets", f"only the {DATASET_RETRIEVAL} tool takes datasets")]
    return []


def case_ids(raw: Mapping[str, Any]) -> set[str]:
    """The ids of an if_else node's well-formed cases."""
    cases = raw.get("cases")
    return {c["id"] for c in cases if isinstance(c, dict) and isinstance(c.get("id"), str)} if isinstance(
        cases, list) else set()


def retry_of(raw: Any, path: str, problems: list[Problem]) -> Retry:
    if raw is None:
        return Retry()
    fields = raw if isinstance(raw, dict) else {"": None}
    count, backoff = fields.get("count", 0), fields.get("backoff", 1.0)
    if (set(fields) <= {"count", "backoff"} and isinstance(count, int) and not isinstance(count, bool)
            and 0 <= count <= MAX_RETRIES and isinstance(backoff, int | float) and not isinstance(backoff, bool)
            and 0 <= backoff <= MAX_BACKOFF):
        return Retry(count, float(backoff))
    problems.append(Problem(path, f"{{count: 0 to {MAX_RETRIES}, backoff: 0 to {MAX_BACKOFF:g} seconds}}"))
    return Retry()


def on_error_of(raw: Any, path: str, problems: list[Problem]) -> OnError:
    if raw is None:
        return OnError()
    action = raw.get("action") if isinstance(raw, dict) else None
    if action not in tuple(ErrorAction) or not set(raw) <= {"action", "value"}:
        problems.append(Problem(path, f"{{action: {' | '.join(ErrorAction)}, value?}}"))
        return OnError()
    if (action == ErrorAction.DEFAULT) != ("value" in raw):
        problems.append(Problem(f"{path}.value", "the outputs `default` gives, and only `default` takes"))
    return OnError(ErrorAction(action), raw.get("value"))
