"""Where in the user's code an operation happened: the ``file:line`` errors point at.

The innermost stack frame outside the tracer (``samplers.plain``, ``samplers.lang``) and
outside numpy is the user's line (numpy's dispatch sits between the user and our handlers).

Every refusal raised into user code is also remembered (:func:`refusal`) for the run in
progress: a ``try: ... except Exception:`` in the user's function could otherwise swallow
it and let the run go on as if the operation had a value, tracing something else.  The
driver re-raises the first one when the run returns (:func:`watching`).
"""

from __future__ import annotations

import os
import sys
import threading
from contextlib import contextmanager
from types import FrameType, TracebackType
from typing import Any, Callable, Iterator, TypeVar

import numpy

from samplers.errors import DPHybridError, LanguageError, UntraceableError

_HERE = os.path.dirname(os.path.abspath(__file__))
_OURS = (_HERE, os.path.join(os.path.dirname(_HERE), "lang"), os.path.dirname(os.path.abspath(numpy.__file__)))
_EXAMPLES = os.path.join(_HERE, "examples.py")  # user-style code that happens to live here


def _foreign(filename: str) -> bool:
    path = os.path.abspath(filename)
    return path == _EXAMPLES or not any(path.startswith(d + os.sep) for d in _OURS)


def _describe(filename: str, line: int) -> str:
    if not filename.startswith("<"):
        rel = os.path.relpath(filename)
        filename = filename if rel.startswith(os.pardir) else rel
    return f"{filename}:{line}"


def current_site() -> str:
    """``file:line`` of the innermost user frame on the current stack ("" if none)."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        if _foreign(frame.f_code.co_filename):
            return _describe(frame.f_code.co_filename, frame.f_lineno)
        frame = frame.f_back
    return ""


def traceback_site(tb: TracebackType | None) -> str:
    """``file:line`` of the innermost user frame of a traceback ("" if none)."""
    site = ""
    while tb is not None:
        code = tb.tb_frame.f_code
        if _foreign(code.co_filename):
            site = _describe(code.co_filename, tb.tb_lineno)
        tb = tb.tb_next
    return site


class Refusals:
    """The first refusal raised into user code during one run (None while there is none)."""

    def __init__(self) -> None:
        self.first: DPHybridError | None = None


_run = threading.local()
E = TypeVar("E", bound=DPHybridError)


@contextmanager
def watching() -> Iterator[Refusals]:
    """Collect the refusals raised while the block runs one call of the user's function."""
    previous = getattr(_run, "refusals", None)
    _run.refusals = seen = Refusals()
    try:
        yield seen
    finally:
        _run.refusals = previous


def refusal(e: E) -> E:
    """``e``, remembered as raised into user code by the run in progress (see the module docstring)."""
    seen = getattr(_run, "refusals", None)
    if seen is not None and seen.first is None:
        seen.first = e
    return e


def untraceable(message: str, operation: str) -> UntraceableError:
    """An :class:`UntraceableError` at the current user line (remembered: see :func:`refusal`)."""
    return refusal(UntraceableError(message, site=current_site(), operation=operation))


def located(e: LanguageError) -> UntraceableError:
    """A language error raised inside user code, re-raised at the user's line (and remembered)."""
    if isinstance(e, UntraceableError):
        return refusal(e)
    site = traceback_site(e.__traceback__) or current_site()  # raised below numpy's dispatch: the caller's line
    return refusal(UntraceableError(str(e), site=site, operation="language"))


def return_line(fn: Callable[..., Any], run: Callable[[], Any]) -> str:
    """``file:line`` of the statement by which ``fn`` returns when ``run()`` calls it (watched by a profiler)."""
    code = getattr(fn, "__code__", None)
    seen: list[str] = []

    def watch(frame: FrameType, event: str, arg: Any) -> None:
        if event == "return" and frame.f_code is code:
            seen.append(_describe(code.co_filename, frame.f_lineno))

    previous = sys.getprofile()
    sys.setprofile(watch)
    try:
        run()
    finally:
        sys.setprofile(previous)
    return seen[-1] if seen else ""
