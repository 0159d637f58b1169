"""Mechanisms of real DP libraries as black-box samplers (optional extras).

``opendp`` (``pip install 'dphybrid[opendp]'``): ``make_randomized_response`` and
``make_noisy_max`` (report noisy max with exponential noise; one output per measurement,
so drawn from OpenDP's own ``make_composition`` of :data:`OPENDP_BATCH` copies),
``make_laplace``, ``make_geometric`` and ``make_gaussian`` (one call on a vector of n
copies of the query answer adds n independent noises).  OpenDP draws from the
operating system's secure generator, so its samples are not reproducible from a seed.

``diffprivlib`` (``pip install 'dphybrid[diffprivlib]'``): ``Laplace``, ``Gaussian``,
``GaussianAnalytic``, ``Geometric``, ``Binary`` (randomised response on a bit) and
``Exponential``, seeded through diffprivlib's ``random_state``.  Its API draws one
output per ``randomise`` call; where that call is numpy arithmetic on its random
draws (Laplace, the Gaussians) a whole batch comes from one call on a
:class:`~samplers.library_draws.BatchState`, checked per input to give exactly the
per-call outputs (:func:`~samplers.library_draws.batch_agrees`).

Draws that cost a library call each (OpenDP's compositions, whose outputs Python
converts one by one, its exact Laplace and Gaussian samplers, diffprivlib's per-call
mechanisms) are spread over the cores in chunks (:func:`~samplers.library_draws.chunked`).

Each is addressable by name (``opendp:laplace``, ``diffprivlib:binary``, ...), with
parameters given as text like the catalogue's, and states the level its library
claims: ``claimed_eps`` (pure DP), ``claimed_delta`` with it for diffprivlib's
Gaussians, ``claimed_rho`` (zero-concentrated DP) for OpenDP's, and for every Gaussian
``gaussian_mu = sensitivity / sigma``, the law's own privacy parameter (see
docs/libraries.md).  Results on them are statistical, never certified.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from samplers.blackbox import BlackBox, normalise_outputs
from samplers.errors import ParameterError, UnknownMechanism, install_hint
from samplers.lang.domain import Domain
from samplers.lang.neighbours import Neighbours, all_differ, one_differ, replace_one
from samplers.library_draws import BatchState, batch_agrees, chunk_seed, chunked


class MissingLibrary(ParameterError):
    """The optional library behind a black-box mechanism is not installed."""


def _import(module: str, extra: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingLibrary(f"{module} is not available ({e}); install it with {install_hint(extra)}") from None


Draw = Callable[[tuple[int, ...], int, int], Any]  # (x, n, seed) -> n outputs


class LibraryBox(BlackBox):
    """A library mechanism: ``draw(x, n, seed)`` here, or chunked over the cores when ``parallel``."""

    def __init__(self, draw: Draw, *, name: str, domain: Domain, neighbours: Neighbours, params: Mapping[str, Any],
                 parallel: bool, claimed_eps: float | None, **claims: float) -> None:
        super().__init__(name, domain, neighbours, params)
        self.draw, self.parallel, self.claimed_eps = draw, parallel, claimed_eps
        for key, value in claims.items():  # claimed_delta, claimed_rho, gaussian_mu
            setattr(self, key, value)

    def sample(self, x: Sequence[int], n: int, seed: int) -> np.ndarray:
        xs = self._check(x, n)
        if not self.parallel:
            return normalise_outputs(self.draw(xs, int(n), chunk_seed(seed, 0)), int(n), self.name)
        task = functools.partial(_remote_draw, self.name, tuple(sorted(self.params.items())), xs) \
            if self.name in LIBRARY else None
        out = chunked(lambda size, s: self.draw(xs, size, s), task, int(n), seed)
        return normalise_outputs(out, int(n), self.name)


@functools.lru_cache(maxsize=16)
def _rebuilt(name: str, params: tuple[tuple[str, Any], ...]) -> LibraryBox:
    return LIBRARY[name].make(**dict(params))


def _remote_draw(name: str, params: tuple[tuple[str, Any], ...], x: tuple[int, ...], n: int, seed: int) -> Any:
    """A chunk of draws in a worker process (the adapter rebuilt there once)."""
    return _rebuilt(name, params).draw(x, n, seed)


def _opendp() -> Any:
    dp = _import("opendp.prelude", "opendp")
    dp.enable_features("contrib")
    return dp


OPENDP_BATCH = 1000  # draws per call of a composed OpenDP measurement


def _composed(dp: Any, meas: Any) -> Callable[[Any, int], list]:
    """``draw(value, n)``: n independent outputs of ``meas`` from compositions of its copies."""
    made: dict[int, Any] = {}

    def draw(value: Any, n: int) -> list:
        out: list = []
        while len(out) < n:
            size = min(OPENDP_BATCH, n - len(out))
            if size not in made:
                made[size] = meas if size == 1 else dp.c.make_composition([meas] * size)
            got = made[size](value)
            out.extend([got] if size == 1 else got)
        return out

    return draw


def opendp_randomized_response(k: int = 3, p: float = 0.5) -> LibraryBox:
    """OpenDP's ``make_randomized_response`` over categories 0..k-1 (constructed by OpenDP, which validates)."""
    dp = _opendp()
    meas = dp.m.make_randomized_response(categories=list(range(k)), prob=float(p))
    draw = _composed(dp, meas)
    return LibraryBox(lambda x, n, seed: np.asarray(draw(x[0], n), dtype=np.int64),
                      name="opendp:randomized_response", domain=Domain((0,), (k - 1,)), neighbours=replace_one,
                      params={"k": k, "p": p}, parallel=True, claimed_eps=float(meas.map(1)))


