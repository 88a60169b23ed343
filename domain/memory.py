"""Memory tiers (ARCHITECTURE.md §2): the pure policies; storage is a port.

- short-term: the last `dialog_round` completed turns as user/assistant pairs, within a token
  budget. They are served from the *short-term store*, which holds every completed turn that
  is not archived yet (up to `compact_threshold` turns, plus what arrived since the last fold).
- long-term: the rolling summary (`Conversation.summary`, bounded by `SummaryLimit`) and the
  archive: when the short-term store holds more than `compact_threshold` turns, the oldest
  `compact_batch` are folded into an `ArchiveEntry` that names its source messages.
- entity: `Entity(type, value, confidence, …)`; a new value for a type replaces the old one,
  which is kept as history with the time it stopped being current.

"Messages" in the archive policy are `Message` records — one turn, a query and its answer —
which is also what an archive entry's `source_message_ids` name.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime

from domain.conversation import Message
from domain.errors import DomainError, MalformedHistory
from domain.ids import ConversationId, MessageId
from domain.knowledge import cosine
from domain.messages import Msg, Role, text_msg

TokenCounter = Callable[[str], int]

QUERY_SUFFIX = ":query"
ANSWER_SUFFIX = ":answer"


def completed_turns(messages: Sequence[Message], dialog_round: int) -> list[Message]:
    """The last `dialog_round` turns that finished normally with an answer, oldest first."""
    if dialog_round < 0:
        raise DomainError("dialog_round cannot be negative")
    done = [m for m in messages if m.is_completed_turn]
    return done[-dialog_round:] if dialog_round else []


def turn_pair(message: Message) -> tuple[Msg, Msg]:
    """One completed turn as the user/assistant pair a model sees."""
    if not message.is_completed_turn:
        raise DomainError(f"message {message.id} is not a completed turn")
    user = text_msg(f"{message.id}{QUERY_SUFFIX}", Role.USER, message.query, message.created_at)
    assistant = text_msg(f"{message.id}{ANSWER_SUFFIX}", Role.ASSISTANT, message.answer, message.updated_at)
    return user, assistant


def message_id_of(msg: Msg) -> MessageId:
    """The id of the turn (`Message`) a history Msg comes from: `turn_pair` names them `<id>:query|answer`."""
    base, sep, kind = msg.id.rpartition(":")
    if sep and base and f":{kind}" in (QUERY_SUFFIX, ANSWER_SUFFIX):
        return MessageId(base)
    return MessageId(msg.id)


def history_from_turns(turns: Sequence[Message]) -> list[Msg]:
    return [msg for turn in turns for msg in turn_pair(turn)]


def check_history(history: Sequence[Msg]) -> None:
    """History must be user/assistant pairs, oldest first: anything else is an error."""
    if len(history) % 2:
        raise MalformedHistory(f"history has an odd number of messages ({len(history)})")
    for index, msg in enumerate(history):
        expected = Role.USER if index % 2 == 0 else Role.ASSISTANT
        if msg.role is not expected:
            raise MalformedHistory(
                f"history message {index} is {msg.role.value}, expected {expected.value}"
            )


def trim_history(history: Sequence[Msg], max_tokens: int, count: TokenCounter) -> list[Msg]:
    """Drop whole pairs from the oldest end until the history fits `max_tokens`."""
    check_history(history)
    if max_tokens < 0:
        raise DomainError("the token budget cannot be negative")
    sizes = [count(m.text) for m in history]
    start, total = 0, sum(sizes)
    while total > max_tokens and start < len(history):
        total -= sizes[start] + sizes[start + 1]
        start += 2
    return list(history[start:])


def short_term_window(
    messages: Sequence[Message], dialog_round: int, max_tokens: int, count: TokenCounter
) -> list[Msg]:
    """The short-term tier: recent completed turns as pairs, within the token budget."""
    return trim_history(history_from_turns(completed_turns(messages, dialog_round)), max_tokens, count)


def recent_window(stored: Sequence[Msg], dialog_round: int, max_tokens: int, count: TokenCounter) -> list[Msg]:
    """The prompt's window out of the short-term store: its last `dialog_round` pairs, within the budget."""
    check_history(stored)
    if dialog_round < 0:
        raise DomainError("dialog_round cannot be negative")
    recent = stored[max(0, len(stored) - 2 * dialog_round) :] if dialog_round else []
    return trim_history(recent, max_tokens, count)


