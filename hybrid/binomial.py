"""Clopper-Pearson confidence bounds for binomial proportions, and the logit."""

from __future__ import annotations

import math

from scipy.stats import beta as beta_dist


def cp_lower(k: int, n: int, alpha: float) -> float:
    """One-sided Clopper-Pearson lower bound: ``P(p >= bound) >= 1 - alpha``."""
    _check(k, n, alpha)
    return 0.0 if k == 0 else float(beta_dist.ppf(alpha, k, n - k + 1))


def cp_upper(k: int, n: int, alpha: float) -> float:
    """One-sided Clopper-Pearson upper bound: ``P(p <= bound) >= 1 - alpha``."""
    _check(k, n, alpha)
    return 1.0 if k == n else float(beta_dist.ppf(1 - alpha, k + 1, n - k))


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
