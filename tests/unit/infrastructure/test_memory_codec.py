"""The JSON the memory caches keep: an entity keeps its scope, source, explicitness and provenance,
and an entry written before those fields existed still reads."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from domain.ids import ConversationId, MessageId
from domain.memory.entities import Entity, EntityScope, EntitySource
from infrastructure.memory.codec import entity_from_json, entity_to_json

AT = datetime(2026, 12, 1, 9, 0, tzinfo=UTC)


def test_an_entity_round_trips_with_its_scope_source_and_provenance() -> None:
    entity = Entity("city", "Lisboa ☀", 0.9, MessageId("m1"), AT, AT, scope=EntityScope.USER,
                    source=EntitySource.API, explicit=False, source_conversation_id=ConversationId("c1"))
    assert entity_from_json(entity_to_json(entity)) == entity


def test_an_entity_cached_before_scopes_existed_reads_as_extracted_and_explicit() -> None:
    old = json.dumps({"type": "date", "value": "tomorrow", "confidence": 0.85, "source_message_id": "m1",
                      "updated_at": AT.isoformat(), "superseded_at": None})
    entity = entity_from_json(old)
    assert (entity.scope, entity.source, entity.explicit, entity.source_conversation_id) == (
        EntityScope.CONVERSATION, EntitySource.EXTRACTED, True, None
    )
