"""Events on features: masks, single-output membership, JSON round trips, exact probabilities."""

import json
from fractions import Fraction

import numpy as np
import pytest

from hybrid.testers.event_json import event_from_json
from hybrid.testers.events import Product, SetEvent, Threshold, feature_candidates
from hybrid.testers.features import IDENTITY, Feature, MalformedEvent, default_features
from samplers import catalogue
from samplers.compile import compile_sampler
from samplers.lang.ir import BOTTOM, BOTTOM_CODE
from verifiers.enumerate import Enumerator

B = BOTTOM_CODE
INT_ROWS = np.array([[0, 1, B], [1, B, B], [0, 0, 1], [0, 1, B]], dtype=np.int64)
FLOAT_ROWS = np.array([[-1000.0, 3.5, np.nan], [2.0, np.nan, np.nan], [-1000.0, -1000.0, 0.5]])

EVENTS = [
    (SetEvent(IDENTITY, ((0, 1, BOTTOM), (0, 0, 1))), INT_ROWS, [True, False, True, True]),
    (SetEvent(Feature("count", value="bottom"), (2,)), INT_ROWS, [False, True, False, False]),
    (SetEvent(Feature("hamming", reference=(1, 0, 0)), (3,)), INT_ROWS, [True, False, False, True]),
    (SetEvent(Feature("component", index=1), (B,)), INT_ROWS, [False, True, False, False]),
    (Threshold(Feature("sum", codes=(-1000.0,)), 1.0, False), FLOAT_ROWS, [True, True, False]),
    (Threshold(Feature("max", codes=(-1000.0,)), 1.0, True), FLOAT_ROWS, [False, False, True]),
    (Product((SetEvent(Feature("skeleton", codes=(-1000.0,)), ((2, 0, 1),)),
              Threshold(Feature("sum", codes=(-1000.0,)), 3.0, True))), FLOAT_ROWS, [False, False, False]),
    # one entry's code, as the skeleton codes it: 0 a number, 1 bottom, 2 + j the code j
    (SetEvent(Feature("code", index=1, codes=(-1000.0,)), (0,)), FLOAT_ROWS, [True, False, False]),
    (SetEvent(Feature("code", index=1, codes=(-1000.0,)), (1, 2)), FLOAT_ROWS, [False, True, True]),
    (SetEvent(Feature("code", index=2), (1,)), INT_ROWS, [True, True, False, True]),
]


@pytest.mark.parametrize("event,rows,want", EVENTS)
def test_mask_member_and_json_round_trip(event, rows, want):
    assert event.mask(rows).tolist() == want
    assert [event.member(tuple(r)) for r in rows.tolist()] == want
    back = event_from_json(json.loads(json.dumps(event.to_json())))
    assert back.mask(rows).tolist() == want


def test_identity_set_event_is_a_plain_list_of_outputs():
    e = SetEvent(IDENTITY, ((0, 1, BOTTOM),))
    assert e.to_json() == [[0, 1, "bottom"]]


def test_exact_probability_of_a_feature_event():
    # the verifier takes the event as a predicate; count of ones in 2-bit RR with lam 1/4
    program = catalogue.get("rr").trace(n=2)
    e = SetEvent(Feature("count", value=1), (2,))
    assert Enumerator(program).event_probability((1, 1), e) == Fraction(9, 16)


def test_candidates_cover_categorical_and_numeric_outputs():
    s = compile_sampler(catalogue.get("svt1"), eps=0.7)
    sx, sy = s.sample([1] * 10, 20_000, 1), s.sample([2] * 5 + [0] * 5, 20_000, 2)
    feats = default_features(sx, sy)
    assert IDENTITY in feats and Feature("count", value="bottom") in feats
    c = feature_candidates(IDENTITY, sx, sy, 200)
    assert len(c.events) == len(c.cx) == len(c.cy)
    for e, cx, cy in list(zip(c.events, c.cx, c.cy))[:30]:  # counts agree with the masks
        assert (e.mask(sx).sum(), e.mask(sy).sum()) == (cx, cy)
    f = compile_sampler(catalogue.get("svt3"), eps=0.7)
    fx, fy = f.sample([1] * 10, 5_000, 1), f.sample([2] * 10, 5_000, 2)
    kinds = {g.kind for g in default_features(fx, fy)}
    assert {"component", "skeleton", "sum", "count"} <= kinds
    t = feature_candidates(Feature("sum", codes=(-1000.0,)), fx, fy, 10)
    for e, cx, cy in zip(t.events, t.cx, t.cy):
        assert (e.mask(fx).sum(), e.mask(fy).sum()) == (cx, cy)


@pytest.mark.parametrize("bad", [3, {"feature": {"kind": "nope"}, "in": [1]}, {"feature": {"kind": "identity"}},
                                 {"all": []}, {"feature": {"kind": "component"}, "below": 1},
                                 {"feature": {"kind": "code", "index": 0, "codes": [float("nan")]}, "in": [2]},
                                 {"feature": {"kind": "skeleton", "codes": ["-1000"]}, "in": [(0,)]},
                                 {"feature": {"kind": "sum", "codes": [True]}, "below": 1}])
def test_malformed_events(bad):
    with pytest.raises(MalformedEvent):
        event_from_json(bad)
