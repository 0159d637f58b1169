"""Run a suite's entries in parallel, on this machine or on a dask.distributed cluster.

Each entry runs in a process of its own (:mod:`hybrid.suites.entry_process`), supervised by a
joblib thread on this machine or a dask task on a cluster, the costliest first (an entry's
``cost``), and killed at the entry's hard time limit on every backend; a process that dies or
overruns becomes that entry's ``error`` or ``timeout`` row and the run goes on.  Every finished entry becomes
one JSONL row, appended by the coordinating process the moment it arrives (flushed and
fsynced, under an exclusive lock on the file), so a crash or ``kill -9`` loses at most
the entries in flight, and ``resume`` skips the rows already written (``retry_failed``
runs the failed ones again).  Each entry gets ``cores // jobs`` numba threads so
parallel entries do not oversubscribe the machine.  On the local backend, a worker left without
an entry to start lends itself to the entries still running: their independent tasks (candidate
pairs' event tuning, :mod:`hybrid.searcher.forked_tasks`) run on it, so a long entry does not
leave cores idle; the results stay those of any number of workers.  A dask worker lends its own idle
threads to the entries running on it (:mod:`hybrid.suites.worker_lending`).
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import socket
import threading
import time
from datetime import datetime, timezone
from typing import Any, Callable, Iterator

from hybrid.suites.entry_process import run_isolated
from hybrid.formats import json_safe
from hybrid.suites.results_log import ResultsLog
from hybrid.suites.suite_file import Entry, Suite, SuiteError
from samplers.errors import install_hint

Runner = Callable[[Entry], dict[str, Any]]
BACKENDS = ("local", "dask")


def run_search_entry(entry: Entry) -> dict[str, Any]:
    """The default runner: the hybrid search on one entry, as its JSON result."""
    from hybrid.searcher.search import Budget, search  # imported in the entry's process

    budget = Budget(time=entry.budget) if entry.samples is None else Budget(time=entry.budget, samples=entry.samples)
    result = search(entry.resolve(), params=entry.params, precision=entry.precision,
                    claimed_eps=entry.claimed_eps, claimed_delta=entry.claimed_delta, seed=entry.seed, budget=budget)
    return result.to_json()


def _row(entry: Entry, index: int, status: str, result: dict[str, Any] | None, error: str | None,
         worker: str, started: float) -> dict[str, Any]:
    return json_safe({"id": entry.id, "index": index, "entry": entry.to_json(), "status": status,
                      "result": result, "error": error, "worker": worker,
                      "elapsed": round(time.perf_counter() - started, 3),
                      "finished": datetime.now(timezone.utc).isoformat(timespec="seconds")})


def execute(entry: Entry, index: int, numba_threads: int, runner: Runner = run_search_entry,
            stop: threading.Event | None = None, tokens: Any = None) -> dict[str, Any]:
    """Run one entry in its own process and describe the outcome as a result row (never raises);
    ``tokens``: the free workers its forked tasks may use.  The result's ``tasks`` (its critical path's
    parts, :mod:`hybrid.searcher.forked_tasks`) go onto the row."""
    started = time.perf_counter()
    out = run_isolated(runner, entry, numba_threads, entry.hard_limit, stop, tokens)
    row = _row(entry, index, out.status, out.result, out.error, f"{socket.gethostname()}:{out.pid}", started)
    if isinstance(row["result"], dict) and "tasks" in row["result"]:
        row["tasks"] = row["result"].pop("tasks")
    return row


def _execute_on_worker(entry: Entry, index: int, numba_threads: int, runner: Runner) -> dict[str, Any]:
    """One entry's dask task: :func:`execute`, with the tokens of its worker's idle threads."""
    from hybrid.suites.worker_lending import lent_tokens

    with lent_tokens() as tokens:
        return execute(entry, index, numba_threads, runner, None, tokens)


def _lost(entry: Entry, index: int, error: BaseException) -> dict[str, Any]:
    """The row of an entry whose supervisor failed (e.g. a dask worker lost for good)."""
    message = f"{type(error).__name__}: {error}".splitlines()[0]
    return _row(entry, index, "error", None, f"the entry's worker was lost: {message}", "", time.perf_counter())


class _FreeWorkers:
    """The pool of free workers the entries' forked tasks share: a worker whose entry ends when no
    entry is left to start puts its token in (entries still running take it, without waiting)."""

    def __init__(self, entries: int) -> None:
        import multiprocessing

        self.tokens = multiprocessing.get_context("forkserver").Semaphore(0)
        self._left, self._lock = entries, threading.Lock()

    def started(self) -> None:
        with self._lock:
            self._left -= 1

    def ended(self) -> None:
        with self._lock:
            if self._left == 0:
                self.tokens.release()


def _supervise(entry: Entry, index: int, threads: int, runner: Runner, stop: threading.Event | None,
               free: _FreeWorkers) -> tuple[int, Entry, dict[str, Any]]:
    """One entry's row, whatever happens to its supervisor."""
    free.started()
    try:
        return index, entry, execute(entry, index, threads, runner, stop, free.tokens)
    except Exception as e:  # the supervisor itself failed: still one row, and the run goes on
        return index, entry, _lost(entry, index, e)
    finally:
        free.ended()


