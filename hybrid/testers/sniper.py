"""DP-Sniper-style lower bounds on eps (Bichsel et al. 2021), with scikit-learn classifiers.

For each candidate pair (x, x'):

1. **train** a classifier to tell M(x) (label 1) from M(x') (label 0) on a subsample
   (logistic regression by default, ``mlp`` for a small neural network; a feature
   transform first, see :mod:`hybrid.testers.transforms`);
2. **threshold**: on fresh outputs of x', pick for every level c of a grid the
   randomised threshold attack S(t, q) with ``P(M(x') in S) = c``;
3. **check**: on fresh outputs of both inputs, estimate both probabilities for every c
   and predict the lower bound each (pair, c) would reach on the final sample; the
   best few pairs are checked again on a larger sample (successive halving);
4. **final**: on fresh outputs of the best (pair, c), count hits and bound
   ``eps >= ln(CP_lower(p1)) - ln(CP_upper(p2))``, each Clopper-Pearson bound at level
   ``(1 - confidence) / 2`` (the union bound over the two probabilities).

Beyond DP-Sniper: its fixed c = 0.01 caps the bound near ln(1/c) = 4.6.  Here c is
chosen from a grid down to 1e-7, and the choice is paid for honestly: by default the
(pair, c) is chosen on the check sample and the final sample is fresh (a data split,
no multiplicity left), or with ``correction="bonferroni"`` every c of the grid is
evaluated on the final sample at level ``(1 - confidence) / (2 |grid|)``.  Ties of the
score at the threshold are kept by real coin flips, so the hit counts are binomial.

Every stage's size is a count (:func:`attack_sizes` derives them from one budget), and
each input's sample in a selection stage is drawn once and shared by every pair that
contains it (:mod:`hybrid.testers.draws`); only the final sample must be fresh for the bound.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import numpy as np

from hybrid.testers.attack import Attack, Model
from hybrid.testers.binomial import cp_lower, cp_upper, log_ratio_lower
from hybrid.testers.draws import Draws, Sample, as_sample, seed_of
from hybrid.testers.features import row_keys
from hybrid.inputs import Pair, pattern_pairs
from hybrid.seeds import derive_seed
from hybrid.testers.options import CLASSIFIERS
from hybrid.testers.transforms import Transform, fit_transform
from samplers import deadline
from samplers.deadline import TimeLimitReached
from samplers.errors import ParameterError

C_GRID = (0.5, 0.45, 0.4, 0.3, 0.2, 0.15, 0.1, 0.07, 0.05, 0.02, 0.01, 3e-3, 1e-3, 3e-4, 1e-4, 3e-5, 1e-5, 3e-6, 1e-6, 3e-7, 1e-7)
CORRECTIONS = ("split", "bonferroni")
NATURAL = 20  # block boundaries of tied scores offered as levels
MIN_TAIL = 100  # a level c needs c * n_threshold >= MIN_TAIL threshold samples
RECHECK = 3  # pairs re-checked on a larger sample before the final stage
SIGMA = 0.0228  # one-sided level of a two-sigma bound
PROBE = 20_000  # training rows looked at to decide whether merging identical rows pays
STAGE_MIN, STAGE_MAX = 10_000, 1_000_000  # per-input sizes of the selection stages (attack_sizes)
SELECTION_RESERVE = 0.5  # under a time limit, start no new pair once less than this share is left
TRAIN, THRESHOLD, CHECK, RECHECK_STAGE, FINAL = 0, 3, 4, 6, 7  # stage codes in the seeds


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
    limits: list[str] = field(default_factory=list)  # what the time limit stopped, if anything


def _compress(X: np.ndarray, y: np.ndarray, max_fit: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Training rows with weights: identical rows merged (discrete outputs), else a subsample."""
    head = np.ascontiguousarray(np.column_stack([X[:PROBE], y[:PROBE]]))
    if len(np.unique(row_keys(head.view(np.int64)))) <= min(max_fit, 10_000):  # few distinct rows: merge them
        Xy = np.ascontiguousarray(np.column_stack([X, y]))
        keys = row_keys(Xy.view(np.int64))
        deadline.check("while training the attack")  # each step takes seconds on millions of rows
        uniq, inv = np.unique(keys, return_inverse=True)
        deadline.check("while training the attack")
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
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"):  # memory-bound on 2-column..20-column data: threads only contend
        return _fit_serial(classifier, X, y, seed, max_fit)


