"""Exact backends by name: ``get_backend(program, "enumerate" | "bdd" | "smt" | "continuous" | "auto")``.

``auto`` picks the continuous backend (rigorous enclosures, :mod:`verifiers.continuous`)
for programs that draw continuous noise; the discrete backends refuse such programs.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from samplers.errors import ParameterError
from samplers.lang.ir import Program
from verifiers.base import ExactBackend, refuse_continuous
from verifiers.bdd import BDDBackend
from verifiers.enumerate import Enumerator

BACKENDS: dict[str, Callable[..., ExactBackend]] = {"enumerate": Enumerator, "bdd": BDDBackend}

# Up to this many joint noise outcomes the enumerator's brute force is as quick as
# building BDDs; above it the BDD's sharing wins (bench/verify.py measures both).
ENUMERATE_MAX_OUTCOMES = 256


def _smt(program: Program) -> ExactBackend:
    """The z3 backend (imported on use, to keep z3's import off every other command's start-up)."""
    from verifiers.smt import SmtBackend

    return SmtBackend(program)


BACKENDS["smt"] = _smt


def _continuous(program: Program) -> Any:
    from verifiers.continuous import ContinuousBackend

    return ContinuousBackend(program)


BACKENDS["continuous"] = _continuous


def choose(program: Program) -> str:
    """The backend ``auto`` picks for this program: continuous noise, else by the size of its noise space."""
    if program.continuous:
        return "continuous"
    outcomes = math.prod(len(n.attr[1]) for n in program.nodes if n.op == "draw")
    return "enumerate" if outcomes <= ENUMERATE_MAX_OUTCOMES else "bdd"


def get_backend(program: Program, name: str = "auto", **options: Any) -> Any:
    """A backend for ``program``: an :class:`ExactBackend`, or the continuous backend for continuous noise.

    A discrete backend named for a continuous program refuses it with a clear error.
    ``options`` (such as ``node_budget``) go to the BDD backend; others ignore them.
    """
    key = choose(program) if name == "auto" else name
    if key not in BACKENDS:
        raise ParameterError(f"unknown backend {name!r} (known: auto, {', '.join(BACKENDS)})")
    if key != "continuous":
        refuse_continuous(program, key)
    return BACKENDS[key](program, **options) if key == "bdd" else BACKENDS[key](program)
