"""The hybrid search: testing proposes, an exact backend certifies and bisects epsilon.

For a discrete mechanism (one with an exact backend):

1. **propose** -- sample every candidate input pair (StatDP's patterns plus random
   neighbour pairs) with the numba sampler and run the StatDP-style test: a statistical
   interval for eps, the event that achieved it, and a ranking of the pairs;
2. **certify** -- compute the exact ratio of the proposed event on its pair, and the exact
   level of each promising pair; a certified lower bound needs no confidence level;
3. **bisect** -- on the best pair, bisect eps with the exact decision oracle
   ``exists_violation(x, x', c)`` from the tester's interval (FAIER's Algorithm 4 starts
   from StatDP's) until the certified bracket is narrower than ``precision``;
4. **improve** -- local search on the inputs while the certified ratio grows;
5. **global** -- where the domain is small, verify every neighbour pair, so the result can
   also say ``proved_dp`` and ``eps_upper``;
6. **grow** -- for mechanisms with a length parameter (sparse vector, above threshold),
   lengthen the input until the certified bound crosses the claim or a limit.

Continuous mechanisms go through :mod:`hybrid.continuous_search`: the same stages with
the continuous backend's rigorous enclosures (``certified: true``, a ``ratio_enclosure``);
a program it cannot handle gets the best statistical bound (StatDP interval and the
classifier attack), ``certified: false``, and says why.
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Mapping

import numpy as np

from hybrid.formats import output_to_json, params_to_json, value_to_json
from hybrid.inputs import Pair, coordinate_moves, pattern_pairs, random_pair
from hybrid.seeds import derive_seed
from hybrid.statdp import StatDPTester
from samplers import catalogue, deadline
from samplers.compile import compile_sampler
from samplers.deadline import TimeLimitReached
from samplers.errors import BudgetExceeded, ParameterError
from samplers.seed import check_seed
from samplers.lang.ir import Program
from samplers.lang.mechanism import Mechanism
from verifiers.backends import get_backend
from verifiers.base import ExactBackend, neighbour_pairs, refuse_continuous
from verifiers.epsilon import (
    bisect_epsilon,
    eps_lower,
    eps_upper,
    exp_bracket,
    within_exp,
)
from verifiers.ratio import INF, Ratio, ratio_str

Progress = Callable[[str], None]
EVENT_OUTPUTS = 1 << 16  # weigh the tester's event exactly only over at most this many outputs
SCREENED = 4  # StatDP patterns (each in both orders) the attack trains on, best by testing first


@dataclass
class Budget:
    """Explicit limits of one search; hitting one is reported in the result.

    Every field but ``time`` is a count and decides the result, so a seed gives the
    same result on any machine; ``time`` is a safety limit (:mod:`samplers.deadline`)
    that stops whatever stage is running and says so in ``limits_hit``.
    """

    time: float = 300.0  # seconds for the whole search: a safety limit only
    samples: int = 20_000_000  # testers' budget: StatDP's pairs share half, the attack draws it all
    global_pairs: int = 20_000  # run the global verification only up to this many neighbour pairs
    local_steps: int = 300  # exact pair evaluations in the local search (each start, continuous noise)
    explore: int = 32  # random neighbour pairs evaluated exactly besides the tested ones
    certify_pairs: int = 64  # continuous noise: candidate pairs whose level is enclosed or event tuned
    tune_steps: int = 2_000  # continuous noise: certified ratios computed tuning one pair's event
    enclosures: int = 20_000  # continuous noise: regions enclosed certifying and improving (the work done)
    max_length: int = 40  # longest input tried when growing a length parameter


@dataclass
class Candidate:
    """A pair with what testing and the exact backend said about it."""

    pair: Pair
    stat_score: float = math.nan
    ratio: Ratio | None = None  # exact best single-output ratio
    output: Any = None

    def key(self) -> tuple:
        return (self.pair.x, self.pair.x_prime)


@dataclass
class SearchResult:
    """What a search found: the JSON result contract of DESIGN.md plus search details."""

    mechanism: str
    params: dict[str, Any]
    certified: bool
    eps_lower: float
    ratio: Ratio | None
    witness: dict[str, Any] | None
    backend: str | None
    precision: float
    seed: int
    stat_interval: list[float] | None = None  # testing alone: [eps lower bound, inf] ...
    stat_confidence: float | None = None  # ... with this confidence
    bracket: list[float] | None = None
    eps_upper: float | None = None
    proved_dp: bool | None = None
    claimed_eps: float | None = None
    refuted: bool | None = None
    candidates: list[dict[str, Any]] = field(default_factory=list)
    growth: list[dict[str, Any]] = field(default_factory=list)
    samples: int = 0
    exact_queries: int = 0
    limits_hit: list[str] = field(default_factory=list)
    note: str = ""
    timings: dict[str, float] = field(default_factory=dict)
    pvalue_curve: list[tuple[float, float]] = field(default_factory=list)
    ratio_enclosure: list[str] | None = None  # continuous noise: [lo, hi] around the ratio (lo = ratio)

    def to_json(self) -> dict[str, Any]:
        out = {
            "mechanism": self.mechanism, "params": params_to_json(self.params),
            "certified": self.certified, "eps_lower": self.eps_lower,
            "ratio": None if self.ratio is None else ratio_str(self.ratio),
            "witness": self.witness, "backend": self.backend, "precision": self.precision,
            "seed": self.seed, "stat_interval": value_to_json(self.stat_interval),
            "stat_confidence": self.stat_confidence,
            "bracket": value_to_json(self.bracket), "eps_upper": value_to_json(self.eps_upper),
            "proved_dp": self.proved_dp, "claimed_eps": self.claimed_eps, "refuted": self.refuted,
            "candidates": self.candidates, "growth": self.growth, "samples": self.samples,
            "exact_queries": self.exact_queries, "limits_hit": self.limits_hit, "note": self.note,
            "timings": {k: round(v, 4) for k, v in self.timings.items()},
            "pvalue_curve": [[e, p] for e, p in self.pvalue_curve],
        }
        if out["eps_lower"] == INF:
            out["eps_lower"] = "inf"
        if self.ratio_enclosure is not None:
            out["ratio_enclosure"] = self.ratio_enclosure
        return out


class _Clock:
    """Per-stage timings; whether the time limit in force (:mod:`samplers.deadline`) has passed."""

    def __init__(self) -> None:
        self.start = time.perf_counter()
        self.timings: dict[str, float] = {}
        self._stage: tuple[str, float] | None = None

    def stage(self, name: str) -> None:
        now = time.perf_counter()
        if self._stage is not None:
            label, t0 = self._stage
            self.timings[label] = self.timings.get(label, 0.0) + now - t0
        self._stage = (name, now)

    def done(self) -> dict[str, float]:
        self.stage("")
        self.timings["total"] = time.perf_counter() - self.start
        return self.timings

    @property
    def expired(self) -> bool:
        return deadline.expired()


class _Search:
    """One run of the pipeline (state shared by the stages)."""

    def __init__(self, program: Program, *, precision: float, claimed_eps: float | None, seed: int,
                 budget: Budget, backend: str, global_check: bool | None, progress: Progress) -> None:
        self.program = program
        self.precision = precision
        self.claimed = claimed_eps
        self.seed = seed
        self.budget = budget
        self.backend_name = backend
        self.global_check = global_check
        self.say = progress
        self.clock = _Clock()
        self.queries = 0
        self.samples = 0
        self.limits: list[str] = []
        self.stat_scores: dict[tuple, float] = {}

    def sampler(self, program: Program) -> Any:
        """The compiled, warmed-up sampler; None when the JIT cannot finish within the time budget."""
        try:
            sampler = compile_sampler(program)
            sampler.warm_up()
            return sampler
        except TimeLimitReached as e:
            self.limits.append(f"no testing: {e}")
            return None

    def propose_in_time(self, sampler: Any) -> tuple[list[Pair], Any]:
        """:meth:`propose`, or the untested StatDP patterns (and no interval) without a sampler or time."""
        if sampler is not None:
            try:
                return self.propose(sampler)
            except TimeLimitReached as e:
                self.limits.append(f"testing stopped: {e}")
        return pattern_pairs(self.program.domain, self.program.neighbours), None

    # -- helpers ---------------------------------------------------------------------------
    def _exact(self, program: Program) -> ExactBackend:
        return get_backend(program, self.backend_name)

    def _pair_level(self, exact: ExactBackend, pair: Pair) -> tuple[Ratio, Any]:
        self.queries += 1
        return exact.pair_epsilon(pair.x, pair.x_prime)

    def _oracle(self, exact: ExactBackend, pair: Pair) -> Callable[[Fraction], Any]:
        def violation(c: Fraction) -> Any:
            self.queries += 1
            return exact.exists_violation(pair.x, pair.x_prime, c)

        return violation

    def _witness(self, program: Program, pair: Pair, event: list[Any]) -> dict[str, Any]:
        return {"mechanism": program.name, "params": params_to_json(program.param_dict),
                "x": list(pair.x), "x_prime": list(pair.x_prime),
                "event": [output_to_json(o) for o in event]}

    # -- stages ----------------------------------------------------------------------------
    def propose(self, sampler: Any) -> tuple[list[Pair], Any]:
        """StatDP-style test over pattern and random pairs: ranked pairs and the interval."""
        program = sampler.program
        rng = np.random.default_rng(derive_seed(self.seed, 11))
        pairs = pattern_pairs(program.domain, program.neighbours)
        seen = {(p.x, p.x_prime) for p in pairs}
        for _ in range(max(4, len(pairs) // 2)):
            try:
                p = random_pair(program.domain, program.neighbours, rng)
            except ValueError:
                break
            if (p.x, p.x_prime) not in seen:
                seen.add((p.x, p.x_prime))
                pairs.append(p)
        per_pair = max(2_000, self.budget.samples // (4 * len(pairs)))
        n_select, n_test = min(100_000, per_pair), min(400_000, 2 * per_pair)
        tester = StatDPTester(sampler, pairs=pairs, n_select=n_select, n_test=n_test,
                              seed=derive_seed(self.seed, 12), progress=self.say)
        interval = tester.interval(precision=max(self.precision, 0.02))
        if interval.stopped:
            self.limits.append(interval.stopped)
        self.samples += 2 * n_select * len(pairs) + 2 * n_test * len(tester._fresh)
        ranked = _rank_pairs(pairs, *tester.selection(), n_select, interval.lo)
        self.stat_scores = {(p.x, p.x_prime): score for p, score in ranked}
        return [p for p, _ in ranked], interval

    def certify(self, exact: ExactBackend, pairs: list[Pair], keep: int = 4) -> list[Candidate]:
        """Exact levels of the most promising pairs (both orders) and of random pairs, best first.

        The random pairs find worst cases without local structure (RAPPOR's depend on
        which inputs' Bloom filters collide), which neither patterns nor moves reach.
        """
        program = exact.program
        rng = np.random.default_rng(derive_seed(self.seed, 14))
        explore = []
        for _ in range(self.budget.explore):
            try:
                explore.append(random_pair(program.domain, program.neighbours, rng))
            except ValueError:
                break
        out: dict[tuple, Candidate] = {}
        try:
            for p in pairs[:keep] + explore:
                for q in (p, p.swapped()):
                    if (q.x, q.x_prime) in out or not exact.program.neighbours.contains(q.x, q.x_prime):
                        continue
                    r, o = self._pair_level(exact, q)
                    out[(q.x, q.x_prime)] = Candidate(q, self.stat_scores.get((q.x, q.x_prime), math.nan), r, o)
        except TimeLimitReached as e:
            if not out:
                raise
            self.limits.append(f"{e}: {len(out)} pairs certified")
        return sorted(out.values(), key=lambda c: -c.ratio)

    def improve(self, exact: ExactBackend, best: Candidate) -> Candidate:
        """First-improvement hill climbing on the exact pair level over single-coordinate moves."""
        program = exact.program
        tried = {best.key()}
        evaluations = 0
        improved = True
        try:
            while improved and best.ratio != INF:
                improved = False
                for move in coordinate_moves(best.pair, program.domain, program.neighbours):
                    if (move.x, move.x_prime) in tried:
                        continue
                    if evaluations >= self.budget.local_steps:
                        self.limits.append(f"local search stopped after {evaluations} exact evaluations "
                                           "(local_steps budget)")
                        return best
                    tried.add((move.x, move.x_prime))
                    evaluations += 1
                    r, o = self._pair_level(exact, move)
                    if r > best.ratio:
                        best, improved = Candidate(move, math.nan, r, o), True
                        break
        except TimeLimitReached as e:
            self.limits.append(f"{e}: local search stopped after {evaluations} exact evaluations")
        return best

    def bisect(self, exact: ExactBackend, best: Candidate, interval: Any) -> tuple[list[float], Any]:
        """Certified bracket for the best pair, starting from the tester's interval."""
        oracle = self._oracle(exact, best.pair)
        lo = interval.lo if interval is not None else 0.0
        hi = interval.hi if interval is not None else INF
        try:
            if lo > 0 and oracle(exp_bracket(lo)[1]) is None:
                lo = 0.0  # the tester's lower end is not certified on this pair
            if hi != INF and oracle(exp_bracket(hi)[0]) is not None:
                hi = INF  # nor its upper end
            b = bisect_epsilon(oracle, lo, hi, self.precision, witness=best.output)
        except TimeLimitReached as e:  # the pair's exact level, certified already, brackets it
            self.limits.append(f"{e}: no bisection, the pair's certified level instead")
            return [eps_lower(best.ratio), eps_upper(best.ratio)], best.output
        return [b.lo, b.hi], b.witness

    def global_verify(self, exact: ExactBackend) -> Any:
        if self.global_check is False:
            return None
        limit = self.budget.global_pairs
        pairs = sum(1 for _ in itertools.islice(neighbour_pairs(exact.program), limit + 1))
        if self.global_check is None and pairs > limit:
            self.limits.append(f"global verification skipped: more than {limit} neighbour pairs")
            return None
        try:
            g = exact.global_epsilon()
        except BudgetExceeded as e:
            self.limits.append(f"global verification stopped: {e}")
            return None
        self.queries += g.pairs
        if not g.complete:
            self.limits.append(f"global verification incomplete: {g.stopped}")
        return g


def _rank_pairs(pairs: list[Pair], cands: Any, owner: np.ndarray, n: int, eps: float) -> list[tuple[Pair, float]]:
    """Pairs by the largest empirical log-ratio of their frequent events, in the favoured direction.

    An event counts when it is not rare at ``eps`` (StatDP's rule); a pair with none
    keeps score NaN and goes last.
    """
    hi, lo = np.maximum(cands.cx, cands.cy), np.minimum(cands.cx, cands.cy)
    score = np.log((hi + 0.5) / (lo + 0.5))
    frequent = (hi + lo) > 0.001 * n * math.exp(min(eps, 700.0))
    out = []
    for i, pair in enumerate(pairs):
        mine = np.flatnonzero((owner == i) & frequent)
        if not len(mine):
            out.append((pair, math.nan))
            continue
        j = mine[int(np.argmax(score[mine]))]
        out.append((pair.swapped() if cands.cy[j] > cands.cx[j] else pair, float(score[j])))
    return sorted(out, key=lambda ps: -ps[1] if not math.isnan(ps[1]) else INF)


def _length_param(mech: Mechanism | None) -> str | None:
    return getattr(mech, "length_param", None) if mech is not None else None


def search(
    mech: Mechanism | Program | str,
    params: Mapping[str, Any] | None = None,
    *,
    precision: float = 1e-3,
    claimed_eps: float | None = None,
    seed: int = 0,
    time_budget: float | None = None,
    budget: Budget | None = None,
    backend: str = "auto",
    global_check: bool | None = None,
    progress: Progress | None = None,
) -> SearchResult:
    """Find a certified lower bound on epsilon (see the module docstring).

    ``global_check`` None decides by size (``budget.global_pairs``); ``time_budget``
    overrides ``budget.time``, a safety limit: a stage it stops gives a partial result
    that says so in ``limits_hit`` (the best certified pair so far, or the testers'
    statistical bound when no exact answer came in time).
    """
    if not precision > 0:
        raise ParameterError(f"precision must be positive, got {precision}")
    if claimed_eps is not None and not 0 <= claimed_eps < INF:
        raise ParameterError(f"claimed eps must be a finite non-negative number, got {claimed_eps}")
    check_seed(seed)
    if isinstance(mech, str):
        mech = catalogue.get(mech)
    budget = budget or Budget()
    if time_budget is not None:
        budget.time = float(time_budget)
    with deadline.time_limit(budget.time):
        program = mech.trace(**(params or {})) if isinstance(mech, Mechanism) else mech
        if not isinstance(mech, Mechanism) and params:
            raise ParameterError("parameters cannot be given with an already traced program")
        if program.continuous and backend not in ("auto", "continuous"):  # a discrete backend cannot run it
            refuse_continuous(program, backend)
        s = _Search(program, precision=precision, claimed_eps=claimed_eps, seed=seed, budget=budget,
                    backend=backend, global_check=global_check, progress=progress or (lambda m: None))
        if program.continuous or backend == "continuous":
            from hybrid.continuous_search import continuous_search

            return continuous_search(s, program)
        return _discrete(s, program, mech if isinstance(mech, Mechanism) else None)


def _discrete(s: _Search, program: Program, mech: Mechanism | None) -> SearchResult:
    clock = s.clock
    clock.stage("compile")
    exact = s._exact(program)
    sampler = s.sampler(program)
    clock.stage("propose")
    s.say("testing candidate pairs")
    pairs, interval = s.propose_in_time(sampler)
    clock.stage("certify")
    s.say("certifying the best pairs exactly")
    try:
        cands = s.certify(exact, pairs)
    except (TimeLimitReached, BudgetExceeded) as e:  # no exact answer at all: what testing found
        return _uncertified(s, program, interval, f"no exact result ({e})")
    # the tester's own event, certified as proposed
    proposed = None
    if interval is not None and interval.rejected is not None:
        d = interval.rejected
        proposed = {"x": list(d.pair.x), "x_prime": list(d.pair.x_prime), "event": d.event.describe(),
                    "p_value": d.p_value, "eps": d.eps, "ratio": None}
        if program.output_space <= EVENT_OUTPUTS:
            try:
                proposed["ratio"] = ratio_str(exact.witness_ratio(d.pair.x, d.pair.x_prime, d.event))
                s.queries += 1
            except TimeLimitReached as e:
                s.limits.append(f"{e}: the tester's event was not weighed")
        else:  # a feature event is a predicate: weighing it lists every output
            proposed["note"] = (f"event not weighed: up to {program.output_space} outputs; "
                                "the pair's exact level is certified instead")
    clock.stage("improve")
    best = s.improve(exact, cands[0])
    clock.stage("bisect")
    s.say("bisecting epsilon with the exact oracle")
    bracket, out = s.bisect(exact, best, interval)
    out = out if out is not None else best.output
    try:
        witness_ratio = exact.witness_ratio(best.pair.x, best.pair.x_prime, [out]) if out is not None else Fraction(0)
        s.queries += 1
    except TimeLimitReached:  # the pair's level, certified already, is that of its own output
        out, witness_ratio = best.output, best.ratio
    lower = eps_lower(witness_ratio) if witness_ratio else 0.0
    bracket[0] = max(bracket[0], lower) if lower != INF else INF
    clock.stage("global")
    g = s.global_verify(exact)
    result_ratio, witness = witness_ratio, s._witness(program, best.pair, [out] if out is not None else [])
    eps_up, proved = None, None
    if g is not None:
        if g.ratio > result_ratio:  # a better pair: its exact level is known, so is its bracket
            result_ratio, lower = g.ratio, g.eps_lower
            witness = s._witness(program, Pair(g.x, g.x_prime, "global"), [] if g.output is None else [g.output])
            bracket = [g.eps_lower, eps_upper(g.ratio)]
        if g.complete:
            eps_up = g.eps_upper
            if s.claimed is not None:
                proved = within_exp(g.ratio, s.claimed)
    result = SearchResult(
        mechanism=program.name, params=program.param_dict, certified=True, eps_lower=lower,
        ratio=result_ratio, witness=witness, backend=exact.name, precision=s.precision, seed=s.seed,
        stat_interval=_one_sided(interval), stat_confidence=_confidence(interval), bracket=bracket,
        eps_upper=eps_up, proved_dp=proved, claimed_eps=s.claimed,
        candidates=[{"x": list(c.pair.x), "x_prime": list(c.pair.x_prime), "origin": c.pair.origin,
                     "ratio": ratio_str(c.ratio), "output": output_to_json(c.output)} for c in cands],
        pvalue_curve=[] if interval is None else [(d.eps, d.p_value) for d in interval.probes],
    )
    if proposed is not None:
        result.candidates.insert(0, {"proposed_by": "statdp", **proposed})
    if s.claimed is not None:
        result.refuted = lower > s.claimed
    length = _length_param(mech)
    if length is not None and s.claimed is not None and result.refuted:
        result.note = _refuted_at(s.claimed, length, program.param_dict[length])
    elif length is not None and s.claimed is not None:
        clock.stage("grow")
        _grow(s, mech, program, length, result)
    return _finish(s, result)


def _finish(s: _Search, result: SearchResult) -> SearchResult:
    """Counts, the limits hit (the time budget named once) and the timings."""
    result.samples, result.exact_queries, result.limits_hit = s.samples, s.queries, s.limits
    if s.clock.expired and not any("time budget" in lim for lim in s.limits):
        result.limits_hit.append(f"time budget of {s.budget.time:g} s reached")
    result.timings = s.clock.done()
    return result


def _uncertified(s: _Search, program: Program, interval: Any, why: str) -> SearchResult:
    """Testing's one-sided bound as a statistical result, when no exact answer came in time."""
    s.limits.append(why)
    b = None if interval is None else interval.lower
    witness = None if b is None else {"mechanism": program.name, "params": params_to_json(program.param_dict),
                                      "x": list(b.pair.x), "x_prime": list(b.pair.x_prime),
                                      "event": b.event.to_json()}
    result = SearchResult(
        mechanism=program.name, params=program.param_dict, certified=False,
        eps_lower=0.0 if b is None else b.eps_lower, ratio=None, witness=witness, backend=None,
        precision=s.precision, seed=s.seed, claimed_eps=s.claimed,
        stat_interval=_one_sided(interval), stat_confidence=_confidence(interval),
        note=(f"{why}: eps_lower is testing's one-sided bound at confidence {b.confidence:g}, not certified"
              if b is not None else f"{why}: no bound (testing did not finish either)"),
        pvalue_curve=[] if interval is None else [(p.eps, p.p_value) for p in interval.probes],
    )
    return _finish(s, result)


def _one_sided(interval: Any) -> list[float] | None:
    """What testing alone states: ``[bound, inf]`` (None when testing did not run)."""
    return None if interval is None else interval.one_sided


def _confidence(interval: Any) -> float | None:
    return None if interval is None else 1 - interval.alpha


def _extensions(pair: Pair, length: int) -> list[Pair]:
    """Candidate pairs of length ``length`` from a shorter pair: repeat one coordinate."""
    out = []
    k = len(pair.x)
    for i in range(k):
        reps = length - k
        x = pair.x[:i] + (pair.x[i],) * reps + pair.x[i:]
        xp = pair.x_prime[:i] + (pair.x_prime[i],) * reps + pair.x_prime[i:]
        out.append(Pair(x, xp, "extended witness"))
    return out


def _refuted_at(claimed: float, length: str, n: int) -> str:
    return f"the claim eps = {claimed:g} is refuted at {length} = {n}"


def _grow(s: _Search, mech: Mechanism, program: Program, length: str, result: SearchResult) -> None:
    """Lengthen the input until the certified bound crosses the claim (or a limit)."""
    params = dict(program.param_dict)
    best_pair = Pair(tuple(result.witness["x"]), tuple(result.witness["x_prime"]), "witness")
    start = params[length]
    for n in range(start + 1, s.budget.max_length + 1):
        if s.clock.expired:
            s.limits.append(f"time budget reached while growing {length} (at {length}={n})")
            return
        params[length] = n
        try:
            prog = mech.trace(**params)
            exact = s._exact(prog)
            cands = _extensions(best_pair, n) + pattern_pairs(prog.domain, prog.neighbours)
            scored = [Candidate(p, math.nan, *s._pair_level(exact, p)) for p in cands
                      if prog.neighbours.contains(p.x, p.x_prime)]
        except (TimeLimitReached, BudgetExceeded) as e:
            s.limits.append(f"{e} while growing {length} (at {length}={n})")
            return
        best = max(scored, key=lambda c: c.ratio)
        best = s.improve(exact, best)
        best_pair = best.pair
        low = eps_lower(best.ratio)
        result.growth.append({length: n, "ratio": ratio_str(best.ratio), "eps_lower": value_to_json(low),
                              "x": list(best.pair.x), "x_prime": list(best.pair.x_prime),
                              "output": output_to_json(best.output)})
        if low > s.claimed:
            result.eps_lower, result.ratio, result.refuted = low, best.ratio, True
            result.bracket = [low, eps_upper(best.ratio)]
            result.eps_upper, result.proved_dp = None, False  # the global check covered a shorter length
            result.witness = s._witness(prog, best.pair, [best.output])
            result.note = _refuted_at(s.claimed, length, n)
            return
    s.limits.append(f"{length} grown to {s.budget.max_length} without crossing the claim")


def _statistical(s: _Search, program: Program) -> SearchResult:
    """Continuous mechanisms: the best statistical bound (StatDP interval, attack bound), not certified."""
    from hybrid.testing import sniper_estimate

    s.clock.stage("compile")
    sampler = s.sampler(program)
    if sampler is None:
        return _uncertified(s, program, None, "the sampler could not be compiled in time")
    s.clock.stage("propose")
    s.say("testing candidate pairs")
    ranked, interval = s.propose_in_time(sampler)
    patterns = [p for p in ranked if not p.origin.startswith("random")]
    # the attack trains on the patterns testing ranks best, each in both orders
    attack_pairs = list({(q.x, q.x_prime): q for p in patterns[:SCREENED] for q in (p, p.swapped())}.values())
    s.clock.stage("estimate")
    try:
        est = sniper_estimate(sampler, samples=s.budget.samples, seed=derive_seed(s.seed, 22), progress=s.say,
                              pairs=attack_pairs)
    except TimeLimitReached as e:
        return _uncertified(s, program, interval, f"the attack did not train a pair ({e})")
    s.samples += est.extra["outputs_drawn"]
    s.limits.extend(est.extra["limits_hit"])
    result = SearchResult(
        mechanism=program.name, params=program.param_dict, certified=False, eps_lower=est.eps_lower,
        ratio=None, witness=est.candidate.witness() if est.candidate else None, backend=None,
        precision=s.precision, seed=s.seed, claimed_eps=s.claimed,
        stat_interval=_one_sided(interval), stat_confidence=_confidence(interval),
        candidates=[est.candidate.to_json()] if est.candidate else [],
        note=(f"{program.name} draws continuous noise, which no exact backend supports: eps_lower is the "
              f"attack's bound at confidence {est.confidence:g}; stat_interval is the StatDP-style bound at confidence "
              f"{_confidence(interval)}"),
        pvalue_curve=[] if interval is None else [(d.eps, d.p_value) for d in interval.probes],
    )
    if s.claimed is not None:
        result.refuted = est.eps_lower > s.claimed  # statistically, at the stated confidence
    return _finish(s, result)
