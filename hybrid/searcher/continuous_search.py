"""The hybrid search on mechanisms with continuous noise: testing proposes, enclosures certify.

The same pipeline as for discrete noise (:mod:`hybrid.searcher.search`), with the continuous
backend (:mod:`verifiers.continuous.backend`) in place of an exact one:

1. **propose** -- the StatDP-style test ranks candidate pairs and gives the statistical
   interval (kept in the result beside the certified bound);
2. **certify** -- for finite outputs (argmax indices, sparse-vector answers), each
   promising pair's level ``max_o P(o|x) / P(o|x')`` is enclosed; for released
   continuous values, an event is built and tuned on each pair's exact structure
   (:mod:`hybrid.searcher.numeric_events`) and its ratio enclosed; the tester's own event is
   certified too;
   One argmax over many values is certified instead on the events ``{index = o}`` of a few
   likely winners per pair (``_Winners``), each from its winner's region only, so a pair costs
   ``O(n)`` constraints, not ``O(n^2)``;
3. **improve** -- finite outputs: local search on the inputs from the best few pairs while the
   certified ratio grows, each ended by the stop rules of :mod:`hybrid.searcher.stopping`
   (converged, a proved upper bound met, a local optimum, a budget), named in ``stopped_by``;
4. **bracket** -- the best pair's level enclosed to ``precision`` (finite outputs), or the
   witness event's ratio enclosure (numeric outputs); ``eps_lower`` is ``ln`` of the
   enclosure's lower end, rounded down;
5. **global** -- finite outputs on a domain small enough: every neighbour pair.

Everything certified is certified against the real-number semantics of the noise (the
laws with their exact scales), not a floating-point sampler.  A program the backend
cannot handle (a product of two noise values, too many paths) falls back to the
statistical search, and the note says why.

Counts decide the result (:class:`hybrid.searcher.budget.Budget`: ``certify_pairs`` candidate
pairs, ``tune_steps`` certified ratios per tuned event, ``local_steps`` per local search,
``enclosures`` regions enclosed in all -- the work, which a pair of a large sparse vector
takes thousands of and the Laplace mechanism a handful -- the ``work`` of enclosing them (the
regions' constraints and the integration steps, :attr:`ContinuousBackend.work`, which grows
as the time does, about as n^2 per pair with n queries), and the backend's refinement levels), so a seed gives the same result on any machine, busy or not.  The time budget
is a safety limit: a stage it stops keeps what was certified so far and ``limits_hit``
says so; with nothing certified, the result is testing's statistical bound,
``certified: false``.
"""

from __future__ import annotations

import dataclasses
import itertools
from fractions import Fraction
from typing import Any, Callable, Iterator

import numpy as np

from hybrid.formats import output_to_json
from hybrid.inputs import Pair, coordinate_moves, random_pair
from hybrid.searcher.budget import Budget
from hybrid.searcher.draw_parts import combine, draw_plan
from hybrid.searcher.delta_claim import continuous_lower, settle, wanted
from hybrid.searcher.forked_tasks import ordered
from hybrid.searcher.numeric_events import EventTuner, Tuned
from hybrid.searcher.path_slices import path_plan
from hybrid.searcher.proof_stage import attach, prove_stage
from hybrid.searcher.regions import symbolic
from hybrid.searcher.slices import plan, sliced_search
from hybrid.searcher.state import SearchResult, certified_level, finish, Search
from hybrid.searcher.statistical import confidence_of, one_sided, statistical, uncertified
from hybrid.testers.events import SetEvent
from hybrid.testers.features import IDENTITY
from hybrid.seeds import derive_seed
from samplers.deadline import TimeLimitReached
from samplers.errors import LimitExceeded, UnsupportedByBackend
from samplers.lang.ir import Program
from verifiers.backends import get_backend
from verifiers.continuous.backend import ContinuousBackend, PairLevel, eps_bracket
from verifiers.continuous.enclosure import RatioEnclosure
from verifiers.epsilon import within_exp
from verifiers.ratio import INF, log_ratio, parse_ratio, ratio_str

