"""Scripted replies for the OpenAI-protocol test server (:mod:`tests.llm_server`).

Each script turns one chat-completions request into a :class:`Reply`: a status, headers and a
sequence of *frames*. A frame is either ``bytes`` (written to the socket as-is) or a ``float``
(seconds to sleep before the next frame). Keeping scripts as pure, synchronous frame generators
means the server has exactly one code path for every behaviour (text, tool calls, errors,
stalls, malformed output) and the byte layout of each case can be read right here.

The chunk layout copies what api.openai.com sends, so the official ``openai`` SDK parses it:
first a role delta, then content/tool-call deltas, a finish chunk, an optional usage chunk
(``choices: []``) and ``data: [DONE]``.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

Frame = bytes | float
DONE = b"data: [DONE]\n\n"
SSE_HEADERS = {"content-type": "text/event-stream", "cache-control": "no-cache"}
JSON_HEADERS = {"content-type": "application/json"}


def _dumps(payload: Any) -> bytes:
    return json.dumps(payload, separators=(",", ":")).encode()


def _sse(payload: Any) -> bytes:
    return b"data: " + _dumps(payload) + b"\n\n"


@dataclass
class Reply:
    """What the server sends back: ``frames`` are written (bytes) or slept (float) in order."""

    status: int
    headers: dict[str, str]
    frames: Iterator[Frame] | list[Frame]


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int
    completion_tokens: int

    def as_dict(self) -> dict[str, int]:
        total = self.prompt_tokens + self.completion_tokens
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": total,
        }


class ChatContext:
    """Per-request facts a script needs: the request body and ids shared by all its chunks."""

    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body
        self.model = str(body.get("model") or "scripted-model")
        self.stream = bool(body.get("stream"))
        self.include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        self.id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
        self.created = int(time.time())

    def wants_usage(self, forced: bool | None) -> bool:
        """``forced`` None follows the request's ``stream_options.include_usage``."""
        return self.include_usage if forced is None else forced

    def prompt_tokens(self) -> int:
        """Rough word count of the prompt: deterministic, good enough for accounting tests."""
        return sum(len(_text_of(m.get("content")).split()) for m in self.body.get("messages", []))

    def chunk(self, delta: dict[str, Any], finish_reason: str | None = None) -> bytes:
        return _sse(self.chunk_payload(delta, finish_reason))

    def chunk_payload(self, delta: dict[str, Any], finish_reason: str | None) -> dict[str, Any]:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish_reason}
        return {**self._envelope("chat.completion.chunk"), "choices": [choice]}

    def usage_chunk(self, usage: Usage) -> bytes:
        return _sse({**self._envelope("chat.completion.chunk"), "choices": [], "usage": usage.as_dict()})

    def completion(self, message: dict[str, Any], finish_reason: str, usage: Usage) -> Reply:
        choice = {"index": 0, "message": message, "logprobs": None, "finish_reason": finish_reason}
        body = {**self._envelope("chat.completion"), "choices": [choice], "usage": usage.as_dict()}
        return Reply(200, JSON_HEADERS, [_dumps(body)])

    def _envelope(self, obj: str) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": obj,
            "created": self.created,
            "model": self.model,
            "system_fingerprint": None,
        }


class Script(Protocol):
    def reply(self, ctx: ChatContext) -> Reply: ...


