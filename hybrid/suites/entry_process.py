"""Run one suite entry in a process of its own, killed at a hard time limit.

A signal-based limit only works on a main thread and cannot stop a numba kernel or a
C loop, and a shared worker pool (loky) fails as a whole when one worker dies.  A
process per entry makes both simple: the supervisor (a thread on this machine, or a
task on a dask worker) waits for the process with a timeout and kills it at the
limit; a process that dies (out of memory, ``kill -9``, a crash) is that entry's error
and nobody else's.

Processes come from a fork server that has already imported the search and set numba's
compiler up, so an entry starts in milliseconds instead of seconds.  A daemonic process (a dask
worker in its default configuration) may not have multiprocessing children; there the
entry runs in a fresh interpreter instead.  Every entry process watches a pipe from its
supervisor and exits when it closes, so a killed run leaves no entry running.
"""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import multiprocessing.connection
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

PRELOAD = ["hybrid.searcher.search", "hybrid.suites.runner", "samplers.catalogue", "hybrid.suites.compiler_warmup"]
POLL = 1.0  # seconds between checks of the supervisor's stop flag
ANSWER_PREFIX = "dphybrid-entry-"  # then the supervisor's pid: the temporary file an entry answers in

Job = tuple[Callable[[Any], dict[str, Any]], Any, int, str, Any]  # runner, entry, numba threads, answer file, tokens


@dataclass(frozen=True)
class Outcome:
    """How an entry's process ended: ``ok`` with a result, ``error`` or ``timeout`` with a message."""

    status: str
    result: dict[str, Any] | None
    error: str | None
    pid: int


def run_isolated(runner: Callable[[Any], dict[str, Any]], entry: Any, numba_threads: int, limit: float,
                 stop: threading.Event | None = None, tokens: Any = None) -> Outcome:
    """``runner(entry)`` in a new process with ``numba_threads`` threads, killed after ``limit`` seconds.

    Setting ``stop`` kills the process within :data:`POLL` seconds (the run was interrupted).
    ``tokens``, a multiprocessing semaphore, is the pool of free workers the entry's forked tasks may
    use (:mod:`hybrid.searcher.forked_tasks`; a fresh interpreter's entry gets none).
    """
    sweep_stale_answers()
    fd, answer = tempfile.mkstemp(prefix=f"{ANSWER_PREFIX}{os.getpid()}-", suffix=".json")
    os.close(fd)
    try:
        child = _start((runner, entry, numba_threads, answer, tokens))
        code = _wait(child, limit, stop)
        if code is None:
            child.kill()
            if stop is not None and stop.is_set():
                return Outcome("error", None, "interrupted", child.pid)
            return Outcome("timeout", None, f"hard time limit of {limit:g} s exceeded: the entry's process "
                           "was killed", child.pid)
        data = Path(answer).read_bytes()
        if not data:
            return Outcome("error", None, _death(code), child.pid)
        reply = json.loads(data)
        if "result" in reply:
            return Outcome("ok", reply["result"], None, child.pid)
        return Outcome("error", None, reply["error"], child.pid)
    finally:
        for path in (answer, answer + ".part"):
            Path(path).unlink(missing_ok=True)


def sweep_stale_answers() -> None:
    """Remove the answer files of supervisors no longer running (a run killed with kill -9 cannot
    remove its own); each file names its supervisor's pid."""
    for path in Path(tempfile.gettempdir()).glob(f"{ANSWER_PREFIX}*-*.json*"):
        pid = path.name[len(ANSWER_PREFIX):].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            with contextlib.suppress(OSError):
                path.unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: alive
        return True
    return True


def _wait(child: "_Child", limit: float, stop: threading.Event | None) -> int | None:
    """The exit code, or None at the limit or when ``stop`` is set."""
    waited = 0.0
    while waited < limit:
        step = min(POLL, limit - waited) if stop is not None else limit
        code = child.wait(step)
        if code is not None:
            return code
        if stop is not None and stop.is_set():
            return None
        waited += step
    return None


def _death(code: int) -> str:
    if code < 0:
        name = signal.Signals(-code).name if -code in signal.valid_signals() else f"signal {-code}"
        hint = " (out of memory, or killed by hand)" if -code == signal.SIGKILL else ""
        return f"the entry's process was killed by {name}{hint}"
    return f"the entry's process exited with status {code} without a result"


class _Child:
    """A started entry process: its pid, a wait with timeout (exit code or None) and a kill."""

    def __init__(self, process: multiprocessing.process.BaseProcess | subprocess.Popen) -> None:
        self._p = process
        self.pid: int = process.pid

    def wait(self, timeout: float) -> int | None:
        if isinstance(self._p, subprocess.Popen):
            try:
                code = self._p.wait(timeout)
            except subprocess.TimeoutExpired:
                return None
            if self._p.stdin is not None:
                self._p.stdin.close()
            return code
        self._p.join(timeout)
        return self._p.exitcode

    def kill(self) -> None:
        self._p.kill()
        self.wait(60.0)


def _start(job: Job) -> _Child:
    if multiprocessing.current_process().daemon:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
        proc = subprocess.Popen([sys.executable, "-m", "hybrid.suites.entry_process"], stdin=subprocess.PIPE, env=env)
        assert proc.stdin is not None
        try:  # stdin stays open: its end closing tells the entry that its supervisor is gone
            pickle.dump((*job[:4], None), proc.stdin)  # a semaphore passes to multiprocessing children only
            proc.stdin.flush()
        except BrokenPipeError:
            pass  # the process died at once; its exit code says how
        return _Child(proc)
    ctx = multiprocessing.get_context("forkserver")
    ctx.set_forkserver_preload(PRELOAD)
    process = ctx.Process(target=_entry_main, args=job, name="dphybrid-entry")
    process.start()
    return _Child(process)


def _exit_with_supervisor() -> None:
    """Exit as soon as the supervisor's end of our pipe closes (it died, or was killed)."""
    parent = multiprocessing.parent_process()
    sentinel = parent.sentinel if parent is not None else sys.stdin.fileno()

    def watch() -> None:
        multiprocessing.connection.wait([sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="supervisor-watch", daemon=True).start()


def _entry_main(runner: Callable[[Any], dict[str, Any]], entry: Any, numba_threads: int, answer: str,
                tokens: Any) -> None:
    """The entry process: run, then leave the result or the error in ``answer`` (written atomically)."""
    from hybrid.formats import json_safe
    from hybrid.searcher.forked_tasks import use_pool

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the coordinator's to handle; it stops us
    _exit_with_supervisor()
    # This process starts no multiprocessing processes of its own (its forked tasks are plain forks).
    # Under 'fork', numba's thread-start lock is a semaphore unlinked at once, so killing us leaves
    # nothing for the resource tracker to report.
    multiprocessing.set_start_method("fork", force=True)
    use_pool(tokens)
    import numba

    numba.set_num_threads(max(1, min(numba_threads, numba.config.NUMBA_NUM_THREADS)))
    try:
        text = json.dumps(json_safe({"result": runner(entry)}), allow_nan=False)
    except BaseException as e:  # the entry's failure is data for its row, whatever it is
        text = json.dumps({"error": (f"{type(e).__name__}: {e}".splitlines() or [type(e).__name__])[0]})
    part = answer + ".part"
    with open(part, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(part, answer)
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    os._exit(0)  # answered: a thread the entry's code left running must not hold this process to the hard limit


if __name__ == "__main__":  # the fresh-interpreter start, for daemonic supervisors
    _entry_main(*pickle.load(sys.stdin.buffer))
