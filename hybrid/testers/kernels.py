"""Numba kernels for the attack's hot loops: column features and linear scores.

They compute, element by element and in the same order, exactly the float64 operations
of the numpy reference code they replace (no fastmath, so no fused multiply-adds), so an
output gets the same features and score in a batch of any size or alone -- which the
exact certification of an exported attack relies on -- in one pass instead of dozens.
They are serial: numba names the functions of parallel (``prange``) loops after an address in
the compiling process, so two cached parallel functions compiled in two processes could share
a name and one run the other's loop (see :mod:`samplers.codegen`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from samplers import numba_cache

numba_cache.ensure()  # a writable cache for the cache=True functions below (read when each is defined)

ONEHOT, NUMERIC = 0, 1


@njit(cache=True)
def column_features(f: np.ndarray, kinds: np.ndarray, starts: np.ndarray, counts: np.ndarray,
                    values: np.ndarray, bottom: np.ndarray, cuts: np.ndarray, width: int) -> np.ndarray:
    """Features of the float matrix ``f`` (NaN for BOTTOM), column by column.

    Column ``j`` lists ``counts[j]`` values from ``values[starts[j]:]``.  One-hot: one
    indicator per value (a NaN value stands for BOTTOM).  Numeric: the value (0 when NaN
    or a listed special code), the indicator ``value > cuts[j]`` unless that cut is NaN,
    one indicator per code, then a NaN indicator if ``bottom``.
    """
    n, d = f.shape
    out = np.zeros((n, width))
    for i in range(n):
        k = 0
        for j in range(d):
            v = f[i, j]
            nan = v != v
            if kinds[j] == ONEHOT:
                for m in range(counts[j]):
                    val = values[starts[j] + m]
                    out[i, k] = 1.0 if (nan if val != val else v == val) else 0.0
                    k += 1
            else:
                special = False
                for m in range(counts[j]):
                    if v == values[starts[j] + m]:
                        special = True
                out[i, k] = 0.0 if (nan or special) else v
                k += 1
                cut = cuts[j]
                if cut == cut:
                    out[i, k] = 1.0 if (not nan and not special and v > cut) else 0.0
                    k += 1
                for m in range(counts[j]):
                    out[i, k] = 1.0 if v == values[starts[j] + m] else 0.0
                    k += 1
                if bottom[j]:
                    out[i, k] = 1.0 if nan else 0.0
                    k += 1
    return out


@njit(cache=True)
def linear_scores(x: np.ndarray, mean: np.ndarray, scale: np.ndarray, w: np.ndarray, b: float) -> np.ndarray:
    """``b + sum_j ((x_j - mean_j) / scale_j) * w_j``, accumulated in column order."""
    n, d = x.shape
    out = np.empty(n)
    for i in range(n):
        acc = b
        for j in range(d):
            acc = acc + ((x[i, j] - mean[j]) / scale[j]) * w[j]
        out[i] = acc
    return out