def _fit_serial(classifier: str, X: np.ndarray, y: np.ndarray, seed: int, max_fit: int) -> Model:
    from sklearn.linear_model import LogisticRegression
    from sklearn.neural_network import MLPClassifier
    from sklearn.preprocessing import StandardScaler

    X, y, w = _compress(X, y, max_fit, seed)
    deadline.check("while training the attack")
    with np.errstate(over="ignore", invalid="ignore"):
        scaler = StandardScaler().fit(X, sample_weight=w)
        Z = scaler.transform(X)
    if not np.isfinite(Z).all():
        raise ParameterError("the attack's features are inf or NaN once standardised (outputs near the end of the "
                             f"float range, up to {np.nanmax(np.abs(X[np.isfinite(X)]), initial=0):.3g}: a noise scale "
                             "like 1e300, say); the classifier needs finite ones")
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

    def add(self, scores: np.ndarray, counts: np.ndarray | None = None) -> None:
        """Outputs with these scores (each ``counts`` times; once when None)."""
        if counts is None:
            s = np.sort(scores)
            right, left = np.searchsorted(s, self.t, "right"), np.searchsorted(s, self.t, "left")
            total = len(s)
        else:
            order = np.argsort(scores, kind="stable")
            s = scores[order]
            cum = np.concatenate([[0], np.cumsum(np.asarray(counts, dtype=np.int64)[order])])
            right, left = cum[np.searchsorted(s, self.t, "right")], cum[np.searchsorted(s, self.t, "left")]
            total = int(cum[-1])
        self.k += (total - right) + self.rng.binomial(right - left, np.clip(self.q, 0.0, 1.0))
        self.n += total