PROPOSE_SAMPLES = 1_000_000  # the tester only proposes here: certification does not need more
KEEP = 4  # best-tested pairs certified first (each in both orders)
STARTS = 3  # local searches, from the best certified pairs
FINITE_PER_TASK = 4  # finite outputs: candidate pairs (with their swaps) per forked task
CERTIFY_SHARE = 0.5  # of the enclosures budget, for certifying candidates when a local search follows
MANY_WINNERS = 64  # an argmax over more values is certified on a few winners' events (_Winners)
WINNERS_TRIED = 3  # events {index = o} certified per pair there
SEMANTICS = ("certified against the real-number semantics of the noise (exact scales), "
             "not a floating-point implementation")


def continuous_search(s: Search, program: Program) -> SearchResult:
    """Certified search on a program with continuous noise (see the module docstring)."""
    clock = s.clock
    clock.stage("compile")
    slices = None if s.claimed_delta is not None else (plan(program, s.budget.max_length) or draw_plan(program)
                                                         or path_plan(program, s.budget.enclosures))
    if slices is not None:  # a large program, parts of independent draws, or one of many paths: searched on
        # slices, then proved whole
        return sliced_search(s, program, slices, continuous_search, combine if slices[0].draw_part else None)
    backend = get_backend(program, "continuous")  # running-max loops read as argmax
    sampler = s.sampler(program)
    clock.stage("prove")
    prove_stage(s, program)  # it needs no sampler: a program too large to compile may still be proved
    clock.stage("propose")
    s.say("testing candidate pairs")
    full = s.budget
    s.budget = dataclasses.replace(full, samples=min(full.samples, PROPOSE_SAMPLES))
    try:
        pairs, interval = s.propose_in_time(sampler)
    finally:
        s.budget = full
    clock.stage("certify")
    s.say("certifying candidates with rigorous enclosures")
    try:
        many = _many_winners(backend, pairs[0].x)
        finite = many or backend.finite_outputs(pairs[0].x)
        if not finite and sampler is None:  # events on released values are tuned on samples
            return attach(s, uncertified(s, program, None, "no certified result: the sampler was not compiled in "
                                                           "time, and events on released values are tuned on samples"))
        run = _Winners(s, backend) if many else _Finite(s, backend) if finite else _Numeric(s, backend, sampler)
        best = run.certify(_candidates(s, program, pairs, patterns_first=not finite))
        proposed = _proposed(s, backend, interval, many)
    except TimeLimitReached as e:
        return uncertified(s, program, interval, f"no certified result ({e})")
    except (UnsupportedByBackend, LimitExceeded) as e:
        result = statistical(s, program)
        result.note = f"not certified ({e}); {result.note}"
        return result
    if finite:
        clock.stage("improve")
        best = run.improve(best)
    clock.stage("bisect")
    s.say("enclosing the best witness")
    ratio, bracket, event = run.finish(best)
    lower = bracket[0]
    clock.stage("global")
    g = run.global_level() if finite else None
    result = SearchResult(
        mechanism=program.name, params=program.param_dict, certified=True, eps_lower=lower, ratio=ratio.lo,
        witness=s._witness(program, best.pair, []) | {"event": event}, backend=backend.name,
        precision=s.precision, seed=s.seed, stat_interval=one_sided(interval), stat_confidence=confidence_of(interval),
        bracket=list(bracket), claimed_eps=s.claimed, candidates=run.table,
        pvalue_curve=[] if interval is None else [(d.eps, d.p_value) for d in interval.probes],
        note=f"{program.name} draws continuous noise: {SEMANTICS}",
    )
    result.ratio_enclosure = ratio.to_json()
    if many:  # no pair's level was enclosed: the witness event's ratio (ratio_enclosure) is all there is
        result.bracket = None
    if proposed is not None:
        result.candidates.insert(0, proposed)
    if g is not None:
        result.eps_upper = g.eps_upper
        if g.ratio.lo > ratio.lo:
            lv = run.level_of(g.x, g.x_prime)
            result.eps_lower, result.ratio, result.bracket = g.eps_lower, g.ratio.lo, [g.eps_lower, lv.bracket[1]]
            result.ratio_enclosure = RatioEnclosure(g.ratio.lo, lv.ratio.hi).to_json()
            result.witness = s._witness(program, Pair(g.x, g.x_prime, "global"), [g.output])
        if s.claimed is not None:
            result.proved_dp = within_exp(g.ratio.hi, s.claimed)
    attach(s, result)
    if s.claimed is not None:
        result.refuted = result.eps_lower > s.claimed
    if wanted(s):
        others = [Pair(tuple(c["x"]), tuple(c["x_prime"]), c.get("origin", "statdp")) for c in run.table]
        settle(s, result, continuous_lower(s, backend, result.witness_pair(), others, finite, run.events))
    return finish(s, result)


