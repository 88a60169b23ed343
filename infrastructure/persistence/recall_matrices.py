"""The recall index's vectors of one user, and of one conversation's archive, kept in this process as
one normalised matrix each.

Recall across conversations runs at every turn; reading and stacking a user's thousands of vectors
each time costs more than the rest of recall. So each (user, scope, model, dimension) keeps its
matrix here, rows L2-normalised, with the *version* it was read at: the count of the user's embedded
items and the newest `changed_at` among them, which every write changes (a new vector, a new scope,
an item gone). One matrix per user, for all of its conversations: a turn leaves its own out as it
ranks (`best`). A turn ranks with the matrix it has and reads the version in the query that reads
the best items' text (`latest`); a changed version reads the items written since and puts them in
(`updated`), or, when one left meanwhile, the whole matrix again, so another process's writes are
seen at the next turn (sqlalchemy_recall_index.py says how late commits are caught). A conversation's
own archive (`ArchiveMatrix`) is kept by (conversation, model, dimension), its version the count of its
entries and the newest `changed_at` among them, and read whole when that changed. At most `max_bytes`
of matrices are kept, the least recently used dropped first.
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

if TYPE_CHECKING:
    from collections.abc import Hashable, Sequence

VECTOR = np.dtype("<f4")
MAX_BYTES = 64 * 1024 * 1024
ID_BYTES = 100  # an item id or conversation id as a Python string, about
ENTRY_BYTES = 1024  # the key, the version, the arrays' own objects


def product(rows: np.ndarray, query: np.ndarray) -> np.ndarray:
    """Each row's dot product with the query: one matrix-vector product, on the calling thread.
    A BLAS product this small (a few MiB) would wake the BLAS library's threads, which on a busy
    two-core server cost milliseconds where einsum's own loop costs about 0.1 ms per 1,000 rows."""
    scores: np.ndarray = np.einsum("ij,j->i", rows, query)
    return scores


def normalised(vector: Sequence[float] | np.ndarray) -> np.ndarray:
    array = np.asarray(vector, dtype=VECTOR)
    norm = float(np.linalg.norm(array))
    return array / norm if norm else array


@dataclass(frozen=True, slots=True)
class Matrix:
    version: tuple[Any, ...]
    ids: tuple[str, ...]
    conversations: np.ndarray  # the items' conversation ids (objects), to leave one out at once
    rows: np.ndarray  # float32 (items, dimension), each row of norm 1 (or 0)
    positions: dict[str, int]  # each id's row; never changed once built
    read_at: float  # when it was last read whole (time.monotonic())

    @property
    def cost(self) -> int:
        """Bytes it holds, about: the vectors, the ids (twice: the tuple and the positions), and the entry."""
        return self.rows.nbytes + ID_BYTES * 3 * len(self.ids) + ENTRY_BYTES

    @property
    def size(self) -> int:
        return len(self.ids)

    @classmethod
    def of(cls, version: tuple[Any, ...], found: Sequence[Any], dimension: int, read_at: float = 0.0) -> Matrix:
        """From (id, conversation_id, vector bytes) rows; those of another dimension are left out."""
        kept = [r for r in found if len(r.vector) == dimension * VECTOR.itemsize]
        rows = np.frombuffer(b"".join(r.vector for r in kept), dtype=VECTOR).reshape(len(kept), dimension)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        unit = rows / np.where(norms == 0, 1.0, norms)
        conversations = np.asarray([r.conversation_id for r in kept], dtype=object)
        ids = tuple(r.id for r in kept)
        return cls(version, ids, conversations, unit, {item_id: i for i, item_id in enumerate(ids)}, read_at)

    def updated(self, version: tuple[Any, ...], changed: Sequence[Any], dimension: int) -> Matrix | None:
        """This matrix at `version`, from `changed`, the (id, conversation_id, vector bytes) rows of its
        items written since its own version: each in place of its id's row, or added. None when the
        outcome cannot be this version's (its count is not the count before and the ids added): an
        item left meanwhile, and only a whole read holds what is there; or a changed vector is of
        another dimension (a whole read leaves its item out). One copy of the rows, never a read of
        them: what it costs grows with what changed, and with the user's items only as a memory copy
        does."""
        if any(len(r.vector) != dimension * VECTOR.itemsize for r in changed):
            return None
        if version[0] != self.version[0] + len({r.id for r in changed if r.id not in self.positions}):
            return None
        fresh = Matrix.of(version, changed, dimension)
        added = [j for j, item_id in enumerate(fresh.ids) if item_id not in self.positions]
        rows = np.concatenate([self.rows, fresh.rows[added]])  # new arrays: the kept matrix is left as it was
        conversations = np.concatenate([self.conversations, fresh.conversations[added]])
        replaced = [(self.positions[item_id], j) for j, item_id in enumerate(fresh.ids) if item_id in self.positions]
        if replaced:
            at, of = (list(side) for side in zip(*replaced, strict=True))
            rows[at], conversations[at] = fresh.rows[of], fresh.conversations[of]
        positions = dict(self.positions)
        positions.update((fresh.ids[j], len(self.ids) + k) for k, j in enumerate(added))
        return Matrix(version, self.ids + tuple(fresh.ids[j] for j in added), conversations, rows, positions,
                      self.read_at)

    def best(self, query: np.ndarray, exclude: str | None, count: int) -> list[tuple[str, str, float]]:
        """Up to `count` (id, conversation id, cosine) above 0, best first; `exclude`'s left out."""
        if not self.ids or not query.any():
            return []
        scores = product(self.rows, query)
        if exclude is not None:
            scores = np.where(self.conversations == exclude, -1.0, scores)
        order = np.argsort(-scores, kind="stable")[:count]
        return [(self.ids[i], self.conversations[i], float(scores[i])) for i in order if scores[i] > 0.0]