def _text_of(content: Any) -> str:
    """Text of a message ``content`` (a string or a list of ``{"type": "text"}`` parts)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


@dataclass
class TextScript:
    """Stream ``chunks`` as content deltas, sleeping ``delay`` seconds between them."""

    chunks: list[str]
    delay: float = 0.0
    usage: Usage | None = None  # None: prompt word count / number of chunks
    include_usage: bool | None = None  # None: as the request's stream_options asks
    finish_reason: str = "stop"

    def _usage(self, ctx: ChatContext) -> Usage:
        return self.usage or Usage(ctx.prompt_tokens(), len(self.chunks))

    def reply(self, ctx: ChatContext) -> Reply:
        if not ctx.stream:
            message = {"role": "assistant", "content": "".join(self.chunks), "refusal": None}
            return ctx.completion(message, self.finish_reason, self._usage(ctx))
        return Reply(200, SSE_HEADERS, self._frames(ctx))

    def _frames(self, ctx: ChatContext) -> Iterator[Frame]:
        yield ctx.chunk({"role": "assistant", "content": "", "refusal": None})
        for i, piece in enumerate(self.chunks):
            if i and self.delay:
                yield self.delay
            yield ctx.chunk({"content": piece})
        yield ctx.chunk({}, self.finish_reason)
        if ctx.wants_usage(self.include_usage):
            yield ctx.usage_chunk(self._usage(ctx))
        yield DONE


@dataclass
class ToolCall:
    name: str
    arguments: str  # the JSON text the model "wrote"
    id: str = field(default_factory=lambda: f"call_{uuid.uuid4().hex[:24]}")


def _split(text: str, pieces: int) -> list[str]:
    """Cut ``text`` into ``pieces`` non-empty-where-possible fragments (like real streams)."""
    size = max(1, -(-len(text) // max(1, pieces)))
    return [text[i : i + size] for i in range(0, len(text), size)] or [""]


@dataclass
class ToolCallsScript:
    """Parallel tool calls with ``arguments`` split over ``pieces`` deltas per call.

    The first delta of a call carries index, id, type and name with empty arguments; later
    deltas carry only ``index`` and an arguments fragment, as OpenAI does. ``interleave`` sends
    the fragments of different calls alternately, which a correct client must still reassemble
    by index. ``content`` is optional text (e.g. "reasoning") streamed before the calls.
    """

    calls: list[ToolCall]
    content: list[str] = field(default_factory=list)
    pieces: int = 3
    interleave: bool = False
    delay: float = 0.0
    usage: Usage | None = None
    include_usage: bool | None = None

    def _usage(self, ctx: ChatContext) -> Usage:
        return self.usage or Usage(ctx.prompt_tokens(), len(self.content) + len(self.calls))

    def reply(self, ctx: ChatContext) -> Reply:
        if not ctx.stream:
            calls = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in self.calls
            ]
            message = {
                "role": "assistant",
                "content": "".join(self.content) or None,
                "refusal": None,
                "tool_calls": calls,
            }
            return ctx.completion(message, "tool_calls", self._usage(ctx))
        return Reply(200, SSE_HEADERS, self._frames(ctx))

    def _deltas(self) -> list[dict[str, Any]]:
        per_call = []
        for index, call in enumerate(self.calls):
            head = {
                "index": index,
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": ""},
            }
            rest = [
                {"index": index, "function": {"arguments": piece}}
                for piece in _split(call.arguments, self.pieces)
            ]
            per_call.append([head, *rest])
        if not self.interleave:
            return [d for deltas in per_call for d in deltas]
        longest = max((len(d) for d in per_call), default=0)
        return [deltas[i] for i in range(longest) for deltas in per_call if i < len(deltas)]

    def _frames(self, ctx: ChatContext) -> Iterator[Frame]:
        yield ctx.chunk({"role": "assistant", "content": None if not self.content else ""})
        for i, delta in enumerate(
            [{"content": c} for c in self.content] + [{"tool_calls": [d]} for d in self._deltas()]
        ):
            if i and self.delay:
                yield self.delay
            yield ctx.chunk(delta)
        yield ctx.chunk({}, "tool_calls")
        if ctx.wants_usage(self.include_usage):
            yield ctx.usage_chunk(self._usage(ctx))
        yield DONE


_ERROR_TYPES = {
    400: "invalid_request_error",
    401: "authentication_error",
    429: "rate_limit_exceeded",
    500: "server_error",
    503: "service_unavailable",
}


@dataclass
class ErrorScript:
    """Answer with an HTTP error and an OpenAI-style ``{"error": {...}}`` body (stream or not).

    ``retry_after`` (seconds, may be fractional) / ``retry_after_ms`` become the headers the
    SDK honours, so retry tests need not wait the SDK's default back-off.
    """

    status: int = 500
    message: str = "scripted error"
    code: str | None = None
    retry_after: float | None = None
    retry_after_ms: int | None = None
    headers: dict[str, str] = field(default_factory=dict)

    def reply(self, ctx: ChatContext) -> Reply:
        headers = {**JSON_HEADERS, **self.headers}
        if self.retry_after is not None:
            headers["retry-after"] = f"{self.retry_after:g}"
        if self.retry_after_ms is not None:
            headers["retry-after-ms"] = str(self.retry_after_ms)
        err_type = _ERROR_TYPES.get(self.status, "api_error")
        body = {
            "error": {
                "message": self.message,
                "type": err_type,
                "param": None,
                "code": self.code or err_type,
            }
        }
        return Reply(self.status, headers, [_dumps(body)])


@dataclass
class StallScript:
    """Send ``chunks`` (streaming) then hang for ``seconds``: for cancellation/timeout tests.

    With ``stream: false`` it hangs before sending anything. The server records
    ``disconnected=True`` if the client gives up while it hangs.
    """

    chunks: list[str] = field(default_factory=list)
    seconds: float = 60.0

    def reply(self, ctx: ChatContext) -> Reply:
        if not ctx.stream:
            return Reply(200, JSON_HEADERS, [self.seconds, b"{}"])
        return Reply(200, SSE_HEADERS, self._frames(ctx))

    def _frames(self, ctx: ChatContext) -> Iterator[Frame]:
        yield ctx.chunk({"role": "assistant", "content": ""})
        for piece in self.chunks:
            yield ctx.chunk({"content": piece})
        yield self.seconds
        yield ctx.chunk({}, "stop")
        yield DONE


@dataclass
class CutScript:
    """Send ``chunks`` (streaming), then drop the connection in the middle of the response, as a
    proxy or a crashing server does: the client reads a body that ends without its last chunk."""

    chunks: list[str] = field(default_factory=list)

    def reply(self, ctx: ChatContext) -> Reply:
        return Reply(200, SSE_HEADERS, self._frames(ctx))

    def _frames(self, ctx: ChatContext) -> Iterator[Frame]:
        yield ctx.chunk({"role": "assistant", "content": ""})
        for piece in self.chunks:
            yield ctx.chunk({"content": piece})
        yield 0.05
        raise ConnectionResetError("the script cuts the connection")


@dataclass
class MalformedScript:
    """Valid ``before`` chunks, then one broken chunk, then a normal ending.

    ``not_json``: a ``data:`` line that is not JSON. ``no_choices``: a chunk object without the
    ``choices`` key. With ``stream: false`` the whole body is broken the same way.
    """

    kind: Literal["not_json", "no_choices"] = "not_json"
    before: list[str] = field(default_factory=list)

    def reply(self, ctx: ChatContext) -> Reply:
        bad = self._bad_payload(ctx)
        if not ctx.stream:
            return Reply(200, JSON_HEADERS, [bad])
        return Reply(200, SSE_HEADERS, self._frames(ctx, bad))

    def _bad_payload(self, ctx: ChatContext) -> bytes:
        if self.kind == "not_json":
            return b'{"id": "broken", this is not json'
        payload = ctx.chunk_payload({"content": "lost"}, None)
        del payload["choices"]
        return _dumps(payload)

    def _frames(self, ctx: ChatContext, bad: bytes) -> Iterator[Frame]:
        yield ctx.chunk({"role": "assistant", "content": ""})
        for piece in self.before:
            yield ctx.chunk({"content": piece})
        yield b"data: " + bad + b"\n\n"
        yield ctx.chunk({}, "stop")
        yield DONE


def echo_script(body: dict[str, Any]) -> TextScript:
    """Default when no script is queued: stream back the last user message, word by word."""
    users = [m for m in body.get("messages", []) if m.get("role") == "user"]
    text = _text_of(users[-1].get("content")) if users else ""
    return TextScript(re.findall(r"\S+\s*|\s+", text) or [""])


# Builders: short spellings for tests, e.g. server.enqueue(error(429), text("Hi", " there")).


def text(
    *chunks: str,
    delay: float = 0.0,
    usage: tuple[int, int] | None = None,
    include_usage: bool | None = None,
) -> TextScript:
    return TextScript(list(chunks), delay, Usage(*usage) if usage else None, include_usage)


def call(name: str, arguments: str | dict[str, Any], id: str | None = None) -> ToolCall:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(name, args, id) if id else ToolCall(name, args)


def tool_calls(
    *calls: ToolCall,
    content: tuple[str, ...] | list[str] = (),
    pieces: int = 3,
    interleave: bool = False,
    delay: float = 0.0,
) -> ToolCallsScript:
    return ToolCallsScript(list(calls), list(content), pieces, interleave, delay)


def error(
    status: int = 500,
    message: str = "scripted error",
    *,
    retry_after: float | None = None,
    retry_after_ms: int | None = None,
    code: str | None = None,
) -> ErrorScript:
    return ErrorScript(status, message, code, retry_after, retry_after_ms)


def stall(*chunks: str, seconds: float = 60.0) -> StallScript:
    return StallScript(list(chunks), seconds)


def cut(*chunks: str) -> CutScript:
    return CutScript(list(chunks))


def malformed(kind: Literal["not_json", "no_choices"] = "not_json", *before: str) -> MalformedScript:
    return MalformedScript(kind, list(before))
