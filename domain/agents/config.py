"""Agent configuration and the loop rules that follow from a model's abilities."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from domain.accounts.rate_limits import RateLimits
from domain.agents.review import KeywordReview
from domain.billing.model_calls import Budget
from domain.errors import DomainError
from domain.memory.user_facts import FactHolder, RecallScope, UserScope

if TYPE_CHECKING:
    from domain.conversations.conversation import Message
    from domain.conversations.structured_output import OutputFormat
    from domain.ids import AppId, EndUserId, OwnerId
    from domain.tools.client_tools import ToolChoice


@dataclass(frozen=True, slots=True)
class ModelCapabilities:
    tool_call: bool = False
    agent_thought: bool = False
    image_input: bool = False
    structured_output: bool = False  # takes `response_format` (JSON mode and JSON Schema) itself


class AgentMode(enum.StrEnum):
    FUNCTION_CALLING = "function_calling"
    REACT = "react"
    CHAT = "chat"


def choose_mode(capabilities: ModelCapabilities, has_tools: bool) -> AgentMode:
    """Native tool calls when the model has them, ReAct when it can reason, else chat."""
    if not has_tools:
        return AgentMode.CHAT
    if capabilities.tool_call:
        return AgentMode.FUNCTION_CALLING
    if capabilities.agent_thought:
        return AgentMode.REACT
    return AgentMode.CHAT


@dataclass(frozen=True, slots=True)
class ModelParams:
    """Sampling settings sent with each chat call; None leaves the model profile's own."""

    temperature: float | None = None
    max_tokens: int | None = None
    top_p: float | None = None
    # One request's structured output, for a model that takes it itself (never an agent's setting).
    response_format: OutputFormat | None = None
    # One model call's choice among the client's tools (domain.tools.client_tools): never an agent's setting.
    tool_choice: ToolChoice | None = None

    def __post_init__(self) -> None:
        if self.temperature is not None and not 0.0 <= self.temperature <= 2.0:
            raise DomainError("model_params.temperature must be within 0..2")
        if self.max_tokens is not None and not 1 <= self.max_tokens <= 1_000_000:
            raise DomainError("model_params.max_tokens must be within 1..1000000")
        if self.top_p is not None and not 0.0 <= self.top_p <= 1.0:
            raise DomainError("model_params.top_p must be within 0..1")

    def overridden_by(self, call: ModelParams) -> ModelParams:
        """These settings with each one `call` sets (one request's own) in its place."""
        return ModelParams(
            self.temperature if call.temperature is None else call.temperature,
            self.max_tokens if call.max_tokens is None else call.max_tokens,
            self.top_p if call.top_p is None else call.top_p,
            call.response_format or self.response_format,
            call.tool_choice or self.tool_choice,
        )


@dataclass(frozen=True, slots=True)
class WorkflowRef:
    """A published workflow version an agent offers as a tool (docs/workflows.md). The version is
    pinned: a newer one changes no agent until its config names it. `return_direct`: the run's
    outputs are the turn's answer, and the loop stops there."""

    id: str
    version: int
    return_direct: bool = False

    def __post_init__(self) -> None:
        if self.version < 1:
            raise DomainError("a workflow's version starts at 1")


