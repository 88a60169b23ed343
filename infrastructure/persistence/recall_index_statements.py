"""The statements of an upkeep's index (`SqlAlchemyRecallIndex.index_conversation`, `save_vectors`),
built once with bound parameters (turn_statements.py says why): each new conversation's upkeep runs
them, on a Core connection.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from sqlalchemy import BindParameter, bindparam, delete, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from infrastructure.persistence.memory_rows import MemoryItemRow

if TYPE_CHECKING:
    from sqlalchemy import Delete, Select, Update

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