def window_turn_ids(window: Sequence[Msg]) -> list[MessageId]:
    """The turns a window (user/assistant pairs) holds, oldest first, one id per pair."""
    check_history(window)
    return [message_id_of(window[index]) for index in range(0, len(window), 2)]


def due_for_archive(window: Sequence[Msg], threshold: int, batch: int) -> list[Msg]:
    """The oldest `batch` turns of the short-term store once it holds more than `threshold` turns, else []."""
    check_history(window)
    if threshold < 1 or not 1 <= batch <= threshold:
        raise DomainError("the archive threshold must be >= 1 and the batch within 1..threshold")
    if len(window) // 2 <= threshold:
        return []
    return list(window[: 2 * batch])


def unarchived(turns: Sequence[Message], archive: Iterable[ArchiveEntry]) -> list[Message]:
    """The turns no archive entry names: what a rebuilt short-term store holds."""
    folded = {source for entry in archive for source in entry.source_message_ids}
    return [turn for turn in turns if turn.id not in folded]


@dataclass(frozen=True, slots=True)
class Exchange:
    """One completed turn as the summariser and the entity extractor read it."""

    message_id: MessageId
    query: str
    answer: str
    at: datetime

    @classmethod
    def of(cls, message: Message) -> Exchange:
        return cls(message.id, message.query, message.answer, message.created_at)


def exchanges_of(window: Sequence[Msg]) -> list[Exchange]:
    """The pairs of a window as exchanges, oldest first."""
    check_history(window)
    return [
        Exchange(message_id_of(user), user.text, assistant.text, user.created_at)
        for user, assistant in zip(window[::2], window[1::2], strict=True)
    ]


# --- the rolling summary and archive summaries: bounded in length --------------------------------

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])\s*")
ELLIPSIS = "…"


_SPACE = re.compile(r"\s")


def is_cjk(text: str) -> bool:
    """Chinese, Japanese or Korean text: at least 30% of its non-space characters are CJK."""
    visible = len(text) - len(_SPACE.findall(text))  # regexes count at C speed: this runs per candidate
    return visible > 0 and len(_CJK.findall(text)) * 10 >= 3 * visible


@dataclass(frozen=True, slots=True)
class SummaryLimit:
    """How long a summary may be: `max_cjk_chars` characters for CJK text, else `max_words` words."""

    max_words: int = 120
    max_cjk_chars: int = 200

    def __post_init__(self) -> None:
        if self.max_words < 1 or self.max_cjk_chars < 1:
            raise DomainError("summary limits must be at least 1")

    def size(self, text: str) -> int:
        """The text's length in the unit that bounds it."""
        return _measure(text, is_cjk(text))

    def limit_for(self, text: str) -> int:
        return self.max_cjk_chars if is_cjk(text) else self.max_words

    def fits(self, text: str) -> bool:
        cjk = is_cjk(text)
        return _measure(text, cjk) <= (self.max_cjk_chars if cjk else self.max_words)

    def describe(self) -> str:
        return f"at most {self.max_words} words ({self.max_cjk_chars} characters for Chinese, Japanese or Korean)"

    def trim(self, text: str) -> str:
        """The text within the bound: whole sentences when they keep at least half of it, else cut with "…"."""
        text = " ".join(text.split())
        if self.fits(text):
            return text
        cjk = is_cjk(text)
        limit = self.limit_for(text)
        kept = ""
        for sentence in (s for s in _SENTENCE_END.split(text) if s):
            candidate = kept + sentence if cjk else f"{kept} {sentence}".strip()
            if _measure(candidate, cjk) > limit:
                break
            kept = candidate
        if _measure(kept, cjk) * 2 >= limit:
            return kept
        if not cjk:
            return (" ".join(text.split()[: limit - 1]) + " " + ELLIPSIS).strip()
        out, visible = [], 0
        for char in text:
            if not char.isspace():
                if visible == limit - 1:
                    break
                visible += 1
            out.append(char)
        return "".join(out).rstrip() + ELLIPSIS


