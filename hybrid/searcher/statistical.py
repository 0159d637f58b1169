"""What a search reports when it cannot certify: the testers' best statistical bound.

Continuous programs no exact or enclosure backend handles, and searches stopped before a
certificate, fall back to the StatDP-style interval (one-sided) and the classifier attack,
``certified: false``, with the reason.  The proof rules still run on the former (a proof
needs no backend), so such a result may carry a proved ``eps_upper``.
"""

from __future__ import annotations

from typing import Any


from hybrid.formats import params_to_json
from hybrid.seeds import derive_seed
from samplers.deadline import TimeLimitReached
from samplers.lang.ir import Program

from hybrid.searcher.delta_claim import settle
from hybrid.searcher.proof_stage import attach, prove_stage
from hybrid.searcher.state import SearchResult, finish, Search

SCREENED = 4  # StatDP patterns (each in both orders) the attack trains on, best by testing first


def uncertified(s: Search, program: Program, interval: Any, why: str) -> SearchResult:
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
        stat_interval=one_sided(interval), stat_confidence=confidence_of(interval),
        note=(f"{why}: eps_lower is testing's one-sided bound at confidence {b.confidence:g}, not certified"
              if b is not None else f"{why}: no bound (testing did not finish either)"),
        pvalue_curve=[] if interval is None else [(p.eps, p.p_value) for p in interval.probes],
    )
    return finish(s, result)


def one_sided(interval: Any) -> list[float] | None:
    """What testing alone states: ``[bound, inf]`` (None when testing did not run)."""
    return None if interval is None else interval.one_sided


def confidence_of(interval: Any) -> float | None:
    return None if interval is None else 1 - interval.alpha


def statistical(s: Search, program: Program) -> SearchResult:
    """Continuous mechanisms: the best statistical bound (StatDP interval, attack bound), not certified."""
    from hybrid.testers.testing import sniper_estimate

    s.clock.stage("compile")
    sampler = s.sampler(program)
    if sampler is None:
        return uncertified(s, program, None, "the sampler could not be compiled in time")
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
        return uncertified(s, program, interval, f"the attack did not train a pair ({e})")
    s.samples += est.extra["outputs_drawn"]
    s.limits.extend(est.extra["limits_hit"])
    if not s.proof_tried:  # a proof needs no backend that could not handle the program
        s.clock.stage("prove")
        prove_stage(s, program)
    result = SearchResult(
        mechanism=program.name, params=program.param_dict, certified=False, eps_lower=est.eps_lower,
        ratio=None, witness=est.candidate.witness() if est.candidate else None, backend=None,
        precision=s.precision, seed=s.seed, claimed_eps=s.claimed,
        stat_interval=one_sided(interval), stat_confidence=confidence_of(interval),
        candidates=[est.candidate.to_json()] if est.candidate else [],
        note=(f"{program.name} draws continuous noise, which no exact backend supports: eps_lower is the "
              f"attack's bound at confidence {est.confidence:g}; stat_interval is the StatDP-style bound at confidence "
              f"{confidence_of(interval)}"),
        pvalue_curve=[] if interval is None else [(d.eps, d.p_value) for d in interval.probes],
    )
    attach(s, result)
    if s.claimed is not None:
        result.refuted = est.eps_lower > s.claimed  # statistically, at the stated confidence
    settle(s, result, None)  # a proved delta only: nothing certified from below
    return finish(s, result)