@contextlib.contextmanager
def _stop_on_interrupt(stop: threading.Event) -> Iterator[None]:
    """Ctrl-C first tells the supervisors to kill their entries, then interrupts.

    (Entry processes ignore SIGINT and exit when their supervisor's pipe closes, so a
    SIGTERM or ``kill -9`` of the run stops them too.)
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(signum: int, frame: Any) -> None:
        stop.set()
        raise KeyboardInterrupt

    old = signal.signal(signal.SIGINT, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)


def _local_rows(todo: list[tuple[int, Entry]], jobs: int, threads: int,
                runner: Runner) -> Iterator[tuple[int, Entry, dict[str, Any]]]:
    """Rows as they finish, ``jobs`` supervisors at a time (joblib threads, one process per entry); the
    workers left idle at the end run the forked tasks of the entries still running."""
    from joblib import Parallel, delayed

    stop = threading.Event()
    free = _FreeWorkers(len(todo))
    with _stop_on_interrupt(stop):
        rows = Parallel(n_jobs=jobs, backend="threading", return_as="generator_unordered")(
            delayed(_supervise)(e, i, threads, runner, stop, free) for i, e in todo)
        try:
            for row in rows:
                yield row
        finally:
            stop.set()  # an interrupted run kills its entries' processes instead of waiting for them
            rows.close()


def _dask_rows(todo: list[tuple[int, Entry]], jobs: int, threads: int, runner: Runner,
               scheduler: str | None) -> Iterator[tuple[int, Entry, dict[str, Any]]]:
    """Rows as they finish, one dask task per entry (a lost worker is that entry's error row).  The
    cluster we start is one worker process with ``jobs`` threads, so that its idle threads lend
    themselves to all the entries still running (a worker lends only to the entries on it)."""
    import dask
    from distributed import Client, LocalCluster, as_completed

    # Workers we start are not daemonic, so that they may start entry processes from a fork server.
    with dask.config.set({"distributed.worker.daemon": False}):
        if scheduler:
            try:
                client = Client(scheduler, timeout="10s")
            except (OSError, TimeoutError, ValueError, TypeError) as e:
                raise SuiteError(f"cannot reach the dask scheduler at {scheduler!r}: {e}") from None
            cluster = None
        else:
            cluster = LocalCluster(n_workers=1, threads_per_worker=jobs, processes=True,
                                   host="127.0.0.1", dashboard_address=None)
            client = Client(cluster)
        try:
            futures = {client.submit(_execute_on_worker, e, i, threads, runner, pure=False): (i, e) for i, e in todo}
            for future in as_completed(futures):
                index, entry = futures[future]
                try:
                    row = future.result()
                except Exception as e:
                    row = _lost(entry, index, e)
                yield index, entry, row
        finally:
            client.close()
            if cluster is not None:
                cluster.close()


def _check_backend(backend: str, scheduler: str | None, jobs: int) -> None:
    if backend not in BACKENDS:
        raise SuiteError(f"unknown backend {backend!r} (known: {', '.join(BACKENDS)})")
    if scheduler is not None and backend != "dask":
        raise SuiteError("--scheduler needs --backend dask")
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise SuiteError(f"--jobs must be a positive integer, got {jobs}")
    if backend == "dask" and importlib.util.find_spec("distributed") is None:
        raise SuiteError(f"the dask backend needs dask.distributed: {install_hint('cluster')}")


def run_suite(
    suite: Suite,
    *,
    jobs: int = 1,
    backend: str = "local",
    scheduler: str | None = None,
    out: str | None = None,
    resume: bool = False,
    retry_failed: bool = False,
    precision: float | None = None,
    time_budget: float | None = None,
    time_limit: float | None = None,
    delta: float | str | None = None,
    runner: Runner = run_search_entry,
    on_row: Callable[[dict[str, Any]], None] | None = None,
) -> list[dict[str, Any]]:
    """Run every entry not already finished in ``out``; return the rows of all entries, in suite order.

    ``retry_failed`` (with ``resume``) runs the entries whose row is an error or a timeout
    again; the new row, appended, replaces the old one.  ``delta`` claims that delta beside every
    entry's claimed eps (an error when no entry claims one).
    """
    _check_backend(backend, scheduler, jobs)
    if retry_failed and not resume:
        raise SuiteError("--retry-failed needs --resume")
    if delta is not None and all(e.claimed_eps is None for e in suite.entries):
        raise SuiteError(f"--delta needs entries with a claimed_eps; suite {suite.name} has none")
    entries = [e.with_overrides(precision, time_budget, time_limit, delta) for e in suite.entries]
    log = ResultsLog(out, resume=resume) if out else None
    try:
        finished = {r["id"]: r for r in (log.rows if log else [])}
        todo = [(i, e) for i, e in enumerate(entries)
                if e.id not in finished or (retry_failed and finished[e.id]["status"] != "ok")]
        todo.sort(key=lambda item: -item[1].cost)  # costliest first (stable: suite order among equals)
        threads = max(1, (os.cpu_count() or 1) // jobs)
        if todo:
            workers = min(jobs, len(todo))
            rows = (_local_rows(todo, workers, threads, runner) if backend == "local"
                    else _dask_rows(todo, workers, threads, runner, scheduler))
            try:
                for _, _, row in rows:
                    if log is not None:
                        log.append(row)
                    finished[row["id"]] = row
                    if on_row is not None:
                        on_row(row)
            finally:
                rows.close()
    finally:
        if log is not None:
            log.close()
    return [finished[e.id] for e in entries if e.id in finished]
