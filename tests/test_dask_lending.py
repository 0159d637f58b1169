"""A dask worker lends its idle threads to the entries running on it: an entry's forked tasks run side
by side there, tokens are neither lost nor counted twice, and the rows are those of the local backend."""

import multiprocessing

import pytest

from bench.suite_scaling import differences, timings_aside
from hybrid.suites.runner import run_suite
from hybrid.suites.suite_file import Entry, Suite
from hybrid.suites.worker_lending import LentTokens
from suite_lending import lent

distributed = pytest.importorskip("distributed")


def test_a_token_withdrawn_while_in_use_is_owed_not_counted_twice():
    tokens = LentTokens()
    tokens.release()
    tokens.release()
    assert tokens.acquire(False)  # a task holds one, one is free
    tokens.withdraw()  # the free one
    tokens.withdraw()  # the one in use: owed
    assert not tokens.acquire(False)
    tokens.release()  # the task gives its token back: it pays the debt
    assert not tokens.acquire(False)
    tokens.release()  # lent again
    assert tokens.acquire(False) and not tokens.acquire(False)


def test_an_entry_on_a_cluster_takes_its_workers_idle_thread():
    """One entry on a worker of two threads: the other thread lends itself, and the entry's two tasks meet."""
    import dask

    suite = Suite("lend", [Entry(id="meet", mechanism="rr")], "one entry whose two tasks must run at once")
    with dask.config.set({"distributed.worker.daemon": False}), \
            distributed.LocalCluster(processes=True, n_workers=1, threads_per_worker=2, host="127.0.0.1",
                                     dashboard_address=None) as cluster:
        rows = run_suite(suite, jobs=2, backend="dask", scheduler=cluster.scheduler_address, runner=lent)
    assert rows[0]["status"] == "ok", rows[0]["error"]
    assert rows[0]["result"]["met"] == [True, True]


@pytest.mark.slow
def test_dask_rows_are_the_local_rows():
    """The same entries with forked tasks at local --jobs 1 and on a dask worker of two threads."""
    entries = [Entry(id=f"svt1 n={n}", mechanism="svt1", params={"n": n, "eps": 1}, cost=n) for n in (3, 4)]
    suite = Suite("split", entries, "two entries with forked tasks")
    local, dask = run_suite(suite, jobs=1), run_suite(suite, jobs=2, backend="dask")
    assert [r["status"] for r in local] == ["ok", "ok"] and all(r["tasks"] for r in local)
    assert differences(local, dask) == []
    assert [timings_aside(r) for r in local] == [timings_aside(r) for r in dask]
    assert multiprocessing.active_children() == []
