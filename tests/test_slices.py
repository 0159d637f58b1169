"""The search at large n on program slices (hybrid.searcher.slices): which slices, how a slice's
result lifts to the whole program, and that the lifted witness is what the whole program gives."""

from __future__ import annotations

import pytest

from hybrid.searcher import slices
from hybrid.searcher.budget import Budget
from hybrid.searcher.search import search
from hybrid.testers.events import Product, SetEvent, Threshold
from hybrid.testers.features import IDENTITY, Feature
from samplers.catalogue import get
from hybrid.searcher.regions import symbolic
from samplers.lang.slicing import part_program
from verifiers.continuous.backend import ContinuousBackend

from slice_checks import overlap, whole_ratio


def test_plan_independent_parts_searches_one_distinct_bin():
    prog = get("noisy_hist1").trace(n=1000)
    (sl,) = slices.plan(prog, max_length=40)
    assert (sl.outputs, sl.inputs, len(sl.program.nodes)) == ([0], [0], 3)
    assert sl.program.domain.size == 1


def test_plan_prefix_of_a_sparse_vector():
    prog = get("svt1").trace(n=200)
    (sl,) = slices.plan(prog, max_length=40)
    assert sl.outputs == list(range(40)) and sl.inputs == list(range(40))
    # svt1's first 40 answers are svt1 at n = 40 (the same nodes, up to numbering)
    assert len(sl.program.nodes) == len(get("svt1").trace(n=40).nodes)


def test_plan_keeps_small_programs_and_argmax_whole():
    assert slices.plan(get("noisy_hist1").trace(n=5), max_length=40) is None  # small
    assert slices.plan(get("report_noisy_max1").trace(n=400), max_length=40) is None  # one output reads all


def test_lift_event_restates_components():
    lifted = slices.lift_event(Threshold(Feature("component", index=1), 2.5, False), [7, 9])
    assert lifted.to_json() == {"feature": {"kind": "component", "index": 9}, "at_least": 2.5}
    whole = slices.lift_event(SetEvent(IDENTITY, ((0, 1),)), [3, 4])
    assert isinstance(whole, Product)
    assert whole.member((9, 9, 9, 0, 1)) and not whole.member((9, 9, 9, 0, 0))
    # an event on the slice's output as a whole would read every component of the program
    assert slices.lift_event(Threshold(Feature("sum"), 1.0, False), [0, 1]) is None
    assert slices.lift_event(SetEvent(IDENTITY, ((0, 1), (1, 1))), [0, 1]) is None


def test_lift_event_states_a_skeleton_by_its_components_codes():
    """The tuner's events (a skeleton, thresholds on its numeric entries) lift: the skeleton becomes one
    code event per component, with the same probability on the whole program as on the slice."""
    skel = SetEvent(Feature("skeleton", codes=(-1000.0,)), ((2, 0, 1),))
    lifted = slices.lift_event(Product((skel, Threshold(Feature("component", index=1), 3.0, True))), [4, 5, 6])
    assert lifted is not None and lifted.to_json()["all"][0]["all"][1] == {
        "feature": {"kind": "code", "index": 5, "codes": [-1000.0]}, "in": [0]}
    assert lifted.member((9, 9, 9, 9, -1000.0, 2.5, float("nan"))) and not lifted.member((9, 9, 9, 9, -1000.0, 3.5, 1.0))
    assert slices.lift_event(SetEvent(Feature("skeleton", codes=()), ((0, 1), (1, 1))), [0, 1]) is None  # two shapes
    prog = get("svt3").trace(n=6, c=2)
    sub = part_program(prog, [0, 1, 2], [0, 1, 2])
    x, xp = (2, 0, 2), (1, 1, 1)
    event = Product((SetEvent(Feature("skeleton", codes=(-1000.0,)), ((0, 2, 0),)),
                     Threshold(Feature("component", index=2), 4.0, False)))
    on_slice = ContinuousBackend(sub).witness_ratio(x, xp, symbolic(event, arity=3, tuple_output=True)).ratio
    on_whole = whole_ratio(prog, {"x": list(x) + [1, 1, 1], "x_prime": list(xp) + [1, 1, 1],
                                  "event": slices.lift_event(event, [0, 1, 2]).to_json()})
    assert on_slice.lo <= on_whole.hi and on_whole.lo <= on_slice.hi and on_slice.lo > 0


def test_lift_pair_is_a_neighbour_pair():
    prog = get("svt1").trace(n=200)
    (sl,) = slices.plan(prog, max_length=40)
    x, xp = slices.lift_pair(prog, sl, [0] * 40, [1] * 40)
    assert x[:40] == [0] * 40 and xp[:40] == [1] * 40 and x[40:] == xp[40:] == [1] * 160
    assert prog.neighbours.contains(x, xp)


