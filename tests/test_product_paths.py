"""Product events are explored part by part from the runs kept after their first parts
(:mod:`verifiers.continuous.product_paths`): the paths must be exactly those of a fresh symbolic
execution of the event (same weights, constraints in the same order, same results), so the
regions, their enclosures and every count budget stay the same, whichever events came before."""

from __future__ import annotations

import random

import pytest

from hybrid.searcher.regions import event_key, symbolic
from hybrid.testers.events import Product, SetEvent, Threshold
from hybrid.testers.features import Feature
from samplers import catalogue
from samplers.errors import BudgetExceeded
from samplers.lang.ir import BOTTOM
from verifiers.continuous.backend import ContinuousBackend
from verifiers.continuous.paths import explore
from verifiers.continuous.product_paths import ProductPaths

CASES = [("numerical_svt", {"n": 5}), ("svt3", {"n": 4}), ("svt1", {"n": 4}), ("svt34_parallel", {"n": 3}),
         ("prefix_sum", {"n": 3}), ("laplace_parallel", {"k": 4})]


def _options(program, rng: random.Random) -> list[list]:
    """Per output component, the parts an event may have there (None: the component is free)."""
    slots = []
    for k in range(program.arity):
        feat = Feature("component", index=k)
        slots.append([None, SetEvent(feat, (0.0,)), SetEvent(feat, (BOTTOM,))]
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


@pytest.mark.parametrize("name, params", CASES, ids=[c[0] for c in CASES])
def test_product_events_have_the_paths_of_a_fresh_exploration(name, params):
    rng = random.Random(sum(map(ord, name)))
    program = catalogue.get(name).trace(**params)
    backend = ContinuousBackend(program)
    slots = _options(program, rng)
    for _ in range(2):
        x = program.domain.check([rng.randint(max(lo, -1), min(hi, 2)) for lo, hi in zip(program.domain.lo,
                                                                                             program.domain.hi)])
        for event in _ascent(slots, rng, 40):
            sym = symbolic(event, arity=program.arity, tuple_output=program.tuple_output)
            assert sym.parts and not sym.reads_every_output
            fresh = [(p.weight, p.constraints, p.result) for p in backend.paths(x, sym)]
            reused = [(p.weight, p.constraints, p.result) for p in backend._event_paths(x, sym)]
            assert reused == fresh, event.describe()
    assert backend._products._passed  # prefixes were kept (and, above, reused)


def test_event_keys_tell_apart_values_that_compare_equal():
    """1, 1.0 and True are equal in Python, and 0.0 == -0.0: a key must not make them one event."""
    feat = Feature("component", index=0)
    keys = {event_key(SetEvent(feat, (v,))) for v in (1, 1.0, True, 0.0, -0.0)}
    assert len(keys) == 5
    assert event_key(Threshold(feat, 0.0, True)) != event_key(Threshold(feat, -0.0, True))
    assert event_key(Threshold(feat, 1.0, True)) != event_key(Threshold(feat, 1.0, False))
    assert event_key(Threshold(feat, 1.0, True)) == event_key(Threshold(Feature("component", index=0), 1.0, True))


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
