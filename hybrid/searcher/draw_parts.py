"""Parts of a program that read the same input but share no draw: searched apart, composed on one pair.

``svt34_parallel`` runs ``svt3`` and ``svt4`` on one input with independent noise: its outputs
split into parts of independent draws given the input (:func:`samplers.lang.slicing.split_draws`),
though not into independent parts (they share every input).  Searched whole, each candidate pair's
event is tuned over both parts' paths at once (40 components at n = 20); each part alone is a
smaller program whose events the search tunes faster and better.  Each part is a slice
(:mod:`hybrid.searcher.slices`): its outputs have exactly the program's joint law on those
components, and it reads every input, so its pair is the program's pair unchanged.

Given the input the parts are independent, so on one pair ``(x, x')`` the product of events
``E_1 x ... x E_k`` on the parts' components has ratio ``prod_i P(E_i|x) / P(E_i|x')``: the
parts' levels add up, as the composition rule's upper bound does.  :func:`compose` states the
parts' witness events on the program's components (a skeleton as its components' codes), forms on
each part's witness pair that event alone and the product of every part's event there (a part of
finite outputs: its best output on that pair), and weighs each on the **whole program** (the
continuous backend on the program, no slice involved): the composed result's ratio is the whole
program's, not assumed from the parts.  The parts share the search's certification budgets (each
gets ``1/k`` of ``enclosures`` and ``work``: :meth:`hybrid.searcher.budget.Budget.shared`), so
searching part by part does no more of that work than searching whole.

The rule, by counts only: a tuple-output program (not a custom neighbour relation) whose outputs
form 2 to :data:`PARTS` parts of independent draws, not independent parts, each reading every
input, no two the same sub-program.  Parts read by a few inputs each are left to the other rules,
and so are many copies of one part (``laplace_parallel``: one release 20 times), whose level the
whole program's events find.
"""

from __future__ import annotations

import dataclasses
import itertools

from hybrid.searcher.numeric_events import EventTuner
from hybrid.searcher.regions import symbolic
from hybrid.seeds import derive_seed
from hybrid.searcher.slices import Slice, lift_event, named
from hybrid.searcher.state import Search, SearchResult
from hybrid.testers.event_json import event_from_json
from hybrid.testers.events import Event, Product, SetEvent
from hybrid.testers.features import IDENTITY
from samplers.deadline import TimeLimitReached
from samplers.errors import LimitExceeded, UnsupportedByBackend
from samplers.lang.ir import Program
from samplers.lang.neighbours import Custom
from samplers.lang.slicing import backward_slice, inputs_read, local_form, part_program, split, split_draws
from verifiers.backends import get_backend
from verifiers.continuous.backend import ContinuousBackend, eps_bracket
from verifiers.continuous.enclosure import RatioEnclosure

PARTS = 4  # a program of more parts of independent draws is searched by the other rules


def draw_plan(program: Program) -> list[Slice] | None:
    """One slice per part of independent draws (see the module docstring), or None."""
    if not program.tuple_output or isinstance(program.neighbours, Custom) or len(split(program)) > 1:
        return None
    parts = split_draws(program)
    if not 2 <= len(parts) <= PARTS:
        return None
    every = list(range(program.domain.size))
    keys, out = set(), []
    for k, outs in enumerate(parts):
        ids = backward_slice(program, outs)
        if inputs_read(program, ids) != every:
            return None
        keys.add(local_form(program, outs, every, ids))
        out.append(Slice(outs, every, named(part_program(program, outs, every), program, outs),
                         f"part {k} of {len(parts)} parts of independent draws on the same input", draw_part=True))
    return out if len(keys) == len(out) else None


