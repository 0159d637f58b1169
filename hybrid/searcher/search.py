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

Continuous mechanisms go through :mod:`hybrid.searcher.continuous_search`: the same stages with
the continuous backend's rigorous enclosures (``certified: true``, a ``ratio_enclosure``);
a program it cannot handle gets the best statistical bound (StatDP interval and the
classifier attack), ``certified: false``, and says why.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, Callable, Mapping


from hybrid.formats import output_to_json, value_to_json
from hybrid.inputs import Pair, pattern_pairs
from hybrid.searcher.budget import Budget
from hybrid.searcher.delta_claim import discrete_lower, settle, wanted
from hybrid.searcher.proof_stage import attach, prove_stage
from hybrid.searcher.state import Candidate, Progress, SearchResult, finish, Search
from hybrid.searcher.statistical import confidence_of, one_sided, uncertified
from samplers import deadline
from samplers.deadline import TimeLimitReached
from samplers.errors import BudgetExceeded, DomainError, ParameterError
from samplers.numerals import count_text
from samplers.plain import as_mechanism
from samplers.seed import check_seed
from samplers.lang.ir import Program
from samplers.lang.mechanism import Mechanism
from samplers.lang.neighbours import Custom
from verifiers.base import refuse_continuous
from verifiers.epsilon import (
    eps_lower,
    eps_upper,
    within_exp,
)
from verifiers.prover.proof import check_delta
from verifiers.ratio import INF, ratio_str

EVENT_OUTPUTS = 1 << 16  # weigh the tester's event exactly only over at most this many outputs


def _length_param(mech: Mechanism | None) -> str | None:
    return getattr(mech, "length_param", None) if mech is not None else None


def search(
    mech: Mechanism | Program | str | Callable[..., Any],
    params: Mapping[str, Any] | None = None,
    *,
    precision: float = 1e-3,
    claimed_eps: float | None = None,
    claimed_delta: float | Fraction | None = None,
    seed: int = 0,
    time_budget: float | None = None,
    budget: Budget | None = None,
    backend: str = "auto",
    global_check: bool | None = None,
    progress: Progress | None = None,
    proved_upper: float | None = None,
    float_semantics: bool = False,
) -> SearchResult:
    """Find a certified lower bound on epsilon (see the module docstring).

    ``global_check`` None decides by size (``budget.global_pairs``); ``time_budget``
    overrides ``budget.time``, a safety limit: a stage it stops gives a partial result
    that says so in ``limits_hit`` (the best certified pair so far, or the testers'
    statistical bound when no exact answer came in time).  ``proved_upper``, an upper bound on
    the level that a prover established, ends a local search whose certified level meets it
    (:mod:`hybrid.searcher.stopping`).  ``float_semantics`` adds the float-level audit
    (:mod:`hybrid.searcher.float_stage`): a certified lower bound for what numpy's float64 samplers
    compute, beside the real-number verdict; on a library mechanism (``diffprivlib:laplace``) it is the
    only verdict (:mod:`hybrid.searcher.library_float`).  ``claimed_delta`` (with ``claimed_eps``, in [0, 1])
    makes the claim (eps, delta)-DP: the result reports delta at the claimed eps from both sides and its
    verdict (:mod:`hybrid.searcher.delta_claim`).
    """
    if not precision > 0:
        raise ParameterError(f"precision must be positive, got {precision}")
    if claimed_eps is not None and not 0 <= claimed_eps < INF:
        raise ParameterError(f"claimed eps must be a finite non-negative number, got {claimed_eps}")
    if claimed_delta is not None:
        if claimed_eps is None:
            raise ParameterError("a claimed delta needs a claimed eps: delta is a function of eps")
        claimed_delta = check_delta(claimed_delta, "claimed delta")
    check_seed(seed)
    from samplers.libraries import LibraryBox

    if isinstance(mech, LibraryBox):
        from hybrid.searcher.library_float import library_search

        return library_search(mech, float_semantics=float_semantics, precision=precision, seed=seed)
    mech = as_mechanism(mech)
    budget = budget or Budget()
    if time_budget is not None:
        budget.time = float(time_budget)
    with deadline.time_limit(budget.time):
        program = mech.trace(**(params or {})) if isinstance(mech, Mechanism) else mech
        if not isinstance(mech, Mechanism) and params:
            raise ParameterError("parameters cannot be given with an already traced program")
        if program.continuous and backend not in ("auto", "continuous"):  # a discrete backend cannot run it
            refuse_continuous(program, backend)
        if not isinstance(program.neighbours, Custom) and program.domain.single():
            raise DomainError(f"the domain {program.domain.describe()} holds a single input: no two inputs are "
                              f"{program.neighbours.name} neighbours, there is nothing to search")
        s = Search(program, precision=precision, claimed_eps=claimed_eps, seed=seed, budget=budget,
                    backend=backend, global_check=global_check, progress=progress or (lambda m: None),
                    proved_upper=proved_upper, claimed_delta=claimed_delta)
        if program.continuous or backend == "continuous":
            from hybrid.searcher.continuous_search import continuous_search

            result = continuous_search(s, program)
        else:
            result = _discrete(s, program, mech if isinstance(mech, Mechanism) else None)
        if float_semantics:
            from hybrid.searcher.float_stage import float_stage

            float_stage(s, program, result)
        return result


