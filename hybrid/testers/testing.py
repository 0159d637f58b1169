"""Run a tester on a sampler and report a :class:`~hybrid.testers.results.StatResult`.

The glue between the testers and their users (the CLI, the search): ``statdp_test``
tests one eps, ``statdp_interval`` brackets eps by bisection, ``sniper_estimate``
gives a lower bound with an exported attack, ``audit_test`` runs the classic audit
with a trained attack as its guesser.
"""

from __future__ import annotations

import math
import time
from typing import Any, Callable

import numpy as np

from hybrid.testers.audit import classic_audit
from hybrid.testers.results import Candidate, StatResult, candidate_of
from hybrid.inputs import pattern_pairs
from hybrid.seeds import derive_seed
from hybrid.testers.sniper import SniperTester, attack_sizes
from hybrid.testers.statdp import Detection, LowerBound, StatDPTester
from samplers.errors import ParameterError
from samplers.seed import check_seed

Progress = Callable[[str], None] | None


def _candidate(sampler: Any, d: Detection | LowerBound, interval: tuple[float, float], method: str) -> Candidate:
    return candidate_of(sampler, d.pair.x, d.pair.x_prime, d.event, interval, method)


def _sampler(sampler: Any) -> Any:
    """A sampler as given, or the compiled sampler of a mechanism or plain function (samplers.plain)."""
    if hasattr(sampler, "sample"):
        return sampler
    from samplers.compile import compile_sampler

    return compile_sampler(sampler)


def _check_eps(eps: float) -> None:
    if not (eps >= 0 and math.isfinite(eps)):
        raise ParameterError(f"eps must be a finite non-negative number, got {eps}")


