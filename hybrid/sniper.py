"""DP-Sniper-style lower bounds on eps (Bichsel et al. 2021), with scikit-learn classifiers.

For each candidate pair (x, x'):

1. **train** a classifier to tell M(x) (label 1) from M(x') (label 0) on a subsample
   (logistic regression by default, ``mlp`` for a small neural network; a feature
   transform first, see :mod:`hybrid.transforms`);
2. **threshold**: on fresh outputs of x', pick for every level c of a grid the
   randomised threshold attack S(t, q) with ``P(M(x') in S) = c``;
3. **check**: on fresh outputs of both inputs, estimate both probabilities for every c
   and predict the lower bound each (pair, c) would reach on the final sample; the
   best few pairs are checked again on a ten times larger sample (successive halving);
4. **final**: on fresh outputs of the best (pair, c), count hits and bound
   ``eps >= ln(CP_lower(p1)) - ln(CP_upper(p2))``, each Clopper-Pearson bound at level
   ``(1 - confidence) / 2`` (the union bound over the two probabilities).

Beyond DP-Sniper: its fixed c = 0.01 caps the bound near ln(1/c) = 4.6.  Here c is
chosen from a grid down to 1e-7, and the choice is paid for honestly: by default the
(pair, c) is chosen on the check sample and the final sample is fresh (a data split,
no multiplicity left), or with ``correction="bonferroni"`` every c of the grid is
evaluated on the final sample at level ``(1 - confidence) / (2 |grid|)``.  Ties of the
score at the threshold are kept by real coin flips, so the hit counts are binomial.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from hybrid.attack import Attack, Model
from hybrid.binomial import cp_lower, cp_upper, log_ratio_lower
from hybrid.features import row_keys
from hybrid.inputs import Pair, pattern_pairs
from hybrid.seeds import derive_seed
from hybrid.timing import sample_timed
from hybrid.transforms import Transform, fit_transform
from samplers.errors import ParameterError

C_GRID = (0.5, 0.45, 0.4, 0.3, 0.2, 0.15, 0.1, 0.07, 0.05, 0.02, 0.01, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6, 1e-6, 3e-7, 1e-7)
CLASSIFIERS = ("logistic", "mlp")
CORRECTIONS = ("split", "bonferroni")
NATURAL = 20  # block boundaries of tied scores offered as levels
MIN_TAIL = 100  # a level c needs c * n_threshold >= MIN_TAIL threshold samples
BATCH = 1 << 21
RECHECK = 3  # pairs re-checked on a ten times larger sample before the final stage
SIGMA = 0.0228  # one-sided level of a two-sigma bound


def eps_bounds(k1: int, n1: int, k2: int, n2: int, alpha: float) -> tuple[float, float]:
    """``(estimate, lower bound)`` of ``ln(p1 / p2)`` from hit counts, each CP bound at ``alpha``."""
    est = math.inf if k2 == 0 and k1 > 0 else (0.0 if k1 == 0 else math.log(k1 / n1) - math.log(k2 / n2))
    return est, float(log_ratio_lower(k1, n1, k2, n2, alpha))


@dataclass
class PairReport:
    """The check-stage figures of one pair at its best level."""

    pair: Pair
    c: float
    eps_hat: float
    predicted_lcb: float

    def to_json(self) -> dict[str, Any]:
        return {"x": list(self.pair.x), "x_prime": list(self.pair.x_prime), "c": self.c,
                "eps_hat": self.eps_hat, "predicted_lcb": self.predicted_lcb}


@dataclass
class SniperResult:
    eps_lcb: float
    eps_hat: float
    confidence: float
    attack: Attack
    pair: Pair
    counts: tuple[int, int, int, int]  # k1, n1, k2, n2 on the final sample
    correction: str
    pairs: list[PairReport] = field(default_factory=list)
    timings: dict[str, float] = field(default_factory=dict)


def _compress(X: np.ndarray, y: np.ndarray, max_fit: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training rows with weights: identical rows merged (discrete outputs), else a subsample."""
    Xy = np.ascontiguousarray(np.column_stack([X, y]))
    keys = row_keys(Xy.view(np.int64))
    if len(np.unique(keys[:20_000])) <= min(max_fit, 10_000):
        uniq, inv = np.unique(keys, return_inverse=True)
        first = np.empty(len(uniq), dtype=np.int64)
        first[inv[::-1]] = np.arange(len(keys) - 1, -1, -1)
        if len(uniq) <= max_fit and (Xy == Xy[first][inv]).all():
            rows = Xy[first]
            return rows[:, :-1], rows[:, -1], np.bincount(inv, minlength=len(uniq)).astype(np.float64)
    if len(X) <= max_fit:
        return X, y, np.ones(len(X))
    pick = np.random.default_rng(seed).choice(len(X), size=max_fit, replace=False)
    return X[pick], y[pick], np.ones(len(pick))


