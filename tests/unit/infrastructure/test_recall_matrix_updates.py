"""A user's kept recall matrix takes the items written since its version in place: a changed vector
replaces its row, a new item is added, and an item gone meanwhile, or a vector of another dimension,
makes it unusable (None: read it whole), so recall never ranks with rows the user's items no longer
hold."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from infrastructure.persistence.recall_matrices import VECTOR, Matrix


class Row(NamedTuple):
    id: str
    conversation_id: str
    vector: bytes


def row(item_id: str, conversation_id: str, *vector: float) -> Row:
    return Row(item_id, conversation_id, np.asarray(vector, dtype=VECTOR).tobytes())


KEPT = Matrix.of((2, "t1"), [row("a", "c1", 1.0, 0.0), row("b", "c2", 0.0, 1.0)], 2, read_at=1.0)


def test_a_new_item_is_added_and_a_changed_one_replaces_its_row() -> None:
    updated = KEPT.updated((3, "t2"), [row("b", "c2", 1.0, 0.0), row("c", "c3", 0.6, 0.8)], 2)
    assert updated is not None
    assert updated.version == (3, "t2")
    assert updated.read_at == 1.0, "still when it was last read whole"
    assert updated.ids == ("a", "b", "c")
    assert list(updated.conversations) == ["c1", "c2", "c3"]
    assert [item for item, _, _ in updated.best(np.asarray([1.0, 0.0], dtype=VECTOR), None, 3)] == ["a", "b", "c"]
    assert KEPT.ids == ("a", "b"), "the kept matrix itself is left as it was"
    assert KEPT.rows[1].tolist() == [0.0, 1.0]


def test_an_item_gone_meanwhile_makes_the_update_unusable() -> None:
    assert KEPT.updated((2, "t2"), [row("c", "c3", 1.0, 0.0)], 2) is None  # one came, one went: count 2, not 3
    assert KEPT.updated((1, "t2"), [], 2) is None


def test_the_turns_own_conversation_is_left_out_as_it_ranks() -> None:
    updated = KEPT.updated((2, "t1"), [], 2)
    assert updated is not None
    assert [item for item, _, _ in updated.best(np.asarray([1.0, 1.0], dtype=VECTOR), "c1", 3)] == ["b"]


def test_a_changed_vector_of_another_dimension_makes_the_update_unusable() -> None:
    assert KEPT.updated((2, "t2"), [row("a", "c1", 1.0, 0.0, 0.0)], 2) is None  # a whole read leaves it out
