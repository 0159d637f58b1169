"""One search run's state and its result (DESIGN.md's contract), shared by the discrete and
continuous pipelines: the budget and clock, the testers' proposals, the exact backend, and
the bookkeeping every stage reports into (queries, samples, limits hit, progress).
"""

from __future__ import annotations

import itertools
import math
import time
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from hybrid.formats import inputs_to_json, output_to_json, params_to_json, value_to_json
from hybrid.inputs import Pair, coordinate_moves, pattern_pairs, random_pair
from hybrid.seeds import derive_seed
from hybrid.searcher.budget import Budget
from hybrid.searcher.forked_tasks import TaskLog
from hybrid.searcher.stopping import Convergence
from hybrid.testers.statdp import StatDPTester
from samplers import deadline
from samplers.compile import compile_sampler
from samplers.deadline import TimeLimitReached
from samplers.memory import TooLarge
from samplers.errors import BudgetExceeded
from samplers.lang.ir import Program
from verifiers.backends import get_backend
from verifiers.base import ExactBackend, neighbour_pairs
from verifiers.epsilon import (
    bisect_epsilon,
    eps_lower,
    eps_upper,
    exp_bracket,
)
from verifiers.ratio import INF, Ratio, ratio_str

Progress = Callable[[str], None]


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
    proof: dict[str, Any] | None = None  # the checker-confirmed proof behind a proved eps_upper (its JSON)
    upper_source: str | None = None  # what gave eps_upper: "global verification" or "proof (<rule> rule)"
    no_proof: list[dict[str, Any]] = field(default_factory=list)  # why each proof rule found none
    stopped_by: list[str] = field(default_factory=list)  # the rule that ended each local search (stopping.STOPPED_BY)
    float_audit: Any = None  # verifiers.float64.verdict.FloatAudit, when the search ran with float_semantics
    # delta at the claimed eps (hybrid.searcher.delta_claim), reported only where it applies
    claimed_delta: float | None = None
    delta_upper: float | None = None  # proved, rounded up
    delta_upper_source: str | None = None
    delta_lower: float | None = None  # certified, rounded down
    delta_witness: dict[str, Any] | None = None  # the pair and event of delta_lower
    delta_proof: dict[str, Any] | None = None  # the (eps, delta) proof behind delta_upper
    delta_no_proof: list[str] | None = None  # why no rule proved delta at the claim
    reports_delta: bool = False  # the delta fields above are part of the JSON
    slice: dict[str, Any] | None = None  # the program slice searched at large n (hybrid.searcher.slices)
    tasks: list[dict[str, Any]] = field(default_factory=list)  # the search's own stretches and forked tasks (seconds)

    def witness_pair(self) -> Pair:
        """The witness's pair of inputs."""
        w = self.witness or {}
        return Pair(tuple(w["x"]), tuple(w["x_prime"]), "witness")

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
            "stopped_by": self.stopped_by,
        }
        if self.tasks:  # timings, like ``timings``: only the list's shape is the same at any number of workers
            out["tasks"] = self.tasks
        if out["eps_lower"] == INF:
            out["eps_lower"] = "inf"
        if self.ratio_enclosure is not None:
            out["ratio_enclosure"] = self.ratio_enclosure
        if self.slice is not None:
            out["slice"] = self.slice
        out["upper_source"] = self.upper_source
        out["proof"] = self.proof
        out["no_proof"] = self.no_proof
        if self.reports_delta:
            out |= {"claimed_delta": self.claimed_delta, "delta_lower": self.delta_lower,
                    "delta_upper": self.delta_upper, "delta_upper_source": self.delta_upper_source,
                    "delta_witness": self.delta_witness, "delta_proof": self.delta_proof,
                    "delta_no_proof": self.delta_no_proof}
        if self.float_audit is not None:
            out.update(self.float_audit.to_json())
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


