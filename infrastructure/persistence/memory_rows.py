"""Rows of the memory record (docs/ARCHITECTURE.md §5): entities with their full history, user
facts, archive entries and the conversations' summaries as recall items with their vectors.

- `memory_entities`: one row per value. The current value of a type has `superseded_at` NULL; a
  replaced one keeps the time it stopped being current. A conversation's entity has its
  `conversation_id`; a user fact has `conversation_id` "" and `agent_id` "" (shared by the account's
  agents) or the agent's id (`memory.user_scope: "agent"`).
- `memory_items`: an archive entry (`kind` "archive", the entry's id) or a conversation's rolling
  summary (`kind` "summary", id `sum_<conversation id>`), with the owner, end user and agent of its
  conversation, so that recall across a user's conversations reads one index. `vector` holds the
  text's embedding (float32, little-endian) by `model`; NULL until the upkeep has embedded it.
  `recall_scope` says whose recall across conversations the item reaches.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Boolean, Double, Index, LargeBinary, String, Text, func, select, true
from sqlalchemy.orm import Mapped, mapped_column

from domain.ids import ConversationId, MessageId
from domain.memory.archive import ArchiveEntry
from domain.memory.entities import Entity, EntityScope, EntitySource
from domain.memory.user_facts import RecallItem, RecallKind
from infrastructure.persistence.rows import END_USER, ID, OWNER, SEQUENCE, TIMESTAMP, Base, utc

if TYPE_CHECKING:
    from collections.abc import Sequence

    from sqlalchemy import ColumnElement, ColumnExpressionArgument, FromClause, Row, Select

SHARED = ""  # agent_id of a user fact shared by the account's agents; conversation_id of any user fact


class MemoryEntityRow(Base):
    __tablename__ = "memory_entities"
    __table_args__ = (
        # A holder's entities: a conversation's, or one end user's facts (by agent), current first.
        Index("ix_memory_entities_holder", "owner", "end_user", "conversation_id", "agent_id", "type"),
        Index("ix_memory_entities_conversation", "conversation_id"),
    )

    id: Mapped[int] = mapped_column(SEQUENCE, primary_key=True, autoincrement=True)
    owner: Mapped[str] = mapped_column(OWNER)
    end_user: Mapped[str] = mapped_column(END_USER)
    conversation_id: Mapped[str] = mapped_column(ID)
    agent_id: Mapped[str] = mapped_column(String(255))
    type: Mapped[str] = mapped_column(String(64))
    value: Mapped[str] = mapped_column(Text)
    confidence: Mapped[float] = mapped_column(Double)
    scope: Mapped[str] = mapped_column(String(16))
    source: Mapped[str] = mapped_column(String(16))
    explicit: Mapped[bool] = mapped_column(Boolean, server_default=true())
    source_message_id: Mapped[str] = mapped_column(ID)
    source_conversation_id: Mapped[str] = mapped_column(ID)
    valid_from: Mapped[datetime] = mapped_column(TIMESTAMP)
    superseded_at: Mapped[datetime | None] = mapped_column(TIMESTAMP)


ITEM_ID = String(80)  # "sum_" and a conversation id


class MemoryItemRow(Base):
    __tablename__ = "memory_items"
    __table_args__ = (
        Index("ix_memory_items_user", "owner", "end_user", "conversation_id"),
        # The archive's version query (count, newest `changed_at`) from the index alone: on SQLite
        # a row's columns after its vector lie on overflow pages (migration 0010).
        Index("ix_memory_items_conversation", "conversation_id", "kind", "created_at", "changed_at"),
        # Recall's version query and its read of what changed since (`changed_at`), from the index alone.
        Index("ix_memory_items_recall", "owner", "end_user", "recall_scope", "model", "agent_id", "conversation_id",
              "changed_at"),
    )

    id: Mapped[str] = mapped_column(ITEM_ID, primary_key=True)
    conversation_id: Mapped[str] = mapped_column(ID)
    owner: Mapped[str] = mapped_column(OWNER)
    end_user: Mapped[str] = mapped_column(END_USER)
    agent_id: Mapped[str] = mapped_column(String(255))
    kind: Mapped[str] = mapped_column(String(16))
    text: Mapped[str] = mapped_column(Text)
    source_message_ids: Mapped[str] = mapped_column(Text)  # a JSON list
    created_at: Mapped[datetime] = mapped_column(TIMESTAMP)
    model: Mapped[str | None] = mapped_column(String(255))
    vector: Mapped[bytes | None] = mapped_column(LargeBinary)
    # Whose recall the item reaches (domain.memory.user_facts.RecallScope), set by the upkeep from the
    # agent's config; "none" until then, so nothing leaks into recall before it is known.
    recall_scope: Mapped[str] = mapped_column(String(16), server_default="none")
    # When its vector or scope last changed: with the count, the version of a user's recall matrix
    # (infrastructure/persistence/recall_matrices.py).
    changed_at: Mapped[datetime | None] = mapped_column(TIMESTAMP)


def with_version(
    where: Sequence[ColumnElement[bool]], columns: Sequence[ColumnExpressionArgument[Any]] = (),
    on: ColumnElement[bool] | None = None, items: FromClause | None = None,
) -> Select[Any]:
    """`columns` of the items `on` picks (of `items`, the table or a join of it), beside the version
    of those `where` picks (their count and newest `changed_at`): one round trip and one snapshot
    for both. There is a row even when no item is picked, the version's, with NULL columns
    (`versioned` splits them); with no `on`, only the version is read (an empty IN in an outer
    join's condition would have SQLite scan the table)."""
    version = select(func.count().label("count"), func.max(MemoryItemRow.changed_at).label("newest"))
    of = version.where(*where).subquery("version")
    if on is None:
        return select(of.c.count, of.c.newest)
    return select(of.c.count, of.c.newest, *columns).select_from(of).outerjoin(
        MemoryItemRow if items is None else items, on
    )


def versioned(rows: Sequence[Row[Any]]) -> tuple[tuple[Any, ...], list[Row[Any]]]:
    """A `with_version` result as the version and the items' rows."""
    if "id" not in rows[0]._fields:  # the version alone: a row's `_fields` costs a tuple each time
        return (rows[0].count, rows[0].newest), []
    return (rows[0].count, rows[0].newest), [row for row in rows if row.id is not None]


def entity_to_domain(row: MemoryEntityRow | Row[Any]) -> Entity:
    """From the mapped row, or a Core row of the table's columns."""
    return Entity(
        type=row.type,
        value=row.value,
        confidence=row.confidence,
        source_message_id=MessageId(row.source_message_id),
        updated_at=utc(row.valid_from),
        superseded_at=utc(row.superseded_at) if row.superseded_at is not None else None,
        scope=EntityScope(row.scope),
        source=EntitySource(row.source),
        explicit=row.explicit,
        source_conversation_id=ConversationId(row.source_conversation_id) if row.source_conversation_id else None,
    )


def entity_values(entity: Entity) -> dict[str, Any]:
    """The columns of an entity's row that come from the entity itself (not its holder)."""
    return {
        "type": entity.type,
        "value": entity.value,
        "confidence": entity.confidence,
        "scope": entity.scope.value,
        "source": entity.source.value,
        "explicit": entity.explicit,
        "source_message_id": entity.source_message_id,
        "source_conversation_id": entity.source_conversation_id or "",
        # SQLite keeps a time's wall-clock digits without its offset: every time is stored as UTC.
        "valid_from": utc(entity.updated_at),
        "superseded_at": utc(entity.superseded_at) if entity.superseded_at is not None else None,
    }


def archive_to_domain(row: MemoryItemRow | Row[Any]) -> ArchiveEntry:
    sources = tuple(MessageId(m) for m in json.loads(row.source_message_ids))
    return ArchiveEntry(row.id, ConversationId(row.conversation_id), row.text, sources, utc(row.created_at))


def item_to_domain(row: MemoryItemRow | Row[Any]) -> RecallItem:
    sources = tuple(MessageId(m) for m in json.loads(row.source_message_ids))
    return RecallItem(row.id, RecallKind(row.kind), ConversationId(row.conversation_id), row.text, sources)


def summary_item_id(conversation_id: str) -> str:
    return f"sum_{conversation_id}"
