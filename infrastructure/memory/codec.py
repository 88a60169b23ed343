"""JSON for what the memory stores keep: windows, archive entries, entities, upkeep state."""

from __future__ import annotations

import json
from datetime import datetime
from typing import TYPE_CHECKING, Any

from domain.ids import ConversationId, MessageId
from domain.memory.archive import ArchiveEntry
from domain.memory.entities import Entity, EntityScope, EntitySource
from domain.memory.summary import UpkeepState

if TYPE_CHECKING:
    from collections.abc import Sequence

    from domain.conversations.messages import Msg


def _time(value: Any) -> datetime | None:
    return None if value is None else datetime.fromisoformat(str(value))


def encode_window(window: Sequence[Msg]) -> str:
    """A window as a JSON list of messages (redis_window_append.py relies on this exact text)."""
    return json.dumps([msg.to_dict() for msg in window], ensure_ascii=False)


def entry_to_json(entry: ArchiveEntry) -> str:
    return json.dumps(
        {
            "id": entry.id,
            "conversation_id": entry.conversation_id,
            "summary": entry.summary,
            "source_message_ids": list(entry.source_message_ids),
            "created_at": entry.created_at.isoformat(),
        },
        ensure_ascii=False,
    )


def entry_from_json(raw: str | bytes) -> ArchiveEntry:
    data = json.loads(raw)
    return ArchiveEntry(
        id=str(data["id"]),
        conversation_id=ConversationId(str(data["conversation_id"])),
        summary=str(data["summary"]),
        source_message_ids=tuple(MessageId(str(s)) for s in data["source_message_ids"]),
        created_at=datetime.fromisoformat(str(data["created_at"])),
    )


def entity_to_dict(entity: Entity) -> dict[str, Any]:
    return {
        "type": entity.type,
        "value": entity.value,
        "confidence": entity.confidence,
        "source_message_id": entity.source_message_id,
        "updated_at": entity.updated_at.isoformat(),
        "superseded_at": entity.superseded_at.isoformat() if entity.superseded_at else None,
        "scope": entity.scope.value,
        "source": entity.source.value,
        "explicit": entity.explicit,
        "source_conversation_id": entity.source_conversation_id,
    }


def entity_to_json(entity: Entity) -> str:
    return json.dumps(entity_to_dict(entity), ensure_ascii=False)


def entity_from_json(raw: str | bytes) -> Entity:
    data = json.loads(raw)
    return Entity(
        type=str(data["type"]),
        value=str(data["value"]),
        confidence=float(data["confidence"]),
        source_message_id=MessageId(str(data.get("source_message_id") or "")),
        updated_at=datetime.fromisoformat(str(data["updated_at"])),
        superseded_at=_time(data.get("superseded_at")),
        # Entries written before these fields existed read as they were then: extracted, explicit.
        scope=EntityScope(data.get("scope", EntityScope.CONVERSATION.value)),
        source=EntitySource(data.get("source", EntitySource.EXTRACTED.value)),
        explicit=bool(data.get("explicit", True)),
        source_conversation_id=ConversationId(data["source_conversation_id"])
        if data.get("source_conversation_id") else None,
    )


def state_to_json(state: UpkeepState) -> str:
    return json.dumps(
        {
            "summarized_through": state.summarized_through,
            "forgotten_at": state.forgotten_at.isoformat() if state.forgotten_at else None,
            "rollback_through": state.rollback_through,
            "rollback_summary": state.rollback_summary,
        }
    )


def state_from_json(raw: str | bytes) -> UpkeepState:
    data = json.loads(raw)
    through, before = data.get("summarized_through"), data.get("rollback_through")
    summary_before = data.get("rollback_summary")
    return UpkeepState(
        MessageId(str(through)) if through else None, _time(data.get("forgotten_at")),
        rollback_through=MessageId(str(before)) if before else None,
        rollback_summary=str(summary_before) if summary_before is not None else None,
    )