def _candidates(s: Search, program: Program, ranked: list[Pair], patterns_first: bool) -> list[Pair]:
    """The best-tested pairs (StatDP's patterns first if asked), every other pattern, then random
    neighbour pairs; each in both orders.  The caller certifies the first ``certify_pairs``."""
    rng = np.random.default_rng(derive_seed(s.seed, 14))
    if patterns_first:
        ranked = sorted(ranked, key=lambda p: p.origin.startswith("random"))  # stable: keeps the ranking
    patterns = [p for p in ranked[KEEP:] if not p.origin.startswith("random")]
    out: dict[tuple, Pair] = {}
    for p in ranked[:KEEP] + patterns:
        for q in (p, p.swapped()):
            if program.neighbours.contains(q.x, q.x_prime):
                out.setdefault((q.x, q.x_prime), q)
    for _ in range(s.budget.explore):
        try:
            q = random_pair(program.domain, program.neighbours, rng)
        except ValueError:
            break
        out.setdefault((q.x, q.x_prime), q)
    return list(out.values())


def _proposed(s: Search, backend: ContinuousBackend, interval: Any, many: bool) -> dict[str, Any] | None:
    """The tester's own event, certified as proposed (None without one, without the time to weigh it,
    or, on an argmax over many values, when it needs more than :data:`WINNERS_TRIED` winners' regions)."""
    d = None if interval is None else interval.rejected
    if d is None:
        return None
    prog = backend.program
    event = symbolic(d.event, arity=prog.arity, tuple_output=prog.tuple_output)
    if many:
        need = _winners_needed(backend, d.pair.x, event)
        if need is None or need > WINNERS_TRIED:
            s.limits.append(f"the tester's event was not weighed: it needs "
                            f"{'every' if need is None else need} winners' regions of an argmax over many values")
            return None
    try:
        w = backend.witness_ratio(d.pair.x, d.pair.x_prime, event)
    except TimeLimitReached as e:
        s.limits.append(f"{e}: the tester's event was not weighed")
        return None
    s.queries += 1
    return {"proposed_by": "statdp", "x": list(d.pair.x), "x_prime": list(d.pair.x_prime),
            "event": d.event.describe(), "p_value": d.p_value, "eps": d.eps,
            "ratio": ratio_str(w.ratio.lo), "ratio_enclosure": w.ratio.to_json()}


@dataclasses.dataclass
class _Best:
    pair: Pair
    ratio: RatioEnclosure
    witness: Any  # an output (finite) or an Event (numeric)