def statdp_test(sampler: Any, eps: float, *, samples: int = 500_000, alpha: float = 0.05, seed: int = 0,
                progress: Progress = None, **kw: Any) -> StatResult:
    """StatDP's test of eps-DP: reject (a violation, statistically) when ``p <= alpha``."""
    sampler = _sampler(sampler)
    _check_eps(eps)
    if not 0 < alpha < 1:
        raise ParameterError(f"alpha must lie in (0, 1), got {alpha}")
    t0 = time.perf_counter()
    tester = StatDPTester(sampler, n_test=samples, n_select=kw.pop("n_select", max(1000, samples // 5)),
                          seed=seed, progress=progress, **kw)
    d = tester.detect(eps)
    rejected = d.p_value <= alpha
    cand = _candidate(sampler, d, (eps, math.inf) if rejected else (0.0, math.inf), "statdp")
    return StatResult("statdp", cand, eps if rejected else 0.0, 1 - alpha, seed, samples,
                      {**tester.timings, "total": time.perf_counter() - t0},
                      extra={"eps_tested": eps, "p_value": d.p_value, "alpha": alpha, "violation": rejected,
                             "detection": d.to_json()})


def statdp_interval(sampler: Any, *, samples: int = 500_000, alpha: float = 0.05, precision: float = 0.01,
                    seed: int = 0, progress: Progress = None, **kw: Any) -> StatResult:
    """A lower confidence bound on eps from StatDP-style testing (valid with confidence ``1 - alpha``).

    ``extra`` keeps the bisection (largest eps rejected, smallest not rejected), which is
    no confidence interval, and the bound's event and counts.
    """
    sampler = _sampler(sampler)
    t0 = time.perf_counter()
    tester = StatDPTester(sampler, n_test=samples, n_select=kw.pop("n_select", max(1000, samples // 5)),
                          seed=seed, progress=progress, **kw)
    iv = tester.interval(alpha=alpha, precision=precision)
    b = iv.lower
    cand = _candidate(sampler, b, tuple(iv.one_sided), "statdp") if b else None
    return StatResult("statdp", cand, iv.one_sided[0], 1 - alpha, seed, samples,
                      {**tester.timings, "total": time.perf_counter() - t0}, precision=precision,
                      extra={"alpha": alpha, "lower_bound": b.to_json() if b else None,
                             "bisection": [iv.lo, iv.hi], "probes": [p.to_json() for p in iv.probes],
                             "limits_hit": [iv.stopped] if iv.stopped else []})


def sniper_estimate(sampler: Any, *, samples: int = 10_000_000, confidence: float = 0.9, seed: int = 0,
                    progress: Progress = None, **kw: Any) -> StatResult:
    """A DP-Sniper-style lower bound on eps, its exported attack as the witness event.

    ``samples`` is the whole run's budget of outputs, every stage and input included
    (:func:`~hybrid.testers.sniper.attack_sizes`; each stage draws at least 10^4 per input): a
    seed gives the same bound on any machine, and a slow black box is not sampled more
    than asked.  Stage sizes given in ``kw`` override the split.
    """
    sampler = _sampler(sampler)
    check_seed(seed)
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise ParameterError(f"the sample budget must be a positive integer, got {samples!r}")
    t0 = time.perf_counter()
    pairs = kw.get("pairs")
    pairs = pairs if pairs is not None else pattern_pairs(sampler.domain, sampler.neighbours)
    inputs = len({x for p in pairs for x in (p.x, p.x_prime)}) or 1
    sizes = {**attack_sizes(samples, inputs), **kw}
    tester = SniperTester(sampler, confidence=confidence, seed=seed, progress=progress, **sizes)
    r = tester.run()
    cand = candidate_of(sampler, r.pair.x, r.pair.x_prime, r.attack, (r.eps_lcb, math.inf), "sniper")
    k1, n1, k2, n2 = r.counts
    return StatResult("sniper", cand, r.eps_lcb, confidence, seed, samples,
                      {**r.timings, "total": time.perf_counter() - t0},
                      extra={"eps_hat": r.eps_hat, "c": r.attack.c, "counts": {"x": [k1, n1], "x_prime": [k2, n2]},
                             "correction": r.correction, "pairs": [p.to_json() for p in r.pairs],
                             "outputs_drawn": tester.drawn, "limits_hit": r.limits})


def audit_test(sampler: Any, *, samples: int = 1_000_000, beta: float = 0.05, guess_fraction: float = 1.0,
               seed: int = 0, progress: Progress = None, **kw: Any) -> StatResult:
    """The classic audit: an attack trained on a small budget guesses the coin of ``samples`` runs.

    The guesser is the attack's score centred at the median score of training-like
    outputs of both inputs; the ``guess_fraction`` most confident runs are guessed.
    """
    sampler = _sampler(sampler)
    if not 0 < guess_fraction <= 1:
        raise ParameterError(f"guess_fraction must lie in (0, 1], got {guess_fraction}")
    check_seed(seed)
    t0 = time.perf_counter()
    if progress:
        progress("training the guesser")
    budget = dict(n_train=200_000, n_threshold=200_000, n_check=200_000, n_final=200_000)
    budget.update(kw)
    r = SniperTester(sampler, seed=seed, **budget).run()
    attack = r.attack
    calib = np.concatenate([attack.scores(sampler.sample(r.pair.x, 100_000, derive_seed(seed, 1))),
                            attack.scores(sampler.sample(r.pair.x_prime, 100_000, derive_seed(seed, 2)))])
    centre = float(np.median(calib))
    if progress:
        progress("auditing")
    a = classic_audit(sampler, r.pair, lambda out: attack.scores(out) - centre, runs=samples,
                      guesses=max(1, int(guess_fraction * samples)), beta=beta, seed=seed)
    cand = candidate_of(sampler, r.pair.x, r.pair.x_prime, attack, (a.eps_lower, math.inf), "audit")
    return StatResult("audit", cand, a.eps_lower, 1 - beta, seed, samples,
                      {**a.timings, "total": time.perf_counter() - t0},
                      extra={"correct": a.correct, "guesses": a.guesses, "max_certifiable": a.max_certifiable,
                             "centre": centre})
