"""Events that read every output first are weighed on each input's finished runs
(:func:`verifiers.continuous.paths.complete_runs`): the paths must be exactly those of a fresh
symbolic execution of the event (same weights, constraints in the same order, same results), so
the regions, their enclosures and every count budget stay the same."""

from __future__ import annotations

import random

import pytest

from hybrid.searcher.regions import symbolic
from hybrid.testers.events import Product, SetEvent, Threshold
from hybrid.testers.features import IDENTITY, Feature
from samplers import catalogue
from samplers.lang.ir import BOTTOM
from verifiers.continuous.backend import ContinuousBackend
from verifiers.continuous.linear import Form

CASES = [("svt3", {"n": 4}), ("numerical_svt", {"n": 4}), ("svt34_parallel", {"n": 3}), ("svt1", {"n": 4}),
         ("svt6", {"n": 3}), ("report_noisy_max3", {"n": 3}), ("laplace", {}), ("noisy_hist1", {"n": 3})]


def _skeleton(output: tuple) -> tuple[tuple[float, ...], tuple[int, ...]]:
    codes = tuple(sorted({float(c) for c in output if not isinstance(c, Form) and c is not BOTTOM}))
    return codes, tuple(0 if isinstance(c, Form) else 1 if c is BOTTOM else 2 + codes.index(float(c)) for c in output)


def _events(program, outputs, rng):
    """Whole-output and skeleton set events, alone and heading products of thresholds (some on the
    max of the released values, which branches after the head), or thresholds on a single output."""
    if not program.tuple_output:
        return [Threshold(IDENTITY, rng.choice([-30.0, -1.0, 0.0, 2.5, 30.0]), rng.random() < 0.5) for _ in range(4)]
    out = []
    for o in outputs:
        codes, skel = _skeleton(o)
        head = SetEvent(Feature("skeleton", codes=codes), (skel,))
        numeric = [k for k, c in enumerate(skel) if c == 0]
        parts = [Threshold(Feature("component", index=k), rng.choice([-25.0, -1.0, 0.5, 3.0, 25.0]),
                           rng.random() < 0.5) for k in numeric if rng.random() < 0.7]
        if len(numeric) > 1:
            parts.append(Threshold(Feature("max", codes=codes), rng.choice([-2.0, 1.0, 6.0]), rng.random() < 0.5))
        out += [head, Product((head, *parts)) if parts else head]
        if all(not isinstance(c, Form) for c in o):
            out.append(SetEvent(IDENTITY, (o,)))
    return out


@pytest.mark.parametrize("name, params", CASES, ids=[c[0] for c in CASES])
def test_events_on_finished_runs_have_the_paths_of_a_fresh_exploration(name, params):
    rng = random.Random(sum(map(ord, name)))
    program = catalogue.get(name).trace(**params)
    backend = ContinuousBackend(program)
    for _ in range(2):
        x = program.domain.check([rng.randint(max(lo, -1), min(hi, 2)) for lo, hi in zip(program.domain.lo,
                                                                                             program.domain.hi)])
        outputs = [p.result[0] for p in backend.paths(x, lambda run: (run.outputs(),))]
        for event in _events(program, rng.sample(outputs, min(len(outputs), 6)), rng):
            sym = symbolic(event, arity=program.arity, tuple_output=program.tuple_output)
            assert sym.reads_every_output
            fresh = [(p.weight, p.constraints, p.result) for p in backend.paths(x, sym)]
            reused = [(p.weight, p.constraints, p.result) for p in backend._event_paths(x, sym)]
            assert reused == fresh, event.describe()


def test_events_that_read_one_component_first_explore_afresh():
    """A threshold on one component of a tuple output reads only what it needs: not marked."""
    program = catalogue.get("svt3").trace(n=3)
    sym = symbolic(Threshold(Feature("component", index=1), 0.5, False), arity=program.arity,
                   tuple_output=program.tuple_output)
    assert not sym.reads_every_output