class Search:
    """One run of the pipeline (state shared by the stages)."""

    def __init__(self, program: Program, *, precision: float, claimed_eps: float | None, seed: int,
                 budget: Budget, backend: str, global_check: bool | None, progress: Progress,
                 proved_upper: float | None = None, claimed_delta: Fraction | None = None) -> None:
        self.program = program
        self.precision = precision
        self.claimed = claimed_eps
        self.claimed_delta = claimed_delta  # exact: the (eps, delta) claim's delta
        self.seed = seed
        self.budget = budget
        self.backend_name = backend
        self.global_check = global_check
        self.say = progress
        self.clock = _Clock()
        self.tasks = TaskLog()  # forked tasks (hybrid.searcher.forked_tasks), for the critical path
        self.queries = 0
        self.samples = 0
        self.limits: list[str] = []
        self.proved_upper = proved_upper  # a proved upper bound on the level (a prover's), which ends local searches
        self.stopped_by: list[str] = []  # the rule that ended each local search
        self.stat_scores: dict[tuple, float] = {}
        self.proof: Any = None  # set by the proof stage (hybrid.searcher.proof_stage): a checked Proof
        self.proof_tried = False  # the proof stage ran (a fallback pipeline does not run it again)
        self.no_proof: list[Any] = []  # else each rule's NoProof
        self.delta_proof: Any = None  # an (eps, delta) proof at the claimed eps (hybrid.searcher.delta_claim)
        self.delta_no_proof: list[str] | None = None  # else why not

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
        """:meth:`propose`, or the untested StatDP patterns (and no interval) without a sampler, time or
        memory (at large n the interpreter kernel gives a sampler whose batches may not fit)."""
        if sampler is not None:
            try:
                return self.propose(sampler)
            except (TimeLimitReached, TooLarge) as e:  # the time limit, or batches larger than memory
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
                "event": [output_to_json(o) for o in event], **inputs_to_json(program)}

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
        improved, came_from = True, None
        rule = self.convergence()
        stop = rule.start(certified_level(best.ratio))
        try:
            while improved and best.ratio != INF and not stop:
                improved = False
                for move in coordinate_moves(best.pair, program.domain, program.neighbours, came_from):
                    if (move.x, move.x_prime) in tried:
                        continue
                    if evaluations >= self.budget.local_steps:
                        self.limits.append(f"local search stopped after {evaluations} exact evaluations "
                                           "(local_steps budget)")
                        self.stopped_by.append("local_steps")
                        return best
                    tried.add((move.x, move.x_prime))
                    evaluations += 1
                    r, o = self._pair_level(exact, move)
                    if r > best.ratio:
                        came_from, best, improved = best.pair, Candidate(move, math.nan, r, o), True
                    stop = rule.step(certified_level(best.ratio))
                    if improved or stop:
                        break
        except TimeLimitReached as e:
            self.limits.append(f"{e}: local search stopped after {evaluations} exact evaluations")
            stop = "time"
        self.stopped_by.append(stop or "local_optimum")
        return best

    def convergence(self) -> Convergence:
        """The stop rules of a local search (:mod:`hybrid.searcher.stopping`)."""
        return Convergence(self.precision, self.budget.window, self.proved_upper)

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


def certified_level(r: Ratio) -> float:
    """The level ``ln r`` of a certified ratio, rounded down (0 for a ratio below 1, inf for inf)."""
    return eps_lower(r) if r else 0.0


def finish(s: Search, result: SearchResult) -> SearchResult:
    """Counts, the limits hit (the time budget named once) and the timings."""
    result.samples, result.exact_queries, result.limits_hit = s.samples, s.queries, s.limits
    result.stopped_by = s.stopped_by
    if s.clock.expired and not any("time budget" in lim for lim in s.limits):
        result.limits_hit.append(f"time budget of {s.budget.time:g} s reached")
    result.timings = s.clock.done()
    result.tasks = s.tasks.done()
    return result
