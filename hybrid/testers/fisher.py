"""StatDP's hypothesis test: one-sided Fisher exact test with binomial thinning, vectorised.

H0: ``P(M(x) in E) <= e^eps P(M(x') in E)``.  With ``cx`` hits among ``n_x`` runs on
x and ``cy`` among ``n_y`` on x', thin ``cx`` by ``e^-eps`` (under H0 the thinned
success probability is at most x''s) and compute Fisher's one-sided p-value
``P[H >= cx']`` for ``H ~ Hypergeometric(n_x + n_y, n_x, cx' + cy)``; the p-value is the
average over thinning draws (Ding et al. 2018).  The thinning is an inverse-CDF draw
from fixed uniforms, so for one set of uniforms the p-value grows with eps (a larger
eps thins more), which keeps bisections on eps consistent.  Every event of a batch is
tested at once with ``scipy.stats`` on arrays.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import binom, hypergeom

DRAWS = 200  # thinning draws per test (StatDP's value)


def thinning_uniforms(seed: int, draws: int = DRAWS) -> np.ndarray:
    """The fixed uniforms behind the thinning draws (one column)."""
    u = np.random.default_rng([seed, 0x7E57]).random(draws)
    return np.clip(u, 1e-12, 1 - 1e-12)[:, None]


def stratified_uniforms(draws: int = 25) -> np.ndarray:
    """Evenly spread uniforms: a cheap, deterministic average over thinning (for selection)."""
    return ((np.arange(draws) + 0.5) / draws)[:, None]


def thinned_pvalues(
    cx: np.ndarray | int,
    cy: np.ndarray | int,
    n_x: int,
    n_y: int,
    eps: float,
    uniforms: np.ndarray,
) -> np.ndarray:
    """The thinned Fisher p-value of every event (arrays ``cx``, ``cy`` of equal shape)."""
    cx = np.atleast_1d(np.asarray(cx, dtype=np.int64))
    cy = np.atleast_1d(np.asarray(cy, dtype=np.int64))
    if eps == math.inf:
        return np.ones(cx.shape)
    keep = math.exp(-eps)
    thinned = binom.ppf(uniforms, cx[None, :], keep)  # (draws, events), monotone in eps
    # Fisher p-values of distinct (cx', cy) only: thinning repeats values a lot.
    pairs = np.stack([thinned.ravel(), np.broadcast_to(cy, thinned.shape).ravel()])
    uniq, inverse = np.unique(pairs, axis=1, return_inverse=True)
    p = _fisher_tails(uniq[0], uniq[1], n_x, n_y)
    return p[inverse.ravel()].reshape(thinned.shape).mean(axis=0)


_TAILS: dict[tuple[float, float, int, int], float] = {}  # (cx', cy, n_x, n_y) -> Fisher's one-sided p-value
MAX_TAILS = 1 << 18  # remembered tails (about 40 MB); forgotten all at once beyond


def _fisher_tails(k: np.ndarray, c: np.ndarray, n_x: int, n_y: int) -> np.ndarray:
    """``P[H >= k]`` for ``H ~ Hypergeometric(n_x + n_y, n_x, k + c)``, elementwise.  A tail costs tens
    of microseconds and a search asks the same ones again and again (bisection steps on eps, events
    with equal counts), so each is computed once; the value is scipy's, whichever call asks first."""
    keys = list(zip(k.tolist(), c.tolist()))
    missing = [i for i, (a, b) in enumerate(keys) if (a, b, n_x, n_y) not in _TAILS]
    if missing:
        if len(_TAILS) + len(missing) > MAX_TAILS:  # forget every tail, this call's too: all are computed
            _TAILS.clear()
            missing = list(range(len(keys)))
        km, cm = k[missing], c[missing]
        for i, v in zip(missing, hypergeom.sf(km - 1, n_x + n_y, n_x, km + cm).tolist()):
            _TAILS[keys[i] + (n_x, n_y)] = v
    return np.array([_TAILS[key + (n_x, n_y)] for key in keys], dtype=float)


def approximate_z(cx: np.ndarray, cy: np.ndarray, n_x: int, n_y: int, eps: float) -> np.ndarray:
    """A normal approximation of the thinned test's evidence (larger is stronger), for screening.

    Exact thinned p-values cost a hypergeometric tail per draw; ranking thousands of
    candidate events by this z and computing exact p-values for the best few picks the
    same event without that cost.
    """
    keep = math.exp(-min(eps, 700.0))
    a = cx * keep
    k = a + cy
    n = n_x + n_y
    mean = k * n_x / n
    var = k * (n_x / n) * (n_y / n) * np.maximum(n - k, 0) / max(n - 1, 1) + cx * keep * (1 - keep)
    return (a - mean) / np.sqrt(np.maximum(var, 1e-12))


def thinned_pvalue(cx: int, cy: int, n_x: int, n_y: int, eps: float, seed: int = 0) -> float:
    """The p-value of one event (StatDP's ``test_statistics``)."""
    return float(thinned_pvalues(cx, cy, n_x, n_y, eps, thinning_uniforms(seed))[0])
