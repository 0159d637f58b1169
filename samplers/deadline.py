"""Time as a safety limit: an ambient deadline that long loops check.

Budgets that decide a result are counts (samples, steps, nodes), so a seed gives the
same result on any machine; time only stops work that would overrun.  A command or a
search opens a deadline for the work it does (:func:`time_limit`; nested deadlines keep
the earlier one) and every long loop -- BDD construction, model counting, sweeps over
neighbour pairs, sampling and training in the testers -- calls :func:`check`, which
raises :class:`TimeLimitReached` once the deadline has passed.  A stage catches it and
reports an honest partial result that says so (``limits_hit``).

The deadline lives in a :class:`contextvars.ContextVar`, so it is per thread and
nothing outside a ``time_limit`` block is ever interrupted.
"""

from __future__ import annotations

import contextlib
import math
import os
import signal
import threading
import time
from contextvars import ContextVar
from typing import Any, Iterator

from samplers.errors import BudgetExceeded, ParameterError

_deadline: ContextVar[float] = ContextVar("dphybrid_deadline", default=math.inf)
_budget: ContextVar[float] = ContextVar("dphybrid_time_budget", default=math.inf)


class TimeLimitReached(BudgetExceeded):
    """The time budget ran out before the computation finished."""

    def __init__(self, message: str) -> None:
        budget = _budget.get()
        super().__init__(message, limit="time", value=int(budget) if math.isfinite(budget) else 0)


def check_seconds(seconds: float, what: str = "the time budget") -> float:
    """``seconds`` as a positive finite float, else a :class:`ParameterError` naming ``what``."""
    try:
        s = float(seconds)
    except (TypeError, ValueError):
        raise ParameterError(f"{what} must be a number of seconds, got {seconds!r}") from None
    if not (0 < s < math.inf):
        raise ParameterError(f"{what} must be a positive finite number of seconds, got {seconds!r}")
    return s


@contextlib.contextmanager
def time_limit(seconds: float | None, *, spent: float = 0.0) -> Iterator[None]:
    """Run the block under a deadline ``seconds - spent`` from now (None: no new limit).

    ``spent`` is time already used against this budget (a command's start-up).
    """
    if seconds is None:
        yield
        return
    seconds = check_seconds(seconds)
    end = time.perf_counter() + seconds - spent
    tokens = []
    if end < _deadline.get():
        tokens = [(_deadline, _deadline.set(end)), (_budget, _budget.set(seconds))]
    try:
        yield
    finally:
        for var, token in reversed(tokens):
            var.reset(token)


def process_elapsed() -> float:
    """Seconds since this process started (0 where the system does not say).

    A command's time budget counts from its start, imports included, so what the user
    measures with a stopwatch is what the budget bounds.
    """
    try:
        with open("/proc/self/stat") as f:
            start_ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/uptime") as f:
            uptime = float(f.read().split()[0])
        return max(0.0, uptime - start_ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


def remaining() -> float:
    """Seconds left before the deadline (``inf`` without one, never negative)."""
    end = _deadline.get()
    return math.inf if end == math.inf else max(0.0, end - time.perf_counter())


def budget() -> float:
    """The length in seconds of the deadline in force (``inf`` without one)."""
    return _budget.get()


def expired() -> bool:
    """Whether a deadline is in force and has passed."""
    return time.perf_counter() > _deadline.get()


@contextlib.contextmanager
def interrupting(where: str) -> Iterator[None]:
    """Let the deadline stop code that never calls :func:`check` (a user's module or function, which may
    loop forever): in the main thread, a timer signal raises :class:`TimeLimitReached` at the deadline.
    Elsewhere, without a deadline, or while another timer of the process runs, the block runs as it is."""
    left = remaining()
    if left == math.inf or threading.current_thread() is not threading.main_thread() \
            or not hasattr(signal, "setitimer") or signal.getitimer(signal.ITIMER_REAL)[0] > 0:
        yield
        return

    def stop(signum: int, frame: Any) -> None:
        raise TimeLimitReached(f"time budget of {_budget.get():g} s reached {where}")

    previous = signal.signal(signal.SIGALRM, stop)
    signal.setitimer(signal.ITIMER_REAL, max(left, 1e-3), 0.25)  # again and again: code may catch it
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def check(where: str) -> None:
    """Raise :class:`TimeLimitReached` (naming ``where``) once the deadline has passed."""
    if time.perf_counter() > _deadline.get():
        raise TimeLimitReached(f"time budget of {_budget.get():g} s reached {where}")
