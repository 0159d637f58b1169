"""Where in the user's code an operation happened: the ``file:line`` errors point at.

The innermost stack frame outside the tracer (``samplers.plain``, ``samplers.lang``) and
outside numpy is the user's line (numpy's dispatch sits between the user and our handlers).
"""

from __future__ import annotations

import os
import sys
from types import FrameType, TracebackType
from typing import Any, Callable

import numpy

from samplers.errors import LanguageError, UntraceableError

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


def untraceable(message: str, operation: str) -> UntraceableError:
    """An :class:`UntraceableError` at the current user line."""
    return UntraceableError(message, site=current_site(), operation=operation)


def located(e: LanguageError) -> UntraceableError:
    """A language error raised inside user code, re-raised at the user's line."""
    if isinstance(e, UntraceableError):
        return e
    return UntraceableError(str(e), site=traceback_site(e.__traceback__), operation="language")


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
