"""Plain Python mechanisms, as StatDP writes them, traced into the mechanism language's IR.

>>> import numpy as np
>>> from samplers.plain import statdp
>>> def noisy_max(prng, queries, epsilon):
...     return (np.asarray(queries) + prng.laplace(scale=2 / epsilon, size=len(queries))).argmax()
>>> statdp(noisy_max, size=3).trace(epsilon=0.5).arity
1

A recording generator stands in for ``prng`` (:mod:`~samplers.plain.generator`),
symbolic numbers and arrays follow numpy's protocols (:mod:`~samplers.plain.symbolic`,
:mod:`~samplers.plain.dispatch`), a branch on a symbolic condition forks the run
(:mod:`~samplers.plain.forking`), and the explored paths become one program
(:mod:`~samplers.plain.paths_to_ir`).  What cannot be traced raises
:class:`~samplers.errors.UntraceableError` naming the user's file and line.
"""

from __future__ import annotations

import importlib
from typing import Any

from samplers.plain.load import is_function_spec, load_function

_FUNCTION = "samplers.plain.function"
_EXPORTS = {"MAX_PATHS": "samplers.plain.forking", "PlainMechanism": _FUNCTION, "neighbours_named": _FUNCTION,
            "statdp": _FUNCTION, "TooManyPaths": "samplers.errors", "UntraceableError": "samplers.errors"}


def __getattr__(name: str) -> Any:  # numpy and the tracer load on first use: the CLI parser stays light
    if name not in _EXPORTS:
        raise AttributeError(f"module 'samplers.plain' has no attribute {name!r}")
    value = getattr(importlib.import_module(_EXPORTS[name]), name)
    globals()[name] = value
    return value


def resolve(name: str, **settings: Any) -> Any:
    """A catalogue mechanism by name, or ``file.py:alg`` / ``module:alg``: a ``@mechanism`` as it is,
    a plain function as a :class:`PlainMechanism`.

    ``settings`` (``size``, ``domain``, ``neighbours``) apply to functions only; None keeps the default.
    """
    from samplers import catalogue
    from samplers.plain.function import statdp

    if not is_function_spec(name):
        return catalogue.get(name)
    from samplers.errors import ParameterError
    from samplers.lang.mechanism import Mechanism

    given = {k: v for k, v in settings.items() if v is not None}
    found = load_function(name)
    if isinstance(found, Mechanism):  # written in the mechanism language: it declares its own inputs
        if given:
            raise ParameterError(f"{name} is a @mechanism, which declares its own domain and neighbours: "
                                 f"the settings {', '.join(sorted(given))} are for plain functions only")
        return found.named(name)
    return statdp(found, name=name, **given)


def as_mechanism(mech: Any) -> Any:
    """What the entry points accept, as a Mechanism or Program: a name or spec (:func:`resolve`), a
    Mechanism or traced Program (unchanged), or a plain function in StatDP's contract (:func:`statdp`)."""
    from samplers.lang.ir import Program
    from samplers.lang.mechanism import Mechanism
    from samplers.plain.function import statdp

    if isinstance(mech, str):
        return resolve(mech)
    if isinstance(mech, (Mechanism, Program)):
        return mech
    if callable(mech):
        return statdp(mech)
    raise TypeError(f"not a mechanism, a mechanism name or a function: {mech!r}")


def as_program(mech: Any, **params: Any) -> Any:
    """A traced Program from anything :func:`as_mechanism` takes (``params`` for the tracing)."""
    from samplers.errors import ParameterError
    from samplers.lang.ir import Program

    mech = as_mechanism(mech)
    if isinstance(mech, Program):
        if params:
            raise ParameterError("parameters cannot be given with an already traced program")
        return mech
    return mech.trace(**params)


__all__ = ["MAX_PATHS", "as_program", "PlainMechanism", "TooManyPaths", "UntraceableError", "as_mechanism", "is_function_spec",
           "load_function", "neighbours_named", "resolve", "statdp"]
