"""The statements of the conversations API: the list, a conversation's header, a message's feedback,
and what a turn changes on its conversation and siblings. Parameters are bound, so each statement is
compiled once (see turn_statements)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlalchemy import Select, and_, bindparam, exists, false, or_, select, true, update

from infrastructure.persistence.rows import ConversationRow, MessageRow, utc
from infrastructure.persistence.turn_statements import CONVERSATIONS, MESSAGES

if TYPE_CHECKING:
    from collections.abc import Sequence

    from application.ports.conversation_reader import ConversationFilter
    from domain.ids import ConversationId

_LIVE = CONVERSATIONS.c.deleted_at.is_(None)
_LATEST = MESSAGES.alias("latest")

# A message's parent. Parameter: message_id.
PARENT_OF = select(MESSAGES.c.parent_message_id).where(MESSAGES.c.id == bindparam("b_message_id"))

# The siblings a completed regeneration replaces. Parameters: ids (expanding), conversation_id.
SUPERSEDE = (
    update(MESSAGES)
    .where(
        MESSAGES.c.id.in_(bindparam("b_ids", expanding=True)),
        MESSAGES.c.conversation_id == bindparam("b_conversation_id"),
    )
    .values(superseded=true())
)

# A conversation's newest message. Parameter: conversation_id.
LATEST_MESSAGE = (
    select(MessageRow)
    .where(MESSAGES.c.conversation_id == bindparam("b_conversation_id"))
    .order_by(MESSAGES.c.created_at.desc(), MESSAGES.c.seq.desc())
    .limit(1)
)

# Title and pin, as the owner changed them. Parameters: conversation_id, owner, title, pinned, at.
_HEADER = update(CONVERSATIONS).where(
    CONVERSATIONS.c.id == bindparam("b_conversation_id"), CONVERSATIONS.c.owner == bindparam("b_owner"), _LIVE
)
# Only the fields a change names, so that a pin never writes back a title an auto-title saved meanwhile.
RENAME = _HEADER.values(title=bindparam("b_title"), title_by_user=true(), updated_at=bindparam("b_at"))
PIN = _HEADER.values(pinned=bindparam("b_pinned"), updated_at=bindparam("b_at"))
RENAME_AND_PIN = _HEADER.values(
    title=bindparam("b_title"), title_by_user=true(), pinned=bindparam("b_pinned"), updated_at=bindparam("b_at")
)

# An automatic title: only while there is none and none was set by hand. Parameters: conversation_id, title, at.
AUTO_TITLE = (
    update(CONVERSATIONS)
    .where(
        CONVERSATIONS.c.id == bindparam("b_conversation_id"), _LIVE, CONVERSATIONS.c.title == "",
        CONVERSATIONS.c.title_by_user == false(),
    )
    .values(title=bindparam("b_title"), updated_at=bindparam("b_at"))
)

# A soft delete; the summary goes with the rest of its memory. Parameters: conversation_id, owner, at.
SOFT_DELETE = (
    update(CONVERSATIONS)
    .where(CONVERSATIONS.c.id == bindparam("b_conversation_id"), CONVERSATIONS.c.owner == bindparam("b_owner"), _LIVE)
    .values(deleted_at=bindparam("b_at"), summary="", updated_at=bindparam("b_at"))
)

# A message's feedback, while its conversation lives. Parameters: message_id, owner, rating, note.
SAVE_FEEDBACK = (
    update(MESSAGES)
    .where(
        MESSAGES.c.id == bindparam("b_message_id"), MESSAGES.c.owner == bindparam("b_owner"),
        exists().where(CONVERSATIONS.c.id == MESSAGES.c.conversation_id, _LIVE),
    )
    .values(rating=bindparam("b_rating"), rating_note=bindparam("b_note"))
)

# Parameters: message_id, questions.
SAVE_FOLLOW_UPS = (
    update(MESSAGES)
    .where(
        MESSAGES.c.id == bindparam("b_message_id"),
        exists().where(CONVERSATIONS.c.id == MESSAGES.c.conversation_id, _LIVE),
    )
    .values(follow_ups=bindparam("b_questions"))
)


def list_query(query: ConversationFilter) -> Select[ConversationRow]:
    """One page of the filter, newest activity first, with the id breaking ties."""
    viewer, c = query.viewer, CONVERSATIONS.c
    conditions = [c.owner == viewer.owner, _LIVE]
    agent = viewer.agent_id or query.agent_id
    if viewer.end_user is not None:
        conditions.append(c.end_user == viewer.end_user)
    if agent is not None:
        conditions.append(c.app_id == agent)
    if query.pinned is not None:
        conditions.append(c.pinned == query.pinned)
    if not query.include_debug or viewer.agent_id is not None:  # an agent key never sees the debugger's
        conditions.append(c.is_debug == false())
    if query.search:
        said = or_(MESSAGES.c.query.icontains(query.search, autoescape=True),
                   MESSAGES.c.answer.icontains(query.search, autoescape=True))
        conditions.append(or_(
            c.title.icontains(query.search, autoescape=True),
            exists().where(MESSAGES.c.conversation_id == c.id, said),
        ))
    if query.after is not None:
        at = utc(query.after.active_at)
        conditions.append(or_(
            c.last_active_at < at, and_(c.last_active_at == at, c.id < query.after.conversation_id)
        ))
    return (
        select(ConversationRow).where(*conditions)
        .order_by(c.last_active_at.desc(), c.id.desc()).limit(query.limit)
    )


def last_messages(conversation_ids: Sequence[ConversationId]) -> Select[MessageRow]:
    """The newest message of each of these conversations."""
    newest = (
        select(_LATEST.c.seq).where(_LATEST.c.conversation_id == MESSAGES.c.conversation_id)
        .order_by(_LATEST.c.created_at.desc(), _LATEST.c.seq.desc()).limit(1).scalar_subquery()
    )
    return select(MessageRow).where(MessageRow.conversation_id.in_(conversation_ids), MessageRow.seq == newest)
