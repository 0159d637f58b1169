"""Run a suite's entries in parallel, on a laptop (joblib/loky) or a cluster (dask.distributed).

Every finished entry becomes one JSONL row, appended by the coordinating process the
moment it arrives (flushed and fsynced), so a crash or ``kill -9`` loses at most the
entries in flight, and ``resume`` skips the rows already written.  An entry that raises
or overruns its budget becomes an error row and the run goes on.  Each worker gets
``cores // jobs`` numba threads so parallel entries do not oversubscribe the machine.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable, Iterator

from joblib import Parallel, delayed, parallel_config

from hybrid.results_log import append_row, open_for_append
from hybrid.suite_file import Entry, Suite, SuiteError

Runner = Callable[[Entry], dict[str, Any]]
HARD_LIMIT_FACTOR = 2.0  # a hard stop at twice the entry's budget (plus a grace period)
GRACE = 30.0


class EntryTimeout(Exception):
    """An entry overran its hard time limit."""


def run_search_entry(entry: Entry) -> dict[str, Any]:
    """The default runner: the hybrid search on one entry, as its JSON result."""
    from hybrid.search import Budget, search  # imported in the worker
    from samplers import catalogue

    budget = Budget(time=entry.budget) if entry.samples is None else Budget(time=entry.budget, samples=entry.samples)
    result = search(catalogue.get(entry.mechanism), params=entry.params, precision=entry.precision,
                    claimed_eps=entry.claimed_eps, seed=entry.seed, budget=budget)
    return result.to_json()


@contextlib.contextmanager
def _hard_limit(seconds: float) -> Iterator[None]:
    """Raise EntryTimeout after ``seconds`` (only in a main thread, where signals work)."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "setitimer"):
        yield
        return

    def fire(signum: int, frame: Any) -> None:
        raise EntryTimeout(f"hard time limit of {seconds:.0f} s exceeded")

    previous = signal.signal(signal.SIGALRM, fire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def execute(entry: Entry, numba_threads: int, runner: Runner = run_search_entry) -> dict[str, Any]:
    """Run one entry in a worker and describe the outcome as a result row (never raises)."""
    import numba

    numba.set_num_threads(max(1, min(numba_threads, numba.config.NUMBA_NUM_THREADS)))
    started = time.perf_counter()
    row: dict[str, Any] = {"id": entry.id, "entry": entry.to_json(), "status": "ok", "result": None,
                           "error": None, "worker": f"{socket.gethostname()}:{os.getpid()}"}
    try:
        with _hard_limit(entry.budget * HARD_LIMIT_FACTOR + GRACE):
            row["result"] = runner(entry)
    except EntryTimeout as e:
        row.update(status="timeout", error=str(e))
    except Exception as e:  # an entry's failure is data for the report, not the end of the run
        row.update(status="error", error=f"{type(e).__name__}: {e}".splitlines()[0])
    row["elapsed"] = round(time.perf_counter() - started, 3)
    row["finished"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    return row


def _entries(suite: Suite, precision: float | None, time_budget: float | None) -> list[Entry]:
    out = []
    for e in suite.entries:
        changes: dict[str, Any] = {}
        if precision is not None:
            changes["precision"] = precision
        if time_budget is not None:
            changes["budget"] = time_budget
        out.append(Entry(**{**e.__dict__, **changes}) if changes else e)
    return out


@contextlib.contextmanager
def _backend(backend: str, jobs: int, scheduler: str | None) -> Iterator[None]:
    if backend == "loky":
        if scheduler:
            raise SuiteError("--scheduler needs --backend dask")
        with parallel_config(backend="loky", n_jobs=jobs):
            yield
        return
    if backend != "dask":
        raise SuiteError(f"unknown backend {backend!r} (known: loky, dask)")
    try:
        from distributed import Client, LocalCluster
    except ImportError:
        raise SuiteError("the dask backend needs dask.distributed: pip install 'dphybrid[cluster]'") from None
    if scheduler:
        try:
            client = Client(scheduler, timeout="10s")
        except (OSError, TimeoutError) as e:
            raise SuiteError(f"cannot reach the dask scheduler at {scheduler}: {e}") from None
        cluster = None
    else:
        cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                               host="127.0.0.1", dashboard_address=None)
        client = Client(cluster)
    try:
        with parallel_config(backend="dask"):
            yield
    finally:
        client.close()
        if cluster is not None:
            cluster.close()


def run_suite(
    suite: Suite,
    *,
    jobs: int = 1,
    backend: str = "loky",
    scheduler: str | None = None,
    out: str | None = None,
    resume: bool = False,
    precision: float | None = None,
    time_budget: float | None = None,
    runner: Runner = run_search_entry,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Run every entry not already in ``out``; return all rows in suite order."""
    if jobs < 1:
        raise SuiteError(f"--jobs must be at least 1, got {jobs}")
    entries = _entries(suite, precision, time_budget)
    log, done = open_for_append(out, resume) if out else (None, [])
    finished = {r["id"]: r for r in done}
    todo = [e for e in entries if e.id not in finished]
    threads = max(1, (os.cpu_count() or 1) // jobs)
    try:
        if todo:
            with _backend(backend, jobs, scheduler):
                results = Parallel(n_jobs=jobs, return_as="generator_unordered")(
                    delayed(execute)(e, threads, runner) for e in todo)
                for row in results:
                    if log is not None:
                        append_row(log, row)
                    finished[row["id"]] = row
                    if on_row is not None:
                        on_row(row)
    finally:
        if log is not None:
            log.close()
    order = {e.id: i for i, e in enumerate(entries)}
    return sorted((r for r in finished.values() if r["id"] in order), key=lambda r: order[r["id"]])
