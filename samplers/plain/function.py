"""A plain Python mechanism in StatDP's contract, ``alg(prng, queries, epsilon, **kwargs)``, as a Mechanism.

:class:`PlainMechanism` is a :class:`~samplers.lang.mechanism.Mechanism` like the
catalogue's, so every backend, the search, the testers and the suites take it.  Its
parameters are the function's own (after ``prng`` and ``queries``), with their
defaults; ``epsilon`` without a default gets :data:`DEFAULT_EPSILON`, any other parameter
without one must be given.  Text values (``-p N=1``) are read as the default's type, or
as an int or a float when there is no default.  The queries' domain and neighbour
relation are not the function's business (StatDP passes them separately): they are
settings of the mechanism, with StatDP's defaults (5 queries, all differ by at most 1)
and DP-Sniper's query range -10..10.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from samplers import deadline
from samplers.blackbox import BlackBoxError, PerCallBlackBox
from samplers.errors import DPHybridError, LanguageError, ParameterError, UntraceableError
from samplers.lang.builder import Builder
from samplers.lang.domain import ints
from samplers.lang.exact import exact
from samplers.lang.ir import Program
from samplers.lang.mechanism import Mechanism, coerce_param
from samplers.lang.neighbours import BY_NAME as NEIGHBOURS
from samplers.lang.neighbours import Neighbours
from samplers.lang.trace import lift, tracing
from samplers.plain.conversions import converting
from samplers.plain.determinism import check_runs, global_generators, refusing_own_generators
from samplers.plain.forking import MAX_PATHS, Driver
from samplers.plain.generator import RecordingGenerator
from samplers.plain.paths_to_ir import check_result, freeze, merge
from samplers.plain.site import located, return_line, traceback_site
from samplers.plain.symbolic import Noisy, SymArray

DEFAULT_EPSILON = 0.1
DEFAULT_SIZE = 5  # StatDP's first input length
DEFAULT_DOMAIN = (-10, 10)
_REQUIRED = object()
QUERIES = ("it is the queries argument, the caller's data (numpy would change it for the calls that follow); "
           "assign into a copy, e.g. np.array(queries)")


def neighbours_named(name: str | Neighbours) -> Neighbours:
    """A neighbour relation by its name (StatDP's ``all_differ`` / ``one_differ``, or ``replace_one``)."""
    if isinstance(name, Neighbours):
        return name
    if name not in NEIGHBOURS:
        raise ParameterError(f"unknown neighbour relation {name!r} (known: {', '.join(NEIGHBOURS)})")
    return NEIGHBOURS[name]


def _text_value(value: Any) -> Any:
    """A parameter without a default: an int, else the float of the (exact) number written."""
    if not isinstance(value, str):
        return value
    try:
        return int(value.strip())
    except ValueError:
        return float(exact(value))


class PlainMechanism(Mechanism):
    """A StatDP-style function traced by path forking (see the module docstring)."""

    def __init__(self, fn: Callable[..., Any], *, size: int = DEFAULT_SIZE,
                 domain: tuple[int, int] = DEFAULT_DOMAIN, neighbours: str | Neighbours = "all_differ",
                 name: str | None = None, max_paths: int = MAX_PATHS) -> None:
        if not callable(fn):
            raise LanguageError(f"{fn!r} is not a function")
        try:
            sig = inspect.signature(fn)
        except (TypeError, ValueError):
            raise LanguageError(f"cannot read the signature of {fn!r}") from None
        ps = list(sig.parameters.values())
        positional = [p for p in ps if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(positional) < 2:
            raise LanguageError(f"{getattr(fn, '__name__', fn)} must take (prng, queries, ...) as StatDP's algorithms do")
        lo, hi = domain
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in (lo, hi, size)) or lo > hi or size < 1:
            raise ParameterError(f"the queries' domain must be integers lo..hi with lo <= hi and size >= 1, "
                                 f"got {lo}..{hi} of size {size}")
        self.fn = fn
        # the name says where the function lives (module:function), which resolve() reads back;
        # a bare "svt" could be mistaken for a catalogue alias when a witness is certified later
        self.name = name or f"{getattr(fn, '__module__', None) or '__main__'}:{getattr(fn, '__qualname__', 'mechanism')}"
        self.aliases = ()
        self.doc = inspect.getdoc(fn) or ""
        self.defaults = {}
        self._extra_ok = False
        for p in ps[2:]:
            if p.kind == p.VAR_KEYWORD:
                self._extra_ok = True
            elif p.kind != p.VAR_POSITIONAL:
                self.defaults[p.name] = (DEFAULT_EPSILON if p.name == "epsilon" else _REQUIRED) \
                    if p.default is p.empty else p.default
        self.domain_spec = ints(lo=lo, hi=hi, size=size)
        self.neighbours_spec = neighbours_named(neighbours)
        self.check = None
        self.claimed_eps_fn = (lambda p: p["epsilon"]) if "epsilon" in self.defaults else None
        self.length_param = None
        self.max_paths = max_paths
        self.settings = {"size": size, "domain": (lo, hi), "neighbours": self.neighbours_spec.name}
        self._traces: dict[tuple, Program] = {}

    def __repr__(self) -> str:
        return f"<plain mechanism {self.name}>"

    def inputs_json(self) -> dict[str, Any]:
        """The queries' settings as a witness records them, so ``certify`` rebuilds the same inputs."""
        return {"size": self.settings["size"], "domain": list(self.settings["domain"]),
                "neighbours": self.settings["neighbours"]}

    def params(self, **overrides: Any) -> dict[str, Any]:
        unknown = sorted(set(overrides) - set(self.defaults))
        if unknown and not self._extra_ok:
            known = ", ".join(self.defaults) or "none"
            raise ParameterError(f"unknown parameter {unknown[0]!r} for {self.name} (known: {known})")
        out = {}
        for k, d in self.defaults.items():
            if k not in overrides and d is _REQUIRED:
                raise ParameterError(f"parameter {k} of {self.name} has no default; give it (-p {k}=...)")
            v = overrides.get(k, d)
            out[k] = _text_value(v) if d is _REQUIRED or d is None else coerce_param(self.name, k, v, d)
        for k in unknown:
            out[k] = _text_value(overrides[k])
        return out

    def black_box(self, **params: Any) -> PerCallBlackBox:
        """The function run as it is, once per output with numpy's generator: statistical testing only."""
        fn, p, name = self.fn, dict(params), self.name

        def run(x: Any, rng: Any) -> Any:
            try:
                return fn(rng, x, **p)
            except deadline.TimeLimitReached:
                raise
            except (Exception, SystemExit) as e:  # the user's own error: one line naming it, not our traceback
                raise BlackBoxError(f"{traceback_site(e.__traceback__)}: {name} raised {type(e).__name__}: {e} "
                                    f"on input {[int(v) for v in x]}") from e

        return PerCallBlackBox(run, domain=self.domain_spec.resolve(p), neighbours=self.neighbours_spec,
                               name=self.name, params=p)

    def _trace(self, params: dict[str, Any]) -> Program:
        domain = self.domain_spec.resolve(params)
        b = Builder()
        driver = Driver(b, self.max_paths)
        queries = [Noisy(b.input(i, lo, hi)) for i, (lo, hi) in enumerate(zip(domain.lo, domain.hi))]

        def call() -> Any:
            try:
                return self.fn(RecordingGenerator(driver), SymArray(queries, np.int64, writable=QUERIES), **params)
            except LanguageError as e:
                raise located(e) from None
            except DPHybridError:
                raise
            except (Exception, SystemExit) as e:  # the user's own error, on one of the paths explored
                where = (" (on one combination of its noisy branches' outcomes: tracing runs them all, maybe some "
                         "that no input reaches)") if driver.depth() else ""
                raise UntraceableError(f"{self.name} raised {type(e).__name__}: {e}{where}",
                                       site=traceback_site(e.__traceback__), operation="raise") from e

        def run() -> Any:
            result = call()
            try:
                check_result(result, self.name)
            except UntraceableError as e:  # point at the return statement: run the path again, watching it
                line = return_line(self.fn, lambda: driver.replay_current(call))
                raise UntraceableError(str(e), site=line, operation=e.operation) from None
            return freeze(result)

        before = global_generators()
        with tracing(b), converting(), refusing_own_generators(), \
                deadline.interrupting(f"while tracing {self.name}"):
            paths = driver.explore(run, self.name)
            check_runs(driver, paths, run, before, self.name)
            values, tuple_output = merge(paths, self.name)
            outs = [lift(v, isinstance(v, float)) for v in values]
        try:
            nodes, outs = b.finish(outs)
        except LanguageError as e:
            raise LanguageError(f"{self.name}: {e}") from None
        program = Program(name=self.name, params=tuple(params.items()), nodes=tuple(nodes), outputs=tuple(outs),
                          tuple_output=tuple_output, domain=domain, neighbours=self.neighbours_spec)
        program._meta["paths"] = len(paths)
        program._meta["inputs"] = self.inputs_json()
        return program


def statdp(fn: Callable[..., Any], *, size: int = DEFAULT_SIZE, domain: tuple[int, int] = DEFAULT_DOMAIN,
           neighbours: str | Neighbours = "all_differ", name: str | None = None,
           max_paths: int = MAX_PATHS) -> PlainMechanism:
    """``fn(prng, queries, epsilon, **kwargs)`` as a mechanism over ``size`` queries in ``domain``."""
    return PlainMechanism(fn, size=size, domain=domain, neighbours=neighbours, name=name, max_paths=max_paths)
