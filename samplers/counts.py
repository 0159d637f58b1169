"""Turn sampler arrays into per-output counts (outputs as the exact backends key them)."""

from __future__ import annotations

from typing import Any

import numpy as np

from samplers.lang.ir import from_code


def output_counts(samples: np.ndarray) -> dict[Any, int]:
    """Counts of each distinct output of an integer sample array (rows are tuple outputs)."""
    if samples.dtype.kind == "f":
        raise ValueError("counts per output need discrete (integer) samples")
    if samples.ndim == 1:
        vals, counts = np.unique(samples, return_counts=True)
        return {from_code(v): int(c) for v, c in zip(vals, counts)}
    rows, counts = np.unique(samples, axis=0, return_counts=True)
    return {tuple(from_code(v) for v in row): int(c) for row, c in zip(rows, counts)}
