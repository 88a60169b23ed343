"""Bodies and answers of the conversations API."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from domain.conversations.conversation import MAX_NOTE_CHARS, MAX_TITLE_CHARS
from interfaces.http.schemas import USER_FIELD, EndUserText, Name, UnicodeText

if TYPE_CHECKING:
    from application.ports.conversation_reader import ConversationListing
    from domain.conversations.conversation import Message

PREVIEW_CHARS = 200

Title = Annotated[Name, Field(min_length=1, max_length=MAX_TITLE_CHARS)]


class ChangeConversationBody(BaseModel):
    """What to change; a field left out stays as it is."""

    model_config = ConfigDict(extra="forbid", strict=True)

    title: Title | None = Field(None, description="A title set by hand: auto-titling never changes it again.")
    pinned: bool | None = None


class FeedbackBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    rating: Literal["like", "dislike"] | None = Field(description="like, dislike, or null to clear the rating.")
    note: Annotated[UnicodeText, Field(max_length=MAX_NOTE_CHARS)] = ""
    user: EndUserText | None = Field(None, description=USER_FIELD)


class RegenerateBody(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    stream: bool = Field(False, description="true: text/event-stream; false: one JSON answer.")
    user: EndUserText | None = Field(None, description=USER_FIELD)


def _preview(message: Message | None) -> str:
    if message is None:
        return ""
    text = message.answer.strip() or message.query.strip()
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


def conversation_data(listing: ConversationListing) -> dict[str, Any]:
    c, last = listing.conversation, listing.last_message
    return {
        "id": c.id,
        "agent_id": c.app_id,
        "user": c.end_user or None,  # null: the account's own conversation
        "title": c.title or None,
        "pinned": c.pinned,
        "is_debug": c.is_debug,
        "created_at": c.created_at.isoformat(),
        "updated_at": (c.last_active_at or c.updated_at).isoformat(),
        "message_count": c.message_count,
        "last_message": None if last is None else {
            "id": last.id, "status": last.status.value, "preview": _preview(last),
            "created_at": last.created_at.isoformat(),
        },
    }
