"""Independent tasks of one search on free workers: children forked from the search's process.

Every task of one call to :func:`ordered` runs in a child forked from the search's process as it
was when the call began (the caller changes nothing the tasks read until it has read them all), so
a task sees what the search computed before and nothing another task did: its result is the same
whether it runs alone or beside others.  The caller reads the results in task order and may stop
early (a stop rule); tasks it never reads are killed.  The result thus depends on the tasks and the
rule, never on the number of workers; only the wall time does.

How many run at once: one on the search's own core (the search only waits), plus one per token
taken, without waiting, from the pool of free workers (:func:`use_pool`): ``search --jobs N``
holds N - 1 tokens; the entries of a suite run share one pool, into which a worker puts its token
when no entry is left to start, so a long entry takes the cores that would idle.  Tokens go back
as soon as fewer tasks are left than workers held.

User code (a plain function) stays in the search's process and its children: the pool passes
tokens, never work, and a child dies with its parent (a killed entry leaves no task running).
"""

from __future__ import annotations

import os
import pickle
import signal
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Sequence, TypeVar

from hybrid.child_process import die_with_parent

T = TypeVar("T")
R = TypeVar("R")

_pool: Any = None  # a semaphore of free workers' tokens (acquire(block=False) / release()), or None


def use_pool(tokens: Any) -> None:
    """Take further workers from ``tokens`` (a semaphore; None: this process's core only)."""
    global _pool
    _pool = tokens


@dataclass
class TaskLog:
    """The tasks a search ran, for the critical path: its own stretches of work (a chain) and, between
    two stretches, the forked tasks that the second one waited for."""

    tasks: list[dict[str, Any]] = field(default_factory=list)
    _mark: float = field(default_factory=time.perf_counter)
    _last: list[int] = field(default_factory=list)

    def _stretch(self) -> int:
        now = time.perf_counter()
        self.tasks.append({"elapsed": round(now - self._mark, 3), "after": self._last})
        self._mark = now
        return len(self.tasks) - 1

    def fork(self) -> int:
        """The search's stretch of work that ends now, as tasks are forked (its index)."""
        return self._stretch()

    def join(self, before: int, elapsed: list[float]) -> None:
        """Tasks of ``elapsed`` seconds each ran after stretch ``before``; the next stretch waits for them."""
        first = len(self.tasks)
        self.tasks += [{"elapsed": round(e, 3), "after": [before], "forked": True} for e in elapsed]
        self._last = list(range(first, len(self.tasks))) or [before]
        self._mark = time.perf_counter()

    def done(self) -> list[dict[str, Any]]:
        """The tasks, the last stretch included (empty when no task was forked: one task, the whole search)."""
        if not self.tasks:
            return []
        self._stretch()
        return self.tasks


class _Running:
    """One forked task: its pid, the read end of its answer pipe, when it started."""

    def __init__(self, fn: Callable[[Any], Any], item: Any) -> None:
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child: answer on the pipe, then leave without running the parent's exit code
            code = 0
            try:
                os.close(r)
                die_with_parent()
                t = time.perf_counter()
                try:
                    answer = ("ok", fn(item), time.perf_counter() - t)
                except Exception as e:  # the parent raises it where it reads this task
                    answer = ("error", e, time.perf_counter() - t)
                try:
                    data = pickle.dumps(answer)
                except Exception as e:
                    data = pickle.dumps(("error", RuntimeError(f"a task's answer cannot be sent: {e}"), 0.0))
                with os.fdopen(w, "wb") as f:
                    f.write(data)
            except BaseException:
                code = 1
            finally:
                os._exit(code)
        os.close(w)
        self.pid, self._r = pid, r

    def result(self) -> tuple[Any, float]:
        """The task's value (its exception raised here) and the seconds it took."""
        with os.fdopen(self._r, "rb") as f:
            data = f.read()
        _, status = os.waitpid(self.pid, 0)
        if not data:
            raise RuntimeError(f"a forked task died without an answer (wait status {status})")
        try:
            kind, value, seconds = pickle.loads(data)
        except Exception as e:  # an exception class that does not unpickle, say
            raise RuntimeError(f"a forked task's answer cannot be read: {e}") from None
        if kind == "error":
            raise value
        return value, seconds

    def kill(self) -> None:
        os.kill(self.pid, signal.SIGKILL)
        os.close(self._r)
        os.waitpid(self.pid, 0)


def _take(n: int) -> int:
    taken = 0
    while _pool is not None and taken < n and _pool.acquire(False):
        taken += 1
    return taken


def _give(n: int) -> None:
    for _ in range(n):
        _pool.release()


def ordered(fn: Callable[[T], R], items: Sequence[T], log: TaskLog | None = None) -> Iterator[R]:
    """``fn(item)`` for each item, in order, each in a child forked from this process as it is now.

    Close the iterator to stop: the tasks not read are killed.  ``log`` gets the times of the tasks
    read (those killed were work wasted, and how many there are depends on the workers).
    """
    running: dict[int, _Running] = {}
    taken, started, elapsed = 0, 0, []
    before = log.fork() if log is not None else 0
    try:
        for i in range(len(items)):
            left = len(items) - i
            if 1 + taken < left:
                taken += _take(left - 1 - taken)
            elif 1 + taken > left:
                _give(1 + taken - left)
                taken = left - 1
            while started < len(items) and started - i < 1 + taken:
                running[started] = _Running(fn, items[started])
                started += 1
            value, seconds = running.pop(i).result()
            elapsed.append(seconds)
            yield value
    finally:
        for task in running.values():
            task.kill()
        _give(taken)
        if log is not None:
            log.join(before, elapsed)


__all__ = ["TaskLog", "ordered", "use_pool"]