def _fit(classifier: str, X: np.ndarray, y: np.ndarray, seed: int, max_fit: int) -> Model:
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import StandardScaler

    X, y, w = _compress(X, y, max_fit, seed)
    scaler = StandardScaler().fit(X, sample_weight=w)
    Z = scaler.transform(X)
    if classifier == "logistic":
        clf = LogisticRegression(C=1.0, max_iter=1000).fit(Z, y, sample_weight=w)
        ws, bs = (clf.coef_.T.copy(),), (clf.intercept_.copy(),)
    else:
        clf = MLPClassifier(hidden_layer_sizes=(10, 5), alpha=1e-4, learning_rate_init=0.01,
                            max_iter=50, early_stopping=True, random_state=seed % 2**32)
        clf.fit(np.repeat(Z, w.astype(np.int64), axis=0), np.repeat(y, w.astype(np.int64)))
        ws, bs = tuple(w.copy() for w in clf.coefs_), tuple(b.copy() for b in clf.intercepts_)
    return Model(classifier, scaler.mean_.copy(), scaler.scale_.copy(), ws, bs)


def thresholds(scores: np.ndarray, cs: Sequence[float], *, min_tail: int = MIN_TAIL,
               interior: bool = False) -> list[tuple[float, float, float]]:
    """``(c, t, q)`` with ``#(s > t) + q #(s == t) = c n`` on the scores of x' (DP-Sniper's rule).

    Besides the grid, the levels where a block of tied scores ends (the masses of the
    most x-like outputs of a discrete mechanism) are offered, so no coin is needed there,
    and so is ``c = 0``: the outputs that score above every x' sample;
    grid levels inside a tied block of at least ``min_tail`` outputs are dropped unless
    ``interior`` (flipping a coin on one block only moves the ratio between those of its
    two boundaries).
    """
    s = np.sort(scores)[::-1]
    n = len(s)
    starts = np.unique(-s, return_index=True)[1]  # blocks of tied scores, most x-like first
    ends = np.append(starts[1:], n)
    sizes = np.diff(np.append(0, ends))
    natural = [e / n for e, size in zip(ends[:NATURAL], sizes[:NATURAL]) if size >= min_tail and e < n]
    out = []
    for c in sorted(set(cs) | set(natural), reverse=True):
        target = c * n
        if target < min_tail:
            continue
        t = float(s[min(int(target), n - 1)])
        above = int(np.sum(s > t))
        equal = int(np.sum(s == t))
        q = (target - above) / equal
        if q >= 1 - 1e-9:  # at a block boundary: no coin
            q = 1.0
        elif q > 1e-9 and equal >= min_tail and not interior:
            continue  # inside a large block of tied outputs: a coin only mixes ratios, keep the boundaries
        out.append((c, t, q))
    # The level below every grid point: the outputs scoring above all of x' (none in this
    # sample).  Mechanisms with outputs x' cannot produce (infinite ratios) are caught here.
    out.append((0.0, float(s[0]), 0.0))
    return out


class _Hits:
    """Accumulates, per threshold, outputs above it and (coin-flipped) ties at it."""

    def __init__(self, ts: Sequence[tuple[float, float]], seed: int) -> None:
        self.t = np.array([t for t, _ in ts])
        self.q = np.array([q for _, q in ts])
        self.k = np.zeros(len(ts), dtype=np.int64)
        self.n = 0
        self.rng = np.random.default_rng(seed)

    def add(self, scores: np.ndarray) -> None:
        s = np.sort(scores)
        right = np.searchsorted(s, self.t, "right")
        left = np.searchsorted(s, self.t, "left")
        self.k += (len(s) - right) + self.rng.binomial(right - left, np.clip(self.q, 0.0, 1.0))
        self.n += len(s)