def opendp_noisy_max(k: int = 2, scale: float = 1.0, hi: int = 1) -> LibraryBox:
    """OpenDP's ``make_noisy_max`` (exponential noise, pure DP) on k scores in 0..hi, each moving by 1."""
    dp = _opendp()
    space = dp.vector_domain(dp.atom_domain(T=int)), dp.linf_distance(T=int)
    meas = dp.m.make_noisy_max(*space, dp.max_divergence(), scale=float(scale))
    draw = _composed(dp, meas)
    return LibraryBox(lambda x, n, seed: np.asarray(draw(list(x), n), dtype=np.int64),
                      name="opendp:noisy_max", domain=Domain((0,) * k, (hi,) * k), neighbours=all_differ,
                      params={"k": k, "scale": scale, "hi": hi}, parallel=True, claimed_eps=float(meas.map(1)))


def _opendp_additive(kind: str, scale: float, lo: int, hi: int) -> LibraryBox:
    dp = _opendp()
    T = int if kind == "geometric" else float
    atoms = dp.atom_domain(T=T) if T is int else dp.atom_domain(T=T, nan=False)
    metric = dp.l2_distance(T=float) if kind == "gaussian" else dp.l1_distance(T=T)
    make = {"laplace": dp.m.make_laplace, "geometric": dp.m.make_geometric, "gaussian": dp.m.make_gaussian}[kind]
    meas = make(dp.vector_domain(atoms), metric, scale=float(scale))

    def draw(x: tuple[int, ...], n: int, seed: int) -> np.ndarray:
        return np.asarray(meas([T(x[0])] * n)) if n else np.zeros(0, dtype=T)

    level = meas.map(T(1))  # one query, sensitivity 1: eps, or rho for the Gaussian (zCDP)
    claims = {"claimed_rho": float(level), "gaussian_mu": 1 / float(scale)} if kind == "gaussian" else {}
    return LibraryBox(draw, name=f"opendp:{kind}", domain=Domain((lo,), (hi,)), neighbours=one_differ,
                      params={"scale": scale, "lo": lo, "hi": hi}, parallel=True,
                      claimed_eps=None if kind == "gaussian" else float(level), **claims)


def opendp_laplace(scale: float = 10.0, lo: int = 0, hi: int = 10) -> LibraryBox:
    """OpenDP's ``make_laplace`` on one count in lo..hi (sensitivity 1): eps = 1/scale."""
    return _opendp_additive("laplace", scale, lo, hi)


def opendp_geometric(scale: float = 2.0, lo: int = 0, hi: int = 10) -> LibraryBox:
    """OpenDP's ``make_geometric`` (discrete Laplace) on one count in lo..hi: eps = 1/scale."""
    return _opendp_additive("geometric", scale, lo, hi)


