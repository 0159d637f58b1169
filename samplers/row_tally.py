"""Exact counts of the distinct rows of integer sample blocks, in memory bounded by the distinct rows.

A sampler whose outputs range too widely for a histogram (:mod:`samplers.counts`) is counted
block by block: each block's rows are grouped by their bytes (a sort of the rows viewed as one
opaque key each: two rows share a group only when every value is equal, so different outputs
are never merged), and the groups are merged into a table of distinct rows and their counts.
Groups wait in a list until they outnumber the table, then are merged with it in one sort, so
the merging work is ``O(N log N)`` for ``N`` distinct rows.  Before each merge the memory it
needs is checked (:func:`samplers.memory.check_fits`): a table that cannot fit is refused in
one line, never a ``MemoryError`` halfway.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from samplers.lang.ir import from_code
from samplers.memory import check_fits

MERGE_MIN = 1 << 16  # distinct rows waiting before the first merge
COPIES = 3  # a merge holds the table and the waiting groups, their concatenation, and its sorted copy


def _grouped(rows: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of ``rows`` (in the order of their bytes) and the sum of ``counts`` over each."""
    if not len(rows):
        return rows, counts
    keys = np.ascontiguousarray(rows).view(np.dtype((np.void, rows.dtype.itemsize * rows.shape[1]))).ravel()
    order = np.argsort(keys, kind="stable")
    ordered = keys[order]
    starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
    return rows[order[starts]], np.add.reduceat(counts[order], starts)


class RowTally:
    """Counts of the distinct rows of the ``(k, width)`` int64 blocks given to :meth:`add`."""

    def __init__(self, width: int, what: str, limit: float | None = None) -> None:
        """``what`` names the counting in a refusal; ``limit``: bytes the table may take (default: the
        usable share of the available memory)."""
        self.width, self.what, self.limit = width, what, limit
        self._rows = np.zeros((0, width), dtype=np.int64)
        self._counts = np.zeros(0, dtype=np.int64)
        self._waiting: list[tuple[np.ndarray, np.ndarray]] = []
        self._waiting_rows = 0

    def add(self, block: np.ndarray) -> None:
        """Count the rows of ``block`` (copied: the caller may reuse it)."""
        rows, counts = _grouped(block, np.ones(len(block), dtype=np.int64))
        self._waiting.append((rows, counts))
        self._waiting_rows += len(rows)
        if self._waiting_rows >= max(len(self._rows), MERGE_MIN):
            self._merge()

    def _merge(self) -> None:
        if not self._waiting:
            return
        size = len(self._rows) + self._waiting_rows
        check_fits(COPIES * 8 * (self.width + 2) * size, f"{self.what}: a table of up to {size:,} distinct outputs",
                   "lower -n/--samples or raise --memory", limit=self.limit)
        rows = np.concatenate([self._rows, *(r for r, _ in self._waiting)])
        counts = np.concatenate([self._counts, *(c for _, c in self._waiting)])
        self._waiting, self._waiting_rows = [], 0
        self._rows, self._counts = _grouped(rows, counts)

    def counts(self, rows: bool) -> dict[Any, int]:
        """Every distinct row and its count, in lexicographic order (BOTTOM first), as
        :func:`samplers.counts.output_counts` gives them: tuples when ``rows``, else single values."""
        self._merge()
        order = np.lexsort(self._rows.T[::-1]) if self.width else np.arange(len(self._rows))
        if rows:
            return {tuple(from_code(v) for v in self._rows[i]): int(self._counts[i]) for i in order}
        return {from_code(self._rows[i, 0]): int(self._counts[i]) for i in order}
