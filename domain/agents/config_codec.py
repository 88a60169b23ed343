"""An agent's config as plain data (the API's JSON and the stored snapshot) and back.

The plain form is nested by topic:

    {"preset_prompt", "language", "model", "model_params": {"temperature", "max_tokens", "top_p"},
     "tools", "max_tool_rounds", "stream_thoughts",
     "datasets", "retrieval_top_k", "retrieval_min_score",
     "memory": {"dialog_round", "history_max_tokens", "summary", "entities", "user_memory", "user_scope",
                "model"},
     "review": {"input_keywords", "output_keywords", "response"},
     "opening_statement", "suggested_questions", "suggested_questions_after_answer",
     "limits": {"rpm", "concurrent_turns", "tokens_per_day"}, "budget": {"daily_usd", "monthly_usd"},
     "workflows": [{"id", "version", "return_direct"}]}

A limit left null takes the settings' default for agents (MEMAGENT_LIMITS__AGENT_*); 0 is unlimited.
`memory.model` left null runs the memory upkeep on `model` (`AgentConfig.upkeep_model`).

Reading fills what is missing from the defaults, and refuses unknown fields and values of the
wrong type or range with every problem named by its path ("memory.dialog_round: …").
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from domain.accounts.rate_limits import MAX_LIMIT, LimitName, RateLimits
from domain.agents.config import AgentConfig, ModelParams, WorkflowRef
from domain.agents.review import KeywordReview
from domain.billing.model_calls import MAX_BUDGET_USD, Budget
from domain.errors import DomainError
from domain.memory.user_facts import UserScope
from domain.text import text_problem
from domain.workflows.workflow import MAX_VERSION

if TYPE_CHECKING:
    from domain.ids import AppId

MAX_TEXT = 32 * 1024  # characters of a prompt or a statement
MAX_ITEMS = 64  # tools, datasets, keywords, questions
MAX_ITEM = 512  # characters of one of those


class InvalidConfig(DomainError):
    """A config that breaks its rules; `problems` names each, by the path of its field."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__("; ".join(problems))
        self.problems = problems


def config_to_dict(config: AgentConfig) -> dict[str, Any]:
    params = config.model_params
    return {
        "preset_prompt": config.preset_prompt,
        "language": config.language,
        "model": config.model,
        "model_params": {"temperature": params.temperature, "max_tokens": params.max_tokens, "top_p": params.top_p},
        "tools": list(config.tool_names),
        "max_tool_rounds": config.max_tool_rounds,
        "stream_thoughts": config.stream_thoughts,
        "datasets": list(config.dataset_ids),
        "retrieval_top_k": config.retrieval_top_k,
        "retrieval_min_score": config.retrieval_min_score,
        "memory": {
            "dialog_round": config.dialog_round, "history_max_tokens": config.history_max_tokens,
            "summary": config.summary_enabled, "entities": config.entities_enabled,
            "user_memory": config.user_memory, "user_scope": config.user_scope.value,
            "model": config.memory_model,
        },
        "review": {
            "input_keywords": list(config.input_review.keywords),
            "output_keywords": list(config.output_review.keywords),
            "response": config.input_review.preset_response,
        },
        "opening_statement": config.opening_statement,
        "suggested_questions": list(config.suggested_questions),
        "suggested_questions_after_answer": config.suggested_questions_after_answer,
        "limits": {name.value: getattr(config.limits, name.value) for name in LimitName},
        "budget": {"daily_usd": config.budget.daily_usd, "monthly_usd": config.budget.monthly_usd},
        "workflows": [{"id": w.id, "version": w.version, "return_direct": w.return_direct} for w in config.workflows],
    }


def config_from_dict(app_id: AppId, data: object) -> AgentConfig:
    """The config `data` describes, on top of the defaults; raises `InvalidConfig`."""
    reader = _Reader()
    base = config_to_dict(AgentConfig(app_id))
    merged = reader.merge(base, data, "")
    try:
        return _build(app_id, merged, reader)
    except InvalidConfig:
        raise
    except DomainError as broken:  # a rule of the config itself (ranges are checked above)
        raise InvalidConfig([*reader.problems, str(broken)]) from None


def config_diff(before: AgentConfig, after: AgentConfig) -> list[tuple[str, Any, Any]]:
    """The fields (by path) whose values differ, with both values."""
    return _diff(config_to_dict(before), config_to_dict(after), "")


