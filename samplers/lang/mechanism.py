"""Mechanism definitions: the ``@mechanism`` decorator, parameters and tracing.

A mechanism is a Python function ``f(x, *, p1=default1, ...)`` whose first argument is
the input vector and whose keyword-only parameters have defaults.  The type of each
default decides how a parameter given as text (``-p a=1/2`` on the command line) is
read: ``int`` -> an integer, ``float`` -> a float, a rational (a ``Fraction`` or a
string such as ``"1/2"``) -> an exact rational (floats kept as their exact binary
value), any other string -> that string, ``bool`` -> true/false.
"""

from __future__ import annotations

import copy
import inspect
from fractions import Fraction
from typing import Any, Callable, Mapping

from samplers.errors import LanguageError, ParameterError
from samplers.lang.builder import Builder
from samplers.lang.domain import IntsSpec
from samplers.lang.exact import exact
from samplers.lang.ir import Program
from samplers.lang.neighbours import Neighbours
from samplers.lang.trace import Sym, lift, tracing
from samplers.numerals import parse_integer, short_text

ParamCheck = Callable[[Mapping[str, Any]], None]


def _double(q: Fraction, where: str) -> float:
    """``q`` as a double, refused when it is 0 or infinite there although ``q`` is not."""
    try:
        f = float(q)
    except OverflowError:
        f = float("inf")
    if f in (float("inf"), float("-inf")) or (f == 0 and q != 0):
        raise ParameterError(f"{where}: {short_text(str(q))} is out of the range of a double")
    return f


def _is_rational_text(s: str) -> bool:
    try:
        exact(s)
    except ParameterError:
        return False
    return True


def coerce_param(mech: str, name: str, value: Any, default: Any) -> Any:
    """``value`` converted to the type of the parameter's ``default`` (see module doc)."""
    where = f"parameter {name} of {mech}"
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0", "yes", "no"):
            return value.lower() in ("true", "1", "yes")
        raise ParameterError(f"{where} must be true or false, got {value!r}")
    if isinstance(default, int):
        if isinstance(value, bool):
            raise ParameterError(f"{where} must be an integer, got {value!r}")
        if isinstance(value, int):
            return value
        if isinstance(value, str):
            return parse_integer(value, where)
        if isinstance(value, Fraction) and value.denominator == 1:
            return int(value)
        raise ParameterError(f"{where} must be an integer, got {short_text(repr(value))}")
    if isinstance(default, float):
        return _double(exact(value, what=where), where)
    if isinstance(default, Fraction) or (isinstance(default, str) and _is_rational_text(default)):
        return exact(value, what=where)
    if isinstance(default, str):
        if not isinstance(value, str):
            raise ParameterError(f"{where} must be a string, got {value!r}")
        return value
    return value