class _Finite:
    """Finite outputs: pair levels over every output."""

    def __init__(self, s: Search, backend: ContinuousBackend) -> None:
        self.s, self.backend = s, backend
        self.table: list[dict[str, Any]] = []
        self.events: list[tuple[Pair, Any]] = []  # none: a pair's best event is read off its outputs
        self._levels: dict[tuple, PairLevel] = {}

    def level_of(self, x: Any, xp: Any) -> PairLevel:
        key = (tuple(x), tuple(xp))
        if key not in self._levels:
            self.s.queries += 1
            self._levels[key] = self.backend.pair_epsilon(x, xp, self.s.precision)
        return self._levels[key]

    def _best_of(self, pair: Pair) -> _Best:
        lv = self.level_of(pair.x, pair.x_prime)
        return _Best(pair, lv.ratio, lv.output)

    def _caches(self) -> dict[str, dict]:
        """What :meth:`_best_of` keeps per pair."""
        return {"levels": self._levels}

    def _evaluated(self, pair: Pair) -> tuple[_Best, tuple[int, list[str], dict[str, dict]]]:
        """:meth:`_best_of` in a forked task, with what it added to the search: the queries, the limits
        and the cached entries (:meth:`_kept` adds them where the search reads it)."""
        queries, limits, caches = self.s.queries, len(self.s.limits), self._caches()
        before = {k: set(c) for k, c in caches.items()}
        b = self._best_of(pair)
        added = {k: {key: c[key] for key in c.keys() - before[k]} for k, c in caches.items()}
        return b, (self.s.queries - queries, self.s.limits[limits:], added)

    def _kept(self, b: _Best, effects: tuple[int, list[str], dict[str, dict]]) -> _Best:
        queries, limits, added = effects
        self.s.queries += queries
        self.s.limits.extend(limits)
        for k, c in self._caches().items():
            c.update(added[k])
        return b

    def _rule(self) -> Any:
        """The stop rules of a local search (:mod:`hybrid.searcher.stopping`)."""
        return self.s.convergence()

    def _pairs_rule(self) -> Any:
        """A convergence rule over the candidate pairs certified, or None: every one is certified."""
        return None

    def certify(self, pairs: list[Pair]) -> _Best:
        """The levels of the first ``certify_pairs`` candidates; the best few start local searches."""
        found: list[_Best] = []
        todo = _budgeted(self.s, pairs)
        window = self._pairs_rule()
        with _PairTasks(self.s, self.backend, todo, self._evaluated, per_task=FINITE_PER_TASK,
                        share=CERTIFY_SHARE) as tasks:
            for i, p in enumerate(todo):
                if i >= 2 and _spent(self.s, *tasks.spent(), CERTIFY_SHARE, f"certified {i} of {len(todo)} "
                                                                          "candidate pairs"):
                    break
                if found and self.s.convergence().meets(certified_level(max(b.ratio.lo for b in found))):
                    self.s.limits.append(f"certified {i} of {len(todo)} candidate pairs: the proved upper bound is met")
                    break
                try:
                    b = self._kept(*tasks.next())
                except TimeLimitReached as e:
                    if not found:
                        raise
                    self.s.limits.append(f"{e}: certified {i} of {len(todo)} candidate pairs")
                    break
                self.table.append({"x": list(p.x), "x_prime": list(p.x_prime), "origin": p.origin,
                                   "ratio": ratio_str(b.ratio.lo), "output": output_to_json(b.witness)})
                found.append(b)
                level = certified_level(max(f.ratio.lo for f in found))
                if window is not None and (window.start(level) if i == 0 else window.step(level)) == "converged":
                    self.s.limits.append(f"certified {i + 1} of {len(todo)} candidate pairs: the certified level "
                                         f"grew by at most the precision over the last {window.window} pairs")
                    self.s.stopped_by.append("converged")
                    break
        self.table.sort(key=lambda c: -_ratio_value(c["ratio"]))
        self.starts = sorted(found, key=lambda b: -b.ratio.lo)[:STARTS]
        return self.starts[0]

    def improve(self, best: _Best) -> _Best:
        """Hill climbing from the best few certified pairs, ``local_steps`` pair evaluations each, each
        ended early by the stop rules (:mod:`hybrid.searcher.stopping`)."""
        for start in self.starts:
            if self.s.convergence().meets(certified_level(best.ratio.lo)):
                self.s.stopped_by.append("proved_upper")  # the best so far meets the proof: no start can do better
                break
            end, stopped = self._climb(start)
            if end.ratio.lo > best.ratio.lo:
                best = end
            if stopped:
                break
        return best

    def _climb(self, best: _Best) -> tuple[_Best, bool]:
        """First-improvement hill climbing on the certified pair level; the end, and whether to stop
        climbing (the enclosures budget is spent, the time limit passed, or the proved upper bound met)."""
        program, budget = self.backend.program, self.s.budget
        tried, steps, improved, came_from = {(best.pair.x, best.pair.x_prime)}, 0, True, None
        rule = self._rule()
        stop = rule.start(certified_level(best.ratio.lo))
        try:
            while improved and best.ratio.lo != INF and not stop:
                improved = False
                for move in coordinate_moves(best.pair, program.domain, program.neighbours, came_from):
                    if (move.x, move.x_prime) in tried:
                        continue
                    if steps >= budget.local_steps:
                        self.s.limits.append(f"a local search stopped after {steps} pair evaluations "
                                             "(local_steps budget)")
                        self.s.stopped_by.append("local_steps")
                        return best, False
                    if _spent(self.s, self.backend.regions, self.backend.work, 1.0,
                              f"a local search stopped after {steps} pair evaluations"):
                        self.s.stopped_by.append("enclosures")
                        return best, True
                    tried.add((move.x, move.x_prime))
                    steps += 1
                    b = self._best_of(move)
                    if b.ratio.lo > best.ratio.lo:
                        came_from, best, improved = best.pair, b, True
                    stop = rule.step(certified_level(best.ratio.lo))
                    if improved or stop:
                        break
        except TimeLimitReached as e:
            self.s.limits.append(f"{e}: a local search stopped after {steps} pair evaluations")
            self.s.stopped_by.append("time")
            return best, True
        self.s.stopped_by.append(stop or "local_optimum")
        return best, stop == "proved_upper"

    def finish(self, best: _Best) -> tuple[RatioEnclosure, tuple[float, float], Any]:
        """The witness output's ratio refined, bracketed with the pair's level (already enclosed)."""
        lv = self.level_of(best.pair.x, best.pair.x_prime)
        event = [output_to_json(lv.output)]
        try:
            w = self.backend.witness_ratio(best.pair.x, best.pair.x_prime, [lv.output])
        except TimeLimitReached as e:
            self.s.limits.append(f"{e}: the witness keeps the pair level's enclosure")
            return lv.ratio, lv.bracket, event
        self.s.queries += 1
        _note_refinement(self.s, w.decided and lv.decided)
        ratio = RatioEnclosure(max(w.ratio.lo, lv.ratio.lo), w.ratio.hi)  # both certify lv.output's ratio
        return ratio, (eps_bracket(ratio)[0], lv.bracket[1]), event

    def global_level(self) -> Any:
        s = self.s
        if s.global_check is False:
            return None
        limit = s.budget.global_pairs
        count = sum(1 for _ in itertools.islice(self.backend.sweep_pairs(), limit + 1))
        if s.global_check is None and count > limit:
            s.limits.append(f"global verification skipped: more than {limit} neighbour pairs")
            return None
        try:
            g = self.backend.global_epsilon(s.precision)
        except TimeLimitReached as e:
            s.limits.append(f"{e}: global verification stopped")
            return None
        s.queries += g.pairs
        return g


