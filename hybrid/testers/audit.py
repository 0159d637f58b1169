"""Auditing by guessing games (Steinke, Nasr and Jagielski 2023; Keinan, Shenfeld and Ligett).

Under eps-DP, a guess of a fair coin from the mechanism's output is right with
probability at most ``e^eps / (1 + e^eps)``, and the number of right guesses among r is
stochastically dominated by a binomial, both for r independent runs (the classic
audit) and for r canaries of one run (the one-run audit).  So ``v`` right guesses out
of ``r`` give the lower bound ``eps' = logit(CP_lower(v, r, beta))`` at confidence
``1 - beta`` (0 when that is at most 1/2); no r guesses can certify more than
``logit(beta^(1/r))``.

* :func:`classic_audit`: each run draws a coin, runs M on x or x' and the guesser
  reads the output (by default the score of a DP-Sniper-style attack trained on other
  samples).
* :func:`one_run_audit`: for mechanisms whose input is a vector of individuals'
  records; every canary record is included or not by a fair coin, M runs once, and
  the guesser reads that single output (by default: a canary is guessed included when
  its own output component is nearer the included value).

Guessers may abstain: only the ``guesses`` most confident runs or canaries are
guessed, ties broken at random.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from hybrid.testers.binomial import cp_lower, logit
from hybrid.testers.events import numeric
from hybrid.inputs import Pair
from hybrid.seeds import derive_seed
from samplers.errors import DomainError, ParameterError
from samplers.memory import check_fits

AUDIT_BYTES_PER_RUN = 40  # a coin, a uniform, an output, a score and a truth per run (lower bound)


def audit_bound(v: int, r: int, beta: float = 0.05) -> float:
    """``max(0, logit(CP_lower(v, r, beta)))``: the eps lower bound of v right guesses out of r."""
    if r == 0:
        return 0.0
    return max(0.0, logit(cp_lower(v, r, beta)))


def max_certifiable(r: int, beta: float = 0.05) -> float:
    """The largest bound any r guesses can give: ``logit(beta^(1/r))``."""
    return logit(beta ** (1.0 / r))


@dataclass
class AuditResult:
    eps_lower: float
    correct: int
    guesses: int
    beta: float
    kind: str  # "classic" or "one-run"
    max_certifiable: float
    detail: dict[str, Any] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def confidence(self) -> float:
        return 1 - self.beta


def _guess(scores: np.ndarray, truth: np.ndarray, k: int, rng: np.random.Generator) -> int:
    """Right guesses among the ``k`` most confident (``sign(score)``; ties and zeros by coin)."""
    order = np.lexsort((rng.random(len(scores)), -np.abs(scores)))  # random order among equals
    pick = order[:k]
    s = scores[pick]
    guess = np.where(s > 0, True, np.where(s < 0, False, rng.random(len(pick)) < 0.5))
    return int((guess == truth[pick]).sum())


def _checked_guesses(guesses: int | None, r: int) -> int:
    k = r if guesses is None else int(guesses)
    if not 1 <= k <= r:
        raise ParameterError(f"the number of guesses must lie in 1..{r}, got {guesses}")
    return k


def classic_audit(
    sampler: Any,
    pair: Pair,
    guesser: Callable[[np.ndarray], np.ndarray],
    *,
    runs: int = 100_000,
    guesses: int | None = None,
    beta: float = 0.05,
    seed: int = 0,
) -> AuditResult:
    """``runs`` independent runs on a coin-chosen input; ``guesser(outputs)`` scores them.

    A score above 0 guesses x, below 0 guesses x' (centre the guesser accordingly);
    only the ``guesses`` largest ``|score|`` are guessed (default: all runs).
    """
    if runs < 1:
        raise ParameterError(f"runs must be positive, got {runs}")
    k = _checked_guesses(guesses, runs)
    check_fits(runs * AUDIT_BYTES_PER_RUN, f"{runs:,} audit runs", "lower --samples")
    rng = np.random.default_rng(derive_seed(seed, 11))
    t0 = time.perf_counter()
    coins = rng.random(runs) < 0.5
    n1 = int(coins.sum())
    out_x = sampler.sample(pair.x, n1, derive_seed(seed, 12))
    out_y = sampler.sample(pair.x_prime, runs - n1, derive_seed(seed, 13))
    scores = np.concatenate([np.asarray(guesser(out_x), float), np.asarray(guesser(out_y), float)])
    truth = np.concatenate([np.ones(n1, bool), np.zeros(runs - n1, bool)])
    v = _guess(scores, truth, k, rng)
    return AuditResult(audit_bound(v, k, beta), v, k, beta, "classic", max_certifiable(k, beta),
                       {"x": list(pair.x), "x_prime": list(pair.x_prime), "runs": runs, "seed": seed},
                       {"audit": time.perf_counter() - t0})


def componentwise_guesser(included: int, excluded: int) -> Callable[[Any, Sequence[int]], np.ndarray]:
    """Score canary i by how much nearer output component i is to ``included`` than to ``excluded``."""
    mid, sign = (included + excluded) / 2, (1.0 if included > excluded else -1.0)

    def guess(output: Any, canaries: Sequence[int]) -> np.ndarray:
        o = numeric(np.asarray(output).reshape(-1))
        vals = o[np.asarray(canaries)]
        return np.where(np.isnan(vals), 0.0, sign * (vals - mid))

    return guess


def one_run_audit(
    sampler: Any,
    *,
    canaries: Sequence[int] | None = None,
    included: int | None = None,
    excluded: int | None = None,
    guesser: Callable[[Any, Sequence[int]], np.ndarray] | None = None,
    guesses: int | None = None,
    beta: float = 0.05,
    seed: int = 0,
) -> AuditResult:
    """One run of M on a random canary database; the guesser reads that one output.

    Coordinates are individuals' records.  Canary i holds ``included`` (default: the
    domain's top value) or ``excluded`` (default: its bottom value) by a fair coin;
    other coordinates hold ``excluded``.  Including one canary must give a neighbour
    input, which is checked.
    """
    domain, nb = sampler.domain, sampler.neighbours
    idx = list(range(domain.size)) if canaries is None else [int(i) for i in canaries]
    if not idx or any(not 0 <= i < domain.size for i in idx) or len(set(idx)) != len(idx):
        raise ParameterError(f"canaries must be distinct coordinates in 0..{domain.size - 1}")
    inc = domain.hi[idx[0]] if included is None else int(included)
    exc = domain.lo[idx[0]] if excluded is None else int(excluded)
    base = [exc if excluded is not None else domain.lo[i] for i in range(domain.size)]
    probe = list(base)
    probe[idx[0]] = inc
    domain.check(probe)
    if not nb.contains(tuple(base), tuple(probe)):
        raise DomainError(f"including one canary ({exc} -> {inc}) does not give a {nb.name} neighbour")
    k = _checked_guesses(guesses, len(idx))
    rng = np.random.default_rng(derive_seed(seed, 21))
    coins = rng.random(len(idx)) < 0.5
    x = list(base)
    for i, c in zip(idx, coins):
        x[i] = inc if c else exc
    t0 = time.perf_counter()
    output = sampler.sample(tuple(x), 1, derive_seed(seed, 22))[0]
    guess = guesser or componentwise_guesser(inc, exc)
    scores = np.asarray(guess(output, idx), dtype=float)
    if scores.shape != (len(idx),):
        raise ParameterError(f"the guesser must give one score per canary ({len(idx)}), got shape {scores.shape}")
    v = _guess(scores, coins, k, rng)
    return AuditResult(audit_bound(v, k, beta), v, k, beta, "one-run", max_certifiable(k, beta),
                       {"canaries": len(idx), "included": inc, "excluded": exc, "seed": seed},
                       {"audit": time.perf_counter() - t0})