class Mechanism:
    """A mechanism of the language: one definition, traced per parameter set."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        domain: IntsSpec,
        neighbours: Neighbours | Callable[[Mapping[str, Any]], Neighbours],
        name: str | None = None,
        aliases: tuple[str, ...] = (),
        check: ParamCheck | None = None,
        claimed_eps: Callable[[Mapping[str, Any]], float] | None = None,
        length_param: str | None = None,
    ) -> None:
        sig = inspect.signature(fn)
        ps = list(sig.parameters.values())
        if not ps or ps[0].kind not in (ps[0].POSITIONAL_ONLY, ps[0].POSITIONAL_OR_KEYWORD):
            raise LanguageError(f"mechanism {fn.__name__}: the first argument must be the input vector x")
        self.defaults: dict[str, Any] = {}
        for p in ps[1:]:
            if p.kind != p.KEYWORD_ONLY or p.default is p.empty:
                raise LanguageError(
                    f"mechanism {fn.__name__}: parameter {p.name} must be keyword-only with a default"
                )
            self.defaults[p.name] = p.default
        if not isinstance(domain, IntsSpec):
            raise LanguageError(f"mechanism {fn.__name__}: domain must be declared with ints(...)")
        self.fn = fn
        self.name = name or fn.__name__
        self.aliases = tuple(aliases)
        self.doc = inspect.getdoc(fn) or ""
        self.domain_spec = domain
        self.neighbours_spec = neighbours
        self.check = check
        self.claimed_eps_fn = claimed_eps
        if length_param is not None and length_param not in self.defaults:
            raise LanguageError(f"mechanism {fn.__name__}: length_param {length_param!r} is not a parameter")
        self.length_param = length_param
        self._traces: dict[tuple, Program] = {}

    def __repr__(self) -> str:
        return f"<mechanism {self.name}>"

    def named(self, name: str) -> "Mechanism":
        """The same mechanism under another name (``file.py:alg``: results name where to find it again)."""
        twin = copy.copy(self)
        twin.name, twin._traces = name, {}
        return twin

    @property
    def summary(self) -> str:
        """The first line of the docstring."""
        return self.doc.splitlines()[0] if self.doc else ""

    def claimed_eps(self, **overrides: Any) -> float | None:
        """The epsilon the mechanism's authors claim for these parameters, if declared."""
        if self.claimed_eps_fn is None:
            return None
        return float(self.claimed_eps_fn(self.params(**overrides)))

    def params(self, **overrides: Any) -> dict[str, Any]:
        """The full parameter set: defaults, overridden and coerced to their types."""
        unknown = sorted(set(overrides) - set(self.defaults))
        if unknown:
            known = ", ".join(self.defaults) or "none"
            raise ParameterError(f"unknown parameter {unknown[0]!r} for {self.name} (known: {known})")
        out = {}
        for k, d in self.defaults.items():
            out[k] = coerce_param(self.name, k, overrides.get(k, d), d)
        if self.check is not None:
            try:
                self.check(out)
            except ParameterError as e:  # name the mechanism once
                msg = str(e)
                raise ParameterError(msg if msg.startswith(f"{self.name}:") else f"{self.name}: {msg}") from None
        return out

    def trace(self, **overrides: Any) -> Program:
        """The program for these parameters (traced once, then cached)."""
        params = self.params(**overrides)
        key = tuple(sorted(params.items()))
        if key not in self._traces:
            try:
                self._traces[key] = self._trace(params)
            except (ZeroDivisionError, OverflowError) as e:  # arithmetic on the parameters at trace time
                shown = ", ".join(f"{k}={short_text(str(v))}" for k, v in params.items())
                raise ParameterError(f"{self.name} cannot be built with {shown}: {e}") from None
        return self._traces[key]

    def _trace(self, params: dict[str, Any]) -> Program:
        domain = self.domain_spec.resolve(params)
        nb = self.neighbours_spec
        neighbours = nb if isinstance(nb, Neighbours) else nb(params)
        b = Builder()
        with tracing(b):
            x = tuple(Sym(b.input(i, lo, hi)) for i, (lo, hi) in enumerate(zip(domain.lo, domain.hi)))
            result = self.fn(x, **params)
            if result is None:
                raise LanguageError(f"mechanism {self.name} returned nothing")
            tuple_output = isinstance(result, (tuple, list))
            items = list(result) if tuple_output else [result]
            if not items:
                raise LanguageError(f"mechanism {self.name} returned an empty tuple")
            outs = [lift(v, isinstance(v, float)) for v in items]
        nodes, outs = b.finish(outs)
        return Program(
            name=self.name,
            params=tuple(params.items()),
            nodes=tuple(nodes),
            outputs=tuple(outs),
            tuple_output=tuple_output,
            domain=domain,
            neighbours=neighbours,
        )


def mechanism(
    *,
    domain: IntsSpec,
    neighbours: Neighbours | Callable[[Mapping[str, Any]], Neighbours],
    name: str | None = None,
    aliases: tuple[str, ...] = (),
    check: ParamCheck | None = None,
    claimed_eps: Callable[[Mapping[str, Any]], float] | None = None,
    length_param: str | None = None,
) -> Callable[[Callable[..., Any]], Mechanism]:
    """Declare a mechanism: ``@mechanism(domain=ints(...), neighbours=one_differ)``.

    ``check`` validates a parameter set (raising ParameterError) before tracing, and
    ``claimed_eps`` gives the epsilon the mechanism is meant to satisfy (for suites), and
    ``length_param`` names the parameter that sets how many queries an unbounded-length
    mechanism (sparse vector, above threshold) answers, so a search can grow it.
    """

    def wrap(fn: Callable[..., Any]) -> Mechanism:
        return Mechanism(
            fn, domain=domain, neighbours=neighbours, name=name, aliases=aliases,
            check=check, claimed_eps=claimed_eps, length_param=length_param,
        )

    return wrap