def opendp_gaussian(scale: float = 1.0, lo: int = 0, hi: int = 10) -> LibraryBox:
    """OpenDP's ``make_gaussian`` (standard deviation ``scale``) on one count in lo..hi: rho = 1/(2 scale^2)."""
    return _opendp_additive("gaussian", scale, lo, hi)


def _diffprivlib(cls: str, params: dict[str, Any], domain: Domain, neighbours: Neighbours, *,
                 arg: Callable[[tuple[int, ...]], Any] = lambda x: float(x[0]), decode: Callable[[Any], Any] = float,
                 per_input: Callable[[tuple[int, ...]], dict] = lambda x: {}, batchable: bool = False,
                 **kwargs: Any) -> LibraryBox:
    """A diffprivlib mechanism ``cls(random_state=..., **kwargs, **per_input(x))`` randomising ``arg(x)``.

    ``batchable``: its ``randomise`` is numpy arithmetic on its draws (read in its source), so
    batches are tried, each input's first passing :func:`batch_agrees`; otherwise one call per draw.
    """
    make = getattr(_import("diffprivlib.mechanisms", "diffprivlib"), cls)

    def build(x: tuple[int, ...], state: Any) -> Any:
        return make(random_state=state, **kwargs, **per_input(x))

    def once(x: tuple[int, ...]) -> Callable[[Any], Any]:
        return lambda state: build(x, state).randomise(arg(x))

    mech = build(domain.lo, 0)  # validate the parameters now
    agrees: dict[tuple[int, ...], bool] = {}

    def draw(x: tuple[int, ...], n: int, seed: int) -> Any:
        if x not in agrees:
            agrees[x] = batchable and batch_agrees(once(x))
        if agrees[x] and n:
            return np.asarray(once(x)(BatchState(seed, n)), dtype=np.float64)
        m, v = build(x, seed), arg(x)
        return [decode(m.randomise(v)) for _ in range(n)]

    batched = batchable and batch_agrees(once(domain.lo))
    agrees[domain.lo] = batched
    claims = {"claimed_delta": float(kwargs["delta"]), "gaussian_mu": 1 / float(np.sqrt(mech.variance(0)))} \
        if cls.startswith("Gaussian") else {}
    return LibraryBox(draw, name=f"diffprivlib:{_snake(cls)}", domain=domain, neighbours=neighbours, params=params,
                      parallel=not batched, claimed_eps=float(kwargs["epsilon"]), **claims)


def _snake(cls: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(cls))


def diffprivlib_laplace(epsilon: float = 0.5, lo: int = 0, hi: int = 10) -> LibraryBox:
    """diffprivlib's ``Laplace(epsilon, sensitivity=1)`` on one count in lo..hi."""
    return _diffprivlib("Laplace", {"epsilon": epsilon, "lo": lo, "hi": hi}, Domain((lo,), (hi,)), one_differ,
                        batchable=True, epsilon=float(epsilon), sensitivity=1)


def diffprivlib_gaussian(epsilon: float = 1.0, delta: float = 1e-3, lo: int = 0, hi: int = 10) -> LibraryBox:
    """diffprivlib's classic ``Gaussian(epsilon <= 1, delta, sensitivity=1)`` on one count in lo..hi."""
    return _diffprivlib("Gaussian", {"epsilon": epsilon, "delta": delta, "lo": lo, "hi": hi}, Domain((lo,), (hi,)),
                        one_differ, batchable=True, epsilon=float(epsilon), delta=float(delta), sensitivity=1)


def diffprivlib_gaussian_analytic(epsilon: float = 1.0, delta: float = 1e-3, lo: int = 0, hi: int = 10) -> LibraryBox:
    """diffprivlib's ``GaussianAnalytic(epsilon, delta, sensitivity=1)`` (Balle and Wang) on one count in lo..hi."""
    return _diffprivlib("GaussianAnalytic", {"epsilon": epsilon, "delta": delta, "lo": lo, "hi": hi},
                        Domain((lo,), (hi,)), one_differ, batchable=True, epsilon=float(epsilon), delta=float(delta),
                        sensitivity=1)


