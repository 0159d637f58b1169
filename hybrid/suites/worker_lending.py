"""A dask worker's idle threads lent to the entries running on it, as tokens for their forked tasks.

The local backend's workers lend themselves when no entry is left to start
(:mod:`hybrid.suites.runner`); a dask worker cannot see the suite, only itself.  So each worker
process keeps one lender while entries run on it: a thread that looks at the worker's own state every
:data:`POLL` seconds and lends, into a semaphore the entries' processes share
(:mod:`hybrid.searcher.forked_tasks` takes tokens from it), as many tokens as the worker has threads
with nothing to run: no task executing on them and none waiting (ready) for them, in two looks in a
row (a thread free for a moment, between an entry and the next the scheduler sends, lends nothing).

The lender is no dask task: it holds no thread and no slot of the scheduler's, so it never keeps an
entry waiting, never holds back the scheduler's queue, and a suite finishes as it would without it.
When an entry arrives and takes a thread, the lender withdraws a token: a token in use then is
owed, and the next one given back pays the debt instead of returning to the pool (no token is
counted twice).  Tokens are processes forked on this machine, so a worker lends only to the
entries on it; a daemonic worker's entries run in fresh interpreters (no semaphore reaches them)
and get none.  What the tokens change is how many of an entry's tasks run at once, never its result.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import threading
import time
from typing import Any, Iterator

POLL = 0.25  # seconds between two looks at the worker's state


class LentTokens:
    """A semaphore of lent threads with a debt: ``withdraw`` takes a token back, or owes it while it is in use."""

    def __init__(self) -> None:
        ctx = multiprocessing.get_context("forkserver")  # the context entry processes start from
        self._tokens = ctx.Semaphore(0)
        self._debt = ctx.Value("i", 0)

    def acquire(self, block: bool = True) -> bool:
        return self._tokens.acquire(block)

    def release(self) -> None:
        with self._debt.get_lock():
            if self._debt.value > 0:
                self._debt.value -= 1
            else:
                self._tokens.release()

    def withdraw(self) -> None:
        with self._debt.get_lock():
            if not self._tokens.acquire(False):
                self._debt.value += 1


def idle_threads(state: Any) -> int:
    """A dask ``WorkerState``'s threads with nothing to run: not executing, and no task waiting for one."""
    return max(0, state.nthreads - state.executing_count - len(state.ready) - len(state.constrained))


class _Lender:
    """Lends the worker's idle threads while entries run on it (``entries`` > 0); one per worker process."""

    def __init__(self, state: Any) -> None:
        self.tokens = LentTokens()
        self.entries = 0
        self._state = state
        self._thread = threading.Thread(target=self._lend, name="dphybrid-lender", daemon=True)

    def _lend(self) -> None:
        global _lender
        lent, last = 0, 0
        while True:
            with _lock:
                if self.entries == 0:  # the last entry ended: a new one starts a new lender
                    _lender = None
                    return
            now = idle_threads(self._state)
            target, last = min(now, last), now
            for _ in range(target - lent):
                self.tokens.release()
            for _ in range(lent - target):
                self.tokens.withdraw()
            lent = target
            time.sleep(POLL)


_lock = threading.Lock()
_lender: _Lender | None = None


@contextlib.contextmanager
def lent_tokens() -> Iterator[LentTokens | None]:
    """For one entry run by a dask task: the tokens its worker lends (None outside a non-daemonic worker)."""
    global _lender
    try:
        from distributed import get_worker

        state = get_worker().state
    except (ImportError, ValueError):
        state = None
    if state is None or multiprocessing.current_process().daemon:
        yield None
        return
    with _lock:
        if _lender is None:
            _lender = _Lender(state)
            _lender._thread.start()
        lender = _lender
        lender.entries += 1
    try:
        yield lender.tokens
    finally:
        with _lock:
            lender.entries -= 1


__all__ = ["LentTokens", "idle_threads", "lent_tokens"]
