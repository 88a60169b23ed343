"""The titler and the follow-up writer over any ChatModel (OpenAI-compatible, AgentScope).

Each asks one short call with its own system prompt and no tools, in the agent's language, and
returns the text as the model wrote it: the use cases clean it. A model failure is the model's
`ModelError`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from application.ports.conversation_writers import FollowUpWriter, Titler
from domain.conversations.messages import Msg, Role, text_msg

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.ports.chat_model import ChatModel
    from domain.memory.window import Exchange

log = logging.getLogger(__name__)

TITLE_INSTRUCTIONS = (
    "You name conversations between a user and an assistant. Give this conversation a short title, "
    "from its first exchange: {size}, in {language}, naming what the user wants. Answer with the title "
    "only: no quotes, no label, no full stop."
)
FOLLOW_UP_INSTRUCTIONS = (
    "You suggest what a user might ask an assistant next. After this exchange, write {limit} short "
    "questions the user is likely to ask next, as the user would ask them, in {language}, {size} each, "
    "each different from the others and not answered already. Answer with the questions only, one per "
    "line, without numbers."
)
_LANGUAGES = {"en": "English", "zh": "Chinese (简体中文)"}
_TITLE_SIZE = {"en": "at most 6 words", "zh": "at most 12 characters"}
_QUESTION_SIZE = {"en": "at most 15 words", "zh": "at most 25 characters"}
MAX_ANSWER_CHARS = 2000  # of the answer shown: the start says what it is about, and bounds the call


def _exchange(exchange: Exchange) -> str:
    answer = exchange.answer[:MAX_ANSWER_CHARS]
    return f"User: {exchange.query}\nAssistant: {answer}"


async def _complete(model: ChatModel, messages: Sequence[Msg]) -> str:
    text = []
    async for chunk in model.stream(messages, []):
        text.append(chunk.text)
        if chunk.usage is not None:
            log.debug("conversation writer call: %s prompt + %s completion tokens, %s USD",
                      chunk.usage.prompt_tokens, chunk.usage.completion_tokens, chunk.usage.price)
    return "".join(text).strip()


def _ask(what: str, instructions: str, exchange: Exchange) -> list[Msg]:
    return [text_msg(f"{what}:system", Role.SYSTEM, instructions, exchange.at),
            text_msg(f"{what}:user", Role.USER, _exchange(exchange), exchange.at)]


class LLMTitler(Titler):
    def __init__(self, model: ChatModel) -> None:
        self._model = model

    async def title(self, exchange: Exchange, language: str) -> str:
        instructions = TITLE_INSTRUCTIONS.format(
            size=_TITLE_SIZE.get(language, _TITLE_SIZE["en"]), language=_LANGUAGES.get(language, "English")
        )
        return await _complete(self._model, _ask("title", instructions, exchange))


class LLMFollowUpWriter(FollowUpWriter):
    def __init__(self, model: ChatModel) -> None:
        self._model = model

    async def follow_ups(self, exchange: Exchange, language: str, limit: int) -> Sequence[str]:
        instructions = FOLLOW_UP_INSTRUCTIONS.format(
            limit=limit, size=_QUESTION_SIZE.get(language, _QUESTION_SIZE["en"]),
            language=_LANGUAGES.get(language, "English"),
        )
        text = await _complete(self._model, _ask("follow-ups", instructions, exchange))
        return [line for line in text.splitlines() if line.strip()]
