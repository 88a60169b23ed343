"""Request and response bodies of the HTTP API."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field

from application.knowledge.documents import WHITE_SPACE
from domain.agents.agent import MAX_VERSION
from domain.conversations.thoughts import ThoughtEvent
from domain.text import text_problem

if TYPE_CHECKING:
    from pydantic import GetJsonSchemaHandler
    from pydantic.json_schema import JsonSchemaValue
    from pydantic_core import CoreSchema

    from application.chat_turn.aggregate_turn import TurnResult
    from application.chat_turn.turn import TurnHandle
    from domain.conversations.conversation import Conversation, Message, MessageAgentThought
    from domain.conversations.thoughts import AgentThought


def unicode_text(value: str) -> str:
    # JSON may escape half of a surrogate pair ("\ud83d") on its own, or a NUL ("\u0000"): Python
    # takes both, but no database, log or stream can encode the one, and PostgreSQL refuses the
    # other, so both are refused here rather than failing later as a database error.
    problem = text_problem(value)
    if problem:
        raise ValueError(problem)
    return value


def _no_controls(value: str) -> str:
    bad = next((c for c in value if c in CONTROLS), None)
    if bad is not None:
        raise ValueError(f"a name cannot hold the control character U+{ord(bad):04X}")
    return value


CONTROLS = frozenset(chr(c) for c in (*range(0x20), 0x7F))


@dataclass(frozen=True, slots=True)
class JsonPattern:
    """Says in the JSON schema what the validators beside it check; they stay in Python, since a
    half surrogate pair never reaches pydantic's own pattern engine."""

    pattern: str

    def __get_pydantic_json_schema__(self, schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        json_schema = handler(schema)
        json_schema["pattern"] = self.pattern
        return json_schema


NO_NUL = r"^[^\x00]*$"
SOME_TEXT = rf"^[^\x00]*[^\x00{WHITE_SPACE}][^\x00]*$"  # and something besides white space
A_NAME = rf"^[^\x00-\x1f\x7f]*[^\x00-\x1f\x7f{WHITE_SPACE}][^\x00-\x1f\x7f]*$"

# Free text from a request body: any string that can be stored and sent on.
UnicodeText = Annotated[str, AfterValidator(unicode_text), JsonPattern(NO_NUL)]
# Text that must say something (a query): not empty, not only white space.
SomeText = Annotated[str, AfterValidator(unicode_text), JsonPattern(SOME_TEXT)]
# A name: printable (no control character), not only white space.
Name = Annotated[str, AfterValidator(unicode_text), AfterValidator(_no_controls), JsonPattern(A_NAME)]
ImageUrl = Annotated[
    str, AfterValidator(unicode_text), JsonPattern(r"^(?:https?://|data:image/)[^\x00]*$"),
    Field(description="http(s) or data:image URL"),
]


def integral(value: object) -> object:
    """JSON Schema counts 3.0 as an integer: a strict model takes it as 3."""
    return int(value) if isinstance(value, float) and value.is_integer() else value


# An integer in a JSON body, 3.0 included (within 2**31, so that every JSON parser reads it exactly).
JsonInt = Annotated[int, BeforeValidator(integral)]


USER_FIELD = (
    "The end user the turn is for: a front end's own opaque id for its user (at most 256 characters). "
    "Required with an agent key; without it, the account chats as itself."
)
EndUserText = Annotated[UnicodeText, Field(min_length=1, max_length=256)]


class DebugChatBody(BaseModel):
    """A turn's body at the debugger: the agent and its draft come from the path."""

    model_config = ConfigDict(extra="forbid", strict=True)

    query: SomeText = Field(description="The user's message (at most MEMAGENT_TURN__MAX_QUERY_BYTES).")
    conversation_id: Annotated[UnicodeText, Field(min_length=1, max_length=64)] | None = None
    stream: bool = Field(False, description="true: text/event-stream; false: one JSON answer.")
    image_urls: list[ImageUrl] = Field(default_factory=list, max_length=8)
    user: EndUserText | None = Field(None, description=USER_FIELD)


class ChatBody(DebugChatBody):
    agent_id: Annotated[UnicodeText, Field(min_length=1, max_length=64)] | None = Field(
        None, description="The agent that answers (its active version); without it, the default agent."
    )
    version: Annotated[int, Field(ge=1, le=MAX_VERSION), BeforeValidator(integral)] | None = Field(
        None, description="A published version of the agent to run instead of its active one."
    )


def frame_data(thought: AgentThought) -> dict[str, Any]:
    """The `data` of one SSE frame (docs/ARCHITECTURE.md §4); a terminal one adds the conversation's
    title (null while it has none), `agent_end` its `finish_reason` ("stop", "length" or
    "content_filter"), `error` the stable `code` of its failure (`model_error`, `invalid_output`…),
    `agent_message` whether its text may turn out to be the step's thought (`tentative`), and a
    workflow event (`workflow_started`, `node_finished`…) the run's event as `workflow`."""
    data: dict[str, Any] = {
        "id": thought.id,
        "task_id": thought.task_id,
        "conversation_id": thought.conversation_id,
        "message_id": thought.message_id,
        "event": thought.event.value,
        "thought": thought.thought,
        "observation": thought.observation,
        "tool": thought.tool,
        "tool_input": dict(thought.tool_input),
        "answer": thought.answer,
        "total_token_count": thought.total_token_count,
        "total_price": thought.total_price,
        "tokens_estimated": thought.tokens_estimated,
        "latency": thought.latency,
    }
    if thought.event.is_terminal:
        data["conversation_title"] = thought.conversation_title or None
    if thought.event is ThoughtEvent.AGENT_END:
        data["finish_reason"] = thought.finish_reason
    if thought.event is ThoughtEvent.ERROR:
        data["code"] = thought.error_code or "internal_error"
    if thought.event is ThoughtEvent.AGENT_MESSAGE:
        data["tentative"] = thought.tentative
    if thought.event.is_workflow:
        data["workflow"] = dict(thought.workflow)
    return data


def ran_data(message: Message, conversation: Conversation) -> dict[str, Any]:
    """What a turn ran: its agent, the published version (or the draft revision), its entry point."""
    return {
        "agent_id": conversation.app_id,
        "agent_version": message.agent_version,
        "draft_revision": message.draft_revision,
        "entry_point": message.entry_point,
    }


def message_data(message: Message, conversation: Conversation | None = None) -> dict[str, Any]:
    ran = ran_data(message, conversation) if conversation is not None else {}
    return ran | {
        "id": message.id,
        "conversation_id": message.conversation_id,
        "task_id": message.task_id,
        "query": message.query,
        "image_urls": list(message.image_urls),
        "answer": message.answer,
        "status": message.status.value,
        "error": message.error,
        "message_token_count": message.usage.prompt_tokens,
        "answer_token_count": message.usage.completion_tokens,
        "total_token_count": message.usage.total_tokens,
        "total_price": message.usage.price,
        "latency": message.latency,
        "time_to_first_token": message.first_token_latency,
        "created_at": message.created_at.isoformat(),
        "user": message.end_user or None,
        "parent_message_id": message.parent_message_id,
        "superseded": message.superseded,
        "feedback": {"rating": message.rating.value if message.rating else None, "note": message.rating_note},
    }


def step_data(step: MessageAgentThought, with_prompt: bool = True) -> dict[str, Any]:
    """A persisted step; without its prompt for an end user's agent key (the builder's preset
    prompt and retrieved passages are not the end user's to read)."""
    return {
        "id": step.id,
        "message_id": step.message_id,
        "position": step.position,
        "event": step.event,
        "thought": step.thought,
        "tool": step.tool,
        "tool_input": dict(step.tool_input),
        "observation": step.observation,
        "message": step.prompt if with_prompt else "",
        "answer": step.answer,
        "message_token_count": step.usage.prompt_tokens,
        "answer_token_count": step.usage.completion_tokens,
        "total_token_count": step.usage.total_tokens,
        "total_price": step.usage.price,
        "latency": step.latency,
        "created_at": step.created_at.isoformat(),
    }


def turn_result_data(handle: TurnHandle, result: TurnResult) -> dict[str, Any]:
    """A finished turn as the non-streaming chat answers it (HTTP and MCP alike), without its thoughts."""
    return {
        "conversation_id": handle.conversation_id,
        "message_id": handle.message_id,
        "task_id": handle.task_id,
        "status": result.status.value,
        "answer": result.answer,
        "error": result.error,
        "total_token_count": result.total_token_count,
        "total_price": result.total_price,
        "latency": result.latency,
        "conversation_title": result.conversation_title or None,
    }
