"""ListConversations: a page of the viewer's conversations, newest activity first.

Pages follow each other by an opaque cursor, the position of the last conversation shown, so a
conversation that becomes active meanwhile moves to the top without shifting the pages after.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from application.errors import InvalidInput, MalformedRequest
from application.ports.conversation_reader import ConversationFilter, ListPosition
from domain.ids import ConversationId
from domain.text import storable, text_problem

if TYPE_CHECKING:
    from application.ports.conversation_reader import ConversationListing, ConversationReader
    from domain.accounts.viewers import Viewer
    from domain.ids import AppId

MAX_LIST_PAGE = 100
MAX_SEARCH_CHARS = 200
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
# Up to 16 digits of microseconds (past the year 2200) and an id of up to 256 UTF-8 bytes.
CURSOR_PATTERN = r"^[0-9]{1,16}-(?:[0-9a-f]{2}){1,256}$"
CURSOR_SHAPE = re.compile(CURSOR_PATTERN.strip("^$"))
MAX_CURSOR_CHARS = 16 + 1 + 512


@dataclass(frozen=True, slots=True)
class ListRequest:
    viewer: Viewer
    agent_id: AppId | None = None
    pinned: bool | None = None
    search: str = ""
    include_debug: bool = False
    cursor: str | None = None
    limit: int = 20


@dataclass(frozen=True, slots=True)
class ConversationPage:
    listings: list[ConversationListing]
    next_cursor: str | None  # None: this is the last page


def encode_cursor(position: ListPosition) -> str:
    """`<microseconds since the epoch>-<the id's UTF-8, in hex>`: every string of CURSOR_PATTERN
    is a position, so the pattern alone says which cursors are well formed."""
    micros = (position.active_at - EPOCH) // timedelta(microseconds=1)
    return f"{micros}-{position.conversation_id.encode('utf-8').hex()}"


def decode_cursor(cursor: str) -> ListPosition:
    """The position a cursor names; one that is not of CURSOR_PATTERN is a `MalformedRequest`."""
    if not CURSOR_SHAPE.fullmatch(cursor):
        raise MalformedRequest("The cursor is not one this API gave out: pass `next_cursor` as it came.")
    micros, _, hex_id = cursor.partition("-")
    # Any id bytes name a place in the order; ones no store can hold (not UTF-8, a NUL) are replaced,
    # and then simply match no conversation.
    conversation_id = storable(bytes.fromhex(hex_id).decode("utf-8", "replace"))
    return ListPosition(EPOCH + timedelta(microseconds=int(micros)), ConversationId(conversation_id))


class ListConversations:
    def __init__(self, store: ConversationReader) -> None:
        self._store = store

    async def __call__(self, request: ListRequest) -> ConversationPage:
        if not 1 <= request.limit <= MAX_LIST_PAGE:
            raise InvalidInput(f"limit must be within 1..{MAX_LIST_PAGE}.")
        search = request.search.strip()
        if len(search) > MAX_SEARCH_CHARS or text_problem(search):
            raise InvalidInput(f"q must be at most {MAX_SEARCH_CHARS} characters of text.")
        after = decode_cursor(request.cursor) if request.cursor is not None else None
        listings = await self._store.list_conversations(ConversationFilter(
            viewer=request.viewer, agent_id=request.agent_id, pinned=request.pinned, search=search,
            include_debug=request.include_debug, after=after, limit=request.limit,
        ))
        last = listings[-1].conversation if len(listings) == request.limit else None
        next_cursor = None
        if last is not None and last.last_active_at is not None:
            next_cursor = encode_cursor(ListPosition(last.last_active_at, last.id))
        return ConversationPage(listings, next_cursor)
