"""Tasks of one search forked onto free workers: in order, isolated from each other, the same result
at any number of workers (the search's and a suite's JSON at one and two workers, timings aside)."""

import json
import os
import threading

import pytest

from bench.suite_scaling import differences, timings_aside
from hybrid.searcher import forked_tasks
from hybrid.searcher.forked_tasks import TaskLog, ordered, use_pool
from hybrid.searcher.search import search
from hybrid.suites.runner import _FreeWorkers, run_suite
from hybrid.suites.suite_file import Entry, Suite

SEEN: list[int] = []


def _appended(k: int) -> tuple[int, int]:
    SEEN.append(k)  # in a forked child: neither the parent nor another task sees it
    return k * k, len(SEEN)


def _fails(k: int) -> int:
    if k == 2:
        raise ValueError("task 2 fails")
    return k


def _pid(k: int) -> int:
    return os.getpid()


@pytest.fixture
def pool():
    def make(tokens: int) -> threading.BoundedSemaphore | None:
        sem = threading.BoundedSemaphore(tokens) if tokens else None
        use_pool(sem)
        return sem

    yield make
    use_pool(None)


@pytest.mark.parametrize("tokens", [0, 1, 3])
def test_results_in_order_each_task_from_the_same_state(pool, tokens):
    sem = pool(tokens)
    log = TaskLog()
    assert list(ordered(_appended, range(6), log)) == [(k * k, 1) for k in range(6)]
    assert SEEN == []
    assert len(log.done()) == 1 + 6 + 1  # the search's stretch, six tasks, the stretch that waited for them
    if sem is not None:  # every token given back
        assert all(sem.acquire(False) for _ in range(tokens)) and not sem.acquire(False)


def test_an_error_is_raised_where_its_task_is_read_and_the_rest_are_killed(pool):
    sem = pool(2)
    it = ordered(_fails, range(5))
    assert next(it) == 0 and next(it) == 1
    with pytest.raises(ValueError, match="task 2 fails"):
        next(it)
    assert sem.acquire(False) and sem.acquire(False)


def test_closing_early_kills_the_tasks_not_read(pool):
    pool(2)
    it = ordered(_pid, range(10))
    first = next(it)
    pids = [t.pid for t in it.gi_frame.f_locals["running"].values()]
    it.close()
    assert pids and first not in pids
    for pid in pids:
        with pytest.raises(ChildProcessError):
            os.waitpid(pid, os.WNOHANG)  # reaped already


def test_the_task_log_chains_stretches_and_tasks():
    log = TaskLog()
    before = log.fork()
    log.join(before, [2.0, 3.0])
    tasks = log.done()
    assert [t["after"] for t in tasks] == [[], [0], [0], [1, 2]]
    assert TaskLog().done() == []  # no task forked: the search is one task


def test_a_worker_without_an_entry_to_start_lends_itself():
    free = _FreeWorkers(2)
    free.started()
    free.ended()  # one entry still to start: its worker takes it
    assert not free.tokens.acquire(False)
    free.started()
    free.ended()
    assert free.tokens.acquire(False)


def _stripped(data: dict) -> dict:
    data = json.loads(json.dumps(data))
    data.pop("timings")
    for t in data.get("tasks", []):
        t.pop("elapsed")
    return data


@pytest.mark.parametrize("name, n", [pytest.param("numerical_svt", 3, marks=pytest.mark.slow),  # released values
                                     ("svt1", 3)])  # finite outputs
def test_search_is_the_same_at_one_and_two_workers(pool, name, n):
    results = []
    for tokens in (0, 1):
        pool(tokens)
        results.append(search(name, {"n": n, "eps": 1}).to_json())
    assert results[0]["certified"] and sum(1 for t in results[0]["tasks"] if t.get("forked")) >= 2
    assert _stripped(results[0]) == _stripped(results[1])


@pytest.mark.slow
def test_suite_is_the_same_at_one_and_two_jobs():
    entries = [Entry(id=f"numerical_svt n={n}", mechanism="numerical_svt", params={"n": n, "eps": 1}, cost=n)
               for n in (3, 4)]
    suite = Suite("split", entries, "two entries with forked tasks")
    one, two = run_suite(suite, jobs=1), run_suite(suite, jobs=2)
    assert [r["status"] for r in one] == ["ok", "ok"]
    assert all(len(r["tasks"]) > 3 for r in one + two)
    assert differences(one, two) == []
    assert [timings_aside(r) for r in one] == [timings_aside(r) for r in two]
    assert forked_tasks._pool is None  # the coordinator's own process lends nothing to itself


def test_search_jobs_must_be_a_positive_integer(capsys):
    from hybrid.cli import main

    assert main(["search", "laplace", "--jobs", "0"]) == 2
    assert "--jobs: 0 is not a positive integer" in capsys.readouterr().err


@pytest.mark.slow
def test_search_cli_jobs_two_gives_the_json_of_one(capsys, pool):
    from hybrid.cli import main

    outs = []
    for jobs in ("1", "2"):
        assert main(["search", "numerical_svt", "-p", "n=2", "-p", "eps=1", "--jobs", jobs, "--json"]) == 0
        outs.append(_stripped(json.loads(capsys.readouterr().out)))
    assert outs[0] == outs[1] and outs[0]["tasks"]


class _Odd(Exception):
    def __init__(self, a: int, b: int) -> None:  # pickles, but does not unpickle from its args
        super().__init__(f"{a} {b}")


def _odd(k: int) -> int:
    raise _Odd(k, k)


def test_an_answer_that_does_not_unpickle_is_one_error(pool):
    pool(0)
    with pytest.raises(RuntimeError, match="cannot be read"):
        next(ordered(_odd, [1]))


def test_winners_events_are_the_same_at_one_and_two_workers(pool, monkeypatch):
    """An argmax certified on a few winners' events: what each forked pair added to the search (its
    queries, limits and cached events) is kept as the search reads it."""
    from hybrid.searcher import continuous_search

    monkeypatch.setattr(continuous_search, "MANY_WINNERS", 4)

    def no_level(*args, **kwargs):
        raise AssertionError("a winners' search encloses no pair's level")

    monkeypatch.setattr(continuous_search.ContinuousBackend, "pair_epsilon", no_level)
    results = []
    for tokens in (0, 1):
        pool(tokens)
        results.append(search("report_noisy_max1", {"n": 6, "eps": 1}).to_json())
    assert results[0]["certified"] and any("single winners' events" in m for m in results[0]["limits_hit"])
    assert _stripped(results[0]) == _stripped(results[1])
