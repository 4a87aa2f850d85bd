"""An in-memory copy of one model's vectors, with the metadata the read predicate needs.

The vector arm must score *exactly* every judgment the caller may see — the
predicate first, then top-K — so the cache keeps, per row, the status, kind,
validity interval and scope bindings beside the vector, and evaluates the
predicate in numpy before the matrix product. It holds every judgment of the
store (those still lacking a vector for this model too, flagged), is loaded
from the ``embeddings`` table at open and is kept current from the writer's
change-sets: added ids are read with their vectors, status changes re-read the
row, purged rows lose their vector.

Rows live in growable arrays (capacity doubles), so appending one judgment is
O(dim), not O(n). A lock guards updates; a search holds it only to evaluate
the predicate and take views, and scores outside it, so the writer's change-set
callback never waits for a matrix product. A row changed meanwhile (a status
change, a purge zeroing its vector) is caught by recall's final SQL re-check.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from mama_core.clock import to_epoch_us
from mama_core.model import KINDS, STATUSES, ChangeSet
from mama_core.recall.predicate import Predicate
from mama_core.scopes.bindings import scope_sets
from mama_core.store.connection import Connection

_STATUS_CODE = {name: i for i, name in enumerate(STATUSES)}
_KIND_CODE = {name: i for i, name in enumerate(KINDS)}
_FOREVER = np.iinfo(np.int64).max
# Above this share of rows passing the predicate, one product over the whole
# matrix is cheaper than gathering the passing rows first.
_FULL_PRODUCT_SHARE = 0.5
_F16_CHUNK_ROWS = 16_384


@dataclass(frozen=True)
class VectorMatch:
    """One row of the vector arm: judgment id, cosine score, rank from 1."""

    id: int
    score: float
    rank: int


@dataclass(frozen=True)
class RowMask:
    """A predicate evaluated over the cache: a boolean per row and the id -> row map.

    ``admits(ids)`` says, per judgment id, whether it passes (True/False), or
    that the cache does not know it yet (a row newer than the cache's last
    change-set): those the caller must check another way.
    """

    mask: np.ndarray
    row_by_id: np.ndarray

    def admits(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(passes, unknown)``: two boolean arrays aligned with ``ids``."""
        rows = np.full(ids.shape, -1, dtype=np.int64)
        inside = (ids >= 0) & (ids < self.row_by_id.size)
        rows[inside] = self.row_by_id[ids[inside]]
        known = (rows >= 0) & (rows < self.mask.size)
        passes = np.zeros(ids.shape, dtype=np.bool_)
        passes[known] = self.mask[rows[known]]
        return passes, ~known


class _Growable:
    """A 1-d or 2-d numpy array that grows along axis 0 by doubling."""

    def __init__(self, dtype: Any, width: int | None = None, capacity: int = 16) -> None:
        shape = (capacity,) if width is None else (capacity, width)
        self.data = np.zeros(shape, dtype=dtype)
        self.size = 0

    def reserve(self, n: int) -> None:
        if n <= self.data.shape[0]:
            return
        capacity = max(n, 2 * self.data.shape[0])
        grown = np.zeros((capacity, *self.data.shape[1:]), dtype=self.data.dtype)
        grown[: self.size] = self.data[: self.size]
        self.data = grown

    def append(self, values: Any) -> None:
        values = np.asarray(values, dtype=self.data.dtype)
        n = values.shape[0]
        self.reserve(self.size + n)
        self.data[self.size : self.size + n] = values
        self.size += n

    @property
    def view(self) -> np.ndarray:
        return self.data[: self.size]

    @property
    def nbytes(self) -> int:
        return int(self.data.nbytes)


def ids_from(value: Any) -> list[int]:
    """Judgment ids from a change-set field: a collection of ids or a mapping keyed by id."""
    if value is None:
        return []
    if isinstance(value, dict):
        return [int(k) for k in value]  # pyright: ignore[reportUnknownVariableType, reportUnknownArgumentType]
    out: list[int] = []
    for item in cast(Iterable[Any], value):
        # (id, status) pairs or bare ids
        out.append(int(cast(Any, item)[0] if isinstance(item, tuple | list) else item))
    return out


