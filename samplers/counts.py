"""Turn sampler arrays into per-output counts (outputs as the exact backends key them)."""

from __future__ import annotations

from typing import Any

import numpy as np

from samplers.lang.ir import from_code


def output_counts(samples: np.ndarray) -> dict[Any, int]:
    """Counts of each distinct output of an integer sample array (rows are tuple outputs).

    Rows are grouped with a lexicographic sort (``np.lexsort``), several times faster than
    ``np.unique(axis=0)``, which sorts the rows as opaque byte strings; the outputs come
    in the same (lexicographic) order.
    """
    if samples.dtype.kind == "f":
        raise ValueError("counts per output need discrete (integer) samples")
    if samples.ndim == 1:
        vals, counts = np.unique(samples, return_counts=True)
        return {from_code(v): int(c) for v, c in zip(vals, counts)}
    rows = samples[np.lexsort(samples.T[::-1])] if samples.shape[1] else samples
    starts = np.flatnonzero(np.r_[len(rows) > 0, (rows[1:] != rows[:-1]).any(axis=1)])
    counts = np.diff(np.r_[starts, len(rows)])
    return {tuple(from_code(v) for v in rows[i]): int(c) for i, c in zip(starts, counts)}
