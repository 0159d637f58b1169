"""Candidate pairs as forked tasks (``continuous_search._PairTasks``): a task leaves out the pairs its
reader will certainly not read (the budget is already spent by the counts it started from and its own
pairs'), the reader stops where it would one pair after another, and reading a pair left out is an error."""

import types

import pytest

from hybrid.inputs import Pair
from hybrid.searcher.budget import Budget
from hybrid.searcher.continuous_search import _over, _PairTasks
from hybrid.searcher.forked_tasks import TaskLog

COST = 100  # each pair's enclosure work


class _Counting:
    """A backend's counts: each pair evaluated adds ``COST`` work and appends its first coordinate to a
    file (forked tasks write there too, so the test sees every pair evaluated anywhere)."""

    def __init__(self, log):
        self.log, self.work = log, 0

    def counts(self):
        return 0, 0, self.work

    def charge(self, counts):
        self.work += counts[2]

    def evaluate(self, p: Pair) -> int:
        with open(self.log, "a") as f:
            f.write(f"{p.x[0]}\n")
        self.work += COST
        return p.x[0]


def _read_until_spent(tmp_path, work_budget: int, share: float):
    backend = _Counting(tmp_path / "evaluated")
    s = types.SimpleNamespace(budget=Budget(work=work_budget, enclosures=10**9), tasks=TaskLog())
    pairs = [Pair((k,), (k + 100,), "pattern") for k in range(12)]  # no two on the same inputs: no swaps
    read = []
    with _PairTasks(s, backend, pairs, backend.evaluate, per_task=4, share=share) as tasks:
        for i in range(len(pairs)):
            if i >= 2 and _over(s.budget, *tasks.spent(), share):
                break
            read.append(tasks.next())
        left = tasks
    evaluated = sorted(int(v) for v in (tmp_path / "evaluated").read_text().split())
    return read, evaluated, backend, left


def test_a_task_leaves_out_the_pairs_its_reader_will_not_read(tmp_path):
    # here: pairs 0-3 (400 work); the reader reads pair 4 (500 >= 0.5 * 1000) and stops before 5;
    # the task of pairs 4-7 evaluates 4 only: 5, 6 and 7 would be read after the budget is spent
    read, evaluated, backend, _ = _read_until_spent(tmp_path, 1000, 0.5)
    assert read == [0, 1, 2, 3, 4]
    assert evaluated == [0, 1, 2, 3, 4]
    assert backend.work == 5 * COST  # what was read, charged once


def test_a_budget_not_spent_reads_every_pair(tmp_path):
    read, evaluated, backend, _ = _read_until_spent(tmp_path, 10**6, 0.5)
    assert read == list(range(12)) and evaluated == list(range(12)) and backend.work == 12 * COST


def test_reading_a_pair_left_out_is_an_error(tmp_path):
    backend = _Counting(tmp_path / "evaluated")
    s = types.SimpleNamespace(budget=Budget(work=1000, enclosures=10**9), tasks=TaskLog())
    pairs = [Pair((k,), (k + 100,), "pattern") for k in range(8)]
    with _PairTasks(s, backend, pairs, backend.evaluate, per_task=4, share=0.5) as tasks:
        assert [tasks.next() for _ in range(5)] == [0, 1, 2, 3, 4]
        with pytest.raises(RuntimeError, match="skipped a candidate pair"):
            tasks.next()  # a reader that ignores the budget it declared
