"""Events that read every output first are weighed on each input's finished runs
(:func:`verifiers.continuous.paths.complete_runs`), and product events part by part from the runs
kept after their first parts (:mod:`verifiers.continuous.product_paths`): the paths must be exactly
those of a fresh symbolic execution of the event (same weights, constraints in the same order, same
results), so the regions, their enclosures and every count budget stay the same, whichever events
came before."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from hybrid.searcher.regions import event_key, symbolic
from hybrid.testers.events import Product, SetEvent, Threshold
from hybrid.testers.features import IDENTITY, Feature
from samplers import catalogue
from samplers.lang.ir import BOTTOM
from samplers.errors import BudgetExceeded
from verifiers.continuous.backend import ContinuousBackend
from verifiers.continuous.linear import Form
from verifiers.continuous.paths import explore
from verifiers.continuous.product_paths import ProductPaths

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
    rng, program, backend = _setup(name, params)
    for x in _inputs(program, rng):
        outputs = [p.result[0] for p in backend.paths(x, lambda run: (run.outputs(),))]
        for event in _events(program, rng.sample(outputs, min(len(outputs), 6)), rng):
            sym = symbolic(event, arity=program.arity, tuple_output=program.tuple_output)
            assert sym.reads_every_output
            _assert_fresh_paths(backend, x, sym, event)


def _setup(name: str, params: dict) -> tuple[random.Random, Any, ContinuousBackend]:
    program = catalogue.get(name).trace(**params)
    return random.Random(sum(map(ord, name))), program, ContinuousBackend(program)


def _inputs(program, rng: random.Random) -> list[tuple[int, ...]]:
    return [program.domain.check([rng.randint(max(lo, -1), min(hi, 2)) for lo, hi in zip(program.domain.lo,
                                                                                            program.domain.hi)])
            for _ in range(2)]


def _assert_fresh_paths(backend: ContinuousBackend, x, sym, event) -> None:
    fresh = [(p.weight, p.constraints, p.result) for p in backend.paths(x, sym)]
    reused = [(p.weight, p.constraints, p.result) for p in backend._event_paths(x, sym)]
    assert reused == fresh, event.describe()


def test_events_that_read_one_component_first_explore_afresh():
    """A threshold on one component of a tuple output reads only what it needs: not marked."""
    program = catalogue.get("svt3").trace(n=3)
    sym = symbolic(Threshold(Feature("component", index=1), 0.5, False), arity=program.arity,
                   tuple_output=program.tuple_output)
    assert not sym.reads_every_output


PRODUCT_CASES = [("numerical_svt", {"n": 5}), ("svt3", {"n": 4}), ("svt1", {"n": 4}), ("svt34_parallel", {"n": 3}),
         ("prefix_sum", {"n": 3}), ("laplace_parallel", {"k": 4})]


def _options(program) -> list[list]:
    """Per output component, the parts an event may have there (None: the component is free)."""
    slots = []
    for k in range(program.arity):
        feat = Feature("component", index=k)
        code = Feature("code", index=k, codes=(0.0,))  # 0 numeric, 1 bottom, 2 the code 0.0
        slots.append([None, SetEvent(feat, (0.0,)), SetEvent(feat, (BOTTOM,)), SetEvent(code, (0,)),
                      SetEvent(code, (1, 2))]
                     + [Threshold(feat, a, below) for a in (-3.0, 0.5, 1.0, 4.0) for below in (False, True)])
    return slots


def _ascent(slots, rng: random.Random, count: int) -> list[Product]:
    """Products as a coordinate ascent makes them: one component's part changed at a time."""
    chosen = [rng.choice(o) for o in slots]
    out = []
    while len(out) < count:
        k = rng.randrange(len(slots))
        chosen[k] = rng.choice(slots[k])
        parts = tuple(p for p in chosen if p is not None)
        if len(parts) > 1:
            out.append(Product(parts))
    return out


@pytest.mark.parametrize("name, params", PRODUCT_CASES, ids=[c[0] for c in PRODUCT_CASES])
def test_product_events_have_the_paths_of_a_fresh_exploration(name, params):
    rng, program, backend = _setup(name, params)
    slots = _options(program)
    for x in _inputs(program, rng):
        for event in _ascent(slots, rng, 40):
            sym = symbolic(event, arity=program.arity, tuple_output=program.tuple_output)
            assert sym.parts and not sym.reads_every_output
            _assert_fresh_paths(backend, x, sym, event)
    assert backend._products._passed  # prefixes were kept (and, above, reused)


def test_event_keys_tell_apart_values_that_compare_equal():
    """1, 1.0 and True are equal in Python, and 0.0 == -0.0: a key must not make them one event."""
    feat = Feature("component", index=0)
    keys = {event_key(SetEvent(feat, (v,))) for v in (1, 1.0, True, 0.0, -0.0)}
    assert len(keys) == 5
    assert event_key(Threshold(feat, 0.0, True)) != event_key(Threshold(feat, -0.0, True))
    assert event_key(Threshold(feat, 1.0, True)) != event_key(Threshold(feat, 1.0, False))
    assert event_key(Threshold(feat, 1.0, True)) == event_key(Threshold(Feature("component", index=0), 1.0, True))
    long = np.zeros(2000)  # numpy's repr elides the middle of a long array
    other = long.copy()
    other[1000] = 1
    assert repr(long) == repr(other) and event_key(SetEvent(feat, (long,))) != event_key(SetEvent(feat, (other,)))


def test_the_path_budget_is_a_fresh_explorations():
    """More runs than the path budget raise as a fresh exploration does, and as many do not."""
    program = catalogue.get("numerical_svt").trace(n=5)
    backend = ContinuousBackend(program)
    x = program.domain.check([1] * 5)
    feats = [Feature("component", index=k) for k in range(5)]
    event = Product(tuple(Threshold(f, 0.5, False) for f in feats[:4]) + (SetEvent(feats[4], (0.0,)),))
    sym = symbolic(event, arity=program.arity, tuple_output=program.tuple_output)
    runs = []
    fresh = [p for p in explore(backend.specialised(x), lambda run: runs.append(1) or sym(run)) if p.result]
    with pytest.raises(BudgetExceeded):
        ProductPaths(max_paths=len(runs) - 1).paths(backend.specialised(x), x, sym.parts)
    assert ProductPaths(max_paths=len(runs)).paths(backend.specialised(x), x, sym.parts) == fresh
