"""MCP `tools/call` results as the text a model reads.

Tool results become text: text blocks as they are, images, audio and binary resources as a
short note (the turn sends tool output to the model as text), structured content as JSON when
there is no text. `is_error` results fail the call: PERMISSION_DENIED when the server says it
refused the caller, INVALID_ARGUMENTS when it says the arguments were wrong, FAILED otherwise.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from mcp.types import (
    AudioContent,
    BlobResourceContents,
    CallToolResult,
    EmbeddedResource,
    ImageContent,
    ResourceLink,
    TextContent,
    TextResourceContents,
)

from application.errors import ToolCallFailed
from domain.tools.calls import ToolFailure

if TYPE_CHECKING:
    from collections.abc import Mapping

MAX_OUTPUT = 100_000  # characters of a tool's output kept for the model
_BAD_ARGUMENTS = re.compile(
    r"validation error|invalid (argument|param|input)|missing required|required (argument|property)"
    r"|unexpected keyword|field required|is not of type",
    re.IGNORECASE,
)


# What servers say when they refuse a caller (bounded alternatives: linear on any input).
_REFUSED = re.compile(
    r"permission denied|not permitted|forbidden|access denied|unauthori[sz]ed|not authori[sz]ed"
    r"|authori[sz]ation (?:failed|refused|denied|required)|insufficient (?:scope|permission|privilege)"
    r"|\b(?:401|403)\b",
    re.IGNORECASE,
)


def refuses_permission(detail: str) -> bool:
    """Whether a tool's error says that permission or authorisation was refused."""
    return _REFUSED.search(detail[:2000]) is not None


def tool_output(result: CallToolResult, arguments: Mapping[str, Any] | None = None) -> str:
    """A `tools/call` result as the text a model reads; raises `ToolCallFailed` for `is_error`.

    An error is INVALID_ARGUMENTS when it reads like a validation error, or says "invalid" and
    names one of the call's arguments ("Invalid timezone: ..."); FAILED otherwise.
    """
    parts = [_block_text(block) for block in result.content]
    text = "\n".join(p for p in parts if p)
    if not text and result.structured_content is not None:
        text = json.dumps(result.structured_content, ensure_ascii=False, default=str)
    if result.is_error:
        detail = text or "the tool reported an error"
        raise ToolCallFailed(_failure_of(detail, arguments or {}), detail)
    return text[:MAX_OUTPUT]


def _failure_of(detail: str, arguments: Mapping[str, Any]) -> ToolFailure:
    if refuses_permission(detail):
        return ToolFailure.PERMISSION_DENIED
    return ToolFailure.INVALID_ARGUMENTS if _blames_arguments(detail, arguments) else ToolFailure.FAILED


def _blames_arguments(detail: str, arguments: Mapping[str, Any]) -> bool:
    if _BAD_ARGUMENTS.search(detail):
        return True
    lowered = detail.lower()
    return "invalid" in lowered and any(str(name).lower() in lowered for name in arguments)


def _block_text(block: Any) -> str:
    if isinstance(block, TextContent):
        return block.text
    if isinstance(block, ImageContent):
        return f"[image: {block.mime_type}, {len(block.data) * 3 // 4} bytes, not shown]"
    if isinstance(block, AudioContent):
        return f"[audio: {block.mime_type}, {len(block.data) * 3 // 4} bytes, not played]"
    if isinstance(block, ResourceLink):
        return f"[resource: {block.uri}{' - ' + block.description if block.description else ''}]"
    if isinstance(block, EmbeddedResource):
        resource = block.resource
        if isinstance(resource, TextResourceContents):
            return resource.text
        if isinstance(resource, BlobResourceContents):
            return f"[resource: {resource.uri} ({resource.mime_type or 'binary'}), not shown]"
    return f"[{getattr(block, 'type', 'content')}: not shown]"
