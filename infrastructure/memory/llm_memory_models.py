"""The summariser and the entity extractor over any ChatModel (OpenAI-compatible, AgentScope).

The extractor offers one tool, `record_entities`, whose JSON Schema is the output shape
`{intent, entities: [{type, value, confidence, scope, explicit}]}`, and asks the model to call it. A model
without native tool calls is asked for that JSON object as plain text instead. Whatever comes
back is returned raw: the upkeep validates it (`domain.memory.entity_extraction.read_extraction`).
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from application.ports.memory_models import EntityExtractor, Summarizer
from domain.conversations.messages import Msg, Role, text_msg
from domain.tools.calls import ToolCall, ToolSpec

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.ports.chat_model import ChatModel
    from domain.memory.summary import SummaryLimit
    from domain.memory.window import Exchange

log = logging.getLogger(__name__)

SUMMARY_INSTRUCTIONS = (
    "You keep the running summary of a conversation between a user and an assistant. Rewrite the "
    "summary so that it also covers the new exchanges. Keep facts about the user, decisions taken, the "
    "user's preferences and tasks that are not finished yet; drop tasks that were finished. Drop small "
    "talk, greetings and pleasantries. When something new contradicts the summary, keep only the new "
    "version. Write plain third-person sentences in the conversation's language, {limit}. Answer with "
    "the summary only."
)
ARCHIVE_INSTRUCTIONS = (
    "Summarise this part of an earlier conversation between a user and an assistant, so that it can be "
    "found and used later. Keep facts about the user, decisions, preferences and unfinished tasks, with "
    "names, numbers and dates as they were said. Drop small talk. Write plain third-person sentences in "
    "the conversation's language, {limit}. Answer with the summary only."
)
EXTRACTION_TOOL = "record_entities"
EXTRACTION_SPEC = ToolSpec(
    name=EXTRACTION_TOOL,
    description="Record the user's intent and the entities (facts about the user) stated in the message.",
    parameters={
        "type": "object",
        "properties": {
            "intent": {"type": "string", "description": "what the user wants, in one or two words"},
            "entities": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "type": {"type": "string", "description": "snake_case, e.g. name, date, city, email"},
                        "value": {"type": "string"},
                        "confidence": {"type": "number", "minimum": 0, "maximum": 1},
                        "scope": {
                            "type": "string",
                            "enum": ["user", "conversation"],
                            "description": "user: a lasting fact about the person (name, email, city, job, diet, "
                            "likes, family, pets); conversation: the state of the task at hand (this booking's "
                            "date, destination, time, number of people, the current task)",
                        },
                        "explicit": {
                            "type": "boolean",
                            "description": "true only when the user stated this value outright in their own "
                            "words; false when you inferred it",
                        },
                    },
                    # All asked for, so that the model decides each; an older or sloppier reply that
                    # leaves scope or explicit out is still read (by the type's scope, as not explicit).
                    "required": ["type", "value", "confidence", "scope", "explicit"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["intent", "entities"],
        "additionalProperties": False,
    },
)
# What to extract and how, shared by the one-turn extraction and the upkeep's digest (llm_memory_digester).
ENTITY_RULES = (
    "name, dates, places, "
    "contact details, preferences, plans and unfinished tasks. Use short snake_case types (name, date, "
    "city, email, favourite_colour, task…) and reuse a type when the user changes its value (\"make it the "
    "day after tomorrow\" is a new `date`). Resolve relative dates against {today} when you can, keeping "
    "the user's words too. Confidence is within 0 and 1: how sure you are that the user means it. State "
    "nothing you would have to guess; questions state no facts. "
    "A correction is a new value of the fact it corrects, under that fact's type: when the user changes a "
    "fact (now, new, no longer, moved to, changed, just turned, 现在, 已经, 搬到, 不再), reuse the type the "
    "known facts give it (after `job: nurse`, \"I am a teacher now\" is `job: teacher`, not `occupation`; "
    "\"I just turned 35\" is `age: 35`; 我搬到杭州了 is `city: 杭州`). A relation held by one person at a time "
    "(manager, partner, doctor) is one type: \"my new manager is called Carla\" and \"I have a new boss called "
    "Carla\" are both `manager: Carla`. A fact the user says no longer holds gets the value \"no longer <old "
    "value>\" (\"I'm no longer vegetarian\" is `diet: no longer vegetarian`; 我不再是素食者了 is `diet: "
    "不再是素食者`). Use English types, also for Chinese messages (我的工作是律师 is `job: 律师`). A value is "
    "the fact alone, without the words of its change or an article: \"my favourite colour is green now\" is "
    "`favourite_colour: green`, \"my car is a Fiat Panda\" is `car: Fiat Panda`. "
    "Give each entity a scope: \"user\" for a lasting fact about the person, true in any conversation "
    "(name, email, phone, city, hometown, job, employer, diet, allergies, likes, dislikes, preferences, "
    "family, pets, age, language, birthday: \"I'm vegetarian\", \"my dog is called Rex\"), \"conversation\" "
    "for the state of the task at hand (the date of this booking, its destination, the time, the number "
    "of people, the current task: \"book a table for four tomorrow\"). Set explicit to true only when the "
    "user stated the value outright in their own words (\"my name is Ada\"), false when you inferred it "
    "(a name from a signature, a city from the weather they ask about). "
)
EXTRACTION_INSTRUCTIONS = (
    "Extract what the user's latest message states about the user or their request: " + ENTITY_RULES
)
TOOL_ASK = f"Call the `{EXTRACTION_TOOL}` tool exactly once, with an empty list when there is nothing."
JSON_ASK = (
    'Answer with only a JSON object: {"intent": "...", "entities": [{"type": "...", "value": "...", '
    '"confidence": 0.9, "scope": "user", "explicit": true}]} — an empty list when there is nothing.'
)
# `\s*+`: the spaces after the fence are taken at once, not retried one by one (quadratic).
_FENCE = re.compile(r"```(?:json)?\s*+(.*?)```", re.DOTALL)


def exchanges_text(exchanges: Sequence[Exchange]) -> str:
    return "\n".join(f"User: {e.query}\nAssistant: {e.answer}" for e in exchanges)


async def complete(model: ChatModel, messages: Sequence[Msg], tools: Sequence[ToolSpec]) -> tuple[str, list[ToolCall]]:
    text, calls = [], list[ToolCall]()
    async for chunk in model.stream(messages, tools):
        text.append(chunk.text)
        calls.extend(chunk.tool_calls)
        if chunk.usage is not None:
            log.debug("memory upkeep call: %s prompt + %s completion tokens, %s USD",
                      chunk.usage.prompt_tokens, chunk.usage.completion_tokens, chunk.usage.price)
    return "".join(text).strip(), calls


class LLMSummarizer(Summarizer):
    def __init__(self, model: ChatModel) -> None:
        self._model = model

    async def update(self, summary: str, exchanges: Sequence[Exchange], limit: SummaryLimit) -> str:
        ask = f"Current summary:\n{summary.strip() or '(none yet)'}\n\nNew exchanges:\n{exchanges_text(exchanges)}"
        return await self._ask(SUMMARY_INSTRUCTIONS.format(limit=limit.describe()), ask, exchanges)

    async def condense(self, exchanges: Sequence[Exchange], limit: SummaryLimit) -> str:
        instructions = ARCHIVE_INSTRUCTIONS.format(limit=limit.describe())
        return await self._ask(instructions, exchanges_text(exchanges), exchanges)

    async def _ask(self, instructions: str, ask: str, exchanges: Sequence[Exchange]) -> str:
        at = exchanges[-1].at
        messages = [text_msg("summary:system", Role.SYSTEM, instructions, at),
                    text_msg("summary:user", Role.USER, ask, at)]
        text, _ = await complete(self._model, messages, [])
        return text


class LLMEntityExtractor(EntityExtractor):
    def __init__(self, model: ChatModel) -> None:
        self._model = model

    async def extract(self, exchange: Exchange) -> object:
        native = self._model.capabilities.tool_call
        instructions = EXTRACTION_INSTRUCTIONS.format(today=exchange.at.date().isoformat())
        instructions += TOOL_ASK if native else JSON_ASK
        ask = f"The user's message:\n{exchange.query}\n\nThe assistant's reply (context only):\n{exchange.answer}"
        messages = [text_msg("entities:system", Role.SYSTEM, instructions, exchange.at),
                    text_msg("entities:user", Role.USER, ask, exchange.at)]
        text, calls = await complete(self._model, messages, [EXTRACTION_SPEC] if native else [])
        return tool_reply(EXTRACTION_TOOL, text, calls)


def tool_reply(tool: str, text: str, calls: Sequence[ToolCall]) -> object:
    """The arguments of the reply's call of `tool`, else its text (the JSON inside a fence, if any): raw."""
    for call in calls:
        if call.name == tool:
            return dict(call.arguments)
    fenced = _FENCE.search(text)
    return fenced.group(1).strip() if fenced else text
