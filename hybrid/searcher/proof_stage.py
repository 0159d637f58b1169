"""The proof stage of a search: the prover's upper bound beside the certified lower bound.

Both pipelines (discrete and continuous) call :func:`prove_stage` first, right after
compiling: the proof needs no samples, and its upper bound lets certification and the
improve stage stop as soon as the certified lower bound meets it.  It runs :func:`verifiers.prover.prove.prove` on the program
within ``budget.prove_time`` seconds (and the search's own deadline), and keeps the
checker-confirmed proof on the search as ``s.proof`` with its sound float upper end as
``s.proved_upper`` (else each rule's reason in ``s.no_proof``) -- a value later stages may use (the continuous improve stage can stop
once the certified lower bound meets it).  A time cut is reported in ``limits_hit``.

:func:`attach` puts the proof into the result: ``proof`` (its JSON, else the reasons in
``no_proof``, without their details) and ``eps_upper``,
unless an exhaustive global check already gave an exact one (kept: it is at least as
tight), and checks the invariant ``eps_lower <= eps_upper`` (:class:`ContradictoryBounds`).
"""

from __future__ import annotations

import time
from typing import Any, Sequence

from hybrid.searcher.state import Search, SearchResult
from samplers import deadline
from samplers.deadline import TimeLimitReached
from samplers.errors import DPHybridError
from samplers.lang.ir import Program


def prove_stage(s: Search, program: Program, first: Sequence[str] = ()) -> None:
    """Try the proof rules on ``program``; set ``s.proof`` and lower ``s.proved_upper`` to its upper end.

    ``first``: rules tried before the others, which then run only when those prove nothing (a
    large program split into many independent parts is proved part by part in seconds by the
    composition rule, where the alignment rule's work grows with the whole program).

    ``s.proved_upper`` may already hold a caller's bound (``search(..., proved_upper=)``): it
    only ends local searches early and is never reported as ``eps_upper``; the smaller of the
    two is kept.  Then, where the search reports delta at a claimed eps, the (eps, delta) proof
    at the claim (:func:`hybrid.searcher.delta_claim.prove_at_claim`)."""
    from hybrid.searcher.delta_claim import prove_at_claim

    _prove_pure(s, program, first)
    prove_at_claim(s, program)


EVERY_N_FIRST = 1000  # program nodes beyond which a proof for every n is tried before the per-n rules


def _every_n(program: Program, budget: float) -> Any:
    """The every-n rules' proof (it holds at this n too), or None: for a large program written with
    the loop construct they take seconds where the per-n rules' work grows with n."""
    from verifiers.prover.every_n import NotEveryN
    from verifiers.prover.proof import Proof
    from verifiers.prover.prove import prove

    try:
        found = prove(program, every_n=True, time_budget=budget)
    except NotEveryN:
        return None
    return found if isinstance(found, Proof) else None


def _prove_in_order(program: Program, budget: float, first: Sequence[str]) -> Any:
    """:func:`verifiers.prover.prove.prove` with the rules ``first`` first, the others only when those
    prove nothing, all within ``budget`` seconds; a program over :data:`EVERY_N_FIRST` nodes tries
    a proof for every n after ``first`` and before the others (with half the time left)."""
    from verifiers.prover.proof import NoProof, Proof
    from verifiers.prover.prove import per_n_rules, prove

    large = len(program.nodes) > EVERY_N_FIRST
    if not first and not large:
        return prove(program, time_budget=budget)
    start = time.perf_counter()
    found = prove(program, rules=first, time_budget=budget) if first else []
    if isinstance(found, Proof):
        return found
    if large and not deadline.expired():
        every = _every_n(program, (budget - (time.perf_counter() - start)) / 2)
        if every is not None:
            return every
    rest = [r for r in per_n_rules() if r not in first]
    if not rest:
        return found
    left = budget - (time.perf_counter() - start)
    if left <= 0 or deadline.expired():  # a rule started now would only find the deadline passed
        return found + [NoProof(f"time budget of {budget:g} s reached", rule=r) for r in rest]
    more = prove(program, rules=rest, time_budget=left)
    return more if isinstance(more, Proof) else found + more


def _prove_pure(s: Search, program: Program, first: Sequence[str]) -> None:
    from verifiers.prover.proof import NoProof, Proof

    s.proof, s.proof_tried = None, True
    if s.budget.prove_time <= 0:
        return
    s.say("trying the proof rules")
    try:
        found = _prove_in_order(program, s.budget.prove_time, first)
    except TimeLimitReached as e:  # the search's own deadline, outside any rule
        s.limits.append(f"proof stage stopped: {e}")
        return
    except DPHybridError as e:  # a limit inside a rule (memory, a solver): no proof, and why
        s.no_proof = [NoProof(f"the prover stopped: {e}")]
        return
    if isinstance(found, Proof) and found.delta != 0:  # (eps, delta) bounds no pure level
        s.no_proof = [NoProof(f"the {found.rule} rule proves (eps, delta)-DP only, with delta = {found.delta}",
                              rule=found.rule)]
        return
    if isinstance(found, Proof):
        s.proof = found
        s.proved_upper = found.eps_upper if s.proved_upper is None else min(s.proved_upper, found.eps_upper)
        return
    s.no_proof = found
    cut = [f"{n.rule}: {n.reason}" for n in found if "time budget" in n.reason]
    if cut:
        s.limits.append(f"proof stage: {'; '.join(cut)} (prove_time budget {s.budget.prove_time:g} s)")


def attach(s: Search, result: SearchResult) -> SearchResult:
    """The proof and its upper bound on the result (see the module docstring)."""
    proof = s.proof
    result.no_proof = [{k: v for k, v in n.to_json().items() if k != "details"} for n in s.no_proof]
    if result.eps_upper is not None:
        result.upper_source = "global verification"
    if proof is not None:
        result.proof = proof.to_json()
        if result.eps_upper is None or result.eps_upper > proof.eps_upper:
            result.eps_upper = proof.eps_upper
            result.upper_source = f"proof ({proof.rule} rule)"
        if s.claimed is not None and result.proved_dp is None:
            result.proved_dp = proof.eps_upper <= s.claimed
    if result.eps_upper is not None and result.certified and result.eps_lower > result.eps_upper:
        raise ContradictoryBounds(f"unsound: certified eps_lower {result.eps_lower} above eps_upper "
                                  f"{result.eps_upper} ({result.upper_source}); neither is reported (a bug in "
                                  "dphybrid: please report it with the command)")
    return result


class ContradictoryBounds(DPHybridError):
    """A certified lower bound above a proved upper bound: one of them is wrong (a bug in dphybrid, not
    bad input), so neither is reported.  Raised even under ``python -O``, unlike an assertion; a
    :class:`DPHybridError` so that the CLI says it on one line (exit status 2), never as a traceback."""
