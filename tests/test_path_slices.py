"""A program with more paths than the search may enclose is searched on an output prefix
(hybrid.searcher.path_slices): which prefix, that its law is the whole program's, and that the
lifted witness's ratio is what the whole program gives (svt6, CheckDP's badsparsevector2, has no
cutoff: 2^n paths)."""

from __future__ import annotations

import pytest

from hybrid.searcher import slices
from hybrid.searcher.budget import Budget
from hybrid.searcher.path_slices import count_paths, path_plan
from hybrid.searcher.search import search
from hybrid.testers.events import SetEvent
from hybrid.testers.features import IDENTITY
from samplers.catalogue import get
from verifiers.continuous.backend import ContinuousBackend

from slice_checks import overlap, whole_ratio


def test_count_paths_stops_at_the_limit():
    assert count_paths(get("svt6").trace(n=5), 100) == 32  # each answer branches: 2^5
    assert count_paths(get("svt6").trace(n=20), 1000) == 1001  # more than the limit, counted no further
    assert count_paths(get("svt1").trace(n=20), 1000) == 21  # the cutoff: at most one answer above


def test_svt6_at_n_20_is_planned_on_its_first_ten_answers():
    (sl,) = path_plan(get("svt6").trace(n=20), enclosures=20_000)
    assert sl.outputs == sl.inputs == list(range(10))  # 2^10 = 1024 paths <= 20000 // 16 < 2^11
    assert len(sl.program.nodes) == len(get("svt6").trace(n=10).nodes)  # svt6's first 10 answers are svt6 at n = 10
    assert "than budget enclosures = 20000" in sl.how


def test_programs_whose_paths_fit_are_searched_whole():
    assert path_plan(get("svt6").trace(n=5), enclosures=20_000) is None
    assert path_plan(get("svt1").trace(n=20), enclosures=20_000) is None  # a cutoff: n + 1 paths
    assert path_plan(get("report_noisy_max1").trace(n=20), enclosures=10) is None  # one output: no prefix
    assert path_plan(get("svt34_parallel").trace(n=20), enclosures=10) is None  # released values: events prune


def test_prefix_law_is_the_whole_programs():
    """An event on the planned prefix has the same probabilities on the slice and on the whole program."""
    prog = get("svt6").trace(n=20)
    (sl,) = path_plan(prog, enclosures=64)  # at most 4 paths: the first 2 answers
    assert sl.outputs == [0, 1]
    x, xp, o = (3, -2), (4, -1), (1, 0)
    on_slice = ContinuousBackend(sl.program).witness_ratio(x, xp, [o]).ratio
    fx, fxp = slices.lift_pair(prog, sl, x, xp)
    lifted = slices.lift_event(SetEvent(IDENTITY, (o,)), sl.outputs)
    on_whole = whole_ratio(prog, {"x": fx, "x_prime": fxp, "event": lifted.to_json()})
    assert on_slice.lo <= on_whole.hi and on_whole.lo <= on_slice.hi


def test_a_search_over_the_path_budget_certifies_on_a_prefix():
    """svt6 at n = 8 with an enclosures budget of 200 (256 paths on one input): certified on its first 3
    answers, the witness re-weighed on the whole program, below the proved n eps / 2, the claim refuted."""
    prog = get("svt6").trace(n=8)
    r = search(get("svt6"), {"n": 8}, claimed_eps=0.1, budget=Budget(enclosures=200))
    assert r.certified and r.slice["outputs"] == [0, 1, 2] and r.slice["program_nodes"] == len(prog.nodes)
    assert prog.neighbours.contains(r.witness["x"], r.witness["x_prime"]) and len(r.witness["x"]) == 8
    assert overlap(whole_ratio(prog, r.witness), r.ratio_enclosure)
    assert 0.1 < r.eps_lower <= r.eps_upper <= 0.4 + 1e-9 and r.refuted


@pytest.mark.slow
def test_badsparsevector2_at_n_20_is_refuted():
    """Issue 29's target: CheckDP's badsparsevector2 (svt6) at n = 20 refuted at its claim 0.1 by a certified
    bound (2^20 paths, over the backend's cap, searched whole it got none); the bound lies below the proved
    level n eps / 2 = 1 and the witness's ratio is the whole program's."""
    prog = get("svt6").trace(n=20)
    r = search(get("svt6"), {"n": 20}, claimed_eps=0.1, time_budget=60)
    assert r.certified and r.refuted and r.eps_lower > 0.4
    assert r.slice["outputs"] == list(range(10))
    assert r.eps_upper is not None and r.eps_lower <= r.eps_upper <= 1.0 + 1e-9
    assert overlap(whole_ratio(prog, r.witness), r.ratio_enclosure)