def attack_sizes(total: int, inputs: int) -> dict[str, int]:
    """Per-input sample sizes of every stage, from the whole run's budget of ``total`` outputs.

    Training, thresholds and checks get ``total / (8 inputs)`` outputs per input each
    (within :data:`STAGE_MIN` .. :data:`STAGE_MAX`), the re-check an eighth of the total
    over the inputs it may see, and the final stage what is left, split between x and x'.
    Every size is a count, so a seed gives the same bound on any machine.
    """
    stage = min(STAGE_MAX, max(STAGE_MIN, total // (8 * inputs)))
    seen = min(inputs, 2 * RECHECK)
    recheck = min(10 * stage, total // (8 * seen))
    used = 3 * inputs * stage + (seen * recheck if recheck > stage else 0)
    return {"n_train": stage, "n_threshold": stage, "n_check": stage, "n_recheck": recheck,
            "n_final": max(STAGE_MIN, (total - used) // 2)}


class SniperTester:
    """The attack pipeline for one sampler (see the module docstring).

    Every stage's size is a count of outputs per input: ``n_train``, ``n_threshold`` and
    ``n_check`` per pair's inputs (each input's sample is drawn once and shared by the
    pairs, :mod:`hybrid.testers.draws`), ``n_recheck`` for the best :data:`RECHECK` pairs
    (default ``min(n_final, 10 n_check)``) and ``n_final``.  The time limit in force
    (:mod:`samplers.deadline`) only stops work: pairs left untrained, a final sample cut
    short; each is named in :attr:`limits` and the bound stays valid for what was drawn.
    """

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
        n_recheck: int | None = None,
        n_final: int = 10_000_000,
        c_grid: Sequence[float] = C_GRID,
        confidence: float = 0.9,
        correction: str = "split",
        seed: int = 0,
        progress: Callable[[str], None] | None = None,
    ) -> None:
        if classifier not in CLASSIFIERS:
            raise ParameterError(f"unknown classifier {classifier!r} (known: {', '.join(CLASSIFIERS)})")
        if correction not in CORRECTIONS:
            raise ParameterError(f"unknown correction {correction!r} (known: {', '.join(CORRECTIONS)})")
        if not 0 < confidence < 1:
            raise ParameterError(f"confidence must lie in (0, 1), got {confidence}")
        n_recheck = min(n_final, 10 * n_check) if n_recheck is None else n_recheck
        if min(n_train, n_threshold, n_check, n_recheck, n_final) < 1:
            raise ParameterError("sample sizes must be positive")
        if not c_grid or not all(0 < c < 1 for c in c_grid):
            raise ParameterError(f"every level c must lie in (0, 1), got {list(c_grid)}")
        self.sampler = sampler
        self.pairs = list(pairs) if pairs is not None else pattern_pairs(sampler.domain, sampler.neighbours)
        if not self.pairs:
            raise ParameterError(f"no neighbour pair to attack for {getattr(sampler, 'name', 'the mechanism')}")
        self.classifier, self.transform_spec = classifier, transform
        self.n_train, self.n_threshold, self.n_check = int(n_train), int(n_threshold), int(n_check)
        self.n_recheck, self.n_final = int(n_recheck), int(n_final)
        self.max_fit = max_fit
        self.c_grid, self.confidence, self.correction, self.seed = tuple(c_grid), confidence, correction, seed
        self.progress = progress or (lambda msg: None)
        self.timings = {"sample": 0.0, "train": 0.0, "score": 0.0}
        self.draws = Draws(sampler, seed, self.timings, self.progress)
        self.limits: list[str] = []  # limits that stopped work (the time budget), as sentences

    @property
    def drawn(self) -> int:
        """Outputs sampled so far, every stage and input."""
        return self.draws.drawn

    def _scores(self, attack_fn: Callable[[np.ndarray], np.ndarray], sample: Sample) -> np.ndarray:
        t = time.perf_counter()
        out = attack_fn(sample.rows)
        self.timings["score"] += time.perf_counter() - t
        return out

    def train(self, pair: Pair, index: int) -> tuple[Transform, Model]:
        """Fit the transform and classifier for one pair (on its inputs' training samples)."""
        sx = self.draws.sample(TRAIN, pair.x, self.n_train, "training").expanded()
        sy = self.draws.sample(TRAIN, pair.x_prime, self.n_train, "training").expanded()
        deadline.check("before training the attack")
        t = time.perf_counter()
        both = np.concatenate([sx, sy])
        transform = fit_transform(self.transform_spec, both)
        X = transform(both)
        deadline.check("while training the attack")
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

    def _check(self, proto: Attack, ctq: list, stage: int, n: int, seed: int, alpha: float) -> tuple[int, float, float]:
        """Hits of every level on both inputs' ``stage`` samples: (best level, its estimate, prediction)."""
        ts = [(t, q) for _, t, q in ctq]
        label = "checking" if stage == CHECK else "re-checking"
        h1, h2 = _Hits(ts, derive_seed(seed, 1)), _Hits(ts, derive_seed(seed, 2))
        for h, x in ((h1, proto.x), (h2, proto.x_prime)):
            sample = self.draws.sample(stage, x, n, label)
            h.add(self._scores(proto.scores, sample), sample.counts)
        preds = [self._predicted(int(k1), h1.n, int(k2), h2.n, alpha) for k1, k2 in zip(h1.k, h2.k)]
        j = int(np.argmax(preds))
        return j, eps_bounds(int(h1.k[j]), h1.n, int(h2.k[j]), h2.n, alpha)[0], preds[j]

    def _plan(self) -> None:
        inputs = {x for p in self.pairs for x in (p.x, p.x_prime)}
        primes = {p.x_prime for p in self.pairs}
        rechecks = len(self.pairs) > 1 and self.n_recheck > self.n_check
        recheck = min(len(inputs), 2 * RECHECK) * self.n_recheck if rechecks else 0
        self.draws.plan(len(inputs) * (self.n_train + self.n_check) + len(primes) * self.n_threshold
                        + recheck + 2 * self.n_final)

    def _select(self, alpha: float) -> list[tuple[float, int, Attack, list]]:
        """Train, threshold and check every pair: (prediction, index, attack, levels), best first."""
        stage: list[tuple[float, int, Attack, list]] = []
        self.reports: list[PairReport] = []
        for i, pair in enumerate(self.pairs):
            if stage and deadline.remaining() < SELECTION_RESERVE * deadline.budget():
                self.limits.append(f"time budget: {len(self.pairs) - i} of {len(self.pairs)} pairs left untrained")
                break
            try:
                self.progress(f"training on pair {i + 1}/{len(self.pairs)}")
                transform, model = self.train(pair, i)
                proto = Attack(pair.x, pair.x_prime, transform, model, 0.0, 0.0, 0.0)
                sy = self.draws.sample(THRESHOLD, pair.x_prime, self.n_threshold, "thresholds")
                ctq = thresholds(np.repeat(self._scores(proto.scores, sy), 1 if sy.counts is None else sy.counts),
                                 self.c_grid)
                if not ctq:
                    raise ParameterError(f"n_threshold = {self.n_threshold} is too small for every level c "
                                         f"(need c * n_threshold >= {MIN_TAIL})")
                j, est, pred = self._check(proto, ctq, CHECK, self.n_check, derive_seed(self.seed, i, 4), alpha)
            except TimeLimitReached as e:
                if not stage:
                    raise
                self.limits.append(f"{e}: {len(self.pairs) - i} of {len(self.pairs)} pairs left untrained")
                break
            self.reports.append(PairReport(pair, ctq[j][0], est, pred))
            stage.append((pred, i, proto, ctq))
        return sorted(stage, key=lambda s: -s[0])

    def _final(self, attack: Attack, pair: Pair, chosen: list[tuple[float, float]]) -> tuple[_Hits, _Hits]:
        """Hits on fresh outputs of x and x', in alternating batches; the time limit cuts it short."""
        h1, h2 = _Hits(chosen, derive_seed(self.seed, 7, 1, 99)), _Hits(chosen, derive_seed(self.seed, 7, 2, 99))
        seeds = (seed_of(self.seed, FINAL, pair.x), seed_of(self.seed, FINAL, pair.x_prime))
        batch = self.draws.batch
        try:
            for b, start in enumerate(range(0, self.n_final, batch)):
                n = min(batch, self.n_final - start)
                for h, x, sd in ((h1, pair.x, seeds[0]), (h2, pair.x_prime, seeds[1])):
                    sample = as_sample(self.draws.batch_of(x, n, derive_seed(sd, b), "final estimate"))
                    h.add(self._scores(attack.scores, sample), sample.counts)
        except TimeLimitReached as e:
            self.limits.append(f"{e}: final sample cut at {min(h1.n, h2.n):,} of {self.n_final:,} outputs per input")
        return h1, h2

    def run(self) -> SniperResult:
        """The attack pipeline (see the class docstring)."""
        self._plan()
        alpha_split = (1 - self.confidence) / 2
        stage = self._select(alpha_split)
        # successive halving: the best few pairs are checked again on a larger sample
        if len(stage) > 1 and self.n_recheck > self.n_check:
            self.progress("re-checking the best pairs")
            rechecked = []
            try:
                for pred, i, proto, ctq in stage[:RECHECK]:
                    j, est, pred = self._check(proto, ctq, RECHECK_STAGE, self.n_recheck,
                                               derive_seed(self.seed, i, 6), alpha_split)
                    rechecked.append((pred, i, proto, ctq, j))
            except TimeLimitReached as e:
                self.limits.append(f"{e}: re-checked {len(rechecked)} of {min(RECHECK, len(stage))} pairs")
            if rechecked:
                _, i, proto, ctq, j = max(rechecked, key=lambda s: s[0])
            else:
                _, i, proto, ctq = stage[0]
                j = self._check(proto, ctq, CHECK, self.n_check, derive_seed(self.seed, i, 4), alpha_split)[0]
        else:
            _, i, proto, ctq = stage[0]
            j = self._check(proto, ctq, CHECK, self.n_check, derive_seed(self.seed, i, 4), alpha_split)[0]
        c, t, q = ctq[j]
        attack = Attack(proto.x, proto.x_prime, proto.transform, proto.model, t, q, c)
        pair = self.pairs[i]
        self.progress("final estimate")
        if self.correction == "split":
            chosen = [(attack.t, attack.q)]
            alpha = alpha_split
        else:
            chosen = [(t, q) for _, t, q in ctq]
            alpha = alpha_split / len(chosen)
        h1, h2 = self._final(attack, pair, chosen)
        bounds = [eps_bounds(int(k1), h1.n, int(k2), h2.n, alpha) if h1.n and h2.n else (0.0, 0.0)
                  for k1, k2 in zip(h1.k, h2.k)]
        j = int(np.argmax([b[1] for b in bounds]))
        if self.correction == "bonferroni":
            c, t, q = ctq[j]
            attack = Attack(pair.x, pair.x_prime, attack.transform, attack.model, t, q, c)
        return SniperResult(
            eps_lcb=bounds[j][1], eps_hat=bounds[j][0], confidence=self.confidence, attack=attack,
            pair=pair, counts=(int(h1.k[j]), h1.n, int(h2.k[j]), h2.n), correction=self.correction,
            pairs=self.reports, timings=dict(self.timings), limits=list(self.limits),
        )
