"""The search at large n: testing and certification on a slice of the program.

A program of many nodes (more than :data:`SLICE_NODES`: ``noisy_hist1`` or ``svt1`` at
n = 1000) is not compiled, tested or enclosed whole.  The search runs instead on small
slices (:mod:`samplers.lang.slicing`): the sub-program computing a few output components,
with only the inputs those read.  A slice's outputs have exactly the whole program's joint
law on those components, so an event on them has the same probability on the slice as on
the whole program: a ratio certified on a slice is certified for the whole mechanism.

The slices, chosen by counts only (the same on any machine):

* a program whose outputs split into independent parts (no shared input or draw:
  ``noisy_hist1``'s bins) -- each distinct part among the first :data:`PARTS` in output order;
* otherwise the prefix of its first ``budget.max_length`` output components, when that reads
  fewer inputs than the program (``svt1``'s first 40 answers read its first 40 queries).

Each slice gets a whole continuous search of its own (testing, tuning, certifying, local
search; no global check), within the same budgets and deadline; its proof stage proves the
slice, an upper bound on what an event on the slice can show, so the slice's search stops once
it is met (the slice's proof is not reported: the program's level may be higher).  The best result is lifted: its pair extended to every input (the
coordinates the slice does not read set to the same value in ``x`` and ``x'``, 1 clipped to the
domain, as StatDP's patterns; the pair is checked to be a neighbour pair of the program) and its
event restated on the program's output components.  Then the proof stage runs on the whole
program (it needs no sampler), the composition rule first: a program of many independent parts
is proved part by part.  The result's ``slice`` field says which output components and
inputs were used.  A program no slice makes smaller, a custom neighbour relation, or a claimed
delta keeps the whole-program search.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from hybrid.searcher.proof_stage import attach, prove_stage
from hybrid.searcher.state import Search, SearchResult, certified_level, finish
from hybrid.testers.event_json import event_from_json
from hybrid.testers.events import Event, Product, SetEvent, Threshold
from hybrid.testers.features import IDENTITY, Feature
from samplers.errors import DPHybridError
from samplers.lang.domain import Domain
from samplers.lang.ir import Program
from samplers.lang.neighbours import Custom
from samplers.lang.slicing import backward_slice, inputs_read, output_prefix, part_program, split
from verifiers.continuous.backend import eps_bracket
from verifiers.continuous.enclosure import RatioEnclosure
from verifiers.prover.prove import remembering
from verifiers.ratio import parse_ratio

SLICE_NODES = 1_000  # a program of more nodes is searched on slices
PARTS = 4  # independent parts looked at (the first in output order); the distinct ones are searched
FILL = 1  # the value of the inputs a slice does not read (clipped to the domain), as in StatDP's patterns


@dataclass
class Slice:
    """Output components of a program, the inputs they read and their sub-program."""

    outputs: list[int]
    inputs: list[int]
    program: Program
    how: str
    draw_part: bool = False  # one of parts that share the input but no draw (:func:`draw_parts`)

    def to_json(self, whole: Program) -> dict[str, Any]:
        return {"outputs": self.outputs, "inputs": self.inputs, "nodes": len(self.program.nodes),
                "program_nodes": len(whole.nodes), "how": self.how}


def plan(program: Program, max_length: int) -> list[Slice] | None:
    """The slices to search ``program`` on (see the module docstring), or None to search it whole."""
    if len(program.nodes) <= SLICE_NODES or not program.tuple_output or isinstance(program.neighbours, Custom):
        return None
    parts = split(program)
    if len(parts) > 1:
        out: list[Slice] = []
        seen: set[tuple] = set()
        for k, outs in enumerate(parts[:PARTS]):
            inputs = inputs_read(program, backward_slice(program, outs))
            if not inputs:  # the same law for every input: no evidence
                continue
            sub = named(part_program(program, outs, inputs), program, outs)
            key = (sub.nodes, sub.outputs, sub.domain)
            if key not in seen:
                seen.add(key)
                out.append(Slice(outs, inputs, sub, f"part {k} of {len(parts)} independent parts "
                                                    f"(the distinct ones among the first {PARTS} searched)"))
        return out or None
    k = min(program.arity, max(1, max_length))
    if len(inputs_read(program, backward_slice(program, list(range(k))))) == program.domain.size:
        return None  # the prefix reads every input: no smaller program
    return [prefix(program, k, "budget max_length")]


def prefix(program: Program, k: int, why: str) -> Slice:
    """The slice of ``program``'s first ``k`` output components (``why``: the reason for ``k``)."""
    outs = list(range(k))
    sub, inputs = output_prefix(program, k)
    return Slice(outs, inputs, named(sub, program, outs),
                 f"the first {k} of {program.arity} output components ({why})")


