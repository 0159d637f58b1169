"""Finding a user's function by ``path/to/file.py:alg`` or ``package.module:alg``.

A file is read and executed in a fresh module namespace (never imported through the
import system, which could write a ``__pycache__`` beside it: a user's file is only
read).  A module path is imported as Python imports it.
"""

from __future__ import annotations

import importlib
import os
import sys
import types
from typing import Any, Callable

from samplers import deadline
from samplers.errors import UnknownMechanism


def is_function_spec(name: str) -> bool:
    """True for ``file.py:alg`` and ``module:alg`` (catalogue names have no colon; a library's
    ``opendp:...`` / ``diffprivlib:...`` is not a function), also when what follows the colon is no
    function name: :func:`load_function` then says so, whichever command reads it."""
    head, sep, _ = name.rpartition(":")
    return bool(sep and head and not name.startswith(("opendp:", "diffprivlib:")))


def _module_from_file(path: str) -> types.ModuleType:
    try:
        with open(path, encoding="utf-8") as f:
            source = f.read()
    except (OSError, UnicodeDecodeError) as e:
        raise UnknownMechanism(f"cannot read {path}: {e}") from None
    name = "dphybrid_user_" + "".join(c if c.isalnum() else "_" for c in os.path.abspath(path))
    module = types.ModuleType(name)
    module.__file__ = os.path.abspath(path)
    sys.modules[name] = module  # dataclasses and pickling by reference look modules up here
    try:
        with deadline.interrupting(f"while running {path}"):  # its top-level code may never return
            exec(compile(source, os.path.abspath(path), "exec"), module.__dict__)
    except deadline.TimeLimitReached:
        del sys.modules[name]
        raise
    except (Exception, SystemExit) as e:  # the user's module failed to run (or exited): say so, not our traceback
        del sys.modules[name]
        raise UnknownMechanism(f"running {path} failed: {type(e).__name__}: {e}") from None
    return module


def check_spec(spec: str) -> tuple[str, str, bool]:
    """``(where, name, is_file)`` of a ``file.py:alg`` / ``module:alg`` spec, checked without running any code."""
    where, _, attr = spec.rpartition(":")
    if not attr.isidentifier():
        raise UnknownMechanism(f"{spec!r} names no function after the colon (write file.py:alg or module:alg)")
    is_file = where.endswith(".py") or os.sep in where or "/" in where
    if is_file and not os.path.isfile(where):
        raise UnknownMechanism(f"no such file {where!r} (in {spec!r})")
    return where, attr, is_file


def load_function(spec: str) -> Callable[..., Any]:
    """The function (or ``@mechanism`` object) named by ``file.py:alg`` or ``module:alg``."""
    where, attr, is_file = check_spec(spec)
    if is_file:
        module = _module_from_file(where)
    else:
        try:
            module = importlib.import_module(where)
        except (ImportError, SystemExit) as e:
            raise UnknownMechanism(f"cannot import module {where!r} (in {spec!r}): {e}") from None
    from samplers.lang.mechanism import Mechanism

    fn = getattr(module, attr, None)
    if isinstance(fn, Mechanism):
        return fn
    if fn is None:
        raise UnknownMechanism(f"{where} has no function {attr!r}")
    if not callable(fn):
        raise UnknownMechanism(f"{where}: {attr!r} is a {type(fn).__name__}, not a function or a @mechanism")
    return fn