def _many_winners(backend: ContinuousBackend, x: Any) -> bool:
    """Whether the program releases one argmax over more than :data:`MANY_WINNERS` values."""
    if backend.program.tuple_output:
        return False
    spec = backend.specialised(x)
    node = spec.nodes[spec.outputs[0]]
    return node.op == "argmax" and len(node.args) > MANY_WINNERS


def _winners_needed(backend: ContinuousBackend, x: Any, event: Any) -> int | None:
    """How many winners' regions the backend encloses for ``event`` on the argmax output (the fewer of
    those it holds on and the others, :meth:`ContinuousBackend._argmax_paths`); None: every path."""
    expects = getattr(event, "expects", None)
    if expects is None:
        return None
    spec = backend.specialised(x)
    arity = len(spec.nodes[spec.outputs[0]].args)
    count = sum(1 for i in range(arity) if expects[1](i))
    return min(count, arity - count)


class _Winners(_Finite):
    """One argmax over many values: each pair certified on the events ``{index = o}`` of a few likely
    winners ``o`` (:func:`likely_winners`), each enclosed from its own winner's region only (the
    continuous backend narrows an argmax to the event's indices), instead of the pair's level over
    every output (``n`` regions of ``n - 1`` constraints each).  A lower bound, as any certified
    event's ratio; no pair's level is enclosed (the result has no bracket, only the witness event's
    ratio enclosure), and the global sweep is not tried."""

    def __init__(self, s: Search, backend: ContinuousBackend) -> None:
        super().__init__(s, backend)
        self._bests: dict[tuple, _Best] = {}

    def _best_of(self, pair: Pair) -> _Best:
        key = (pair.x, pair.x_prime)
        if key not in self._bests:
            best = None
            for o in likely_winners(pair.x, pair.x_prime):
                event = symbolic(SetEvent(IDENTITY, (o,)), arity=1, tuple_output=False)
                w = self.backend.witness_ratio(pair.x, pair.x_prime, event)
                self.s.queries += 1
                _note_refinement(self.s, w.decided)
                if best is None or w.ratio.lo > best.ratio.lo:
                    best = _Best(pair, w.ratio, o)
            self._bests[key] = best
        return dataclasses.replace(self._bests[key], pair=pair)

    def _caches(self) -> dict[str, dict]:
        return {**super()._caches(), "bests": self._bests}

    def _rule(self) -> Any:
        """A pair costs a few winners' regions of ``n - 1`` constraints each: local searches and the
        candidates stop after ``pair_window`` pairs without growth, not ``window``."""
        return dataclasses.replace(self.s.convergence(), window=self.s.budget.pair_window)

    def _pairs_rule(self) -> Any:
        return self._rule()

    def certify(self, pairs: list[Pair]) -> _Best:
        """The candidates' events; one local search follows, from the best pair."""
        best = super().certify(pairs)
        self.starts = self.starts[:1]
        return best

    def finish(self, best: _Best) -> tuple[RatioEnclosure, tuple[float, float], Any]:
        """The witness event's ratio (enclosed to the backend's relative width already)."""
        return best.ratio, eps_bracket(best.ratio), [output_to_json(best.witness)]

    def global_level(self) -> Any:
        self.s.limits.append(f"global verification skipped: an argmax over more than {MANY_WINNERS} values "
                             "is certified on single winners' events")
        return None