def combine(s: Search, program: Program, found: list[tuple[SearchResult, Slice]]) -> SearchResult | None:
    """The parts' results composed (:func:`compose`) as a result on the whole program, or None."""
    best = compose(s, program, found)
    template = next((r for r, _ in found if r.certified and r.witness is not None), None)
    if best is None or template is None or not best[3].lo:
        return None
    x, xp, event, ratio = best
    used = sorted(set(_components(event)))
    bracket = list(eps_bracket(ratio))
    witness = {**template.witness, "mechanism": program.name, "x": x, "x_prime": xp, "event": event.to_json()}
    return dataclasses.replace(
        template, mechanism=program.name, params=program.param_dict, eps_lower=bracket[0], ratio=ratio.lo,
        witness=witness, bracket=bracket, ratio_enclosure=ratio.to_json(),
        candidates=[{**c, "slice_outputs": sl.outputs} for r, sl in found for c in r.candidates],
        slice={"outputs": used, "inputs": list(range(program.domain.size)), "nodes": len(program.nodes),
               "program_nodes": len(program.nodes),
               "how": f"{len(found)} parts of independent draws on the same input searched apart, their witness "
                      "events weighed together on the whole program"})


def compose(s: Search, program: Program, found: list[tuple[SearchResult, Slice]]) -> tuple[
        list[int], list[int], Event, RatioEnclosure] | None:
    """On each part's witness pair, that part's witness event alone and the product of every part's
    event there (a part of finite outputs: its best output on that pair; otherwise its own witness
    event and one tuned on that pair), each weighed on the whole program; the best as ``(x, x', event,
    ratio)``, or None."""
    own: list[Event | None] = []
    for r, sl in found:
        w = r.witness
        certified = r.certified and w is not None and w["event"] != []
        own.append(lift_event(event_from_json(w["event"]), sl.outputs) if certified else None)
    whole = ContinuousBackend(program)
    best = None
    for i, (r, _) in enumerate(found):
        if own[i] is None:
            continue
        x, xp = tuple(r.witness["x"]), tuple(r.witness["x_prime"])
        try:
            others = [_on_pair(s, sl, x, xp, own[j]) for j, (_, sl) in enumerate(found) if j != i]
            products = [Product((own[i], *rest)) for rest in itertools.product(*[o for o in others if o])]
            for event in [own[i]] + [p for p in products if len(p.parts) > 1]:
                w = whole.witness_ratio(x, xp, symbolic(event, arity=program.arity, tuple_output=True))
                s.queries += 1
                if best is None or w.ratio.lo > best[3].lo:
                    best = (list(x), list(xp), event, w.ratio)
        except TimeLimitReached as e:
            s.limits.append(f"{e}: the parts' events were not all weighed on the whole program")
            return best
        except (UnsupportedByBackend, LimitExceeded) as e:
            s.limits.append(f"the parts' events on one pair were not weighed on the whole program ({e})")
    return best


def _on_pair(s: Search, sl: Slice, x: tuple, xp: tuple, own: Event | None) -> list[Event]:
    """Part ``sl``'s events on the pair ``(x, x')``, on the program's components: its best output there
    when its outputs are finite; else an event tuned on that pair (``budget.tune_steps`` certified
    ratios on the part) and its own witness event (``own``, None: none)."""
    backend = get_backend(sl.program, "continuous")
    if backend.finite_outputs(x):
        level = backend.pair_epsilon(x, xp, s.precision)
        s.queries += 1
        return [lift_event(SetEvent(IDENTITY, (level.output,)), sl.outputs)] if level.ratio.lo > 1 else []
    found = [] if own is None else [own]
    sampler = s.sampler(sl.program)
    if sampler is not None:
        tuner = EventTuner(backend, sampler, derive_seed(s.seed, 37))
        tuned = tuner.tune(x, xp, s.budget.tune_steps)
        s.queries += tuner.evaluations
        event = lift_event(tuned.event, sl.outputs) if tuned.event is not None and tuned.ratio.lo > 1 else None
        if event is not None and event != own:
            found.insert(0, event)
    return found


def _components(event: Event) -> list[int]:
    """The output components a restated event reads."""
    if isinstance(event, Product):
        return [c for p in event.parts for c in _components(p)]
    return [event.feature.index]


__all__ = ["PARTS", "combine", "compose", "draw_plan"]