@dataclass(frozen=True, slots=True)
class AgentConfig:
    """What one agent (an app) is: its prompt, memory sizes, tools, datasets and review.

    `stream_thoughts`: whether the reasoning a model gives before a tool call reaches the
    end user as it streams. Off, a step's text is held back until the step ends and sent
    only if it is the answer; the reasoning is still kept in the trace.

    `user_memory`, `user_scope`: see `domain.memory.user_facts`.

    `suggested_questions_after_answer`: after each completed turn, up to 3 short questions the
    end user might ask next are made off the request path (`GET /api/messages/{id}/suggested`).

    `model` names the model profile of the turns, the title and the follow-up questions;
    `memory_model` (None: `model` too) that of the memory upkeep (see `upkeep_model`).
    """

    app_id: AppId
    preset_prompt: str = "You are a helpful assistant."
    dialog_round: int = 10
    history_max_tokens: int = 3000
    tool_names: tuple[str, ...] = ()
    max_tool_rounds: int = 5
    input_review: KeywordReview = field(default_factory=KeywordReview)
    output_review: KeywordReview = field(default_factory=KeywordReview)
    summary_enabled: bool = True
    stream_thoughts: bool = False
    dataset_ids: tuple[str, ...] = ()
    retrieval_top_k: int = 3
    retrieval_min_score: float = 0.0
    language: str = "en"  # of the platform's rules around the preset prompt: "en" or "zh"
    model: str = "default"  # the name of a model profile
    memory_model: str | None = None  # the memory upkeep's profile, when not `model`'s
    model_params: ModelParams = field(default_factory=ModelParams)
    entities_enabled: bool = True  # extract entities after each turn
    user_memory: bool = True  # the end user's facts and other conversations reach the prompt
    user_scope: UserScope = UserScope.ACCOUNT  # whose user facts: the account's (shared) or this agent's
    opening_statement: str = ""  # shown before the first turn
    suggested_questions: tuple[str, ...] = ()  # shown before the first turn
    suggested_questions_after_answer: bool = False  # follow-up questions after each answer
    limits: RateLimits = field(default_factory=RateLimits)  # this agent's, over MEMAGENT_LIMITS__AGENT_*
    budget: Budget = field(default_factory=Budget)  # USD this agent may spend per day and month
    workflows: tuple[WorkflowRef, ...] = ()  # published workflow versions offered as tools

    def holder_for(self, owner: OwnerId, end_user: EndUserId, agent_id: AppId) -> FactHolder | None:
        """Whose user facts a turn of this agent reads and writes; None when it has no user memory."""
        if not self.user_memory:
            return None
        return FactHolder(owner, end_user, agent_id if self.user_scope is UserScope.AGENT else None)

    def holder_of(self, message: Message) -> FactHolder | None:
        """Whose user facts the turn of `message` reads and writes."""
        return self.holder_for(message.owner, message.end_user, message.agent_id)

    @property
    def recall_scope(self) -> RecallScope:
        """Whose recall across conversations a conversation of this agent feeds."""
        if not self.user_memory:
            return RecallScope.NONE
        return RecallScope.AGENT if self.user_scope is UserScope.AGENT else RecallScope.ACCOUNT

    @property
    def upkeep_model(self) -> str:
        """The profile memory upkeep runs on: the summary, the entities and the archive folds.

        An agent's conversations reach only the providers of the profiles it names, never the
        process's `default` in their place. `memory_model` moves the upkeep alone to a cheaper
        model: what the upkeep writes is read by the agent's next prompts, not by the end user. The
        title and the follow-up questions stay on `model`: the end user reads them beside the
        answer, so the model the agent answers with writes them too.
        """
        return self.memory_model or self.model

    def for_call(self, params: ModelParams | None, system: str) -> AgentConfig:
        """This config for one request that brings its own sampling settings and system text
        (appended to the preset prompt, after a blank line)."""
        prompt = "\n\n".join(part for part in (self.preset_prompt.rstrip(), system.strip()) if part)
        model_params = self.model_params.overridden_by(params) if params is not None else self.model_params
        return replace(self, preset_prompt=prompt, model_params=model_params)

    def __post_init__(self) -> None:
        if self.dialog_round < 0 or self.history_max_tokens < 0:
            raise DomainError("dialog_round and history_max_tokens cannot be negative")
        if self.max_tool_rounds < 0:
            raise DomainError("max_tool_rounds cannot be negative")
        if self.language not in ("en", "zh"):
            raise DomainError(f"language must be 'en' or 'zh', not {self.language!r}")
        if self.retrieval_top_k < 1 or not -1.0 <= self.retrieval_min_score <= 1.0:
            raise DomainError("retrieval_top_k must be >= 1 and retrieval_min_score within -1..1")
