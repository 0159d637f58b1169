"""Clopper-Pearson confidence bounds for binomial proportions, the log-ratio bound, and the logit."""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import beta as beta_dist


def cp_lower(k: int, n: int, alpha: float) -> float:
    """One-sided Clopper-Pearson lower bound: ``P(p >= bound) >= 1 - alpha``."""
    _check(k, n, alpha)
    return 0.0 if k == 0 else float(beta_dist.ppf(alpha, k, n - k + 1))


def cp_upper(k: int, n: int, alpha: float) -> float:
    """One-sided Clopper-Pearson upper bound: ``P(p <= bound) >= 1 - alpha``."""
    _check(k, n, alpha)
    return 1.0 if k == n else float(beta_dist.ppf(1 - alpha, k + 1, n - k))


def log_ratio_lower(kx: np.ndarray | int, nx: int, ky: np.ndarray | int, ny: int, alpha: float) -> np.ndarray:
    """``max(0, ln CP_lower(kx, nx, alpha) - ln CP_upper(ky, ny, alpha))`` for arrays of hit counts.

    With ``kx ~ Bin(nx, p)`` and ``ky ~ Bin(ny, p')`` independent, the bound is at most
    ``ln(p / p')`` with probability at least ``1 - 2 alpha`` (each Clopper-Pearson bound
    fails with probability at most ``alpha``); a bound with no hits under x is 0.
    """
    if not 0 < alpha < 1 or nx < 1 or ny < 1:
        raise ValueError(f"need 0 < alpha < 1 and n >= 1, got alpha={alpha}, nx={nx}, ny={ny}")
    kx, ky = np.asarray(kx, dtype=np.float64), np.asarray(ky, dtype=np.float64)
    if ((kx < 0) | (kx > nx) | (ky < 0) | (ky > ny)).any():
        raise ValueError("hit counts must lie in 0..n")
    with np.errstate(divide="ignore"):
        lo = np.where(kx > 0, beta_dist.ppf(alpha, np.maximum(kx, 1), nx - kx + 1), 0.0)
        hi = np.where(ky < ny, beta_dist.ppf(1 - alpha, ky + 1, np.maximum(ny - ky, 1)), 1.0)
        return np.maximum(0.0, np.log(lo) - np.log(hi))


def logit(q: float) -> float:
    """``ln(q / (1 - q))`` (``inf`` at 1, ``-inf`` at 0)."""
    if q <= 0:
        return -math.inf
    if q >= 1:
        return math.inf
    return math.log(q) - math.log1p(-q)


def _check(k: int, n: int, alpha: float) -> None:
    if not 0 <= k <= n or n < 1:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must lie in (0, 1), got {alpha}")
