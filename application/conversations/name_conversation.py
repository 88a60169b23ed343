"""NameConversation: a conversation's automatic title, from its first completed turn.

It runs off the request path, after the turn is saved (`application.chat_turn.after_turn`). The
store writes the title only while the conversation has none and none was set by hand
(`ConversationWriter.save_auto_title`), so a rename that comes first wins for good. The title is
written by the agent's own model (`AgentConfig.model`; `AgentConfig.upkeep_model` says why not
its memory model).
"""

from __future__ import annotations

import logging
import re
from typing import TYPE_CHECKING

from domain.conversations.conversation import check_title
from domain.errors import DomainError
from domain.memory.window import Exchange

if TYPE_CHECKING:
    from application.ports.conversation_writer import ConversationWriter
    from application.ports.conversation_writers import Titler
    from application.ports.profile_work import OnProfile
    from application.ports.runtime import Clock
    from domain.agents.config import AgentConfig
    from domain.conversations.conversation import Message

log = logging.getLogger(__name__)

MAX_AUTO_TITLE_CHARS = 80  # a hand-set title may be longer (domain.conversations.conversation.MAX_TITLE_CHARS)
_LABEL = re.compile(r"^(?:title|标题)\s*[:：]\s*", re.IGNORECASE)
_WRAPPING = "\"'`*#“”‘’「」『』《》 "  # quotes and markdown a model may put around its title
_TRAILING = ".。,，:：;；、"


def clean_title(raw: str) -> str:
    """A model's title as one short line: its first line, without a label, quotes or a final full
    stop, cut at a word within MAX_AUTO_TITLE_CHARS; "" when nothing storable is left."""
    line = next((line for line in raw.splitlines() if line.strip()), "")
    line = _LABEL.sub("", line.strip()).strip(_WRAPPING).rstrip(_TRAILING).strip(_WRAPPING)
    folded = " ".join(line.split())
    if len(folded) > MAX_AUTO_TITLE_CHARS:
        cut = folded[:MAX_AUTO_TITLE_CHARS]
        # Cut at the last space when there is one (a CJK title has none: cut at the bound).
        folded = cut.rsplit(" ", 1)[0] if " " in cut else cut
    try:
        return check_title(folded)
    except DomainError:
        return ""


class NameConversation:
    def __init__(self, titler: OnProfile[Titler], store: ConversationWriter, clock: Clock) -> None:
        self._titler = titler
        self._store = store
        self._clock = clock

    async def __call__(self, finished: Message, config: AgentConfig) -> str | None:
        """The title made from the finished turn, in the language of the agent's `config`, and saved;
        None when none was saved (the model gave nothing usable, or the conversation got a title
        meanwhile). Raises `ModelError`."""
        title = clean_title(await self._titler(config.model).title(Exchange.of(finished), config.language))
        if not title:
            log.warning("conversation %s: the title model gave nothing usable", finished.conversation_id)
            return None
        took = await self._store.save_auto_title(finished.conversation_id, title, self._clock.now())
        return title if took else None