def _measure(text: str, cjk: bool) -> int:
    """Characters (without spaces) for CJK text, words otherwise."""
    return len("".join(text.split())) if cjk else len(text.split())


@dataclass(frozen=True, slots=True)
class MemoryPolicy:
    """The tiers' settings. `inline_entities`: extract entities before the turn's end event (else after)."""

    compact_threshold: int = 20
    compact_batch: int = 10
    archive_top_k: int = 3
    entity_min_confidence: float = 0.7
    summary: SummaryLimit = field(default_factory=SummaryLimit)
    recall_max_tokens: int = 1500
    inline_entities: bool = False

    def __post_init__(self) -> None:
        if self.compact_threshold < 1 or not 1 <= self.compact_batch <= self.compact_threshold:
            raise DomainError("compact_threshold must be >= 1 and compact_batch within 1..compact_threshold")
        if self.archive_top_k < 0 or self.recall_max_tokens < 0:
            raise DomainError("archive_top_k and recall_max_tokens cannot be negative")
        if not 0.0 <= self.entity_min_confidence <= 1.0:
            raise DomainError("entity_min_confidence must be within 0..1")

    def rebuild_turns(self, dialog_round: int) -> int:
        """How many recent turns a rebuilt short-term store reads from the record."""
        return max(dialog_round, self.compact_threshold + self.compact_batch)


@dataclass(frozen=True, slots=True)
class ArchiveEntry:
    """A summary of an old batch of turns, with the ids of their messages. The summary may be empty
    (the batch held nothing worth keeping): the batch is archived all the same, and never recalled."""

    id: str
    conversation_id: ConversationId
    summary: str
    source_message_ids: tuple[MessageId, ...]
    created_at: datetime

    def __post_init__(self) -> None:
        if not self.source_message_ids:
            raise DomainError("an archive entry must name its source messages")
        if len(set(self.source_message_ids)) != len(self.source_message_ids):
            raise DomainError("an archive entry names each source message once")

    @staticmethod
    def id_for(conversation_id: ConversationId, sources: Sequence[MessageId]) -> str:
        """The same batch always gets the same id, so folding it twice is detectable."""
        digest = hashlib.sha256("\n".join([conversation_id, *sources]).encode("utf-8")).hexdigest()
        return f"arc_{digest[:24]}"


@dataclass(frozen=True, slots=True)
class RankedEntry:
    """An archive entry and its similarity to the query (None when nothing could be compared)."""

    entry: ArchiveEntry
    score: float | None


def rank_archive(
    entries: Sequence[ArchiveEntry],
    vectors: Sequence[Sequence[float]],
    query: Sequence[float],
    top_k: int,
) -> list[RankedEntry]:
    """The `top_k` entries most similar to the query (cosine), best first; ties go to the newer."""
    if len(entries) != len(vectors):
        raise DomainError("one vector per archive entry")
    scored = [RankedEntry(e, cosine(query, v)) for e, v in zip(entries, vectors, strict=True)]
    scored.sort(key=lambda r: (-(r.score or 0.0), -r.entry.created_at.timestamp()))
    return scored[: max(0, top_k)]


