"""SuggestFollowUps: up to 3 short questions the end user might ask after a completed turn.

Made off the request path after a turn of an agent with `suggested_questions_after_answer`
(`application.chat_turn.after_turn`), and cached on the message; `GET
/api/messages/{id}/suggested` answers the cached ones, or makes them then. They are written by the
model of the config the message ran (`AgentConfig.model`).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Protocol

from application.conversations.visibility import visible_message
from application.errors import Conflict
from application.ports.message_annotations import MessageAnnotations
from application.ports.message_reader import MessageReader
from domain.conversations.conversation import MAX_FOLLOW_UPS
from domain.memory.window import Exchange
from domain.text import text_problem

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.ports.conversation_writers import FollowUpWriter
    from application.ports.message_configs import MessageConfigs
    from application.ports.profile_work import OnProfile
    from domain.accounts.viewers import Viewer
    from domain.agents.config import AgentConfig
    from domain.conversations.conversation import Message
    from domain.ids import MessageId

class _Store(MessageReader, MessageAnnotations, Protocol):
    """The record the message is read from and its follow-up questions saved to."""


MAX_QUESTION_CHARS = 200
# A list marker a model may put before each question: "1.", "2)", "-", "*", "•".
_MARKER = re.compile(r"^\s*(?:\d{1,2}[.)、]|[-*•])\s*")
_WRAPPING = "\"'`“”‘’「」 "


def clean_follow_ups(raw: Sequence[str]) -> tuple[str, ...]:
    """A model's questions as at most MAX_FOLLOW_UPS distinct one-line questions of storable text
    and at most MAX_QUESTION_CHARS each; a line that is none of that is left out."""
    questions: list[str] = []
    for item in raw:
        for line in str(item).splitlines():
            question = " ".join(_MARKER.sub("", line).strip(_WRAPPING).split())
            fits = question and len(question) <= MAX_QUESTION_CHARS and not text_problem(question)
            if fits and question not in questions:
                questions.append(question)
    return tuple(questions[:MAX_FOLLOW_UPS])


class SuggestFollowUps:
    def __init__(self, writer: OnProfile[FollowUpWriter], store: _Store, configs: MessageConfigs) -> None:
        self._writer = writer
        self._store = store
        self._configs = configs

    async def after_turn(self, finished: Message, config: AgentConfig) -> None:
        """Make and cache the questions of a turn that just completed. Raises `ModelError`."""
        await self._made(finished, config)

    async def __call__(self, message_id: MessageId, viewer: Viewer) -> tuple[str, ...]:
        """The message's questions: the cached ones, else made now and cached.

        Not found, or not the viewer's: `NotFound`. Not a completed turn, or its agent's config
        (the version the message ran) does not suggest questions: `Conflict`.
        """
        message = await visible_message(self._store, message_id, viewer)
        if not message.is_completed_turn:
            raise Conflict(
                f"Message {message_id!r} is not a completed turn (its status is {message.status.value!r}): "
                "only a completed answer has follow-up questions."
            )
        config = await self._configs.config_ran(message)
        if not config.suggested_questions_after_answer:
            raise Conflict(
                f"Agent {message.agent_id!r} does not suggest follow-up questions: set "
                "`suggested_questions_after_answer` in its config (and publish it) to have them."
            )
        if message.follow_ups is not None:
            return message.follow_ups
        return await self._made(message, config)

    async def _made(self, message: Message, config: AgentConfig) -> tuple[str, ...]:
        raw = await self._writer(config.model).follow_ups(Exchange.of(message), config.language, MAX_FOLLOW_UPS)
        questions = clean_follow_ups(raw)
        await self._store.save_follow_ups(message.id, questions)
        return questions
