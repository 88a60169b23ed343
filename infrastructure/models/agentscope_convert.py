"""Domain Msg ↔ `agentscope.message.Msg` (AgentScope 2.x), a block-for-block mapping.

Differences it bridges:
- AgentScope has no `tool` role: a call's results go in an *assistant* Msg. A domain
  `tool` Msg becomes an assistant Msg holding only results; coming back, the results of any
  assistant Msg become a domain `tool` Msg that follows it.
- A tool call's input is a JSON *string* there, a mapping here.
- Images are `DataBlock`s with a URL or base64 source. Only http(s) and data URLs are
  passed on: AgentScope's formatter would read a `file://` URL from this server's disk.
- AgentScope's Usage has no price, so a round trip keeps tokens and loses the price.
"""

from __future__ import annotations

import json
import mimetypes
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, Literal

from agentscope import message as am
from pydantic import AnyUrl

from domain.conversations.messages import Block, ImageBlock, Msg, Role, TextBlock, ToolResultBlock, ToolUseBlock, Usage
from domain.tools.calls import parse_arguments

Rename = Callable[[str], str]
_ERROR_STATES = {am.ToolResultState.ERROR, am.ToolResultState.DENIED, am.ToolResultState.INTERRUPTED}
_SENDABLE_SCHEMES = ("http://", "https://", "data:")
_ROLES: dict[Role, Literal["user", "assistant", "system"]] = {
    Role.SYSTEM: "system",
    Role.USER: "user",
    Role.ASSISTANT: "assistant",
    Role.TOOL: "assistant",
}


def _same(name: str) -> str:
    return name


def to_agentscope(messages: Sequence[Msg], rename: Rename = _same) -> list[am.Msg]:
    """`rename` maps tool names (e.g. to the names a provider's wire allows)."""
    return [to_agentscope_msg(msg, rename) for msg in messages]


def to_agentscope_msg(msg: Msg, rename: Rename = _same) -> am.Msg:
    usage = msg.usage
    return am.Msg(
        id=msg.id,
        name=msg.name,
        role=_ROLES[msg.role],
        content=[_to_block(block, rename) for block in msg.content],
        metadata=dict(msg.metadata),
        created_at=msg.created_at.isoformat(),
        usage=am.Usage(input_tokens=usage.prompt_tokens, output_tokens=usage.completion_tokens) if usage else None,
    )


def _to_block(block: Block, rename: Rename) -> Any:
    match block:
        case TextBlock(text=text):
            return am.TextBlock(text=text)
        case ImageBlock(url=url):
            return _image(url)
        case ToolUseBlock(id=call_id, name=name, input=arguments):
            return am.ToolCallBlock(
                id=call_id,
                name=rename(name),
                input=json.dumps(dict(arguments)),
                state=am.ToolCallState.FINISHED,
            )
        case ToolResultBlock(tool_use_id=call_id, name=name, output=output, is_error=is_error):
            state = am.ToolResultState.ERROR if is_error else am.ToolResultState.SUCCESS
            return am.ToolResultBlock(id=call_id, name=rename(name), output=output, state=state)
    raise TypeError(f"unknown block {block!r}")


def _image(url: str) -> am.TextBlock | am.DataBlock:
    if not url.startswith(_SENDABLE_SCHEMES):
        return am.TextBlock(text="[an image was left out: only http(s) and data URLs are sent]")
    if url.startswith("data:"):
        header, _, data = url.partition(",")
        media_type = header.removeprefix("data:").split(";")[0] or "image/png"
        return am.DataBlock(source=am.Base64Source(data=data, media_type=media_type))
    guessed = mimetypes.guess_type(url)[0] or ""
    media_type = guessed if guessed.startswith("image/") else "image/*"
    return am.DataBlock(source=am.URLSource(url=AnyUrl(url), media_type=media_type))


def from_agentscope(msg: am.Msg, rename: Rename = _same) -> list[Msg]:
    """One domain Msg, or two when an assistant Msg also holds tool results (assistant, then tool).

    Thinking and hint blocks have no domain counterpart and are left out.
    """
    created_at = datetime.fromisoformat(msg.created_at)
    created_at = created_at if created_at.tzinfo else created_at.astimezone()  # AgentScope stamps local time
    usage = Usage(msg.usage.input_tokens, msg.usage.output_tokens) if msg.usage else None
    blocks = [b for b in (_from_block(block, rename) for block in msg.content) if b is not None]
    results = tuple(b for b in blocks if isinstance(b, ToolResultBlock))
    said = tuple(b for b in blocks if not isinstance(b, ToolResultBlock))
    common: dict[str, Any] = {"name": msg.name, "created_at": created_at, "metadata": dict(msg.metadata)}
    if not results:
        return [Msg(id=msg.id, role=Role(msg.role), content=said, usage=usage, **common)]
    if not said:
        return [Msg(id=msg.id, role=Role.TOOL, content=results, usage=usage, **common)]
    return [
        Msg(id=msg.id, role=Role.ASSISTANT, content=said, usage=usage, **common),
        Msg(id=f"{msg.id}:tool", role=Role.TOOL, content=results, **common),
    ]


def _from_block(block: Any, rename: Rename) -> Block | None:
    match block:
        case am.TextBlock():
            return TextBlock(block.text)
        case am.DataBlock(source=am.Base64Source() as source):
            return ImageBlock(f"data:{source.media_type};base64,{source.data}")
        case am.DataBlock(source=am.URLSource() as source):
            return ImageBlock(str(source.url))
        case am.ToolCallBlock():
            return ToolUseBlock(block.id, rename(block.name), parse_arguments(block.input))
        case am.ToolResultBlock():
            return ToolResultBlock(
                block.id, rename(block.name), _output_text(block.output), block.state in _ERROR_STATES
            )
    return None


def _output_text(output: str | list[Any]) -> str:
    if isinstance(output, str):
        return output
    return "".join(part.text for part in output if isinstance(part, am.TextBlock))