def newest_entries(entries: Sequence[ArchiveEntry], top_k: int) -> list[RankedEntry]:
    """The fallback when similarity cannot be computed: the newest entries, unscored."""
    newest = sorted(entries, key=lambda e: e.created_at, reverse=True)[: max(0, top_k)]
    return [RankedEntry(e, None) for e in newest]


@dataclass(frozen=True, slots=True)
class Entity:
    """Something the user told us, e.g. type='date', value='tomorrow'."""

    type: str
    value: str
    confidence: float
    source_message_id: MessageId
    updated_at: datetime
    superseded_at: datetime | None = None

    def __post_init__(self) -> None:
        if not self.type.strip() or not self.value.strip():
            raise DomainError("an entity needs a type and a value")
        if not 0.0 <= self.confidence <= 1.0:
            raise DomainError(f"confidence must be within 0..1, got {self.confidence}")

    def reaches_prompt(self, min_confidence: float) -> bool:
        return self.superseded_at is None and self.confidence >= min_confidence

    def superseded(self, at: datetime) -> Entity:
        return replace(self, superseded_at=at)

    def same_value(self, other: Entity) -> bool:
        return _fold(self.value) == _fold(other.value)


MAX_ENTITY_TYPE = 64
MAX_ENTITY_VALUE = 500
ENTITY_HISTORY_LIMIT = 200  # superseded values kept per conversation, oldest dropped first


def _fold(value: str) -> str:
    return " ".join(value.split()).casefold()


def entity_type(raw: str) -> str:
    """A type as memory keys it: lower case, words joined by `_` ("Favourite colour" → "favourite_colour")."""
    kind = re.sub(r"[^\w]+", "_", raw.strip().casefold()).strip("_")
    if not kind:
        raise DomainError("an entity type needs at least one letter or digit")
    if len(kind) > MAX_ENTITY_TYPE:
        raise DomainError(f"an entity type is at most {MAX_ENTITY_TYPE} characters")
    return kind


@dataclass(frozen=True, slots=True)
class EntityChange:
    """What merging one new entity does: the type's current entity, and the one that left (to history)."""

    current: Entity
    retired: Entity | None = None


def merge_entity(current: Entity | None, incoming: Entity, min_confidence: float = 0.0) -> EntityChange:
    """A new value for a type replaces the old one, which becomes history from the new one's time.

    - The same value again refreshes the entity (its confidence, source and time), no history.
    - An extraction that arrives late (older than the current value, e.g. two turns' upkeep
      finishing out of order) never overwrites a newer value: it goes to history directly.
    - A value below `min_confidence` never displaces a current value at or above it: it is kept
      in history (superseded at once), so a passing, uncertain mention cannot push a confident
      fact out of the prompt.
    """
    if current is not None and incoming.type != current.type:
        raise DomainError("merge_entity merges values of one type")
    if current is None:
        return EntityChange(incoming)
    if incoming.same_value(current):  # said again: the newer words, the higher confidence
        newer = incoming if incoming.updated_at >= current.updated_at else current
        return EntityChange(replace(newer, confidence=max(incoming.confidence, current.confidence)))
    if incoming.updated_at < current.updated_at:
        return EntityChange(current, incoming.superseded(current.updated_at))
    if incoming.confidence < min_confidence <= current.confidence:
        return EntityChange(current, incoming.superseded(incoming.updated_at))
    return EntityChange(incoming, current.superseded(incoming.updated_at))


def merge_entities(
    current: Mapping[str, Entity], incoming: Sequence[Entity], min_confidence: float = 0.0
) -> tuple[dict[str, Entity], list[Entity]]:
    """All of a batch merged in time order: the new current entities by type, and the retired ones."""
    merged, retired = dict(current), []
    for entity in sorted(incoming, key=lambda e: e.updated_at):
        change = merge_entity(merged.get(entity.type), entity, min_confidence)
        merged[entity.type] = change.current
        if change.retired is not None:
            retired.append(change.retired)
    return merged, retired


