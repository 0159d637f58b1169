"""Exact backends by name: ``get_backend(program, "enumerate" | "auto" | ...)``."""

from __future__ import annotations

from typing import Callable

from samplers.errors import ParameterError
from samplers.lang.ir import Program
from verifiers.base import ExactBackend, refuse_continuous
from verifiers.enumerate import Enumerator

BACKENDS: dict[str, Callable[[Program], ExactBackend]] = {"enumerate": Enumerator}


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
