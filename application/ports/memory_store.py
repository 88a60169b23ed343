"""Where the memory tiers are kept, beside the durable record (docs/ARCHITECTURE.md §2, §5).

Four narrow ports. One adapter per backend (in-process, Redis) implements all four, so that
`MemoryStore.forget` can drop everything a conversation has in one go. Every method raises
`MemoryUnavailable` when the backend fails.
"""

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Protocol

from domain.conversations.messages import Msg
from domain.ids import ConversationId, EndUserId, OwnerId
from domain.memory.archive import ArchiveEntry
from domain.memory.entities import Entity, EntitySheet
from domain.memory.summary import UpkeepState
from domain.memory.user_facts import FactHolder


class MemoryStore(Protocol):
    """The short-term store (completed turns not archived yet) and the archive.

    The short-term store is a cache of the record: a miss is rebuilt from the MessageStore.
    """

    async def get_window(self, conversation_id: ConversationId) -> list[Msg] | None:
        """The short-term store (user/assistant pairs, oldest first), or None on a miss."""
        ...

    async def save_window(self, conversation_id: ConversationId, window: Sequence[Msg]) -> None: ...

    async def restore_window(self, conversation_id: ConversationId, window: Sequence[Msg]) -> list[Msg]:
        """Save a store rebuilt from the record unless one exists by now, atomically; the store as
        it then is. A rebuild that read the record earlier never overwrites a fresher store."""
        ...

    async def append_to_window(self, conversation_id: ConversationId, pair: Sequence[Msg]) -> bool:
        """Add one turn's pair at the end, atomically. False, and nothing written, on a miss
        (the next read rebuilds the store from the record, which holds the turn). A pair whose
        messages are already there is not added twice."""
        ...

    async def archive(self, conversation_id: ConversationId) -> list[ArchiveEntry]:
        """The conversation's archive entries, oldest first."""
        ...

    async def fold_into_archive(self, conversation_id: ConversationId, entry: ArchiveEntry) -> bool:
        """Atomically: when the short-term store starts with exactly the turns
        `entry.source_message_ids` names (in order) and the archive lacks `entry.id`, remove those
        turns from the store and add the entry. Otherwise change nothing and answer False — so
        two workers folding at once archive each turn exactly once and skip none."""
        ...

    async def forget(self, conversation_id: ConversationId) -> None:
        """Drop everything kept for the conversation: short-term store, archive, entities (and
        their history) and upkeep state."""
        ...


class EntityMemory(Protocol):
    async def entity_sheet(self, conversation_id: ConversationId) -> EntitySheet:
        """Current entities and superseded ones (history, oldest first)."""
        ...

    async def record_entities(
        self, conversation_id: ConversationId, entities: Sequence[Entity], min_confidence: float = 0.0
    ) -> None:
        """Merge new values atomically with `domain.memory.entities.merge_entities(…, min_confidence)`: a new
        value for a type replaces the current one, which moves to history (at most
        ENTITY_HISTORY_LIMIT kept)."""
        ...

    async def remove_entity(self, conversation_id: ConversationId, kind: str) -> bool:
        """Forget one type: its current value and its history. False when it has no current value."""
        ...


class EntityCache(Protocol):
    """A memory store's copy of a conversation's entities, kept beside the record (`MemoryRecord`).

    A warmed copy is complete, an empty one too: a conversation without entities then costs its
    turns no read of the record. The copy may lapse (Redis keeps it as long as a window)."""

    async def cached_entities(self, conversation_id: ConversationId) -> EntitySheet | None:
        """The sheet last warmed for the conversation, or None when none is held (never warmed,
        dropped, forgotten or lapsed)."""
        ...

    async def warm_entities(self, conversation_id: ConversationId, sheet: EntitySheet) -> None:
        """Replace the cached entities (current and history) with `sheet`, as the record has them."""
        ...

    async def drop_entities(self, conversation_id: ConversationId) -> None:
        """Hold no copy of the conversation's entities: the next read takes the record's."""
        ...


class UserFactCache(Protocol):
    """A memory store's copy of end users' facts (`UserFacts`), read by every turn's recall.

    Like `EntityCache`, a warmed copy is complete, an empty one too, and may lapse. A write to an
    end user's facts drops the copies of all their holders (each agent's and the shared one)."""

    async def cached_user_facts(self, holder: FactHolder) -> EntitySheet | None:
        """The holder's sheet last warmed, or None when none is held."""
        ...

    async def warm_user_facts(self, holder: FactHolder, sheet: EntitySheet) -> None:
        """Hold `sheet`, as the record has it (its whole history), for the holder."""
        ...

    async def drop_user_facts(self, owner: OwnerId, end_user: EndUserId) -> None:
        """Hold no copy of the end user's facts, for any holder: the next reads take the record's."""
        ...


class UpkeepLedger(Protocol):
    """Where each conversation's upkeep stands, and a lock so that one upkeep runs at a time."""

    async def upkeep_state(self, conversation_id: ConversationId) -> UpkeepState: ...

    async def save_upkeep_state(self, conversation_id: ConversationId, state: UpkeepState) -> None: ...

    def exclusive(self, conversation_id: ConversationId) -> AbstractAsyncContextManager[None]:
        """Hold the conversation's upkeep lock (across processes where the backend is shared).

        Waits for a holder to finish; raises `UpkeepBusy` if it does not within the backend's
        wait limit. A holder that dies loses the lock after the backend's lease.
        """
        ...


class EmbeddingCache(Protocol):
    """Vectors by key (a hash of the embedding model and the text); entries may expire."""

    async def cached_vectors(self, keys: Sequence[str]) -> list[list[float] | None]: ...

    async def cache_vectors(self, vectors: Mapping[str, Sequence[float]]) -> None: ...
