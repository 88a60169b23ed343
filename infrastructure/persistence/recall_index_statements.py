"""The statements of an upkeep's index (`SqlAlchemyRecallIndex.index_conversation`, `save_vectors`)
and of a turn's recall across conversations, built once with bound parameters (turn_statements.py
says why): each new conversation's upkeep and each turn run them, on a Core connection.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from sqlalchemy import BindParameter, and_, bindparam, delete, join, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from infrastructure.persistence.memory_rows import MemoryItemRow, with_version
from infrastructure.persistence.rows import ConversationRow

if TYPE_CHECKING:
    from sqlalchemy import ColumnElement, Delete, Select, Update

I = MemoryItemRow  # noqa: E741 - the table's one-letter alias, as in SQL
SUMMARY_COLUMNS = ("id", "conversation_id", "owner", "end_user", "agent_id", "kind", "text", "source_message_ids",
                   "created_at", "model", "vector", "changed_at")
# What a changed summary replaces: its text and sources, and its vector (that of the old text).
_CHANGED = ("text", "source_message_ids", "created_at", "model", "vector", "changed_at")


def _bound(column: str) -> BindParameter[Any]:
    """The parameter `b_<column>`, of the column's type (a time is stored as the column stores it)."""
    return bindparam(f"b_{column}", type_=I.__table__.c[column].type)


# Parameters: b_id.
SUMMARY_TEXT: Select[Any] = select(I.text).where(I.id == bindparam("b_id"))
DROP_ITEM: Delete = delete(I).where(I.id == bindparam("b_id"))

# Parameters: b_conversation_id, b_scope (the scope it is not yet) and b_recall_scope (the same), b_changed_at.
SHARE: Update = (
    update(I)
    .where(I.conversation_id == bindparam("b_conversation_id"), I.recall_scope != bindparam("b_scope"))
    .values(recall_scope=_bound("recall_scope"), changed_at=_bound("changed_at"))
)

# Parameters: b_conversation_id, b_model.
UNEMBEDDED: Select[Any] = select(I).where(
    I.conversation_id == bindparam("b_conversation_id"),
    I.model.is_(None) | (I.model != bindparam("b_model")),
    I.text != "",
)

# Parameters: b_id, b_model, b_vector, b_changed_at.
SAVE_VECTOR: Update = (
    update(I)
    .where(I.id == bindparam("b_id"))
    .values(model=_bound("model"), vector=_bound("vector"), changed_at=_bound("changed_at"))
)


@functools.cache
def keep_summary(sqlite: bool) -> Any:
    """The summary item's upsert in the dialect's words. Parameters: b_<column> of SUMMARY_COLUMNS."""
    dialect_insert = sqlite_insert if sqlite else pg_insert
    upsert = dialect_insert(I).values({column: _bound(column) for column in SUMMARY_COLUMNS})
    return upsert.on_conflict_do_update(index_elements=["id"], set_={k: upsert.excluded[k] for k in _CHANGED})


# A turn's recall reads, one of each per shape of holder. Parameters: owner, end_user, scope, model,
# agent_id (of an agent's holder); ids (the items picked); since (from when what changed is read).
@functools.cache
def shared_items(of_agent: bool) -> tuple[ColumnElement[bool], ...]:
    """The holder's items its recall reaches, embedded by the model."""
    where = [I.owner == bindparam("owner"), I.end_user == bindparam("end_user"),
             I.recall_scope == bindparam("scope"), I.model == bindparam("model")]
    if of_agent:
        where.append(I.agent_id == bindparam("agent_id"))
    return tuple(where)


def _of_live_conversations() -> Any:
    c = ConversationRow
    return join(I, c, and_(c.id == I.conversation_id, c.deleted_at.is_(None), c.is_debug.is_(False)))


# An item's text, and what may have changed since a matrix was read: whether recall still reaches it.
_TEXT = (I.id, I.kind, I.conversation_id, I.text, I.source_message_ids, I.recall_scope, I.model)


@functools.cache
def user_matrix(of_agent: bool) -> Select[Any]:
    """The items' vectors beside their version."""
    where = shared_items(of_agent)
    return with_version(where, (I.id, I.conversation_id, I.vector), and_(*where))


@functools.cache
def changed_items(of_agent: bool) -> Select[Any]:
    """The items written at or after `since`, of live conversations, with their vectors and their
    text, beside the version."""
    where = shared_items(of_agent)
    return with_version(where, (*_TEXT, I.vector), and_(*where, I.changed_at >= bindparam("since")),
                        _of_live_conversations())


@functools.cache
def best_items(of_agent: bool, picked: bool) -> Select[Any]:
    """The picked items' text and sources (`ids`), of live conversations only, beside the version; only
    the version when none is picked. With their scope and model, which the caller checks again: a kept
    matrix may hold a row of an item that left (asked here, SQLite would scan the holder's items)."""
    ids = I.id.in_(bindparam("ids", expanding=True)) if picked else None
    return with_version(shared_items(of_agent), _TEXT, ids, _of_live_conversations())