class VectorCache:
    """Vectors of one ``model_id`` plus per-row predicate metadata, searchable exactly."""

    def __init__(self, model_id: str, dim: int, *, dtype: Any = np.float32) -> None:
        if np.dtype(dtype) not in (np.dtype(np.float32), np.dtype(np.float16)):
            raise ValueError("the vector cache holds float32 or float16")
        self.model_id = model_id
        self.dim = int(dim)
        self.dtype = np.dtype(dtype)
        self._lock = threading.RLock()
        self._reset()

    def _reset(self) -> None:
        self._ids = _Growable(np.int64)
        self._status = _Growable(np.int8)
        self._kind = _Growable(np.int8)
        self._valid_from = _Growable(np.int64)
        self._valid_until = _Growable(np.int64)
        self._has_vector = _Growable(np.bool_)
        self._matrix = _Growable(self.dtype, self.dim)
        self._row_by_id = _Growable(np.int64)  # judgment id -> row, -1 where absent
        self._scope_rows: dict[str, _Growable] = {}
        self._scopes_of: dict[int, frozenset[str]] = {}
        # (kind code, scope set) -> rows: a save's neighbourhood, for restatements
        self._places: dict[tuple[int, frozenset[str]], _Growable] = {}
        self._max_id = 0

    # --- loading and updating -------------------------------------------------

    @classmethod
    def load(
        cls, conn: Connection, model_id: str, dim: int, *, dtype: Any = np.float32
    ) -> VectorCache:
        """Every judgment of the store, with its ``model_id`` vector where there is one."""
        cache = cls(model_id, dim, dtype=dtype)
        cache.reload(conn)
        return cache

    def reload(self, conn: Connection) -> None:
        """Drop everything and read the whole store again."""
        with self._lock:
            self._reset()
            self._read_rows(conn, None)

    def refresh(self, conn: Connection, ids: Iterable[int]) -> None:
        """Re-read these judgments (new, changed status, purged) from the store."""
        wanted = sorted(set(int(i) for i in ids))
        if not wanted:
            return
        with self._lock:
            for start in range(0, len(wanted), 500):
                self._read_rows(conn, wanted[start : start + 500])

    def apply_changeset(self, conn: Connection, changes: ChangeSet) -> None:
        """Bring the cache up to date with one committed change-set of the writer."""
        ids = [
            *ids_from(getattr(changes, "added", None)),
            *ids_from(getattr(changes, "status_changed", None)),
            *ids_from(getattr(changes, "purged", None)),
        ]
        self.refresh(conn, ids)

    def _read_rows(self, conn: Connection, ids: list[int] | None) -> None:
        where, params = "", list[object]([self.model_id])
        if ids is not None:
            where = f"WHERE j.id IN ({', '.join('?' * len(ids))})"
            params.extend(ids)
        rows = conn.execute(
            "SELECT j.id, j.status, j.kind, j.valid_from, j.valid_until, e.dim, e.vector "
            "FROM judgments AS j LEFT JOIN embeddings AS e "
            "ON e.judgment_id = j.id AND e.model_id = ? "
            f"{where} ORDER BY j.id",
            params,
        ).fetchall()
        scopes = scope_sets(conn, ids)
        for row in rows:
            self._upsert(row, scopes.get(int(row[0]), frozenset()))

    def _upsert(self, row: Any, scopes: frozenset[str]) -> None:
        jid, status, kind, valid_from, valid_until, dim, blob = row
        jid = int(jid)
        vector = None
        if blob is not None and status != "purged":
            if int(dim) != self.dim:
                raise ValueError(
                    f"judgment {jid} has a {dim}-d vector for {self.model_id}, expected {self.dim}"
                )
            vector = np.frombuffer(blob, dtype="<f4", count=self.dim)
        until = _FOREVER if valid_until is None else to_epoch_us(valid_until)
        meta = (
            _STATUS_CODE[status],
            _KIND_CODE[kind],
            to_epoch_us(valid_from),
            until,
            vector is not None,
        )
        self._max_id = max(self._max_id, jid)
        row_index = self._row_index(jid)
        if row_index < 0:
            row_index = self._ids.size
            self._set_row_index(jid, row_index)
            self._ids.append([jid])
            self._status.append([meta[0]])
            self._kind.append([meta[1]])
            self._valid_from.append([meta[2]])
            self._valid_until.append([meta[3]])
            self._has_vector.append([meta[4]])
            self._matrix.append(
                np.zeros((1, self.dim), dtype=self.dtype) if vector is None else vector[None, :]
            )
        else:
            self._status.data[row_index] = meta[0]
            self._kind.data[row_index] = meta[1]
            self._valid_from.data[row_index] = meta[2]
            self._valid_until.data[row_index] = meta[3]
            self._has_vector.data[row_index] = meta[4]
            self._matrix.data[row_index] = 0 if vector is None else vector
        self._bind_scopes(jid, row_index, scopes)

    def _row_index(self, jid: int) -> int:
        if 0 <= jid < self._row_by_id.size:
            return int(self._row_by_id.data[jid])
        return -1

    def _set_row_index(self, jid: int, row_index: int) -> None:
        if jid >= self._row_by_id.size:
            grow = jid + 1 - self._row_by_id.size
            self._row_by_id.append(np.full(grow, -1, dtype=np.int64))
        self._row_by_id.data[jid] = row_index

    def _bind_scopes(self, jid: int, row_index: int, scopes: frozenset[str]) -> None:
        old = self._scopes_of.get(jid, frozenset())
        if old == scopes:
            return
        for name in old - scopes:  # bindings never change in practice; stay correct anyway
            rows = self._scope_rows[name]
            kept = rows.view[rows.view != row_index]
            rows.size = 0
            rows.append(kept)
        for name in scopes - old:
            self._scope_rows.setdefault(name, _Growable(np.int64)).append([row_index])
        kind = int(self._kind.data[row_index])
        if old:
            place = self._places[(kind, old)]
            kept = place.view[place.view != row_index]
            place.size = 0
            place.append(kept)
        if scopes:
            self._places.setdefault((kind, scopes), _Growable(np.int64)).append([row_index])
        self._scopes_of[jid] = scopes

    # --- reading --------------------------------------------------------------

    def __len__(self) -> int:
        return self._ids.size

    @property
    def vector_count(self) -> int:
        """Rows that have a vector for this model."""
        with self._lock:
            return int(np.count_nonzero(self._has_vector.view))

    @property
    def nbytes(self) -> int:
        """Bytes held by the arrays (allocated capacity), for ``mama doctor``."""
        with self._lock:
            arrays = [
                self._ids,
                self._status,
                self._kind,
                self._valid_from,
                self._valid_until,
                self._has_vector,
                self._matrix,
                *self._scope_rows.values(),
            ]
            return sum(a.nbytes for a in arrays)

    def episode_neighbours(self, ids: Iterable[int], width: int) -> list[tuple[int, int]]:
        """``(id, neighbour)`` pairs: judgments within ``width`` ids of each id that share
        its event time (``valid_from``), i.e. saved next to it from the same episode.

        The predicate is not applied here: the caller checks neighbours against its mask.
        """
        pairs: list[tuple[int, int]] = []
        with self._lock:
            for jid in ids:
                row = self._row_index(int(jid))
                if row < 0:
                    continue
                when = self._valid_from.data[row]
                for step in (-1, 1):
                    for offset in range(1, width + 1):
                        other = self._row_index(int(jid) + step * offset)
                        if other < 0 or self._valid_from.data[other] != when:
                            break
                        pairs.append((int(jid), int(jid) + step * offset))
        return pairs

    def matrix(self) -> tuple[np.ndarray, np.ndarray]:
        """Read-only views of the ids and the vector rows, in cache order.

        For diagnostics and benchmarks (the bare numpy floor runs over this very
        matrix); rows without a vector are zero.
        """
        with self._lock:
            ids, rows = self._ids.view, self._matrix.view
        ids.flags.writeable = False
        rows.flags.writeable = False
        return ids, rows

    def missing_vectors(self) -> list[int]:
        """Judgments (not purged) with no vector for this model, oldest first."""
        with self._lock:
            lacking = ~self._has_vector.view & (self._status.view != _STATUS_CODE["purged"])
            return [int(i) for i in self._ids.view[lacking]]

    def predicate_mask(self, predicate: Predicate) -> RowMask:
        """Which rows pass ``predicate`` (vectors or not), with the id -> row map to read it.

        The lexical arms use it to keep only visible FTS matches without reading
        each matched row from the (encrypted, wide) judgments table.
        """
        with self._lock:
            # An id's row never changes once set, so a view of the map stays true.
            return RowMask(self._predicate_mask(predicate), self._row_by_id.view)

    def _predicate_mask(self, predicate: Predicate) -> np.ndarray:
        n = self._ids.size
        if predicate.selects_nothing or n == 0:
            return np.zeros(n, dtype=np.bool_)
        allowed = np.zeros(len(STATUSES), dtype=np.bool_)
        allowed[[_STATUS_CODE[s] for s in predicate.statuses]] = True
        mask = allowed[self._status.view]
        if predicate.kinds is not None:
            kinds = np.zeros(len(KINDS), dtype=np.bool_)
            kinds[[_KIND_CODE[k] for k in predicate.kinds]] = True
            mask &= kinds[self._kind.view]
        if predicate.valid_at is not None:
            at = to_epoch_us(predicate.valid_at)
            mask &= (self._valid_from.view <= at) & (self._valid_until.view > at)
        in_scope = np.zeros(n, dtype=np.bool_)
        for name in predicate.scopes:
            rows = self._scope_rows.get(name)
            if rows is not None:
                in_scope[rows.view] = True
        mask &= in_scope
        return mask

    def search(
        self, vector: np.ndarray, predicate: Predicate, k: int, *, rows: RowMask | None = None
    ) -> list[VectorMatch]:
        """The ``k`` best rows by cosine among *all* rows passing ``predicate``.

        ``rows`` is this predicate's mask if the caller already computed it (rows
        added since are left out, as if the search had started then). Ties are
        broken by the higher (newer) id, so equal scores rank the same way on
        every run.
        """
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if query.shape[0] != self.dim:
            raise ValueError(f"query vector has {query.shape[0]} dimensions, expected {self.dim}")
        with self._lock:
            # Views, not copies: rows are only appended (a grown buffer leaves these
            # views on the old one) or changed in place by a status change.
            passing = self._predicate_mask(predicate) if rows is None else rows.mask
            n = min(passing.size, self._ids.size)
            mask = passing[:n] & self._has_vector.view[:n]
            matrix, all_ids = self._matrix.view[:n], self._ids.view[:n]
        if k <= 0 or not mask.any():
            return []
        if mask.all():
            return top_k(all_ids, matvec(matrix, query), k)
        candidates = np.flatnonzero(mask)
        if candidates.size >= _FULL_PRODUCT_SHARE * n:
            scores = matvec(matrix, query)[candidates]
        else:
            scores = matvec(matrix[candidates], query)
        return top_k(all_ids[candidates], scores, k)

    def close_rows(
        self,
        vector: np.ndarray,
        kind: str,
        scopes: frozenset[str],
        floor: float,
        scan_up_to: int,
        among: Iterable[int] | None = None,
    ) -> tuple[list[int] | None, int]:
        """``(ids, known_up_to)``: the judgments of ``kind`` bound to exactly ``scopes``
        (a save's neighbourhood), not purged, whose vector's cosine with ``vector`` is at
        least ``floor`` (any status: the caller re-reads each from the store); and the
        highest judgment id this cache has read, past which it knows nothing.

        The whole neighbourhood is scored when it holds at most ``scan_up_to`` rows;
        otherwise only its rows among ``among`` (ids found another way), and with no
        ``among`` ``ids`` is None: too many to score, ask again with some. A save's
        restatement check asks this instead of reading its neighbourhood's rows."""
        query = np.asarray(vector, dtype=np.float32).reshape(-1)
        if query.shape[0] != self.dim:
            raise ValueError(f"vector has {query.shape[0]} dimensions, expected {self.dim}")
        with self._lock:
            known = self._max_id
            place = self._places.get((_KIND_CODE.get(kind, -1), scopes))
            if place is None:
                return [], known
            rows = place.view
            if rows.size > scan_up_to:
                if among is None:
                    return None, known
                wanted = np.fromiter((int(i) for i in among), dtype=np.int64)
                inside = wanted[(wanted >= 0) & (wanted < self._row_by_id.size)]
                mapped = self._row_by_id.data[inside]
                rows = np.intersect1d(rows, mapped[mapped >= 0])
            rows = rows[
                self._has_vector.view[rows] & (self._status.view[rows] != _STATUS_CODE["purged"])
            ]
            vectors = self._matrix.view[rows]  # a copy of at most scan_up_to rows
            ids = self._ids.view[rows]
        if ids.size == 0:
            return [], known
        scores = matvec(vectors, query)
        return [int(i) for i in ids[scores >= floor]], known

    def mask(self, predicate: Predicate) -> np.ndarray:
        """Boolean per row: passes the predicate and has a vector."""
        with self._lock:
            return self._predicate_mask(predicate) & self._has_vector.view


