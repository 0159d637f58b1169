"""The stop rules of a local search: converged over a window, a proved upper bound met; and the
rule reported in the result's ``stopped_by``."""

from __future__ import annotations

import dataclasses
import math

from hybrid.searcher.search import Budget, search
from hybrid.searcher.stopping import STOPPED_BY, Convergence
from samplers import catalogue

QUICK = Budget(samples=200_000, global_pairs=10, local_steps=60)


def test_converged_after_a_window_without_growth_beyond_the_precision():
    rule = Convergence(precision=0.01, window=3)
    assert rule.start(0.5) is None
    assert [rule.step(v) for v in (0.505, 0.509, 0.509)] == [None, None, "converged"]
    rule.start(0.5)
    steps = [rule.step(v) for v in (0.505, 0.52, 0.52, 0.52, 0.52)]  # 0.52 grew by more: the window restarts
    assert steps == [None, None, None, None, "converged"]


def test_proved_upper_stops_within_a_tenth_of_the_precision():
    rule = Convergence(precision=0.01, window=100, proved_upper=0.7)
    assert rule.start(0.5) is None
    assert rule.step(0.691) is None  # within the precision, yet a tenth of it short of the proof
    assert rule.step(0.6989) is None
    assert rule.step(0.6991) == "proved_upper"
    assert Convergence(0.01, 100, proved_upper=0.7).start(math.inf) == "proved_upper"


def test_a_window_of_zero_never_converges():
    rule = Convergence(precision=0.01, window=0)
    rule.start(0.0)
    assert all(rule.step(0.0) is None for _ in range(50))


def test_search_reports_the_rule_that_ended_each_local_search():
    r = search(catalogue.get("noisy_max_geom"), budget=QUICK, global_check=False)
    assert r.stopped_by and set(r.stopped_by) <= set(STOPPED_BY)
    assert r.to_json()["stopped_by"] == r.stopped_by


def test_a_proved_upper_bound_ends_the_local_search_at_once():
    """A proved upper bound the start already meets: no pair is evaluated by the local search."""
    unproved = dataclasses.replace(QUICK, prove_time=0)  # no proof stage: the search's own bound is the only one
    free = search(catalogue.get("noisy_max_geom"), budget=unproved, global_check=False)
    met = search(catalogue.get("noisy_max_geom"), budget=unproved, global_check=False, proved_upper=0.0)
    assert met.stopped_by == ["proved_upper"]
    assert met.exact_queries < free.exact_queries or free.stopped_by == ["local_optimum"]
    assert met.eps_lower <= free.eps_lower


def test_a_proved_upper_bound_ends_event_tuning_on_released_values():
    """Released continuous values (svt3 answers with its noisy value): once a tuned event's certified
    level meets the proof, no further event or candidate pair is weighed."""
    unproved = dataclasses.replace(QUICK, prove_time=0)
    svt3 = catalogue.get("svt3")
    free = search(svt3, params={"n": 2}, budget=unproved, global_check=False)
    proved = search(svt3, params={"n": 2}, budget=QUICK, global_check=False)
    assert proved.stopped_by == ["proved_upper"] and "the proved upper bound is met" in " ".join(proved.limits_hit)
    assert proved.eps_upper is not None and proved.eps_lower >= proved.eps_upper - 0.1 * proved.precision
    assert proved.exact_queries < free.exact_queries
    assert proved.eps_lower <= proved.eps_upper


def test_event_tuning_stops_after_a_window_of_candidate_pairs_without_growth():
    """Released values without a proof to meet: tuning ends once ``pair_window`` candidate pairs in
    a row raise the certified level by at most the precision; a window of 0 never converges."""
    base = dataclasses.replace(QUICK, prove_time=0, certify_pairs=12)
    svt3 = catalogue.get("svt3")
    short = search(svt3, params={"n": 2}, budget=dataclasses.replace(base, pair_window=2), global_check=False)
    full = search(svt3, params={"n": 2}, budget=dataclasses.replace(base, pair_window=0), global_check=False)
    assert short.stopped_by == ["converged"] and "over the last 2 pairs" in " ".join(short.limits_hit)
    assert "converged" not in full.stopped_by
    assert short.exact_queries < full.exact_queries and short.eps_lower <= full.eps_lower