def named(sub: Program, program: Program, outputs: list[int]) -> Program:
    """The slice named after what it computes (its notes and messages say so)."""
    return dataclasses.replace(sub, name=f"{program.name} outputs {_span(outputs)}")


def lift_event(event: Event, outputs: Sequence[int]) -> Event | None:
    """The slice's ``event`` stated on the whole program's output (the slice's component ``j`` is the
    program's ``outputs[j]``); None for an event that reads the slice's output as a whole (a count, a
    sum: on the program it would read every component).  One output, or one skeleton (the tuner's
    events), is the product of its components' values, or codes."""
    if isinstance(event, Product):
        parts = [lift_event(p, outputs) for p in event.parts]
        return None if any(p is None for p in parts) else Product(tuple(parts))  # type: ignore[arg-type]
    if isinstance(event, SetEvent) and event.feature.kind in ("identity", "skeleton"):
        if len(event.values) != 1 or not isinstance(event.values[0], tuple) or len(event.values[0]) != len(outputs):
            return None
        codes = event.feature.codes
        return Product(tuple(SetEvent(Feature("component", index=outputs[j]) if event.feature == IDENTITY else
                                      Feature("code", index=outputs[j], codes=codes), (v,))
                             for j, v in enumerate(event.values[0])))
    if isinstance(event, (SetEvent, Threshold)) and event.feature.kind in ("component", "code"):
        feature = dataclasses.replace(event.feature, index=outputs[event.feature.index])
        return dataclasses.replace(event, feature=feature)
    return None


def lift_pair(program: Program, sl: Slice, x: Sequence[int], xp: Sequence[int]) -> tuple[list[int], list[int]]:
    """A slice's input pair extended to the program's inputs: the same value in both where the slice
    reads nothing, so the other components keep one law and the pair stays a neighbour pair."""
    dom = program.domain
    fx, fxp = fill(dom), fill(dom)
    for k, i in enumerate(sl.inputs):
        fx[i], fxp[i] = x[k], xp[k]
    if not (dom.contains(fx) and dom.contains(fxp) and program.neighbours.contains(fx, fxp)):
        raise SliceError(f"internal: the slice's pair does not extend to a {program.neighbours.name} pair")
    return fx, fxp


def fill(domain: Domain) -> list[int]:
    """The input that is :data:`FILL` everywhere, clipped to ``domain``."""
    return [min(max(FILL, lo), hi) for lo, hi in zip(domain.lo, domain.hi)]


class SliceError(DPHybridError):
    """A slice's result that does not lift to the whole program (a bug in dphybrid, not bad input)."""


def _lift(program: Program, sl: Slice, r: SearchResult) -> SearchResult | None:
    """The slice's result ``r`` as a result on the whole program; None when its event does not lift."""
    w = r.witness
    if w is None:
        return dataclasses.replace(r, mechanism=program.name, params=program.param_dict, candidates=[])
    event = event_from_json(w["event"]) if w["event"] != [] else None
    lifted = None if event is None else lift_event(event, sl.outputs)
    if event is not None and lifted is None:
        return None
    x, xp = lift_pair(program, sl, w["x"], w["x_prime"])
    witness = {**w, "mechanism": program.name, "x": x, "x_prime": xp,
               "event": [] if lifted is None else lifted.to_json()}
    cands = []
    for c in r.candidates:
        cx, cxp = lift_pair(program, sl, c["x"], c["x_prime"])
        cands.append({**c, "x": cx, "x_prime": cxp, "slice_outputs": sl.outputs})
    bracket = r.bracket
    if r.ratio_enclosure is not None:  # the event's level: the slice pair's level bounds not the whole pair's
        lo, hi = (parse_ratio(v) for v in r.ratio_enclosure)
        bracket = list(eps_bracket(RatioEnclosure(lo, hi)))
    return dataclasses.replace(r, mechanism=program.name, params=program.param_dict, witness=witness,
                               candidates=cands, bracket=bracket)


