"""StatDP-style testing (Ding et al. 2018), re-implemented on batched samplers.

For each candidate input pair, a first batch of samples from both inputs selects an
event: every candidate event of every feature (:mod:`hybrid.testers.features`) is counted at
once, rare events are excluded as StatDP does, a normal approximation ranks the rest
and the best :data:`SCREEN` get the exact thinned Fisher p-value; a fresh batch then tests
H0: ``P(M(x) in E) <= e^eps P(M(x') in E)`` for the selected pair and event.  A small
p-value is statistical evidence that the mechanism is not eps-DP.  The direction of
each event is the one its first-batch counts favour (StatDP's swap), so a candidate is
always stated with x in the numerator.

:class:`StatDPTester` keeps both batches per pair, so a p-value-versus-eps scan and the
bisection that brackets eps (largest rejected, smallest not rejected) sample only once.
Everything is seeded.

The bisection's ends are not a confidence interval: each probe is its own test with
its own event, and the smallest eps not rejected says nothing about eps from above.
What testing alone can state is :meth:`StatDPTester.lower_bound`: a one-sided lower
confidence bound, valid at the stated confidence, from an event chosen on the
selection batch and counted on a fresh batch it never saw.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from hybrid.testers.binomial import log_ratio_lower
from hybrid.testers.events import Candidates, Event, feature_candidates, product_candidates
from hybrid.testers.features import Feature, default_features
from hybrid.testers.fisher import approximate_z, stratified_uniforms, thinned_pvalues, thinning_uniforms
from hybrid.inputs import Pair, pattern_pairs
from hybrid.seeds import derive_seed
from hybrid.timing import sample_timed
from samplers import deadline
from samplers.deadline import TimeLimitReached
from samplers.errors import ParameterError
from samplers.seed import check_seed
from samplers.memory import check_fits

Progress = Callable[[str], None]
TOP_BY_BOUND = 2  # candidates of the lower bound with the best selection-batch bound ...
SELECTION_GRID = tuple(0.01 * 2**k for k in range(12))  # ... and StatDP's pick at each of these eps
RARE = 0.001  # StatDP: an event needs cx + cy > RARE * n * e^eps hits on the first batch
SCREEN = 64  # events whose exact first-batch p-value is computed


@dataclass
class Detection:
    """The outcome of one test at one eps: the p-value, the pair and the event."""

    eps: float
    p_value: float
    pair: Pair
    event: Event
    counts: tuple[int, int]  # hits on the fresh batch: (under x, under x')
    n: int  # fresh samples per input
    selection_p: float  # the event's p-value on the first batch

    def to_json(self) -> dict[str, Any]:
        return {"eps": self.eps, "p_value": self.p_value, "x": list(self.pair.x),
                "x_prime": list(self.pair.x_prime), "event": self.event.to_json(),
                "event_description": self.event.describe(), "counts": list(self.counts),
                "samples": self.n, "selection_p_value": self.selection_p}


@dataclass
class LowerBound:
    """``eps >= eps_lower`` with confidence ``confidence``, and the evidence for it."""

    eps_lower: float
    confidence: float
    pair: Pair  # x in the numerator
    event: Event
    counts: tuple[int, int]  # hits on the fresh batches: (under x, under x')
    n: int  # fresh samples per input

    def to_json(self) -> dict[str, Any]:
        return {"eps_lower": self.eps_lower, "confidence": self.confidence, "x": list(self.pair.x),
                "x_prime": list(self.pair.x_prime), "event": self.event.to_json(),
                "event_description": self.event.describe(), "counts": list(self.counts), "samples": self.n}


@dataclass
class Interval:
    """The bisection on the p-value, and the valid one-sided bound (see the module docstring)."""

    lo: float  # largest eps rejected (0 when none was)
    hi: float  # smallest eps not rejected (inf when every probe was rejected)
    rejected: Detection | None  # the detection at ``lo``
    accepted: Detection | None  # the detection at ``hi``
    alpha: float
    probes: list[Detection] = field(default_factory=list)
    lower: LowerBound | None = None  # eps >= lower.eps_lower with confidence 1 - alpha

    @property
    def one_sided(self) -> list[float]:
        """``[bound, inf]``: what testing alone states about eps, with confidence ``1 - alpha``."""
        return [self.lower.eps_lower if self.lower is not None else 0.0, math.inf]
    stopped: str | None = None  # the time limit that ended the bisection early, if any


class StatDPTester:
    """StatDP's test for one sampler: candidate pairs, selection batch, fresh test batch."""

    def __init__(
        self,
        sampler: Any,
        *,
        pairs: Sequence[Pair] | None = None,
        n_select: int = 100_000,
        n_test: int = 500_000,
        seed: int = 0,
        features: Sequence[Feature] | None = None,
        max_categories: int | None = None,
        draws: int = 200,
        progress: Progress | None = None,
    ) -> None:
        if n_select < 1 or n_test < 1:
            raise ParameterError(f"sample sizes must be positive, got {n_select} and {n_test}")
        # both inputs' batches of a pair, and as much again while counting events
        check_fits(4 * (n_select + n_test) * 8 * getattr(sampler, "arity", 1),
                   f"StatDP batches of {n_select} + {n_test} samples per input", "ask for fewer samples (--samples)")
        self.sampler = sampler
        self.pairs = list(pairs) if pairs is not None else pattern_pairs(sampler.domain, sampler.neighbours)
        if not self.pairs:
            raise ParameterError(f"no neighbour pair to test for {getattr(sampler, 'name', 'the mechanism')}")
        self.n_select, self.n_test, self.seed = int(n_select), int(n_test), check_seed(seed)
        self.features = features
        self.max_categories = max_categories or max(2, int(0.002 * n_select))  # StatDP's switch
        self.uniforms = thinning_uniforms(seed, draws)
        self.select_uniforms = stratified_uniforms()
        self.progress = progress or (lambda msg: None)
        self._selection: tuple[Candidates, np.ndarray] | None = None
        self._fresh: dict[tuple, tuple[np.ndarray, np.ndarray]] = {}
        self.timings = {"sample": 0.0, "select": 0.0, "test": 0.0}

    # -- batches ----------------------------------------------------------------------------
    def _sample(self, x: Sequence[int], n: int, seed: int) -> np.ndarray:
        deadline.check("while sampling for the StatDP test")
        return sample_timed(self.sampler, x, n, seed, self.timings)

    def selection(self) -> tuple[Candidates, np.ndarray]:
        """Every candidate event of every pair with its first-batch counts (computed once)."""
        if self._selection is None:
            parts, owner = [], []
            for i, pair in enumerate(self.pairs):
                self.progress(f"selecting events on pair {i + 1}/{len(self.pairs)}")
                sx = self._sample(pair.x, self.n_select, derive_seed(self.seed, i, 0))
                sy = self._sample(pair.x_prime, self.n_select, derive_seed(self.seed, i, 1))
                deadline.check("while selecting StatDP events")
                t = time.perf_counter()
                cands = self._candidates(sx, sy)
                self.timings["select"] += time.perf_counter() - t
                parts.append(cands)
                owner.append(np.full(len(cands.events), i))
            self._selection = (Candidates.concat(parts), np.concatenate(owner))
        return self._selection

    def _candidates(self, sx: np.ndarray, sy: np.ndarray) -> Candidates:
        feats = self.features if self.features is not None else default_features(sx, sy)
        parts = [feature_candidates(f, sx, sy, self.max_categories) for f in feats]
        skeletons = [f for f in feats if f.kind == "skeleton"]
        if self.features is None and skeletons:  # StatDP's (count False, last value) in general form
            parts.append(product_candidates(skeletons[0], Feature("sum", codes=skeletons[0].codes), sx, sy))
        return Candidates.concat(parts)

    def fresh(self, pair: Pair) -> tuple[np.ndarray, np.ndarray]:
        """The fresh batches of a pair (drawn once; seeds depend on the pair, not its index)."""
        key = (pair.x, pair.x_prime)
        if key not in self._fresh:
            a = derive_seed(self.seed, 2, len(pair.x), *pair.x, *pair.x_prime)
            self._fresh[key] = (self._sample(pair.x, self.n_test, a),
                                self._sample(pair.x_prime, self.n_test, derive_seed(a, 1)))
        return self._fresh[key]

    # -- the test ---------------------------------------------------------------------------
    def select(self, eps: float) -> tuple[Pair, Event, float]:
        """The pair and event with the smallest first-batch p-value at ``eps``."""
        cands, owner = self.selection()
        best, p = self._select_index(eps)
        pair = self.pairs[int(owner[best])]
        if cands.cy[best] > cands.cx[best]:
            pair = Pair(pair.x_prime, pair.x, pair.origin + " (event favours x')")
        return pair, cands.events[best], p  # p is NaN when every event was rare

    def _select_index(self, eps: float) -> tuple[int, float]:
        """The candidate :meth:`select` picks at ``eps``, and its first-batch p-value."""
        cands, _ = self.selection()
        t = time.perf_counter()
        hi, lo = np.maximum(cands.cx, cands.cy), np.minimum(cands.cx, cands.cy)
        p = np.full(len(hi), np.inf)
        ok = (hi + lo) > RARE * self.n_select * math.exp(min(eps, 700.0))
        if ok.sum() > SCREEN:  # exact p-values for the events a normal approximation ranks best
            z = np.where(ok, approximate_z(hi, lo, self.n_select, self.n_select, eps), -np.inf)
            ok &= z >= np.partition(z, len(z) - SCREEN)[len(z) - SCREEN]
        if ok.any():
            p[ok] = thinned_pvalues(hi[ok], lo[ok], self.n_select, self.n_select, eps, self.select_uniforms)
        if not np.isfinite(p).any():  # every event is rare: fall back to the most frequent one
            p = np.where(hi + lo == (hi + lo).max(), np.nan, np.inf) if len(p) else p
        # ties (p = 0 is common for gross violations): prefer the larger empirical ratio
        ratio = np.log((hi + 0.5) / (lo + 0.5))
        best = int(np.lexsort((-ratio, np.nan_to_num(p, nan=-1.0)))[0])
        self.timings["select"] += time.perf_counter() - t
        return best, float(p[best])

    def test(self, eps: float, pair: Pair, event: Event, selection_p: float = math.nan) -> Detection:
        """The p-value of ``(pair, event)`` at ``eps`` on the fresh batches."""
        sx, sy = self.fresh(pair)
        t = time.perf_counter()
        cx, cy = int(event.mask(sx).sum()), int(event.mask(sy).sum())
        p = float(thinned_pvalues(cx, cy, len(sx), len(sy), eps, self.uniforms)[0])
        self.timings["test"] += time.perf_counter() - t
        return Detection(eps, p, pair, event, (cx, cy), len(sx), selection_p)

    def detect(self, eps: float) -> Detection:
        """StatDP's ``detect_counterexample`` at one eps: select, then test on fresh samples."""
        if not eps >= 0:
            raise ParameterError(f"eps must be non-negative, got {eps}")
        deadline.check("before a StatDP probe")
        pair, event, p_sel = self.select(eps)
        self.progress(f"testing eps = {eps:.4g}")
        return self.test(eps, pair, event, p_sel)

    def lower_bound(self, alpha: float = 0.05) -> LowerBound | None:
        """A one-sided lower confidence bound on eps, valid with confidence ``1 - alpha``.

        A few candidate events are chosen on the selection batch alone: the ones with the
        largest Clopper-Pearson bound of the log-ratio there, and the ones StatDP's
        selection picks on a grid of eps up to twice that bound (events built from the
        selection batch can overfit it, as sets of outputs seen under one input only do).  Each is counted
        on its pair's fresh batch, which no choice saw, and bounded by
        ``ln CP_lower(cx) - ln CP_upper(cy)`` with each Clopper-Pearson bound at
        ``alpha / (2K)`` for K candidates; the largest bound holds with probability at
        least ``1 - alpha`` (a union bound), and the mechanism's eps is at least the
        log-ratio of any event.  None without any event.
        """
        if not 0 < alpha < 1:
            raise ParameterError(f"alpha must lie in (0, 1), got {alpha}")
        cands, owner = self.selection()
        if not len(cands.events):
            return None
        n = self.n_select
        forward = log_ratio_lower(cands.cx, n, cands.cy, n, alpha / 2)
        backward = log_ratio_lower(cands.cy, n, cands.cx, n, alpha / 2)
        score = np.maximum(forward, backward)
        grid = [e for e in SELECTION_GRID if e <= 2 * score.max() + SELECTION_GRID[1]]  # beyond: only rare events
        chosen = dict.fromkeys([*np.argsort(-score, kind="stable")[:TOP_BY_BOUND].tolist(),
                                *(self._select_index(e)[0] for e in grid)])
        each = alpha / (2 * len(chosen))
        bounds = []
        for i in chosen:
            pair, event = self.pairs[int(owner[i])], cands.events[i]
            sx, sy = self.fresh(pair)
            cx, cy = int(event.mask(sx).sum()), int(event.mask(sy).sum())
            if cands.cy[i] > cands.cx[i]:  # the direction the selection batch favours
                pair, cx, cy = Pair(pair.x_prime, pair.x, pair.origin + " (event favours x')"), cy, cx
            bound = float(log_ratio_lower(cx, len(sx), cy, len(sy), each))
            bounds.append(LowerBound(bound, 1 - alpha, pair, event, (cx, cy), len(sx)))
        return max(bounds, key=lambda b: b.eps_lower)

    def scan(self, eps_values: Sequence[float]) -> list[Detection]:
        """The p-value at each eps (StatDP's p-value-versus-eps plot)."""
        return [self.detect(e) for e in eps_values]

    def interval(self, *, alpha: float = 0.05, precision: float = 0.01, start: float = 0.01,
                 max_eps: float = 64.0) -> Interval:
        """Bracket eps: double from ``start`` until not rejected, then bisect to ``precision``.

        ``lo`` is the largest eps rejected at level ``alpha`` and ``hi`` the smallest not
        rejected, each with its detection (StatDP-Fixed's exponential and binary search).
        Every probe is a separate test at level alpha, so ``[lo, hi]`` is no confidence
        interval (``lo`` may exceed eps); ``lower`` is the bound that is valid with
        confidence ``1 - alpha`` (:meth:`lower_bound`).  When the time limit in force
        passes after the first probe, the interval found so far is returned, ``stopped``
        saying so (and ``lower`` is None when there was no time left to draw it).
        """
        probes: list[Detection] = []
        lo, hi, rej, acc = 0.0, math.inf, None, None
        eps = start
        try:
            while eps <= max_eps:
                d = self.detect(eps)
                probes.append(d)
                if d.p_value <= alpha:
                    lo, rej, eps = eps, d, eps * 2
                else:
                    hi, acc = eps, d
                    break
            while hi < math.inf and hi - lo > precision:
                mid = (lo + hi) / 2
                if not lo < mid < hi:  # adjacent floats: a precision below float resolution
                    break
                d = self.detect(mid)
                probes.append(d)
                if d.p_value <= alpha:
                    lo, rej = mid, d
                else:
                    hi, acc = mid, d
            return Interval(lo, hi, rej, acc, alpha, probes, lower=self.lower_bound(alpha))
        except TimeLimitReached as e:
            if not probes:
                raise
            return Interval(lo, hi, rej, acc, alpha, probes, stopped=f"{e} after {len(probes)} StatDP probes")
