"""Request and response bodies of the HTTP API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from domain.text import text_problem

if TYPE_CHECKING:
    from application.chat_turn.aggregate_turn import TurnResult
    from application.chat_turn.turn import TurnHandle
    from domain.conversation import Message, MessageAgentThought
    from domain.thoughts import AgentThought


def _unicode_text(value: str) -> str:
    # JSON may escape half of a surrogate pair ("\ud83d") on its own, or a NUL ("\u0000"): Python
    # takes both, but no database, log or stream can encode the one, and PostgreSQL refuses the
    # other, so both are refused here rather than failing later as a database error.
    problem = text_problem(value)
    if problem:
        raise ValueError(problem)
    return value


# Free text from a request body: any string that can be stored and sent on.
UnicodeText = Annotated[str, AfterValidator(_unicode_text)]


class ChatBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    query: UnicodeText = Field(description="The user's message.")
    conversation_id: Annotated[UnicodeText, Field(min_length=1, max_length=64)] | None = None
    stream: bool = Field(False, description="true: text/event-stream; false: one JSON answer.")
    image_urls: list[UnicodeText] = Field(default_factory=list, max_length=8)


def frame_data(thought: AgentThought) -> dict[str, Any]:
    """The `data` of one SSE frame (docs/ARCHITECTURE.md §4)."""
    return {
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


def message_data(message: Message) -> dict[str, Any]:
    return {
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
        "created_at": message.created_at.isoformat(),
    }


def step_data(step: MessageAgentThought) -> dict[str, Any]:
    return {
        "id": step.id,
        "message_id": step.message_id,
        "position": step.position,
        "event": step.event,
        "thought": step.thought,
        "tool": step.tool,
        "tool_input": dict(step.tool_input),
        "observation": step.observation,
        "message": step.prompt,
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
    }
