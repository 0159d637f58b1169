"""The scaling bench's measures, and the determinism it checks: the same rows at --jobs 1 and 2, timings aside."""

import pytest

from bench.suite_scaling import critical_path, differences, forked, job_counts, timings_aside, work
from hybrid.suites.runner import run_suite
from hybrid.suites.suite_file import Suite, load_suite


def test_job_counts_double_up_to_the_cores():
    assert job_counts(1) == [1]
    assert job_counts(2) == [1, 2]
    assert job_counts(6) == [1, 2, 4, 6]
    assert job_counts(16) == [1, 2, 4, 8, 16]


def test_an_entry_without_tasks_is_one_task():
    rows = [{"id": "a", "elapsed": 3.0}, {"id": "b", "elapsed": 5.0}, {"id": "c", "elapsed": 1.5}]
    assert work(rows) == 9.5
    assert critical_path(rows) == 5.0


def test_the_critical_path_follows_the_tasks_a_row_records():
    # task 3 waits for 1 and 2, which wait for 0: the chain 0 -> 2 -> 3 is 1 + 4 + 2 = 7 s
    split = {"id": "a", "elapsed": 9.0, "tasks": [{"elapsed": 1.0, "after": []}, {"elapsed": 2.0, "after": [0]},
                                                   {"elapsed": 4.0, "after": [0]}, {"elapsed": 2.0, "after": [1, 2]}]}
    rows = [split, {"id": "b", "elapsed": 6.0}]
    assert forked(rows) == 0
    assert work(rows) == 15.0
    assert critical_path(rows) == 7.0
    with pytest.raises(ValueError, match="cycle"):
        critical_path([{"id": "c", "elapsed": 1.0, "tasks": [{"elapsed": 1.0, "after": [1]},
                                                             {"elapsed": 1.0, "after": [0]}]}])


def test_forked_tasks_are_counted_apart_from_the_entries_own_stretches():
    row = {"id": "a", "elapsed": 4.0, "tasks": [{"elapsed": 1.0, "after": []},
                                                 {"elapsed": 2.0, "after": [0], "forked": True},
                                                 {"elapsed": 2.0, "after": [0], "forked": True},
                                                 {"elapsed": 0.5, "after": [1, 2]}]}
    assert forked([row, {"id": "b", "elapsed": 1.0}]) == 2
    assert critical_path([row]) == 3.5


def test_the_same_rows_at_one_and_two_jobs_timings_aside():
    s = load_suite("discrete")
    picked = [e for e in s.entries if e.id in ("kary_rr k=3 p=1/2", "trunc_geom a=1/2 m=2", "rr_count lam=1/5 n=2")]
    assert len(picked) == 3
    suite = Suite(s.name, picked, s.description)
    one, two = run_suite(suite, jobs=1), run_suite(suite, jobs=2)
    assert [r["status"] for r in one] == ["ok"] * 3
    assert differences(one, two) == []
    assert [timings_aside(r) for r in one] == [timings_aside(r) for r in two]
    # what is set aside is only the clock's and the scheduler's: a changed bound is a difference
    changed = [{**r, "result": {**r["result"], "eps_lower": 0.0}} if i == 1 else r for i, r in enumerate(two)]
    assert differences(one, changed) == ["trunc_geom a=1/2 m=2 (result.eps_lower)"]