def matvec(matrix: np.ndarray, query: np.ndarray) -> np.ndarray:
    """``matrix @ query`` in float32, on this thread.

    ``einsum`` runs numpy's own SIMD loop instead of BLAS: on a small machine
    that is busy (the agent, the embedder), a multi-threaded BLAS matrix-vector
    product stalls waiting for its worker threads, measured here at 10-25 ms
    for 10k rows instead of 0.3 ms. float16 rows (no SIMD loop for half
    precision) are widened a block at a time, bounding the extra memory.
    """
    if matrix.dtype == np.float32:
        return np.einsum("ij,j->i", matrix, query)
    out = np.empty(matrix.shape[0], dtype=np.float32)
    for start in range(0, matrix.shape[0], _F16_CHUNK_ROWS):
        block = matrix[start : start + _F16_CHUNK_ROWS].astype(np.float32)
        out[start : start + block.shape[0]] = np.einsum("ij,j->i", block, query)
    return out


def top_k(ids: np.ndarray, scores: np.ndarray, k: int) -> list[VectorMatch]:
    """The ``k`` highest scores, ties by higher id, as ranked matches."""
    if ids.size == 0 or k <= 0:
        return []
    if ids.size > k:
        # Keep every row tied with the k-th score, so the tie-break sees them all.
        kth = np.partition(scores, ids.size - k)[ids.size - k]
        keep = np.flatnonzero(scores >= kth)
        ids, scores = ids[keep], scores[keep]
    order = np.lexsort((-ids, -scores))[:k]
    return [
        VectorMatch(int(ids[i]), float(scores[i]), rank) for rank, i in enumerate(order, start=1)
    ]
