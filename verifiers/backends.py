"""Exact backends by name: ``get_backend(program, "enumerate" | "bdd" | "smt" | "continuous" | "auto")``.

``auto`` picks the continuous backend (rigorous enclosures, :mod:`verifiers.continuous.backend`)
for programs that draw continuous noise; the discrete backends refuse such programs.
"""

from __future__ import annotations

import math
from typing import Any, Callable

from samplers.errors import ParameterError
from samplers.lang.ir import Program
from verifiers.base import ExactBackend, refuse_continuous

# Up to this many joint noise outcomes the enumerator's brute force is as quick as
# building BDDs; above it the BDD's sharing wins (bench/verify.py measures both).
ENUMERATE_MAX_OUTCOMES = 256


def _enumerate(program: Program, **_: Any) -> ExactBackend:
    from verifiers.enumerate import Enumerator

    return Enumerator(program)


def _bdd(program: Program, **options: Any) -> ExactBackend:
    from verifiers.bdd.backend import BDDBackend

    return BDDBackend(program, **options)


def _smt(program: Program, **_: Any) -> ExactBackend:
    from verifiers.smt.backend import SmtBackend

    return SmtBackend(program)


def _continuous(program: Program, **_: Any) -> Any:
    from verifiers.continuous.backend import ContinuousBackend
    from verifiers.prover.running_max import checked

    return ContinuousBackend(checked(program))  # running-max loops as argmax: n paths, not 2^(n-1)


# Each backend is imported when first used, so that no command pays for dd, z3 or
# python-flint unless it runs that backend.  ``options`` (``node_budget``, ...) are the BDD's.
BACKENDS: dict[str, Callable[..., Any]] = {
    "enumerate": _enumerate, "bdd": _bdd, "smt": _smt, "continuous": _continuous,
}


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
    return BACKENDS[key](program, **options)