def _diff(a: Mapping[str, Any], b: Mapping[str, Any], prefix: str) -> list[tuple[str, Any, Any]]:
    changes: list[tuple[str, Any, Any]] = []
    for key in a:
        path = f"{prefix}{key}"
        if isinstance(a[key], dict):
            changes.extend(_diff(a[key], b[key], f"{path}."))
        elif a[key] != b[key]:
            changes.append((path, a[key], b[key]))
    return changes


class _Reader:
    """Merges plain data over the defaults and collects every problem it meets."""

    def __init__(self) -> None:
        self.problems: list[str] = []

    def merge(self, base: dict[str, Any], data: object, prefix: str) -> dict[str, Any]:
        if not isinstance(data, Mapping):
            self.problems.append(f"{prefix.rstrip('.') or 'config'}: must be an object")
            return base
        merged = dict(base)
        for key, value in data.items():
            path = f"{prefix}{key}"
            if key not in base:
                self.problems.append(f"{path}: unknown field")
            elif isinstance(base[key], dict):
                merged[key] = self.merge(base[key], value, f"{path}.")
            elif _integral(value) and isinstance(base[key], int) and not isinstance(base[key], bool):
                merged[key] = int(value)  # JSON counts 3.0 as an integer
            else:
                merged[key] = value
        return merged

    def take(self, value: Any, path: str, check: Callable[[Any], bool], what: str) -> Any:
        if not check(value):
            self.problems.append(f"{path}: must be {what}")
        return value


def _integral(value: Any) -> bool:
    return isinstance(value, float) and value.is_integer()


def _is_int(low: int, high: int) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, int) and not isinstance(v, bool) and low <= v <= high


def _is_number(low: float, high: float) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v) and low <= v <= high


def _is_text(limit: int) -> Callable[[Any], bool]:
    return lambda v: isinstance(v, str) and len(v) <= limit and not text_problem(v)


def _is_profile(v: Any) -> bool:
    return _is_text(64)(v) and bool(v)


def _is_texts(v: Any) -> bool:
    return isinstance(v, list) and len(v) <= MAX_ITEMS and all(_is_text(MAX_ITEM)(i) and i.strip() for i in v)


def _optional(check: Callable[[Any], bool]) -> Callable[[Any], bool]:
    return lambda v: v is None or check(v)


def _is_scope(value: object) -> bool:
    return isinstance(value, str) and value in tuple(UserScope)


def _scope(value: object) -> UserScope:
    """The scope named; a wrong value is a problem already, and the config is refused."""
    return UserScope(str(value)) if _is_scope(value) else UserScope.ACCOUNT


def _tuples(values: dict[str, Any]) -> dict[str, Any]:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in values.items()}


