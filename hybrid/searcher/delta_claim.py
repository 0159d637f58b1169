"""delta at the claimed eps in a search: proved from above, certified from below, and the verdict.

With a claimed eps, a search of a program that draws Gaussian noise (or any search given a
claimed delta, :func:`wanted`) reports delta(eps) from both sides:

* ``delta_upper`` -- proved: 0 when pure eps-DP at the claim is proved (``proved_dp``, by a
  proof or the exhaustive global check), else the checked proof of a rule in
  :data:`verifiers.prover.prove.DELTA_RULES` at the claim (:func:`prove_at_claim`; the Gaussian
  rule: Balle and Wang's delta enclosed by arb balls, rounded up);
* ``delta_lower`` -- certified: the largest ``P(E|x) - e^eps P(E|x')`` over the pairs the search
  certified, each with its best event (:func:`discrete_lower`, :func:`continuous_lower`): exact
  probabilities, or the lower end of ``P(E|x)``'s enclosure minus the upper end of a rational
  bracket of ``e^eps`` times the upper end of ``P(E|x')``'s, then rounded down to a float.
  It is taken at the double just above the claim (:func:`eps_above`), so it is below delta at
  the claim's exact value too (the CLI passes the largest double not above a rational claim).

With a claimed delta ``D`` the claim is (eps, D)-DP (:func:`settle`): ``refuted`` when
``delta_lower > D`` and ``proved_dp`` when ``delta_upper <= D``, both compared exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterable

from hybrid.formats import float_at_most
from hybrid.inputs import Pair
from hybrid.searcher.state import Search, SearchResult
from samplers.deadline import TimeLimitReached
from samplers.errors import DPHybridError
from samplers.lang.ir import Program
from verifiers.epsilon import exp_bracket

KEEP = 4  # pairs whose best delta event is weighed: the witness pair, then the best certified others
LEVEL = 1  # refinement level of the finite outputs' enclosures (64 * 2 bits)


@dataclass(frozen=True)
class DeltaWitness:
    """``lower <= P(E|x) - e^eps P(E|x')`` (exact) for a pair and its event, described."""

    lower: Fraction
    pair: Pair
    event: str

    def to_json(self) -> dict[str, Any]:
        return {"x": list(self.pair.x), "x_prime": list(self.pair.x_prime), "event": self.event}


def wanted(s: Search) -> bool:
    """Whether the search reports delta: a claimed eps, and a claimed delta or Gaussian noise."""
    return s.claimed is not None and (s.claimed_delta is not None
                                      or any(n.op == "gaussian" for n in s.program.nodes))


def eps_above(s: Search) -> float:
    """The double just above the claimed eps: ``e^eps`` bracketed there bounds ``e^claim`` from above."""
    return math.nextafter(float(s.claimed), math.inf)


def prove_at_claim(s: Search, program: Program) -> None:
    """The (eps, delta) proof at the claim (``s.delta_proof``), unless pure DP at the claim is proved."""
    from verifiers.prover.proof import Proof
    from verifiers.prover.prove import DELTA_RULES, prove

    if not wanted(s) or s.budget.prove_time <= 0 or (s.proof is not None and s.proof.eps_upper <= s.claimed):
        return
    try:
        found = prove(program, Fraction(s.claimed), rules=DELTA_RULES, time_budget=s.budget.prove_time)
    except (TimeLimitReached, DPHybridError) as e:
        s.limits.append(f"delta proof stopped: {e}")
        return
    if isinstance(found, Proof):
        s.delta_proof = found
    else:
        s.delta_no_proof = [f"{n.rule or 'prover'} rule: {n.reason}" for n in found]


def _best(found: Iterable[DeltaWitness | None]) -> DeltaWitness | None:
    best = None
    for w in found:
        if w is not None and (best is None or w.lower > best.lower):
            best = w
    return best


def _pairs(witness: Pair, others: Iterable[Pair]) -> list[Pair]:
    """The witness pair, then the others, without repeats, at most :data:`KEEP`."""
    out: dict[tuple, Pair] = {}
    for p in [witness, *others]:
        out.setdefault((p.x, p.x_prime), p)
    return list(out.values())[:KEEP]


def discrete_lower(s: Search, exact: Any, witness: Pair, others: Iterable[Pair]) -> DeltaWitness | None:
    """Exact backends: each pair's best event ``{o : P(o|x) > e^eps P(o|x')}``, weighed exactly."""
    eps = eps_above(s)

    def one(p: Pair) -> DeltaWitness:
        s.queries += 1
        lo = exact.pair_delta(p.x, p.x_prime, eps)[0]  # taken at the upper end of e^eps's bracket
        return DeltaWitness(lo, p, "the outputs o with P(o|x) > e^eps P(o|x')")

    return _guarded(s, one, _pairs(witness, others))


def continuous_lower(s: Search, backend: Any, witness: Pair, others: Iterable[Pair], finite: bool,
                     events: Iterable[tuple[Pair, Any]] = ()) -> DeltaWitness | None:
    """The continuous backend: finite outputs as :func:`discrete_lower` on enclosures; one released
    number by the best threshold event (:func:`verifiers.continuous.approx_dp.threshold_delta`);
    released tuples by the events the search tuned on these pairs (``events``: pairs and their events)."""
    from hybrid.searcher.regions import symbolic
    from verifiers.continuous.approx_dp import event_delta, threshold_delta

    eps, prog = eps_above(s), backend.program
    c_hi = exp_bracket(eps)[1]

    def finite_one(p: Pair) -> DeltaWitness:
        s.queries += 1
        px, pxp = backend.distribution(p.x, LEVEL), backend.distribution(p.x_prime, LEVEL)
        lo = sum((max(Fraction(0), e.lo - c_hi * (pxp[o].hi if o in pxp else 0)) for o, e in px.items()), Fraction(0))
        return DeltaWitness(lo, p, "the outputs o with P(o|x) > e^eps P(o|x')")

    def threshold_one(p: Pair) -> DeltaWitness:
        s.queries += 1
        d = threshold_delta(backend, p.x, p.x_prime, eps)
        side = ">=" if d.upper_tail else "<"
        return DeltaWitness(d.lo, p, f"output {side} {float(d.threshold)!r}")  # a double: exact

    def event_one(pe: tuple[Pair, Any]) -> DeltaWitness:
        (p, ev) = pe
        s.queries += 1
        d = event_delta(backend, p.x, p.x_prime, symbolic(ev, arity=prog.arity, tuple_output=prog.tuple_output), eps)
        return DeltaWitness(d.lo, p, ev.describe())

    pairs = _pairs(witness, others)
    if finite:
        return _guarded(s, finite_one, pairs)
    if not prog.tuple_output:
        return _guarded(s, threshold_one, pairs)
    tuned = {(p.x, p.x_prime): ev for p, ev in events}
    return _guarded(s, event_one, [(p, tuned[p.x, p.x_prime]) for p in pairs if (p.x, p.x_prime) in tuned])


def _guarded(s: Search, one: Any, items: list[Any]) -> DeltaWitness | None:
    """The best of ``one(item)``; what a time limit or a backend's limit stops is said in ``limits_hit``."""
    found: list[DeltaWitness] = []
    for item in items:
        try:
            found.append(one(item))
        except (TimeLimitReached, DPHybridError) as e:
            s.limits.append(f"the certified lower delta weighed {len(found)} of {len(items)} pairs: {e}")
            break
    return _best(found)


def settle(s: Search, result: SearchResult, lower: DeltaWitness | None) -> None:
    """delta at the claim on the result, and the verdict of a claimed delta (see the module docstring)."""
    from hybrid.searcher.proof_stage import ContradictoryBounds
    from verifiers.prover.proof import round_up
    from verifiers.prover.prove import DELTA_RULES

    if not wanted(s):
        return
    result.reports_delta = True
    result.claimed_delta = None if s.claimed_delta is None else float(s.claimed_delta)
    proof = s.delta_proof
    if proof is not None or s.delta_no_proof is not None:  # the rules tried at the claim speak for themselves
        result.no_proof = [n for n in result.no_proof if n["rule"] not in DELTA_RULES]
    if result.proved_dp:  # pure eps-DP at the claim: delta 0
        result.delta_upper, result.delta_upper_source = 0.0, result.upper_source or "proof"
    elif proof is not None:
        result.delta_upper, result.delta_upper_source = round_up(proof.delta), f"proof ({proof.rule} rule)"
        result.delta_proof = proof.to_json()
    else:
        result.delta_no_proof = s.delta_no_proof
    if lower is not None:
        result.delta_lower = float_at_most(max(lower.lower, Fraction(0)))
        result.delta_witness = lower.to_json()
    if (result.delta_lower is not None and result.delta_upper is not None
            and result.delta_lower > result.delta_upper):
        raise ContradictoryBounds(f"unsound: certified delta_lower {result.delta_lower} above delta_upper "
                                  f"{result.delta_upper} ({result.delta_upper_source})")
    d = s.claimed_delta
    if d is None:
        return
    pure_refuted = result.refuted if d == 0 else None  # (eps, 0) is the pure claim
    if lower is not None:
        result.refuted = lower.lower > d or bool(pure_refuted)
    else:
        result.refuted = pure_refuted
    result.proved_dp = None if result.delta_upper is None else Fraction(result.delta_upper) <= d
