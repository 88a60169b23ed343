"""A conversation's memory over HTTP: read it, correct an entity, forget parts or all of it.

Owner only: an unknown conversation and someone else's are both 404.
"""

from typing import Annotated, Any

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends, Path
from fastapi.responses import Response
from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from application.memory.conversation_memory import ConversationMemory, MemoryView
from domain.ids import ConversationId, OwnerId
from domain.memory.archive import ArchiveEntry
from domain.memory.entities import MAX_ENTITY_TYPE, MAX_ENTITY_VALUE, Entity
from interfaces.http.openapi import ERROR_RESPONSES
from interfaces.http.owner import current_owner
from interfaces.http.provided import Provided
from interfaces.http.schemas import JsonPattern, SomeText, UnicodeText, unicode_text

router = APIRouter(responses=ERROR_RESPONSES)

# At least one letter or digit: a type is keyed by them (domain.memory.entities.entity_type).
ENTITY_TYPE_PATTERN = r"^[^\x00]*[^\W_][^\x00]*$"
EntityType = Annotated[
    str, AfterValidator(unicode_text), JsonPattern(ENTITY_TYPE_PATTERN),
    Path(min_length=1, max_length=MAX_ENTITY_TYPE, description="e.g. date, city, name"),
]


class EntityBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    # Not only white space: the value is stored with its runs of white space made one space.
    value: SomeText = Field(min_length=1, max_length=MAX_ENTITY_VALUE, description="The entity's new value.")
    confidence: float = Field(1.0, ge=0.0, le=1.0, description="Below the threshold it never reaches the prompt.")


def _when(entity: Entity) -> dict[str, Any]:
    return {
        "value": entity.value,
        "confidence": entity.confidence,
        "source_message_id": entity.source_message_id or None,  # None: set through this API
        "updated_at": entity.updated_at.isoformat(),
    }


def entity_data(entity: Entity, history: tuple[Entity, ...], min_confidence: float) -> dict[str, Any]:
    return {
        "type": entity.type,
        **_when(entity),
        "in_prompt": entity.reaches_prompt(min_confidence),
        "history": [
            {**_when(old), "superseded_at": old.superseded_at.isoformat() if old.superseded_at else None}
            for old in history
        ],
    }


def archive_data(entry: ArchiveEntry) -> dict[str, Any]:
    return {
        "id": entry.id,
        "summary": entry.summary,
        "source_message_ids": list(entry.source_message_ids),
        "created_at": entry.created_at.isoformat(),
    }


def memory_data(view: MemoryView) -> dict[str, Any]:
    sheet = view.entities
    return {
        "conversation_id": view.conversation_id,
        "summary": view.summary,
        "intent": None if sheet.intent is None else sheet.intent.value,  # also listed among the entities
        "entity_min_confidence": view.min_confidence,
        "entities": [
            entity_data(e, sheet.history_of(e.type), view.min_confidence)
            for e in sorted(sheet.current, key=lambda e: e.type)
        ],
        "archive": [archive_data(a) for a in view.archive],
    }


@router.get("/api/conversations/{conversation_id}/memory")
@inject
async def read_memory(
    conversation_id: UnicodeText,
    owner: Annotated[OwnerId, Depends(current_owner)],
    memory: Annotated[ConversationMemory, Depends(Provided["memory.conversation_memory"])],
) -> dict[str, Any]:
    """The rolling summary, current entities (with confidence and history) and archive entries."""
    return memory_data(await memory.read(ConversationId(conversation_id), owner))


@router.put("/api/conversations/{conversation_id}/memory/entities/{entity_type}")
@inject
async def set_entity(
    conversation_id: UnicodeText,
    entity_type: EntityType,
    body: EntityBody,
    owner: Annotated[OwnerId, Depends(current_owner)],
    memory: Annotated[ConversationMemory, Depends(Provided["memory.conversation_memory"])],
) -> dict[str, Any]:
    """Set an entity's value; the previous value is kept as history."""
    conversation = ConversationId(conversation_id)
    entity = await memory.set_entity(conversation, owner, entity_type, body.value, body.confidence)
    view = await memory.read(conversation, owner)
    return entity_data(entity, view.entities.history_of(entity.type), view.min_confidence)


@router.delete("/api/conversations/{conversation_id}/memory/entities/{entity_type}", status_code=204)
@inject
async def delete_entity(
    conversation_id: UnicodeText,
    entity_type: EntityType,
    owner: Annotated[OwnerId, Depends(current_owner)],
    memory: Annotated[ConversationMemory, Depends(Provided["memory.conversation_memory"])],
) -> Response:
    """Forget one entity: its current value and its history."""
    await memory.delete_entity(ConversationId(conversation_id), owner, entity_type)
    return Response(status_code=204)


@router.delete("/api/conversations/{conversation_id}/memory", status_code=204)
@inject
async def forget_memory(
    conversation_id: UnicodeText,
    owner: Annotated[OwnerId, Depends(current_owner)],
    memory: Annotated[ConversationMemory, Depends(Provided["memory.conversation_memory"])],
) -> Response:
    """Forget everything but the message record: summary, entities, archive, cached window."""
    await memory.forget(ConversationId(conversation_id), owner)
    return Response(status_code=204)
