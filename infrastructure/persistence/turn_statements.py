"""The statements of a turn's path, built once with bound parameters.

Building `insert(...).values(row)` or `.where(column == value)` at each call coerces every value
into a bound parameter and walks the statement again for the compiled-statement cache: on the
embedded SQLite that cost as much CPU as the database work itself. Built once, only the
parameters change from one turn to the next.
"""

from __future__ import annotations

from sqlalchemy import ColumnElement, Insert, Integer, Table, bindparam, false, func, insert, select, update

from domain.conversations.conversation import MessageStatus
from infrastructure.persistence.rows import (
    OUTCOME_COLUMNS,
    Base,
    ConversationRow,
    MessageAgentThoughtRow,
    MessageRow,
)


def _table(row: type[Base]) -> Table:
    """The row class's Table (declarative mapping types `__table__` as a bare FromClause)."""
    table = row.__table__
    if not isinstance(table, Table):
        raise TypeError(f"{row.__name__} is not mapped to a table")
    return table


CONVERSATIONS = _table(ConversationRow)
MESSAGES = _table(MessageRow)
STEPS = _table(MessageAgentThoughtRow)

INSERT_CONVERSATION = insert(CONVERSATIONS)
INSERT_MESSAGE = insert(MESSAGES)
INSERT_STEPS = insert(STEPS)

# A new turn's effect on its conversation's list entry (one message more, active now), returning
# the conversation so touched and whether a turn runs in it: a busy one is refused, its transaction
# rolled back. One statement where a read and an update were two. The UPDATE takes the row's lock
# on PostgreSQL, so that turns opening at once wait for each other here, and SQLite's write lock.
# That alone does not decide: a waiting statement's EXISTS still reads the snapshot it started
# with. OPEN_MESSAGE decides. Parameters (`b_<name>`, since a bound parameter may not share its
# column's name in a SET clause): conversation_id, owner, active_at.
TOUCH_FOR_TURN = (
    update(CONVERSATIONS)
    .where(
        CONVERSATIONS.c.id == bindparam("b_conversation_id"),
        CONVERSATIONS.c.owner == bindparam("b_owner"),
        CONVERSATIONS.c.deleted_at.is_(None),
    )
    .values(message_count=CONVERSATIONS.c.message_count + 1, last_active_at=bindparam("b_active_at"))
    # By the parameter, not correlated: SQLite's RETURNING names columns unqualified, and inside
    # the subquery an unqualified `id` would be the message's.
    .returning(
        *CONVERSATIONS.columns,
        select(MESSAGES.c.id)
        .where(
            MESSAGES.c.conversation_id == bindparam("b_conversation_id"),
            MESSAGES.c.status == MessageStatus.RUNNING.value,
        )
        .exists()
        .label("busy"),
    )
)

_NEW_MESSAGE = tuple(column for column in MESSAGES.columns if column.name != "seq")

def _open_message(*conditions: ColumnElement[bool]) -> Insert:
    return insert(MESSAGES).from_select(
        [column.name for column in _NEW_MESSAGE],
        select(*(bindparam(column.name, type_=column.type) for column in _NEW_MESSAGE)).where(
            ~select(MESSAGES.c.id)
            .where(
                MESSAGES.c.conversation_id == bindparam("conversation_id"),
                MESSAGES.c.status == MessageStatus.RUNNING.value,
            )
            .exists(),
            *conditions,
        ),
    )


# A running message, inserted only while no other runs in its conversation: one statement, so the
# check and the write are atomic on SQLite (it takes the write lock before reading) and, after
# TOUCH_FOR_TURN, read a fresh snapshot on PostgreSQL (READ COMMITTED). No row inserted: busy.
# Parameters: every column of `message_values`.
OPEN_MESSAGE = _open_message()

_PARENT = MESSAGES.alias("parent")
_NEWER = MESSAGES.alias("newer")
# A regeneration: as OPEN_MESSAGE, and only while its parent is the conversation's newest message,
# so that a newer turn (or regeneration) makes it a conflict. Parameters: as OPEN_MESSAGE.
OPEN_REGENERATION = _open_message(
    select(_PARENT.c.id)
    .where(
        _PARENT.c.id == bindparam("parent_message_id"),
        _PARENT.c.conversation_id == bindparam("conversation_id"),
        ~select(_NEWER.c.id)
        .where(_NEWER.c.conversation_id == _PARENT.c.conversation_id, _NEWER.c.seq > _PARENT.c.seq)
        .exists(),
    )
    .exists()
)

# A running message's outcome. Parameters: message_id, and `new_<column>` for each outcome column
# (a bound parameter may not share its column's name in a SET clause).
FINISH_MESSAGE = (
    update(MESSAGES)
    .where(MESSAGES.c.id == bindparam("message_id"), MESSAGES.c.status == MessageStatus.RUNNING.value)
    .values({column: bindparam(f"new_{column}") for column in OUTCOME_COLUMNS})
    # Its conversation's fingerprint, which a completed turn extends (history_fingerprints.py), in
    # the same statement: one round trip less on every turn's path.
    .returning(
        select(CONVERSATIONS.c.history_fingerprint)
        .where(CONVERSATIONS.c.id == MESSAGES.c.conversation_id)
        .scalar_subquery()
    )
)

# Parameters: conversation_id, fingerprint.
SET_FINGERPRINT = (
    update(CONVERSATIONS)
    .where(CONVERSATIONS.c.id == bindparam("conversation_id"))
    .values(history_fingerprint=bindparam("fingerprint"))
)

# A conversation its owner may see. Parameters: conversation_id, owner.
VISIBLE_CONVERSATION = select(ConversationRow).where(
    CONVERSATIONS.c.id == bindparam("conversation_id"),
    CONVERSATIONS.c.owner == bindparam("owner"),
    CONVERSATIONS.c.deleted_at.is_(None),
)

BLANK = " \t\n\r\v\f"

# Newest completed turns first, so LIMIT stops early walking ix_messages_conversation_status_created
# backwards, however long the conversation; `seq` keeps equal timestamps in insertion order.
# Parameters: conversation_id, limit.
RECENT_TURNS = (
    select(MessageRow)
    .where(
        MESSAGES.c.conversation_id == bindparam("conversation_id"),
        MESSAGES.c.status == MessageStatus.NORMAL.value,
        # A blank answer is no answer (the domain's is_completed_turn); trim(x, chars) is both dialects'.
        func.trim(MESSAGES.c.answer, BLANK) != "",
        MESSAGES.c.superseded == false(),  # a regenerated answer replaced it
        MESSAGES.c.blocked_by.is_(None),  # a review refused the query or replaced the answer
    )
    .order_by(MESSAGES.c.created_at.desc(), MESSAGES.c.seq.desc())
    .limit(bindparam("limit", type_=Integer))
)

# Only the summary and its time: a concurrent soft delete must not be undone by upkeep.
# Parameters: conversation_id, new_summary, new_updated_at.
SAVE_SUMMARY = (
    update(CONVERSATIONS)
    .where(CONVERSATIONS.c.id == bindparam("conversation_id"))
    .values(summary=bindparam("new_summary"), updated_at=bindparam("new_updated_at"))
)