def test_slice_law_is_the_whole_programs():
    """A prefix slice's event has the whole program's probability (enclosed both ways)."""
    prog = get("svt1").trace(n=6)
    outs = [0, 1, 2]
    sub = part_program(prog, outs, [0, 1, 2])
    x, xp, o = (2, 2, 1), (1, 1, 2), (0, 0, 1)
    on_slice = ContinuousBackend(sub).witness_ratio(x, xp, [o]).ratio
    lifted = slices.lift_event(SetEvent(IDENTITY, (o,)), outs)
    fx, fxp = list(x) + [1, 1, 1], list(xp) + [1, 1, 1]
    on_whole = whole_ratio(prog, {"x": fx, "x_prime": fxp, "event": lifted.to_json()})
    assert on_slice.lo <= on_whole.hi and on_whole.lo <= on_slice.hi


@pytest.mark.parametrize("name, params, max_length, unsliced", [
    ("noisy_hist1", {"n": 5}, 40, True),
    ("svt1", {"n": 10}, 5, False),
])
def test_sliced_search_matches_the_whole_program(monkeypatch, name, params, max_length, unsliced):
    """Slicing forced on small programs: the lifted witness's ratio, enclosed on the whole program,
    overlaps the reported enclosure; where the slice loses nothing (a histogram bin) the bound is the
    whole-program search's."""
    monkeypatch.setattr(slices, "SLICE_NODES", 10)
    r = search(get(name), params, budget=Budget(max_length=max_length), global_check=True)
    assert r.slice is not None and r.certified
    assert "global verification skipped: the program was searched on slices" in r.limits_hit
    prog = get(name).trace(**params)
    assert prog.neighbours.contains(r.witness["x"], r.witness["x_prime"])
    assert overlap(whole_ratio(prog, r.witness), r.ratio_enclosure)
    assert r.eps_lower <= r.eps_upper == 0.1
    if unsliced:
        monkeypatch.setattr(slices, "SLICE_NODES", 10**9)
        whole = search(get(name), params)
        assert whole.slice is None and abs(whole.eps_lower - r.eps_lower) < 1e-9


def test_noisy_hist1_at_n_1000():
    """The target of issue 30: certified >= 0.0999 and proved 0.1, the witness re-weighed whole."""
    r = search(get("noisy_hist1"), {"n": 1000})
    assert r.certified and r.eps_lower >= 0.0999 and r.eps_upper == 0.1
    assert r.proof["rule"] == "composition"  # tried first at large n: one part proved, not 1000 paths
    assert r.to_json()["slice"]["outputs"] == [0] and r.slice["program_nodes"] == 3000
    assert len(r.witness["x"]) == 1000
    assert overlap(whole_ratio(get("noisy_hist1").trace(n=1000), r.witness), r.ratio_enclosure)


def test_no_rule_starts_after_the_deadline(monkeypatch):
    """The rules after ``first`` do not start once the search's deadline has passed (the alignment rule
    builds its paths over the whole program before it looks at the clock)."""
    import time

    from hybrid.searcher import proof_stage
    from samplers import deadline
    from verifiers.prover import alignment

    def late(program, eps=None):
        raise AssertionError("a rule started after the deadline")

    monkeypatch.setattr(alignment, "attempt", late)
    prog = get("svt1").trace(n=5)
    with deadline.time_limit(0.01):
        time.sleep(0.02)
        found = proof_stage._prove_in_order(prog, 30.0, ("composition",))
    assert {n.rule for n in found} == {"composition", "alignment", "gaussian"}
    assert "time budget of 0.01 s reached" in found[0].reason  # the deadline that stopped it, not prove_time


def test_a_large_loop_is_proved_for_every_n_before_the_per_n_rules():
    """svt1 at n = 1000: the every-n rule proves eps in about a second, where the alignment rule's work
    grows with n (it ran out of its 120 s); a large program without the loop construct goes on to the
    per-n rules."""
    from hybrid.searcher import proof_stage
    from verifiers.prover.proof import Proof

    prog = get("svt1").trace(n=1000)
    assert len(prog.nodes) > proof_stage.EVERY_N_FIRST
    found = proof_stage._prove_in_order(prog, 60.0, ())
    assert isinstance(found, Proof) and found.rule == "every_n" and found.eps_upper <= 0.1 + 1e-9
    assert proof_stage._every_n(get("prefix_sum").trace(n=400), 30.0) is None