@dataclass(frozen=True, slots=True)
class ArchiveMatrix:
    """One conversation's archive entries with a vector of one model, newest first, and the ids of
    those without one (to be embedded by the caller until the upkeep has)."""

    version: tuple[Any, ...]
    ids: tuple[str, ...]
    rows: np.ndarray  # float32 (entries, dimension), each row of norm 1 (or 0)
    unembedded: tuple[str, ...]

    @property
    def cost(self) -> int:
        return self.rows.nbytes + ID_BYTES * (len(self.ids) + len(self.unembedded)) + ENTRY_BYTES

    @property
    def size(self) -> int:
        return len(self.ids) + len(self.unembedded)

    @classmethod
    def of(cls, version: tuple[Any, ...], found: Sequence[Any], model: str, dimension: int) -> ArchiveMatrix:
        """From (id, text, model, vector) rows, newest first; entries without text are left out."""
        with_text = [r for r in found if r.text.strip()]
        kept = [r for r in with_text if r.model == model and r.vector is not None
                and len(r.vector) == dimension * VECTOR.itemsize]
        rows = np.frombuffer(b"".join(r.vector for r in kept), dtype=VECTOR).reshape(len(kept), dimension)
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        embedded = {r.id for r in kept}
        unembedded = tuple(r.id for r in with_text if r.id not in embedded)
        return cls(version, tuple(r.id for r in kept), rows / np.where(norms == 0, 1.0, norms), unembedded)

    def best(self, query: np.ndarray, count: int) -> list[tuple[str, float]]:
        """Up to `count` (id, cosine), best first, whatever the score: one matrix product. The
        rows are newest first and the sort is stable, so equal scores go to the newer entry."""
        if not self.ids:
            return []
        scores = product(self.rows, query)
        order = np.argsort(-scores, kind="stable")[:count]
        return [(self.ids[i], float(scores[i])) for i in order]


K = TypeVar("K", Matrix, ArchiveMatrix)


class RecallMatrices:
    def __init__(self, max_bytes: int = MAX_BYTES) -> None:
        self._matrices: OrderedDict[Hashable, Matrix | ArchiveMatrix] = OrderedDict()
        self._bytes = 0
        self._max_bytes = max_bytes

    @property
    def kept(self) -> int:
        """How many matrices are kept."""
        return len(self._matrices)

    def latest(self, key: Hashable, kind: type[K]) -> K | None:
        """The matrix last read for `key`, whatever its version: to rank with at once and check its
        version in the same query that reads the best items, read again only when it changed."""
        matrix = self._matrices.get(key)
        if not isinstance(matrix, kind):
            return None
        self._matrices.move_to_end(key)
        return matrix

    def put(self, key: Hashable, matrix: Matrix | ArchiveMatrix) -> None:
        old = self._matrices.pop(key, None)
        self._bytes -= old.cost if old is not None else 0
        if matrix.cost > self._max_bytes:
            return  # too big to keep
        # An empty one is kept too: a user without items (or an archive without entries) then
        # costs the version alone at the next turn, not the read of the vectors.
        self._matrices[key] = matrix
        self._bytes += matrix.cost
        while self._bytes > self._max_bytes:
            _, dropped = self._matrices.popitem(last=False)
            self._bytes -= dropped.cost