@dataclass(frozen=True, slots=True)
class EntitySheet:
    """A conversation's entity memory: the current value of each type, and superseded values."""

    current: tuple[Entity, ...] = ()
    history: tuple[Entity, ...] = ()

    def for_prompt(self, min_confidence: float) -> tuple[Entity, ...]:
        """Current, confident entities by type — a stable order keeps prompts cache-friendly."""
        return tuple(sorted((e for e in self.current if e.reaches_prompt(min_confidence)), key=lambda e: e.type))

    def below(self, min_confidence: float) -> tuple[Entity, ...]:
        return tuple(sorted((e for e in self.current if not e.reaches_prompt(min_confidence)), key=lambda e: e.type))

    def history_of(self, kind: str) -> tuple[Entity, ...]:
        """Superseded values of one type, the most recently superseded first."""
        old = [e for e in self.history if e.type == kind]
        return tuple(sorted(old, key=lambda e: e.superseded_at or e.updated_at, reverse=True))


@dataclass(frozen=True, slots=True)
class UpkeepState:
    """Where a conversation's upkeep stands.

    `summarized_through`: the newest turn already folded into the rolling summary (None: unknown);
    `forgotten_at`: memory was wiped then, so upkeep ignores turns from before.
    """

    summarized_through: MessageId | None = None
    forgotten_at: datetime | None = None


SUMMARY_CATCH_UP = 5  # turns a summary update reads at most, to catch up after failures


def pending_for_summary(turns: Sequence[Message], state: UpkeepState, has_summary: bool) -> list[Message]:
    """The completed turns (oldest first, the last few) that the rolling summary does not hold yet.

    After the last summarised turn when it is among them; all of them when it is not (updates
    failed for a while) or when the conversation has no summary yet; only the newest turn when
    nothing says what the summary holds (memory lost), so nothing is summarised twice.
    """
    done = [t for t in turns if t.is_completed_turn]
    if state.forgotten_at is not None:
        done = [t for t in done if t.created_at > state.forgotten_at]
    ids = [t.id for t in done]
    if state.summarized_through is not None:
        if state.summarized_through in ids:
            return done[ids.index(state.summarized_through) + 1 :]
        return done
    if not has_summary:
        return done
    return done[-1:]


# --- recall: what reaches the system prompt, in priority order, within a token budget ----------


@dataclass(frozen=True, slots=True)
class RecallSelection:
    entities: tuple[Entity, ...]
    summary: str
    archive: tuple[RankedEntry, ...]
    dropped: tuple[str, ...]  # what did not fit, e.g. "archive arc_…", "entity city"


def entity_line(entity: Entity) -> str:
    return f"- {entity.type}: {entity.value}"


def select_recall(
    entities: Sequence[Entity], summary: str, archive: Sequence[RankedEntry], budget: int, count: TokenCounter
) -> RecallSelection:
    """Fill the memory part of the system prompt in priority order: entities, the summary, then
    archive entries by score. Whatever does not fit the budget is left out (and named)."""
    left, dropped = budget, []
    kept_entities: list[Entity] = []
    for entity in sorted(entities, key=lambda e: (-e.confidence, -e.updated_at.timestamp())):
        cost = count(entity_line(entity))
        if cost <= left:
            kept_entities.append(entity)
            left -= cost
        else:
            dropped.append(f"entity {entity.type}")
    kept_summary = ""
    if summary.strip():
        cost = count(summary)
        if cost <= left:
            kept_summary, left = summary, left - cost
        else:
            dropped.append("summary")
    kept_archive: list[RankedEntry] = []
    for ranked in archive:
        cost = count(ranked.entry.summary)
        if cost <= left:
            kept_archive.append(ranked)
            left -= cost
        else:
            dropped.append(f"archive {ranked.entry.id}")
    by_type = tuple(sorted(kept_entities, key=lambda e: e.type))
    return RecallSelection(by_type, kept_summary, tuple(kept_archive), tuple(dropped))