def likely_winners(x: Any, xp: Any, count: int = WINNERS_TRIED) -> list[int]:
    """The indices whose events ``{index = o}`` are certified on a pair: those where ``x`` exceeds
    ``x'`` the most (the first ``count - 1``), and the largest entry of ``x`` (the likeliest winner);
    counts on the pair only, so the same on any machine."""
    by_gap = sorted(range(len(x)), key=lambda i: (xp[i] - x[i], -x[i], i))[:max(1, count - 1)]
    top = min(range(len(x)), key=lambda i: (-x[i], i))
    return by_gap + ([top] if top not in by_gap else [])


class _Numeric:
    """Released continuous values: a tuned event per pair."""

    def __init__(self, s: Search, backend: ContinuousBackend, sampler: Any) -> None:
        self.s, self.backend = s, backend
        self.tuner = EventTuner(backend, sampler, derive_seed(s.seed, 31))
        self.table: list[dict[str, Any]] = []
        self.events: list[tuple[Pair, Any]] = []  # each pair's tuned event, best ratio first

    def certify(self, pairs: list[Pair]) -> _Best:
        """An event tuned on each of the first ``certify_pairs`` candidates, ``tune_steps`` ratios each,
        ended early by the stop rules (:mod:`hybrid.searcher.stopping`) over the pairs: a certified
        level that meets the proved upper bound, or ``pair_window`` pairs without growth beyond the
        precision (``converged``)."""
        best, spent = None, 0
        todo = _budgeted(self.s, pairs)
        window = dataclasses.replace(self.s.convergence(), window=self.s.budget.pair_window)  # over candidate pairs

        def met(ratio: Fraction) -> bool:  # a ratio whose level meets the proved upper bound
            return window.meets(certified_level(ratio))

        def tune(p: Pair) -> tuple[Tuned, int]:  # the pair's event, and the certified ratios it took
            before = self.tuner.evaluations
            return self.tuner.tune(p.x, p.x_prime, self.s.budget.tune_steps, goal=met), self.tuner.evaluations - before

        with _PairTasks(self.s, self.backend, todo, tune) as tasks:
            for i, p in enumerate(todo):
                if i >= 2 and _spent(self.s, *tasks.spent(), 1.0,
                                     f"events tuned on {i} of {len(todo)} candidate pairs"):
                    break
                t, evaluations = tasks.next()
                self.tuner.evaluations += evaluations
                if t.stopped and t.event is None:  # nothing certified on this pair
                    if best is None:
                        raise TimeLimitReached(t.stopped)
                    self.s.limits.append(f"{t.stopped}: events tuned on {i} of {len(todo)} candidate pairs")
                    break
                spent += t.spent
                self.table.append({"x": list(p.x), "x_prime": list(p.x_prime), "origin": p.origin,
                                   "ratio": ratio_str(t.ratio.lo),
                                   "event": t.event.describe() if t.event is not None else "any output"})
                if t.event is not None:
                    self.events.append((p, t.event))
                if best is None or t.ratio.lo > best.ratio.lo:
                    best = _Best(p, t.ratio, t.event)
                if t.stopped:
                    self.s.limits.append(f"{t.stopped}: events tuned on {i + 1} of {len(todo)} candidate pairs "
                                         "(the last one partly)")
                    break
                level = certified_level(best.ratio.lo)
                stop = window.start(level) if i == 0 else window.step(level)
                if stop:
                    why = ("the proved upper bound is met" if stop == "proved_upper" else
                           f"the certified level grew by at most the precision over the last {window.window} pairs")
                    self.s.limits.append(f"events tuned on {i + 1} of {len(todo)} candidate pairs: {why}")
                    self.s.stopped_by.append(stop)
                    break
        if spent:
            self.s.limits.append(f"event tuning used its whole budget of {self.s.budget.tune_steps} certified "
                                 f"ratios (tune_steps) on {spent} of {len(todo)} pairs")
        self.s.queries += self.tuner.evaluations
        self.table.sort(key=lambda c: -_ratio_value(c["ratio"]))
        return best

    def finish(self, best: _Best) -> tuple[RatioEnclosure, tuple[float, float], Any]:
        """The witness event's ratio refined (its coarse enclosure when time runs out)."""
        prog = self.backend.program
        if best.witness is None:  # no event beat the whole output space (ratio 1): no evidence
            return RatioEnclosure(Fraction(0), Fraction(0)), (0.0, 0.0), []
        try:
            w = self.backend.witness_ratio(best.pair.x, best.pair.x_prime,
                                           symbolic(best.witness, arity=prog.arity, tuple_output=prog.tuple_output))
        except TimeLimitReached as e:
            self.s.limits.append(f"{e}: the witness keeps its coarse enclosure")
            return best.ratio, eps_bracket(best.ratio), best.witness.to_json()
        self.s.queries += 1
        _note_refinement(self.s, w.decided)
        return w.ratio, eps_bracket(w.ratio), best.witness.to_json()


