from typing import Annotated, Any

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends, Query

from application.conversations.read_history import MAX_PAGE, ReadHistory
from domain.accounts.viewers import Viewer
from domain.ids import ConversationId, MessageId
from interfaces.http.openapi import ERROR_RESPONSES
from interfaces.http.owner import current_viewer
from interfaces.http.provided import Provided
from interfaces.http.schemas import UnicodeText, message_data, ran_data, step_data

router = APIRouter(responses=ERROR_RESPONSES)


MAX_OFFSET = 2**62  # every database takes it as a 64-bit integer


@router.get("/api/conversations/{conversation_id}/messages")
@inject
async def list_messages(
    conversation_id: UnicodeText,
    viewer: Annotated[Viewer, Depends(current_viewer)],
    history: Annotated[ReadHistory, Depends(Provided["read_history"])],
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET)] = 0,
    limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 20,
) -> dict[str, Any]:
    """A page of the conversation's messages, oldest first."""
    conversation, messages = await history.messages(ConversationId(conversation_id), viewer, offset, limit)
    return {
        "data": [message_data(m, conversation) for m in messages],
        "offset": offset,
        "limit": limit,
        "has_more": len(messages) == limit,
    }


@router.get("/api/messages/{message_id}/thoughts")
@inject
async def list_thoughts(
    message_id: UnicodeText,
    viewer: Annotated[Viewer, Depends(current_viewer)],
    history: Annotated[ReadHistory, Depends(Provided["read_history"])],
) -> dict[str, Any]:
    """A message's steps, by position, with the prompt each step sent (not to an agent key)."""
    conversation, message, steps = await history.steps(MessageId(message_id), viewer)
    with_prompt = viewer.agent_id is None
    return {"data": [step_data(s, with_prompt) for s in steps], **ran_data(message, conversation)}
