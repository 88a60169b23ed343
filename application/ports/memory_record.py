"""The durable record of the memory tiers (docs/ARCHITECTURE.md §5): SQL, in front of which the
memory store (Redis or in-process) is only a cache.

- `ArchiveRecord`: a conversation's archive entries, with their source messages.
- `EntityMemory` (from `memory_store`): a conversation's entities with their whole history.
- `UserFacts`: an end user's facts (entities of scope `user`), with their whole history.
- `RecallIndex`: archive entries and summaries of all of a user's conversations, with vectors,
  for recall across conversations and the user's memory search.
- `MemoryForgetting`: dropping a conversation's record, or everything of one end user.

One adapter (SQLAlchemy) implements them all. Every method raises `StoreUnavailable` (or another
`ApplicationError`) when the database fails.
"""

from collections.abc import Mapping, Sequence
from typing import Protocol

from domain.conversations.conversation import Conversation, Message
from domain.ids import AppId, ConversationId, EndUserId, MessageId, OwnerId
from domain.memory.archive import ArchiveEntry
from domain.memory.entities import Entity, EntitySheet
from domain.memory.user_facts import FactHolder, ForgetCounts, RecallItem, RecallScope, ScoredItem


class ArchiveRecord(Protocol):
    async def archive_entries(self, conversation_id: ConversationId) -> list[ArchiveEntry]:
        """The conversation's archive entries, oldest first."""
        ...

    async def add_archive_entries(self, entries: Sequence[ArchiveEntry]) -> None:
        """Keep entries not kept yet (an id already there is left as it is); the entry's owner, end
        user and agent are its conversation's."""
        ...


class UserFacts(Protocol):
    async def user_facts(self, holder: FactHolder) -> EntitySheet:
        """The holder's current facts and their history (oldest first)."""
        ...

    async def record_user_facts(
        self, holder: FactHolder, entities: Sequence[Entity], min_confidence: float = 0.0
    ) -> None:
        """Merge new values atomically with `domain.memory.entities.merge_entities`."""
        ...

    async def remove_user_fact(self, holder: FactHolder, kind: str) -> bool:
        """Forget one type: its current value and its history. False when it has no current value."""
        ...


class RecallIndex(Protocol):
    async def index_summary(self, conversation: Conversation, sources: Sequence[MessageId]) -> None:
        """Keep the conversation's summary as a recall item citing `sources` (the newest turns it
        holds); none when it is empty. An unchanged summary is left as it is, vector and all."""
        ...

    async def share(self, conversation_id: ConversationId, scope: RecallScope) -> None:
        """Whose recall the conversation's items reach from now on (its agent's config decides)."""
        ...

    async def share_agent(self, owner: OwnerId, agent_id: AppId, scope: RecallScope) -> None:
        """Whose recall the items of the agent's published conversations reach, after its active
        config changed (a publish, an activation)."""
        ...

    async def unembedded(self, conversation_id: ConversationId, model: str) -> list[RecallItem]:
        """The conversation's items with no vector of `model` yet."""
        ...

    async def index_conversation(
        self, conversation: Conversation, sources: Sequence[MessageId], scope: RecallScope, model: str,
        summary_vector: Sequence[float] | None = None,
    ) -> list[RecallItem]:
        """`index_summary`, `share` and `unembedded` in one transaction (an upkeep's index): the
        conversation's items with no vector of `model` yet. `summary_vector` (of `model`): kept with
        a changed summary, which then is not to embed; an unchanged one keeps its own."""
        ...

    async def save_vectors(self, model: str, vectors: Mapping[str, Sequence[float]]) -> None:
        """Each item's vector by item id (of `model`); an item gone meanwhile is skipped."""
        ...

    async def similar(
        self,
        holder: FactHolder,
        model: str,
        query: Sequence[float],
        top_k: int,
        exclude: ConversationId | None = None,
        *,
        for_recall: bool = True,
    ) -> list[ScoredItem]:
        """The `top_k` items of the holder's conversations (one agent's, when the holder names it)
        most similar to `query` by cosine, best first; deleted and debugger conversations and
        `exclude` left out. `for_recall`: only items shared with the holder (`RecallScope`: the
        account's when it names no agent, else that agent's own); else (a search of the memory
        API) any of them."""
        ...

    async def recent_turns(self, holder: FactHolder, limit: int) -> list[Message]:
        """The holder's newest completed turns (not superseded) across their live conversations,
        newest first; one agent's only when the holder names it."""
        ...


class MemoryForgetting(Protocol):
    async def forget_conversation(self, conversation_id: ConversationId) -> None:
        """Drop the conversation's entities, archive entries and summary item."""
        ...

    async def forget_user(self, owner: OwnerId, end_user: EndUserId) -> ForgetCounts:
        """Drop every fact of the end user and the memory record of every one of their
        conversations; what was removed (no windows, conversations or messages: not this record's)."""
        ...

    async def conversations_with_memory(
        self, owner: OwnerId, end_user: EndUserId, agent_id: AppId | None = None
    ) -> list[ConversationId]:
        """The end user's live, published (not debugger) conversations, of one agent when named, that
        have entities, archive entries or a summary."""
        ...