def diffprivlib_geometric(epsilon: float = 0.5, lo: int = 0, hi: int = 10) -> LibraryBox:
    """diffprivlib's ``Geometric(epsilon, sensitivity=1)`` on one count in lo..hi."""
    return _diffprivlib("Geometric", {"epsilon": epsilon, "lo": lo, "hi": hi}, Domain((lo,), (hi,)), one_differ,
                        arg=lambda x: int(x[0]), decode=int, epsilon=float(epsilon), sensitivity=1)


def diffprivlib_binary(epsilon: float = 1.0) -> LibraryBox:
    """diffprivlib's ``Binary`` randomised response on one bit: e^eps = P(keep) / P(flip)."""
    return _diffprivlib("Binary", {"epsilon": epsilon}, Domain((0,), (1,)), replace_one,
                        arg=lambda x: str(x[0]), decode=int, epsilon=float(epsilon), value0="0", value1="1")


def diffprivlib_exponential(epsilon: float = 1.0, k: int = 3, hi: int = 1) -> LibraryBox:
    """diffprivlib's ``Exponential(epsilon, sensitivity=1)`` choosing among k candidates whose utilities
    are the input (each in 0..hi, each moving by at most 1 between neighbours)."""
    return _diffprivlib("Exponential", {"epsilon": epsilon, "k": k, "hi": hi}, Domain((0,) * k, (hi,) * k),
                        all_differ, arg=lambda x: None, decode=int,
                        per_input=lambda x: {"utility": [float(v) for v in x]}, epsilon=float(epsilon),
                        sensitivity=1)


@dataclass(frozen=True)
class LibraryMechanism:
    make: Callable[..., LibraryBox]
    types: Mapping[str, type]


LIBRARY: dict[str, LibraryMechanism] = {
    "opendp:randomized_response": LibraryMechanism(opendp_randomized_response, {"k": int, "p": float}),
    "opendp:noisy_max": LibraryMechanism(opendp_noisy_max, {"k": int, "scale": float, "hi": int}),
    "opendp:laplace": LibraryMechanism(opendp_laplace, {"scale": float, "lo": int, "hi": int}),
    "opendp:geometric": LibraryMechanism(opendp_geometric, {"scale": float, "lo": int, "hi": int}),
    "opendp:gaussian": LibraryMechanism(opendp_gaussian, {"scale": float, "lo": int, "hi": int}),
    "diffprivlib:laplace": LibraryMechanism(diffprivlib_laplace, {"epsilon": float, "lo": int, "hi": int}),
    "diffprivlib:gaussian": LibraryMechanism(diffprivlib_gaussian,
                                             {"epsilon": float, "delta": float, "lo": int, "hi": int}),
    "diffprivlib:gaussian_analytic": LibraryMechanism(diffprivlib_gaussian_analytic,
                                                      {"epsilon": float, "delta": float, "lo": int, "hi": int}),
    "diffprivlib:geometric": LibraryMechanism(diffprivlib_geometric, {"epsilon": float, "lo": int, "hi": int}),
    "diffprivlib:binary": LibraryMechanism(diffprivlib_binary, {"epsilon": float}),
    "diffprivlib:exponential": LibraryMechanism(diffprivlib_exponential, {"epsilon": float, "k": int, "hi": int}),
}


def library_mechanism(name: str, params: Mapping[str, str]) -> LibraryBox:
    """The library mechanism ``name`` built with text parameters (as from ``-p key=value``)."""
    entry = LIBRARY.get(name.lower())
    if entry is None:
        raise UnknownMechanism(f"unknown library mechanism {name!r} (known: {', '.join(LIBRARY)})")
    args = {}
    for key, text in params.items():
        if key not in entry.types:
            raise ParameterError(f"unknown parameter {key!r} for {name} (known: {', '.join(entry.types)})")
        try:
            args[key] = entry.types[key](text)
        except ValueError:
            raise ParameterError(f"parameter {key} of {name} must be a {entry.types[key].__name__}, got {text!r}") from None
    try:
        return entry.make(**args)
    except MissingLibrary:
        raise
    except Exception as e:  # the library rejected the parameters: its message, one line
        first = next((line.strip() for line in str(e).splitlines() if line.strip()), type(e).__name__)
        raise ParameterError(f"{name}: {first}") from None