Combine = Callable[[Search, Program, list[tuple[SearchResult, Slice]]], "SearchResult | None"]


def sliced_search(s: Search, program: Program, slices: list[Slice],
                  search_slice: Callable[[Search, Program], SearchResult],
                  combine: Combine | None = None) -> SearchResult:
    """Search each slice (``search_slice``: the continuous pipeline), lift the best result; ``combine``
    (the slices' results, their events weighed together on the whole program) may give a better one.
    A slice's proof is given again to the composition rule, which proves the whole from its parts."""
    with remembering():
        return _sliced(s, program, slices, search_slice, combine)


def _sliced(s: Search, program: Program, slices: list[Slice], search_slice: Callable[[Search, Program], SearchResult],
            combine: Combine | None) -> SearchResult:
    s.clock.stage("slices")
    best: tuple[SearchResult, Slice] | None = None
    found: list[tuple[SearchResult, Slice]] = []
    for i, sl in enumerate(slices):
        if best is not None and best[0].certified and s.convergence().meets(certified_level(best[0].ratio)):
            s.limits.append(f"searched {i} of {len(slices)} slices: the proved upper bound is met")
            break
        s.say(f"searching slice {i + 1} of {len(slices)} ({len(sl.outputs)} outputs, {len(sl.inputs)} inputs)")
        budget = s.budget.shared(len(slices)) if sl.draw_part else s.budget  # parts of one search share it
        sub = Search(sl.program, precision=s.precision, claimed_eps=None, seed=s.seed, budget=budget,
                     backend=s.backend_name, global_check=False, progress=s.say, proved_upper=s.proved_upper)
        r = search_slice(sub, sl.program)
        found.append((r, sl))
        s.samples += r.samples
        s.queries += r.exact_queries
        s.stopped_by += r.stopped_by
        where = sl.program.name
        s.limits += [f"{where}: {lim}" for lim in r.limits_hit]
        lifted = _lift(program, sl, r)
        if lifted is None:
            s.limits.append(f"{where}: its event reads the slice's output as a whole and does not lift")
            continue
        if best is None or _key(lifted) > _key(best[0]):
            best = (lifted, sl)
    if combine is not None:
        s.clock.stage("compose")
        composed = combine(s, program, found)
        if composed is not None and (best is None or _key(composed) > _key(best[0])):
            best = (composed, best[1] if best is not None else slices[0])
    if s.global_check:
        s.limits.append("global verification skipped: the program was searched on slices")
    s.clock.stage("prove")
    prove_stage(s, program, first=("composition",))  # part by part, where the program has parts
    if best is None:
        result = SearchResult(mechanism=program.name, params=program.param_dict, certified=False, eps_lower=0.0,
                              ratio=None, witness=None, backend=None, precision=s.precision, seed=s.seed,
                              claimed_eps=s.claimed, note="no slice gave a result")
        return finish(s, attach(s, result))
    result, sl = best
    result.claimed_eps, result.proved_dp, result.refuted, result.eps_upper = s.claimed, None, None, None
    result.proof, result.upper_source, result.no_proof = None, None, []
    result.slice = result.slice or sl.to_json(program)
    attach(s, result)
    if s.claimed is not None and result.certified:
        result.refuted = result.eps_lower > s.claimed
    return finish(s, result)


def _key(r: SearchResult) -> tuple[bool, float]:
    return (r.certified, r.eps_lower)


def _span(outputs: list[int]) -> str:
    if len(outputs) > 2 and outputs == list(range(outputs[0], outputs[-1] + 1)):
        return f"{outputs[0]}..{outputs[-1]}"
    return ", ".join(str(o) for o in outputs)


__all__ = ["SLICE_NODES", "Slice", "fill", "lift_event", "lift_pair", "named", "plan", "prefix", "sliced_search"]