def _budgeted(s: Search, pairs: list[Pair]) -> list[Pair]:
    """The first ``certify_pairs`` candidates, at least one (the cut said in ``limits_hit``)."""
    n = max(1, s.budget.certify_pairs)
    if len(pairs) > n:
        s.limits.append(f"certified {n} of {len(pairs)} candidate pairs (certify_pairs budget)")
    return pairs[:n]


def _over(b: Budget, regions: int, work: int, share: float) -> bool:
    """Whether ``share`` of the enclosures or the work budget is spent, with ``regions`` enclosed and
    ``work`` done."""
    return regions >= share * b.enclosures or work >= share * b.work


def _spent(s: Search, regions: int, work: int, share: float, what: str) -> bool:
    """:func:`_over`, said in ``limits_hit`` (``what``, then the budget) when it holds."""
    b = s.budget
    if not _over(b, regions, work, share):
        return False
    part = f", {share:g} of it for this stage)" if share < 1 else ")"
    if regions >= share * b.enclosures:
        s.limits.append(f"{what}: {regions} regions enclosed (enclosures budget {b.enclosures}" + part)
    else:
        s.limits.append(f"{what}: enclosure work {work} (work budget {b.work}" + part)
    return True


class _PairTasks:
    """``fn`` on each pair: the first group here, which also compiles what the others need, then the
    others as forked tasks (:mod:`hybrid.searcher.forked_tasks`) from the backend as it is then, read
    in order.  The backend's counts grow by each forked pair's as it is read (and by no other), so the
    budgets' stops fall where they would one pair after another, on any number of workers.

    The reader stops before the pair (from the third on) at which ``share`` of a budget is spent
    (:func:`_over`).  A forked task does not compute a pair the reader will certainly not read: the
    counts it started from, plus its own pairs', are at most what the reader will have spent when it
    gets there, so once they are over, so is the reader (the task's time saved, every result
    unchanged).  Such a pair is marked, and reading one is an error."""

    def __init__(self, s: Search, backend: ContinuousBackend, pairs: list[Pair], fn: Callable[[Pair], Any],
                 per_task: int = 1, share: float = 1.0) -> None:
        def task(group: list[Indexed], forked: bool = True) -> list[tuple[Any, list[int]]]:
            out = []
            for i, p in group:
                if forked and i >= 2 and _over(s.budget, *self.spent(), share):
                    out.append((_NotRead(), [0, 0, 0]))
                    continue
                before = backend.counts()
                value = fn(p)
                out.append((value, [b - a for a, b in zip(before, backend.counts())]))
            return out

        groups = _groups(list(enumerate(pairs)), per_task)
        self.backend, self._read = backend, [0, 0, 0]
        self._tasks = ordered(task, groups[1:], s.tasks)
        self._values = itertools.chain(_here(lambda g: task(g, forked=False), groups[:1]),
                                       (v for vs in self._tasks for v in vs))

    def __enter__(self) -> "_PairTasks":
        return self

    def spent(self) -> tuple[int, int]:
        """The regions enclosed and the enclosure work, with the pairs read so far."""
        regions, constraints, stars = (a + b for a, b in zip(self.backend.counts(), self._read))
        return regions, constraints + stars

    def next(self) -> Any:
        """The next pair's value (its task's exception raised here)."""
        value, counts = next(self._values)
        if isinstance(value, _NotRead):
            raise RuntimeError("a forked task skipped a candidate pair that its reader went on to read")
        self._read = [a + b for a, b in zip(self._read, counts)]
        return value

    def __exit__(self, *exc: Any) -> None:
        self._tasks.close()
        self.backend.charge(self._read)