def _build(app_id: AppId, d: dict[str, Any], r: _Reader) -> AgentConfig:
    memory, review, params = d["memory"], d["review"], dict(d["model_params"])
    if _integral(params["max_tokens"]):
        params["max_tokens"] = int(params["max_tokens"])
    text, texts, flag = _is_text(MAX_TEXT), _is_texts, (lambda v: isinstance(v, bool))
    config: dict[str, Any] = {
        "preset_prompt": r.take(d["preset_prompt"], "preset_prompt", text, f"text of at most {MAX_TEXT} characters"),
        "language": r.take(d["language"], "language", lambda v: v in ("en", "zh"), "'en' or 'zh'"),
        "model": r.take(d["model"], "model", _is_profile, "a profile name"),
        "memory_model": r.take(memory["model"], "memory.model", _optional(_is_profile), "null or a profile name"),
        "tool_names": r.take(d["tools"], "tools", texts, "a list of tool names"),
        "max_tool_rounds": r.take(d["max_tool_rounds"], "max_tool_rounds", _is_int(0, 20), "an integer in 0..20"),
        "stream_thoughts": r.take(d["stream_thoughts"], "stream_thoughts", flag, "true or false"),
        "dataset_ids": r.take(d["datasets"], "datasets", texts, "a list of dataset ids"),
        "retrieval_top_k": r.take(d["retrieval_top_k"], "retrieval_top_k", _is_int(1, 50), "an integer in 1..50"),
        "retrieval_min_score": r.take(d["retrieval_min_score"], "retrieval_min_score", _is_number(-1, 1),
                                      "a number in -1..1"),
        "dialog_round": r.take(memory["dialog_round"], "memory.dialog_round", _is_int(0, 200), "an integer in 0..200"),
        "history_max_tokens": r.take(memory["history_max_tokens"], "memory.history_max_tokens",
                                     _is_int(0, 1_000_000), "an integer in 0..1000000"),
        "summary_enabled": r.take(memory["summary"], "memory.summary", flag, "true or false"),
        "entities_enabled": r.take(memory["entities"], "memory.entities", flag, "true or false"),
        "user_memory": r.take(memory["user_memory"], "memory.user_memory", flag, "true or false"),
        "user_scope": _scope(r.take(memory["user_scope"], "memory.user_scope", _is_scope, "'account' or 'agent'")),
        "opening_statement": r.take(d["opening_statement"], "opening_statement", text, "text"),
        "suggested_questions": r.take(d["suggested_questions"], "suggested_questions", texts, "a list of questions"),
        "suggested_questions_after_answer": r.take(d["suggested_questions_after_answer"],
                                                   "suggested_questions_after_answer", flag, "true or false"),
    }
    r.take(review["input_keywords"], "review.input_keywords", texts, "a list of keywords")
    r.take(review["output_keywords"], "review.output_keywords", texts, "a list of keywords")
    r.take(review["response"], "review.response", text, "text")
    r.take(params["temperature"], "model_params.temperature", _optional(_is_number(0, 2)), "a number in 0..2")
    r.take(params["max_tokens"], "model_params.max_tokens", _optional(_is_int(1, 1_000_000)), "an integer")
    r.take(params["top_p"], "model_params.top_p", _optional(_is_number(0, 1)), "a number in 0..1")
    limits = _limits(d["limits"], r)
    budget = _budget(d["budget"], r)
    workflows = _workflows(d["workflows"], r)
    if r.problems:
        raise InvalidConfig(r.problems)
    return AgentConfig(
        app_id=app_id,
        input_review=KeywordReview(tuple(review["input_keywords"]), review["response"]),
        output_review=KeywordReview(tuple(review["output_keywords"]), review["response"]),
        model_params=ModelParams(params["temperature"], params["max_tokens"], params["top_p"]),
        limits=limits,
        budget=budget,
        workflows=workflows,
        **_tuples(config),
    )


def _budget(data: dict[str, Any], r: _Reader) -> Budget:
    """null: no budget of the agent's own for that period (the account's still applies)."""
    usd = _optional(_is_number(0, MAX_BUDGET_USD))
    what = f"null or a number of USD in 0..{MAX_BUDGET_USD:g}"
    daily, monthly = (r.take(data[k], f"budget.{k}", usd, what) for k in ("daily_usd", "monthly_usd"))
    if not (usd(daily) and usd(monthly)):
        return Budget()
    return Budget(None if daily is None else float(daily), None if monthly is None else float(monthly))


def _limits(data: dict[str, Any], r: _Reader) -> RateLimits:
    values = {k: int(v) if _integral(v) else v for k, v in data.items()}
    for name, value in values.items():
        r.take(value, f"limits.{name}", _optional(_is_int(0, MAX_LIMIT)), f"null or an integer in 0..{MAX_LIMIT}")
    return RateLimits(**values) if not r.problems else RateLimits()


def _workflows(data: Any, r: _Reader) -> tuple[WorkflowRef, ...]:
    """Each one a published version by its number; a workflow named twice would be two tools of one name."""
    if not isinstance(data, list) or len(data) > MAX_ITEMS:
        r.problems.append(f"workflows: must be a list of at most {MAX_ITEMS} {{id, version, return_direct}}")
        return ()
    refs: list[WorkflowRef] = []
    for index, item in enumerate(data):
        at = f"workflows[{index}]"
        if not isinstance(item, Mapping):
            r.problems.append(f"{at}: must be an object {{id, version, return_direct}}")
            continue
        before = len(r.problems)
        r.problems.extend(f"{at}.{key}: unknown field" for key in item if key not in ("id", "version", "return_direct"))
        workflow_id = r.take(item.get("id"), f"{at}.id", _is_profile, "a workflow id")
        version = r.take(_whole(item.get("version")), f"{at}.version", _is_int(1, MAX_VERSION), "a version number")
        direct = r.take(item.get("return_direct", False), f"{at}.return_direct", lambda v: isinstance(v, bool),
                        "true or false")
        if len(r.problems) == before:
            refs.append(WorkflowRef(workflow_id, version, direct))
    if len({ref.id for ref in refs}) < len(refs):
        r.problems.append("workflows: names one workflow twice")
    return tuple(refs)


def _whole(value: Any) -> Any:
    return int(value) if _integral(value) else value
