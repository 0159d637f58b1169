"""Exact backends by name: ``get_backend(program, "enumerate" | "auto" | ...)``."""

from __future__ import annotations

from typing import Callable

from samplers.errors import ParameterError, UnsupportedByBackend
from samplers.lang.ir import Program
from verifiers.base import ExactBackend, refuse_continuous
from verifiers.enumerate import Enumerator

BACKENDS: dict[str, Callable[[Program], ExactBackend]] = {"enumerate": Enumerator}


def _smt(program: Program) -> ExactBackend:
    """The z3 backend (imported on use: z3 is the optional ``smt`` extra)."""
    try:
        from verifiers.smt import SmtBackend
    except ImportError:
        raise UnsupportedByBackend("the smt backend needs z3: pip install 'dphybrid[smt]'") from None
    return SmtBackend(program)


BACKENDS["smt"] = _smt


def choose(program: Program) -> str:
    """The backend ``auto`` picks for this program."""
    return "enumerate"


def get_backend(program: Program, name: str = "auto") -> ExactBackend:
    """An exact backend for ``program``; continuous programs are refused with a clear error."""
    refuse_continuous(program, name if name != "auto" else "exact")
    key = choose(program) if name == "auto" else name
    if key not in BACKENDS:
        raise ParameterError(f"unknown backend {name!r} (known: auto, {', '.join(BACKENDS)})")
    return BACKENDS[key](program)
