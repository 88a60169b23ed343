"""The agent API's bodies and answers."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema

from domain.accounts.rate_limits import MAX_LIMIT, LimitName
from domain.agents.agent import MAX_DESCRIPTION, MAX_NAME, MAX_NOTE, MAX_VERSION, PLATFORM_OWNER
from domain.agents.config_codec import MAX_ITEM, MAX_ITEMS, MAX_TEXT, config_to_dict
from domain.billing.model_calls import MAX_BUDGET_USD
from interfaces.http.schemas import NO_NUL, SOME_TEXT, JsonInt, SomeText, UnicodeText

if TYPE_CHECKING:
    from domain.agents.agent import Agent, AgentVersion

# Not only white space, as the domain checks it (`str.strip`): SomeText says so in the schema too.
Name = Annotated[SomeText, Field(min_length=1, max_length=MAX_NAME, pattern=r"\S")]
Description = Annotated[UnicodeText, Field(max_length=MAX_DESCRIPTION)]
_TEXT = {"type": "string", "maxLength": MAX_TEXT, "pattern": NO_NUL}
_FLAG = {"type": "boolean"}
_PROFILE = {"type": "string", "minLength": 1, "maxLength": 64, "pattern": NO_NUL}  # a model profile's name
_TEXTS = {"type": "array", "maxItems": MAX_ITEMS,
          "items": {"type": "string", "minLength": 1, "maxLength": MAX_ITEM, "pattern": SOME_TEXT}}


def _int(low: int, high: int) -> dict[str, Any]:
    return {"type": "integer", "minimum": low, "maximum": high}


def _number(low: float, high: float) -> dict[str, Any]:
    return {"type": "number", "minimum": low, "maximum": high}


def _object(**properties: Any) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "additionalProperties": False}


# The config's JSON Schema, field for field what domain.agents.config_codec accepts (a unit test
# holds the two together): the spec tells clients exactly what a config may hold.
CONFIG_SCHEMA = _object(
    preset_prompt=_TEXT, language={"enum": ["en", "zh"]},
    model=_PROFILE,
    model_params=_object(
        temperature={"anyOf": [_number(0, 2), {"type": "null"}]},
        max_tokens={"anyOf": [_int(1, 1_000_000), {"type": "null"}]},
        top_p={"anyOf": [_number(0, 1), {"type": "null"}]},
    ),
    tools=_TEXTS, max_tool_rounds=_int(0, 20), stream_thoughts=_FLAG, datasets=_TEXTS,
    retrieval_top_k=_int(1, 50), retrieval_min_score=_number(-1, 1),
    memory=_object(
        dialog_round=_int(0, 200), history_max_tokens=_int(0, 1_000_000), summary=_FLAG, entities=_FLAG,
        user_memory=_FLAG, user_scope={"type": "string", "enum": ["account", "agent"]},
        model={"anyOf": [_PROFILE, {"type": "null"}]},  # null: the upkeep runs on `model`
    ),
    review=_object(input_keywords=_TEXTS, output_keywords=_TEXTS, response=_TEXT),
    opening_statement=_TEXT, suggested_questions=_TEXTS, suggested_questions_after_answer=_FLAG,
    # null: the settings' default for agents (MEMAGENT_LIMITS__AGENT_*); 0: unlimited.
    limits=_object(**{name.value: {"anyOf": [_int(0, MAX_LIMIT), {"type": "null"}]} for name in LimitName}),
    # null: no budget of the agent's own for that period; the account's (MEMAGENT_BUDGETS__ACCOUNT_*) applies.
    budget=_object(
        **{k: {"anyOf": [_number(0, MAX_BUDGET_USD), {"type": "null"}]} for k in ("daily_usd", "monthly_usd")}
    ),
    # Published workflow versions offered as tools (docs/workflows.md); `return_direct`: the outputs are the answer.
    workflows={"type": "array", "maxItems": MAX_ITEMS, "items": {
        **_object(id=_PROFILE, version=_int(1, MAX_VERSION), return_direct=_FLAG), "required": ["id", "version"],
    }},
)
Config = Annotated[
    dict[str, Any],
    WithJsonSchema(CONFIG_SCHEMA),
    Field(description="An agent config; what is missing takes the defaults."),
]


class CreateAgentBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: Name
    description: Description = ""
    config: Config | None = None


class ChangeAgentBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    name: Name | None = None
    description: Description | None = None
    status: Literal["active", "archived"] | None = None


class DraftBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    revision: JsonInt = Field(ge=1, le=MAX_VERSION, description="The revision the editor read: a newer one is a 409.")
    config: Config


class PublishBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    note: Annotated[UnicodeText, Field(max_length=MAX_NOTE)] = ""


def agent_data(agent: Agent) -> dict[str, Any]:
    return {
        "id": agent.id,
        "name": agent.name,
        "description": agent.description,
        "status": agent.status.value,
        "managed_by_settings": agent.owner == PLATFORM_OWNER,  # the default agent: MEMAGENT_AGENT__*
        "draft_revision": agent.draft.revision,
        "latest_version": agent.latest_version or None,
        "active_version": agent.active_version,
        "created_at": agent.created_at.isoformat(),
        "updated_at": agent.updated_at.isoformat(),
    }


def draft_data(agent: Agent) -> dict[str, Any]:
    return {"revision": agent.draft.revision, "config": config_to_dict(agent.draft.config),
            "updated_at": agent.draft.updated_at.isoformat()}


def version_data(version: AgentVersion, *, with_config: bool = True) -> dict[str, Any]:
    data: dict[str, Any] = {
        "version": version.version, "note": version.note, "created_at": version.created_at.isoformat(),
    }
    if with_config:
        data["config"] = config_to_dict(version.config)
    return data
