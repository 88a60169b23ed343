"""The upkeep's digest over any ChatModel: the rolling summary and the new turns' entities in one call.

It offers one tool, `update_memory`, whose JSON Schema holds what was asked for: `summary` (the
rewritten rolling summary), `intent` and `entities` (the items of `record_entities`, each with the
number of the exchange it comes from, `turn`). A model without native tool calls is asked for that
JSON object as plain text. The call sends the old summary, the entities and user facts known so far
(so that a correction gets the type of the fact it corrects) and the new exchanges, never the
conversation's whole prompt.

The entities come back split per exchange, raw (`intent` goes to the newest), for the upkeep to
validate (`domain.memory.entity_extraction.read_extraction`). A reply in prose is taken for the summary
and, for the newest exchange, the reply itself, which validation then reports.
"""

from __future__ import annotations

import contextlib
import json
from typing import TYPE_CHECKING, Any

from application.ports.memory_models import Digest, DigestRequest, MemoryDigester
from domain.conversations.messages import Role, text_msg
from domain.tools.calls import ToolSpec
from infrastructure.memory.llm_memory_models import ENTITY_RULES, EXTRACTION_SPEC, complete, tool_reply

if TYPE_CHECKING:
    from application.ports.chat_model import ChatModel

DIGEST_TOOL = "update_memory"
DIGEST_INSTRUCTIONS = (
    "You keep the memory of a conversation between a user and an assistant, from its new exchanges. "
)
SUMMARY_PART = (
    "`summary`: rewrite the current summary so that it also covers the new exchanges. Keep facts about "
    "the user, decisions taken, the user's preferences and tasks that are not finished yet; drop tasks that "
    "were finished. Drop small talk, greetings and pleasantries. When something new contradicts the "
    "summary, keep only the new version. Write plain third-person sentences in the conversation's "
    "language, {limit}. "
)
ENTITIES_PART = (
    "`entities`: what each new exchange's user message states about the user or their request: " + ENTITY_RULES
    + "Give each entity the number of the exchange it comes from (`turn`); the known entities (the "
    "conversation's and the user's facts) are context: repeat one only when a new message changes it, under "
    "its known type. `intent`: what the user wants in the newest exchange. "
)
TOOL_ASK = f"Call the `{DIGEST_TOOL}` tool exactly once."
JSON_ASK = "Answer with only a JSON object with these fields: {fields}."
_SUMMARY = {"summary": {"type": "string", "description": "the rewritten summary, empty when nothing is worth it"}}
_ITEM = EXTRACTION_SPEC.parameters["properties"]["entities"]["items"]
_ENTITIES = {
    "intent": {"type": "string", "description": "what the user wants in the newest exchange, in one or two words"},
    "entities": {"type": "array", "items": {
        **_ITEM,
        "properties": {"turn": {"type": "integer", "minimum": 1}, **_ITEM["properties"]},
        "required": ["turn", *_ITEM["required"]],
    }},
}


def digest_spec(summary: bool, entities: bool) -> ToolSpec:
    """The tool's schema: only the parts asked for, all required."""
    properties = {**(_SUMMARY if summary else {}), **(_ENTITIES if entities else {})}
    return ToolSpec(DIGEST_TOOL, "Record the conversation's updated memory.", {
        "type": "object", "properties": properties, "required": list(properties), "additionalProperties": False,
    })


class LLMMemoryDigester(MemoryDigester):
    def __init__(self, model: ChatModel) -> None:
        self._model = model

    async def digest(self, request: DigestRequest) -> Digest:
        native = self._model.capabilities.tool_call
        spec = digest_spec(request.limit is not None, request.entities)
        at = request.exchanges[-1].at
        messages = [text_msg("memory:system", Role.SYSTEM, self._instructions(request, spec, native), at),
                    text_msg("memory:user", Role.USER, _ask(request), at)]
        text, calls = await complete(self._model, messages, [spec] if native else [])
        return _read(tool_reply(DIGEST_TOOL, text, calls), request)

    @staticmethod
    def _instructions(request: DigestRequest, spec: ToolSpec, native: bool) -> str:
        parts = [DIGEST_INSTRUCTIONS]
        if request.limit is not None:
            parts.append(SUMMARY_PART.format(limit=request.limit.describe()))
        if request.entities:
            parts.append(ENTITIES_PART.format(today=request.exchanges[-1].at.date().isoformat()))
        parts.append(TOOL_ASK if native else JSON_ASK.format(fields=json.dumps(spec.parameters["properties"])))
        return "".join(parts)


def _ask(request: DigestRequest) -> str:
    """The old summary, the known entities and the numbered new exchanges."""
    parts = [f"Current summary:\n{request.summary.strip() or '(none yet)'}"]
    if request.entities:
        known = "\n".join(f"- {kind}: {value}" for kind, value in request.known) or "(none yet)"
        parts.append(f"Known entities:\n{known}")
    exchanges = "\n".join(f"[{n}] User: {e.query}\n[{n}] Assistant: {e.answer}"
                          for n, e in enumerate(request.exchanges, start=1))
    parts.append(f"New exchanges:\n{exchanges}")
    return "\n\n".join(parts)


def _read(raw: object, request: DigestRequest) -> Digest:
    if isinstance(raw, str):
        with contextlib.suppress(ValueError):
            raw = json.loads(raw)
    summary = None
    if request.limit is not None:
        found = raw.get("summary") if isinstance(raw, dict) else raw  # prose: the summary alone
        summary = found if isinstance(found, str) else ""
    return Digest(summary, _split(raw, len(request.exchanges)) if request.entities else ())


def _split(raw: object, count: int) -> tuple[object, ...]:
    """One raw extraction per exchange: each entity by its `turn` (the newest when unreadable)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("entities"), list):
        return (*([{"intent": "", "entities": []}] * (count - 1)), raw)
    per_turn: list[list[Any]] = [[] for _ in range(count)]
    for item in raw["entities"]:
        turn = item.get("turn") if isinstance(item, dict) else None
        index = turn - 1 if isinstance(turn, int) and not isinstance(turn, bool) and 1 <= turn <= count else count - 1
        per_turn[index].append({k: v for k, v in item.items() if k != "turn"} if isinstance(item, dict) else item)
    intents = [""] * (count - 1) + [raw.get("intent", "")]
    return tuple({"intent": intent, "entities": items} for intent, items in zip(intents, per_turn, strict=True))
