"""The offline scripted model: a deterministic stand-in so memagent runs with no LLM.

It is not a language model. It answers from the prompt it is given, so memory and
tools can be seen working:

- A user message containing `[[tool:NAME]]` or `[[tool:NAME {"arg": "value"}]]`
  makes it call tool NAME (when the turn offers it) before answering.
- After a tool result it reports what the tool returned.
- Otherwise it repeats the query and names the last earlier exchange it was shown.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import re
from typing import TYPE_CHECKING, Any

from application.off_loop import parsed
from application.ports.chat_model import ChatModel, ModelChunk
from domain.agents.config import ModelCapabilities
from domain.conversations.messages import Msg, Role, ToolResultBlock, Usage
from domain.tools.calls import ToolCall, ToolSpec

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, Sequence

    from application.ports.runtime import Tokenizer
    from domain.agents.config import ModelParams

LABEL = "(offline scripted model, not a real LLM)"
HOW_TO_CONFIGURE = (
    "memagent is using the offline scripted model: answers are scripted, not generated. "
    "To use a real LLM set MEMAGENT_LLM__PROVIDER=openai, MEMAGENT_LLM__BASE_URL, "
    "MEMAGENT_LLM__API_KEY and MEMAGENT_LLM__MODEL."
)
NAME = "offline-scripted"
CAPABILITIES = ModelCapabilities(tool_call=True, agent_thought=True, image_input=False)
# The old single pattern, r"\[\[tool:([\w.\-]+)\s*(\{.*?\})?\s*\]\]", tried each marker's "{" against
# the rest of the text: quadratic on "[[tool:a {" repeated. Here each marker's opening is read once and
# the first closing "}]]" after its "{" found by bisecting the closings' places, found once: linear.
_OPENING = re.compile(r"\[\[tool:([\w.\-]++)\s*+(?=\{|\]\])")
_CLOSING = re.compile(r"\}\s*+\]\]")


def tool_marker(text: str) -> tuple[str, str | None] | None:
    """The first `[[tool:NAME]]` or `[[tool:NAME {...}]]` in `text`: NAME and the braces' text."""
    closings: list[int] | None = None  # found at the first marker with arguments
    for opening in _OPENING.finditer(text):
        brace = opening.end()
        if text.startswith("]]", brace):
            return opening.group(1), None
        if closings is None:
            closings = [closing.start() for closing in _CLOSING.finditer(text)]
        after = bisect.bisect_left(closings, brace + 1)  # "{}" is the shortest arguments
        if after < len(closings):
            return opening.group(1), text[brace : closings[after] + 1]
    return None


def tool_request(text: str) -> tuple[str, dict[str, Any]] | None:
    """The first marker's tool name and arguments (`{}` when it has none, or they are not JSON)."""
    marker = tool_marker(text)
    if marker is None:
        return None
    name, braces = marker
    try:
        arguments = json.loads(braces) if braces else {}
    except (ValueError, RecursionError):  # not JSON, or nested too deep
        arguments = {}
    return name, arguments


class ScriptedChatModel(ChatModel):
    def __init__(self, tokenizer: Tokenizer, chunk_words: int = 3, chunk_delay: float = 0.0) -> None:
        self._tokenizer = tokenizer
        self._chunk_words = max(1, chunk_words)
        self._chunk_delay = chunk_delay

    @property
    def name(self) -> str:
        return NAME

    @property
    def capabilities(self) -> ModelCapabilities:
        return CAPABILITIES

    async def stream(
        self, messages: Sequence[Msg], tools: Sequence[ToolSpec], params: ModelParams | None = None
    ) -> AsyncGenerator[ModelChunk, None]:
        """`params` are ignored: the answers are scripted, not sampled, and never cut at
        `max_tokens`, so an answer ends with "stop" (a tool call with "tool_calls")."""
        prompt_tokens = sum(self._tokenizer.count(m.text) for m in messages)
        call = await self._requested_call(messages, tools)
        if call is not None:
            thought = f"{LABEL} Calling {call.name} as asked."
            yield ModelChunk(text=thought)
            yield ModelChunk(tool_calls=(call,))
            yield ModelChunk(usage=Usage(prompt_tokens, self._tokenizer.count(thought)), finish_reason="tool_calls")
            return
        answer = self._answer(messages)
        words = answer.split(" ")
        for start in range(0, len(words), self._chunk_words):
            piece = " ".join(words[start : start + self._chunk_words])
            yield ModelChunk(text=piece if start == 0 else " " + piece)
            # Even with no delay the loop gets a turn between chunks, as with a network stream, so
            # each chunk goes out as its own delta instead of merging with the next.
            await asyncio.sleep(self._chunk_delay)
        yield ModelChunk(usage=Usage(prompt_tokens, self._tokenizer.count(answer)), finish_reason="stop")

    async def _requested_call(self, messages: Sequence[Msg], tools: Sequence[ToolSpec]) -> ToolCall | None:
        if not messages or messages[-1].role is not Role.USER:
            return None  # a tool has already answered in this turn
        request = await parsed(tool_request, messages[-1].text)
        if request is None or request[0] not in {t.name for t in tools}:
            return None
        name, arguments = request
        return ToolCall(id=f"call_{len(messages)}", name=name, arguments=arguments)

    def _answer(self, messages: Sequence[Msg]) -> str:
        last = messages[-1] if messages else None
        if last is not None and last.role is Role.TOOL:
            results = [b for b in last.content if isinstance(b, ToolResultBlock)]
            said = "; ".join(f"{r.name} returned: {r.output}" for r in results)
            return f"{LABEL} {said}"
        users = [m for m in messages if m.role is Role.USER]
        query = users[-1].text if users else ""
        answer = f'{LABEL} You said: "{query}".'
        if len(users) > 1:
            answer += f' Earlier you said: "{users[-2].text}".'
        return answer
