"""Msg and its content blocks — the same shape as AgentScope's Msg.

A Msg is what goes to and comes from a model: a role, a name and a list of
typed blocks. Converting to AgentScope's Msg is a field-for-field mapping
done in infrastructure.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from domain.errors import DomainError

if TYPE_CHECKING:
    from collections.abc import Mapping


class Role(enum.StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


@dataclass(frozen=True, slots=True)
class TextBlock:
    text: str

    def to_dict(self) -> dict[str, Any]:
        return {"type": "text", "text": self.text}


@dataclass(frozen=True, slots=True)
class ImageBlock:
    url: str

    def __post_init__(self) -> None:
        if not self.url:
            raise DomainError("an image block needs a url")

    def to_dict(self) -> dict[str, Any]:
        return {"type": "image", "url": self.url}


@dataclass(frozen=True, slots=True)
class ToolUseBlock:
    id: str
    name: str
    input: Mapping[str, Any]

    def __post_init__(self) -> None:
        if not self.id or not self.name:
            raise DomainError("a tool use block needs an id and a name")

    def to_dict(self) -> dict[str, Any]:
        return {"type": "tool_use", "id": self.id, "name": self.name, "input": dict(self.input)}


@dataclass(frozen=True, slots=True)
class ToolResultBlock:
    tool_use_id: str
    name: str
    output: str
    is_error: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "type": "tool_result",
            "tool_use_id": self.tool_use_id,
            "name": self.name,
            "output": self.output,
            "is_error": self.is_error,
        }


Block = TextBlock | ImageBlock | ToolUseBlock | ToolResultBlock


def block_from_dict(data: Mapping[str, Any]) -> Block:
    try:
        return _block(data)
    except (KeyError, TypeError, ValueError) as error:
        raise DomainError(f"malformed content block: {error}") from error


def _block(data: Mapping[str, Any]) -> Block:
    kind = data.get("type")
    if kind == "text":
        return TextBlock(text=str(data["text"]))
    if kind == "image":
        return ImageBlock(url=str(data["url"]))
    if kind == "tool_use":
        return ToolUseBlock(id=str(data["id"]), name=str(data["name"]), input=dict(data["input"]))
    if kind == "tool_result":
        return ToolResultBlock(
            tool_use_id=str(data["tool_use_id"]),
            name=str(data["name"]),
            output=str(data["output"]),
            is_error=bool(data.get("is_error", False)),
        )
    raise DomainError(f"unknown content block type: {kind!r}")


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens and price of one model call, or of several added up.

    `estimated`: some of the tokens were counted here, with the local tokenizer, because the
    model server reported none (a reply without usage, or a stream cut by a stop or a timeout).
    """

    prompt_tokens: int = 0
    completion_tokens: int = 0
    price: float = 0.0
    estimated: bool = False

    def __post_init__(self) -> None:
        if self.prompt_tokens < 0 or self.completion_tokens < 0 or self.price < 0:
            raise DomainError("usage figures cannot be negative")

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.price + other.price,
            self.estimated or other.estimated,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "price": self.price,
            "estimated": self.estimated,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Usage:
        return cls(
            int(data.get("prompt_tokens", 0)),
            int(data.get("completion_tokens", 0)),
            float(data.get("price", 0.0)),
            bool(data.get("estimated", False)),
        )


@dataclass(frozen=True, slots=True)
class Msg:
    id: str
    name: str
    role: Role
    content: tuple[Block, ...]
    created_at: datetime
    metadata: Mapping[str, Any] = field(default_factory=dict)
    usage: Usage | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.role, Role):
            raise DomainError(f"unknown role: {self.role!r}")
        if self.created_at.tzinfo is None:
            raise DomainError("created_at must be timezone-aware")

    @property
    def text(self) -> str:
        """The text blocks joined, which is what history and token budgets use."""
        return "".join(b.text for b in self.content if isinstance(b, TextBlock))

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "role": self.role.value,
            "content": [b.to_dict() for b in self.content],
            "metadata": dict(self.metadata),
            "created_at": self.created_at.isoformat(),
            "usage": self.usage.to_dict() if self.usage else None,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Msg:
        usage = data.get("usage")
        try:
            role = Role(data["role"])
        except ValueError as error:
            raise DomainError(f"unknown role: {data['role']!r}") from error
        return cls(
            id=str(data["id"]),
            name=str(data["name"]),
            role=role,
            content=tuple(block_from_dict(b) for b in data["content"]),
            created_at=datetime.fromisoformat(str(data["created_at"])),
            metadata=dict(data.get("metadata") or {}),
            usage=Usage.from_dict(usage) if usage else None,
        )


def text_msg(msg_id: str, role: Role, text: str, created_at: datetime, name: str = "") -> Msg:
    """A Msg with one text block, the common case."""
    return Msg(
        id=msg_id, name=name or role.value, role=role, content=(TextBlock(text),),
        created_at=created_at,
    )
