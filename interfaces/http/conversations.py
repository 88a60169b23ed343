"""The conversations API: list, read, rename or pin, and delete an end user's conversations.

An account key reaches every end user's conversations (or one's, with `?user=`); an agent key
only its `user`'s, of its agent. Anything else reads as not found.
"""

from typing import Annotated, Any

from dependency_injector.wiring import inject
from fastapi import APIRouter, Depends, Query, Response

from application.conversations import (
    ChangeConversation,
    DeleteConversation,
    ListConversations,
    ListRequest,
    ReadConversation,
)
from application.conversations.list_conversations import (
    CURSOR_PATTERN,
    MAX_CURSOR_CHARS,
    MAX_LIST_PAGE,
    MAX_SEARCH_CHARS,
)
from domain.accounts.viewers import Viewer
from domain.ids import AppId, ConversationId
from interfaces.http.conversation_schemas import ChangeConversationBody, conversation_data
from interfaces.http.openapi import ERROR_RESPONSES
from interfaces.http.owner import current_viewer
from interfaces.http.provided import Provided
from interfaces.http.schemas import JsonPattern, UnicodeText

router = APIRouter(responses=ERROR_RESPONSES)

# Checked by the use case (a malformed cursor is a 400), described here for the schema.
Cursor = Annotated[str, JsonPattern(CURSOR_PATTERN)]


@router.get("/api/conversations")
@inject
async def list_conversations(
    viewer: Annotated[Viewer, Depends(current_viewer)],
    listing: Annotated[ListConversations, Depends(Provided["conversations.list_conversations"])],
    agent_id: Annotated[UnicodeText | None, Query(min_length=1, max_length=64)] = None,
    pinned: bool | None = None,
    q: Annotated[UnicodeText, Query(max_length=MAX_SEARCH_CHARS, description="Search titles and messages.")] = "",
    include_debug: bool = False,
    limit: Annotated[int, Query(ge=1, le=MAX_LIST_PAGE)] = 20,
    cursor: Annotated[Cursor | None, Query(max_length=MAX_CURSOR_CHARS, description="`next_cursor` of a page.")] = None,
) -> dict[str, Any]:
    """The viewer's conversations, newest activity first; `next_cursor` (null on the last page) fetches the next."""
    page = await listing(ListRequest(
        viewer=viewer, agent_id=AppId(agent_id) if agent_id else None, pinned=pinned, search=q,
        include_debug=include_debug, cursor=cursor, limit=limit,
    ))
    return {
        "data": [conversation_data(item) for item in page.listings],
        "limit": limit,
        "has_more": page.next_cursor is not None,
        "next_cursor": page.next_cursor,
    }


@router.get("/api/conversations/{conversation_id}")
@inject
async def read_conversation(
    conversation_id: UnicodeText,
    viewer: Annotated[Viewer, Depends(current_viewer)],
    read: Annotated[ReadConversation, Depends(Provided["conversations.read_conversation"])],
) -> dict[str, Any]:
    return conversation_data(await read(ConversationId(conversation_id), viewer))


@router.patch("/api/conversations/{conversation_id}")
@inject
async def change_conversation(
    conversation_id: UnicodeText,
    body: ChangeConversationBody,
    viewer: Annotated[Viewer, Depends(current_viewer)],
    change: Annotated[ChangeConversation, Depends(Provided["conversations.change_conversation"])],
) -> dict[str, Any]:
    """Rename (a title set here wins over auto-titling for good) or pin a conversation."""
    changed = await change(ConversationId(conversation_id), viewer, body.title, body.pinned)
    return conversation_data(changed)


@router.delete("/api/conversations/{conversation_id}", status_code=204)
@inject
async def delete_conversation(
    conversation_id: UnicodeText,
    viewer: Annotated[Viewer, Depends(current_viewer)],
    delete: Annotated[DeleteConversation, Depends(Provided["conversations.delete_conversation"])],
) -> Response:
    """Soft delete: a running turn is stopped first, the memory is forgotten, and the conversation
    leaves every list and read (404) and takes no more turns."""
    await delete(ConversationId(conversation_id), viewer)
    return Response(status_code=204)
