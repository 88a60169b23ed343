"""The offline titler and follow-up writer, for the offline scripted model: deterministic, no model.

The title is the first words of the first query (6 words, or 12 characters of CJK text). The
follow-up questions fill fixed templates, in the agent's language, with the query's first
content words (the answer's when the query has none).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from application.ports.conversation_writers import FollowUpWriter, Titler
from domain.memory.summary import is_cjk

if TYPE_CHECKING:
    from collections.abc import Sequence

    from domain.memory.window import Exchange

TITLE_WORDS = 6
TITLE_CJK_CHARS = 12
TOPIC_WORDS = 3
TOPIC_CJK_CHARS = 10
# The scripted model's tool markers (`[[tool:NAME …]]`) say nothing about the conversation.
_MARKER = re.compile(r"\[\[tool:[^\]]{0,256}\]\]")  # bounded: a query of unclosed markers stays linear
_WORD = re.compile(r"[^\W_]+(?:['’-][^\W_]+)*")
_CJK_PUNCTUATION = re.compile(r"[\s，。！？、；：“”‘’（）《》「」,.!?;:()\"']+")
_STOP_WORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "can", "could", "did", "do", "does", "for", "from", "have", "how",
    "i", "in", "is", "it", "me", "my", "of", "on", "or", "please", "should", "tell", "the", "to", "was", "what",
    "when", "where", "which", "who", "why", "will", "with", "would", "you", "your",
})
FOLLOW_UP_TEMPLATES = {
    "en": ("Can you tell me more about {topic}?", "What should I know first about {topic}?",
           "Can you give an example of {topic}?"),
    "zh": ("能再详细讲讲{topic}吗？", "关于{topic}，我首先应该了解什么？", "能举一个关于{topic}的例子吗？"),
}


def _plain(text: str) -> str:
    return " ".join(_MARKER.sub(" ", text).split())


class FirstWordsTitler(Titler):
    async def title(self, exchange: Exchange, language: str) -> str:
        query = _plain(exchange.query)
        if is_cjk(query):
            return _CJK_PUNCTUATION.sub("", query)[:TITLE_CJK_CHARS]
        return " ".join(query.split()[:TITLE_WORDS])


def _topic(text: str) -> str:
    plain = _plain(text)
    if is_cjk(plain):
        return _CJK_PUNCTUATION.sub("", plain)[:TOPIC_CJK_CHARS]
    words = [w for w in _WORD.findall(plain) if w.lower() not in _STOP_WORDS]
    return " ".join(words[:TOPIC_WORDS])


class TemplateFollowUpWriter(FollowUpWriter):
    async def follow_ups(self, exchange: Exchange, language: str, limit: int) -> Sequence[str]:
        topic = _topic(exchange.query) or _topic(exchange.answer)
        if not topic:
            topic = "这个" if language == "zh" else "this"
        templates = FOLLOW_UP_TEMPLATES.get(language, FOLLOW_UP_TEMPLATES["en"])
        return [template.format(topic=topic) for template in templates[:limit]]
