"""A good model for the LLM path of the corrections test set, answered by the OpenAI-protocol test
server (`ScriptedLLMServer.answer_by(good_model)`).

Asked for the upkeep's digest (`update_memory`), it answers the schema as a good model would: for
each new exchange whose user message is a statement or correction of the test set, one entity with
the value alone (the test set's), scope `user`, explicit. Its type is the one the request shows for
the fact being corrected, when the request shows it (a known entity or fact holding the old value),
as the prompt asks; otherwise the type a model would name from the message's words
(`Template.named`: "my boss" → `boss`). A conversation's closing task is its task. The summary is
the new exchanges' text. Every other call (a turn's answer, a title) gets the echo.
"""

from __future__ import annotations

import re
from typing import Any

from infrastructure.memory.llm_memory_digester import DIGEST_INSTRUCTIONS, DIGEST_TOOL
from tests.llm_server_scripts import Script, call, echo_script, tool_calls
from tests.memory_corrections import CLOSING, CLOSING_TASK, PAIRS, QUESTION, Pair

SAID = {p.statement: (p, False) for p in PAIRS} | {p.correction: (p, True) for p in PAIRS}
_KNOWN = re.compile(r"^- ([^:\n]+): (.+)$", re.MULTILINE)
_EXCHANGE = re.compile(r"^\[(\d+)\] User: (.*)$", re.MULTILINE)


def text_of(content: Any) -> str:
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return content if isinstance(content, str) else ""


def is_digest(body: dict[str, Any]) -> bool:
    messages = body.get("messages") or [{}]
    return text_of(messages[0].get("content")).startswith(DIGEST_INSTRUCTIONS[:40])


def is_question(body: dict[str, Any]) -> bool:
    """A turn's call for the test set's question (not a title's or the upkeep's)."""
    messages = body.get("messages") or [{}]
    return not is_digest(body) and messages[-1].get("role") == "user" and \
        text_of(messages[-1].get("content")) == QUESTION


def entity(pair: Pair, corrected: bool, known: dict[str, str], turn: int) -> dict[str, Any]:
    shown = next((kind for kind, value in known.items() if value.casefold() == pair.old.casefold()), None)
    kind = shown if corrected and shown else (pair.corrected_as if corrected else pair.said_as)
    value = pair.latest if corrected else pair.old
    return {"turn": turn, "type": kind, "value": value, "confidence": 0.95, "scope": "user", "explicit": True}


def digest(body: dict[str, Any]) -> Script:
    ask = text_of(body["messages"][-1]["content"])
    before, _, exchanges = ask.partition("New exchanges:\n")
    known = {kind.strip(): value.strip() for kind, value in _KNOWN.findall(before)}
    entities = [entity(*SAID[said], known, int(turn)) for turn, said in _EXCHANGE.findall(exchanges) if said in SAID]
    entities += [{"turn": int(turn), "type": "task", "value": CLOSING_TASK, "confidence": 0.9, "scope": "conversation",
                  "explicit": True} for turn, said in _EXCHANGE.findall(exchanges) if said == CLOSING]
    return tool_calls(call(DIGEST_TOOL, {"summary": exchanges.strip(), "intent": "inform", "entities": entities}))


def good_model(body: dict[str, Any]) -> Script:
    return digest(body) if is_digest(body) else echo_script(body)