class SniperTester:
    """The attack pipeline for one sampler (see the module docstring)."""

    def __init__(
        self,
        sampler: Any,
        *,
        pairs: Sequence[Pair] | None = None,
        classifier: str = "logistic",
        transform: str | Callable[[np.ndarray], np.ndarray] = "auto",
        n_train: int = 1_000_000,
        max_fit: int = 2_000_000,
        n_threshold: int = 1_000_000,
        n_check: int = 1_000_000,
        n_final: int = 10_000_000,
        c_grid: Sequence[float] = C_GRID,
        confidence: float = 0.9,
        correction: str = "split",
        seed: int = 0,
        progress: Callable[[str], None] | None = None,
        time_budget: float | None = None,
    ) -> None:
        if classifier not in CLASSIFIERS:
            raise ParameterError(f"unknown classifier {classifier!r} (known: {', '.join(CLASSIFIERS)})")
        if correction not in CORRECTIONS:
            raise ParameterError(f"unknown correction {correction!r} (known: {', '.join(CORRECTIONS)})")
        if not 0 < confidence < 1:
            raise ParameterError(f"confidence must lie in (0, 1), got {confidence}")
        if min(n_train, n_threshold, n_check, n_final) < 1:
            raise ParameterError("sample sizes must be positive")
        if not c_grid or not all(0 < c < 1 for c in c_grid):
            raise ParameterError(f"every level c must lie in (0, 1), got {list(c_grid)}")
        self.sampler = sampler
        self.pairs = list(pairs) if pairs is not None else pattern_pairs(sampler.domain, sampler.neighbours)
        if not self.pairs:
            raise ParameterError(f"no neighbour pair to attack for {getattr(sampler, 'name', 'the mechanism')}")
        self.classifier, self.transform_spec = classifier, transform
        self.n_train, self.n_threshold, self.n_check, self.n_final = n_train, n_threshold, n_check, n_final
        self.max_fit = max_fit
        self.c_grid, self.confidence, self.correction, self.seed = tuple(c_grid), confidence, correction, seed
        self.progress = progress or (lambda msg: None)
        self.timings = {"sample": 0.0, "train": 0.0, "score": 0.0}
        self.drawn = 0  # outputs sampled so far, every stage and input
        if time_budget is not None and not time_budget > 0:
            raise ParameterError(f"time budget must be positive, got {time_budget}")
        self.time_budget = time_budget
        self.truncated = False  # whether the time budget shrank the re-check or final sample
        self._deadline = math.inf
        self._cost = 0.0  # seconds per output (sampling and scoring), measured on the check stage

    def _affordable(self, share: float, wanted: int) -> int:
        """How many outputs per input fit in ``share`` of the remaining time (at least n_check)."""
        if self._deadline == math.inf or self._cost == 0.0:
            return wanted
        n = int(share * max(0.0, self._deadline - time.perf_counter()) / (2 * self._cost))
        if n < wanted:
            self.truncated = True
        return max(min(wanted, n), min(wanted, self.n_check))

    def _sample(self, x: Sequence[int], n: int, seed: int) -> np.ndarray:
        self.drawn += n
        return sample_timed(self.sampler, x, n, seed, self.timings)

    def _hits(self, attack_fn: Callable[[np.ndarray], np.ndarray], x: Sequence[int], n: int,
              ts: Sequence[tuple[float, float]], seed: int) -> _Hits:
        hits = _Hits(ts, derive_seed(seed, 99))
        for b, start in enumerate(range(0, n, BATCH)):
            samples = self._sample(x, min(BATCH, n - start), derive_seed(seed, b))
            t = time.perf_counter()
            hits.add(attack_fn(samples))
            self.timings["score"] += time.perf_counter() - t
        return hits

    def train(self, pair: Pair, index: int) -> tuple[Transform, Model]:
        """Fit the transform and classifier for one pair."""
        sx = self._sample(pair.x, self.n_train, derive_seed(self.seed, index, 0))
        sy = self._sample(pair.x_prime, self.n_train, derive_seed(self.seed, index, 1))
        t = time.perf_counter()
        both = np.concatenate([sx, sy])
        transform = fit_transform(self.transform_spec, both)
        X = transform(both)
        y = np.concatenate([np.ones(len(sx)), np.zeros(len(sy))])
        model = _fit(self.classifier, X, y, derive_seed(self.seed, index, 2), self.max_fit)
        self.timings["train"] += time.perf_counter() - t
        return transform, model

    def _predicted(self, k1: int, n1: int, k2: int, n2: int, alpha: float) -> float:
        """The bound the final sample would give, from check counts taken two sigmas pessimistically.

        Shrinking both estimates by their one-sided two-sigma Clopper-Pearson bounds
        keeps the choice among many (pair, c) of a small c (few check hits, a noisy
        ratio) from riding on luck.
        """
        p1, p2 = cp_lower(k1, n1, SIGMA), cp_upper(k2, n2, SIGMA)
        n = self.n_final
        return eps_bounds(int(p1 * n), n, min(n, int(math.ceil(p2 * n))), n, alpha)[1]

    def _check(self, proto: Attack, ctq: list, n: int, seed: int, alpha: float) -> tuple[int, float, float]:
        """Hits of every level on ``n`` fresh outputs per input: (best level, its estimate, prediction)."""
        ts = [(t, q) for _, t, q in ctq]
        h1 = self._hits(proto.scores, proto.x, n, ts, derive_seed(seed, 1))
        h2 = self._hits(proto.scores, proto.x_prime, n, ts, derive_seed(seed, 2))
        preds = [self._predicted(int(k1), h1.n, int(k2), h2.n, alpha) for k1, k2 in zip(h1.k, h2.k)]
        j = int(np.argmax(preds))
        return j, eps_bounds(int(h1.k[j]), h1.n, int(h2.k[j]), h2.n, alpha)[0], preds[j]

    def run(self) -> SniperResult:
        """The attack pipeline; with a time budget the re-check and final samples are sized to fit it."""
        if self.time_budget is not None:
            self._deadline = time.perf_counter() + self.time_budget
        alpha_split = (1 - self.confidence) / 2
        stage: list[tuple[float, int, Attack, list]] = []
        reports = []
        for i, pair in enumerate(self.pairs):
            self.progress(f"training on pair {i + 1}/{len(self.pairs)}")
            transform, model = self.train(pair, i)
            proto = Attack(pair.x, pair.x_prime, transform, model, 0.0, 0.0, 0.0)
            sy = self._sample(pair.x_prime, self.n_threshold, derive_seed(self.seed, i, 3))
            ctq = thresholds(proto.scores(sy), self.c_grid)
            if not ctq:
                raise ParameterError(f"n_threshold = {self.n_threshold} is too small for every level c "
                                     f"(need c * n_threshold >= {MIN_TAIL})")
            t_check = time.perf_counter()
            j, est, pred = self._check(proto, ctq, self.n_check, derive_seed(self.seed, i, 4), alpha_split)
            self._cost = max(self._cost, (time.perf_counter() - t_check) / (2 * self.n_check))
            reports.append(PairReport(pair, ctq[j][0], est, pred))
            stage.append((pred, i, proto, ctq))
        # successive halving: the best few pairs are checked again on a larger sample
        stage.sort(key=lambda s: -s[0])
        n_recheck = self._affordable(0.3 / RECHECK, min(self.n_final, 10 * self.n_check))
        if len(stage) > 1 and n_recheck > self.n_check:
            self.progress("re-checking the best pairs")
            rechecked = []
            for pred, i, proto, ctq in stage[:RECHECK]:
                j, est, pred = self._check(proto, ctq, n_recheck, derive_seed(self.seed, i, 6), alpha_split)
                rechecked.append((pred, i, proto, ctq, j))
            _, i, proto, ctq, j = max(rechecked, key=lambda s: s[0])
        else:
            _, i, proto, ctq = stage[0]
            j = self._check(proto, ctq, self.n_check, derive_seed(self.seed, i, 4), alpha_split)[0]
        c, t, q = ctq[j]
        attack = Attack(proto.x, proto.x_prime, proto.transform, proto.model, t, q, c)
        pair = self.pairs[i]
        self.progress("final estimate")
        n_final = self._affordable(0.9, self.n_final)
        if self.correction == "split":
            chosen = [(attack.t, attack.q)]
            alpha = alpha_split
        else:
            chosen = [(t, q) for _, t, q in ctq]
            alpha = alpha_split / len(chosen)
        h1 = self._hits(attack.scores, pair.x, n_final, chosen, derive_seed(self.seed, 7, 1))
        h2 = self._hits(attack.scores, pair.x_prime, n_final, chosen, derive_seed(self.seed, 7, 2))
        bounds = [eps_bounds(int(k1), h1.n, int(k2), h2.n, alpha) for k1, k2 in zip(h1.k, h2.k)]
        j = int(np.argmax([b[1] for b in bounds]))
        if self.correction == "bonferroni":
            c, t, q = ctq[j]
            attack = Attack(pair.x, pair.x_prime, attack.transform, attack.model, t, q, c)
        return SniperResult(
            eps_lcb=bounds[j][1], eps_hat=bounds[j][0], confidence=self.confidence, attack=attack,
            pair=pair, counts=(int(h1.k[j]), h1.n, int(h2.k[j]), h2.n), correction=self.correction,
            pairs=reports, timings=dict(self.timings),
        )