Indexed = tuple[int, Pair]  # a candidate pair and its place in the reading order


class _NotRead:
    """A forked task's value for a pair its reader will not read (:class:`_PairTasks`)."""


def _here(task: Callable[[list[Indexed]], list[tuple[Any, list[int]]]],
          groups: list[list[Indexed]]) -> Iterator[Any]:
    """The first group's values, computed in this process when read; its counts stay charged here."""
    for group in groups:
        for value, _ in task(group):
            yield value, [0, 0, 0]


def _groups(pairs: list[Indexed], per_task: int = 1) -> list[list[Indexed]]:
    """The pairs' tasks: consecutive pairs on the same two inputs (a pair and its swap) in one, the
    second reusing the first's paths and enclosures, and ``per_task`` such groups in one (a fork
    costs tens of milliseconds: a finite-output pair's level may take less)."""
    swaps: list[list[Indexed]] = []
    for i, p in pairs:
        if swaps and {swaps[-1][0][1].x, swaps[-1][0][1].x_prime} == {p.x, p.x_prime}:
            swaps[-1].append((i, p))
        else:
            swaps.append([(i, p)])
    return [[ip for g in swaps[i:i + per_task] for ip in g] for i in range(0, len(swaps), per_task)]


def _note_refinement(s: Search, decided: bool) -> None:
    if not decided:
        s.limits.append("the enclosures reached their refinement budget before the width asked for "
                        "(the bounds are sound, only wider)")


def _ratio_value(text: str) -> float:
    return log_ratio(parse_ratio(text))


__all__ = ["continuous_search"]