def _discrete(s: Search, program: Program, mech: Mechanism | None) -> SearchResult:
    clock = s.clock
    clock.stage("compile")
    exact = s._exact(program)
    sampler = s.sampler(program)
    clock.stage("prove")
    prove_stage(s, program)
    clock.stage("propose")
    s.say("testing candidate pairs")
    pairs, interval = s.propose_in_time(sampler)
    clock.stage("certify")
    s.say("certifying the best pairs exactly")
    try:
        cands = s.certify(exact, pairs)
    except (TimeLimitReached, BudgetExceeded) as e:  # no exact answer at all: what testing found
        return uncertified(s, program, interval, f"no exact result ({e})")
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
            proposed["note"] = (f"event not weighed: up to {count_text(program.output_space)} outputs; "
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
        if g.ratio > result_ratio and g.output is not None:  # a better pair with its output: a witness
            result_ratio, lower = g.ratio, g.eps_lower
            witness = s._witness(program, Pair(g.x, g.x_prime, "global"), [g.output])
            bracket = [g.eps_lower, eps_upper(g.ratio)]
        if g.complete:
            eps_up = g.eps_upper
            if s.claimed is not None:
                proved = within_exp(g.ratio, s.claimed)
    result = SearchResult(
        mechanism=program.name, params=program.param_dict, certified=True, eps_lower=lower,
        ratio=result_ratio, witness=witness, backend=exact.name, precision=s.precision, seed=s.seed,
        stat_interval=one_sided(interval), stat_confidence=confidence_of(interval), bracket=bracket,
        eps_upper=eps_up, proved_dp=proved, claimed_eps=s.claimed,
        candidates=[{"x": list(c.pair.x), "x_prime": list(c.pair.x_prime), "origin": c.pair.origin,
                     "ratio": ratio_str(c.ratio), "output": output_to_json(c.output)} for c in cands],
        pvalue_curve=[] if interval is None else [(d.eps, d.p_value) for d in interval.probes],
    )
    if proposed is not None:
        result.candidates.insert(0, {"proposed_by": "statdp", **proposed})
    attach(s, result)
    if s.claimed is not None:
        result.refuted = lower > s.claimed
    if wanted(s):
        settle(s, result, discrete_lower(s, exact, result.witness_pair(), (c.pair for c in cands)))
    length = _length_param(mech) if s.claimed_delta is None else None  # a delta claim holds at these parameters
    if length is not None and s.claimed is not None and result.refuted:
        result.note = _refuted_at(s.claimed, length, program.param_dict[length])
    elif length is not None and s.claimed is not None:
        clock.stage("grow")
        _grow(s, mech, program, length, result)
    return finish(s, result)


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


def _grow(s: Search, mech: Mechanism, program: Program, length: str, result: SearchResult) -> None:
    """Lengthen the input until the certified bound crosses the claim (or a limit)."""
    params = dict(program.param_dict)
    best_pair = result.witness_pair()
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
            # the global check and any proof covered a shorter length
            result.eps_upper, result.proved_dp, result.upper_source = None, False, None
            result.witness = s._witness(prog, best.pair, [best.output])
            result.note = _refuted_at(s.claimed, length, n)
            return
    s.limits.append(f"{length} grown to {s.budget.max_length} without crossing the claim")


