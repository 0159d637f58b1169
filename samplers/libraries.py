"""Mechanisms of real DP libraries as black-box samplers (optional extras).

``opendp`` (``pip install 'dphybrid[opendp]'``): ``make_randomized_response`` (batched
with OpenDP's own ``make_composition`` of up to :data:`OPENDP_BATCH` copies: one call
gives that many independent draws, about three times faster than a call per draw),
``make_laplace`` and ``make_geometric`` (batched: one call on a vector of n copies of
the query answer adds n independent noises).  OpenDP draws from the
operating system's secure generator, so its samples are not reproducible from a seed.

``diffprivlib`` (``pip install 'dphybrid[diffprivlib]'``): ``Laplace``, ``Geometric`` and
``Binary`` (randomised response on a bit), one ``randomise`` call per sample, seeded
through diffprivlib's ``random_state``.

Each is addressable by name (``opendp:laplace``, ``diffprivlib:binary``, ...), with
parameters given as text like the catalogue's, and carries the level its library
claims (``claimed_eps``).  Results on them are statistical, never certified.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from samplers.blackbox import BlackBox, VectorisedBlackBox, normalise_outputs
from samplers.errors import ParameterError, UnknownMechanism, install_hint
from samplers.lang.domain import Domain
from samplers.lang.neighbours import one_differ, replace_one


class MissingLibrary(ParameterError):
    """The optional library behind a black-box mechanism is not installed."""


def _import(module: str, extra: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise MissingLibrary(f"{module} is not available ({e}); install it with {install_hint(extra)}") from None


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


def opendp_randomized_response(k: int = 3, p: float = 0.5) -> BlackBox:
    """OpenDP's ``make_randomized_response`` over categories 0..k-1 (constructed by OpenDP, which validates)."""
    dp = _opendp()
    meas = dp.m.make_randomized_response(categories=list(range(k)), prob=float(p))
    draw = _composed(dp, meas)
    box = VectorisedBlackBox(lambda x, n, rng: np.asarray(draw(int(x[0]), n), dtype=np.int64),
                             domain=Domain((0,), (k - 1,)), neighbours=replace_one,
                             name="opendp:randomized_response", params={"k": k, "p": p})
    box.claimed_eps = float(meas.map(1))
    return box


def _opendp_additive(kind: str, scale: float, lo: int, hi: int) -> BlackBox:
    dp = _opendp()
    T = float if kind == "laplace" else int
    space = dp.vector_domain(dp.atom_domain(T=T, nan=False) if T is float else dp.atom_domain(T=T)), dp.l1_distance(T=T)
    make = dp.m.make_laplace if kind == "laplace" else dp.m.make_geometric
    meas = make(*space, scale=float(scale))

    def f(x: np.ndarray, n: int, rng: np.random.Generator) -> np.ndarray:
        return np.asarray(meas([T(x[0])] * n)) if n else np.zeros(0, dtype=T)

    box = VectorisedBlackBox(f, domain=Domain((lo,), (hi,)), neighbours=one_differ, name=f"opendp:{kind}",
                             params={"scale": scale, "lo": lo, "hi": hi})
    box.claimed_eps = float(meas.map(1))  # one query, sensitivity 1 in the l1 metric
    return box


def opendp_laplace(scale: float = 10.0, lo: int = 0, hi: int = 10) -> BlackBox:
    """OpenDP's ``make_laplace`` on one count in lo..hi (sensitivity 1): eps = 1/scale."""
    return _opendp_additive("laplace", scale, lo, hi)


def opendp_geometric(scale: float = 2.0, lo: int = 0, hi: int = 10) -> BlackBox:
    """OpenDP's ``make_geometric`` (discrete Laplace) on one count in lo..hi: eps = 1/scale."""
    return _opendp_additive("geometric", scale, lo, hi)


class DiffprivlibBlackBox(BlackBox):
    """A diffprivlib mechanism, rebuilt with ``random_state=seed`` for every batch."""

    def __init__(self, make: Callable[[int], Any], encode: Callable[[int], Any], decode: Callable[[Any], Any],
                 **kw: Any) -> None:
        super().__init__(**kw)
        self.make, self.encode, self.decode = make, encode, decode

    def sample(self, x: Sequence[int], n: int, seed: int) -> np.ndarray:
        xs = self._check(x, n)
        mech = self.make(int(seed) % 2**32)
        v = self.encode(xs[0])
        return normalise_outputs([self.decode(mech.randomise(v)) for _ in range(int(n))], int(n), self.name)


def _diffprivlib(cls: str, params: dict[str, Any], domain: Domain, neighbours: Any,
                 encode: Callable[[int], Any] = float, decode: Callable[[Any], Any] = float,
                 **kwargs: Any) -> BlackBox:
    mechs = _import("diffprivlib.mechanisms", "diffprivlib")
    make = getattr(mechs, cls)
    make(random_state=0, **kwargs)  # validate the parameters now
    box = DiffprivlibBlackBox(lambda seed: make(random_state=seed, **kwargs), encode, decode,
                              name=f"diffprivlib:{cls.lower()}", domain=domain, neighbours=neighbours, params=params)
    box.claimed_eps = float(kwargs["epsilon"])
    return box


def diffprivlib_laplace(epsilon: float = 0.5, lo: int = 0, hi: int = 10) -> BlackBox:
    """diffprivlib's ``Laplace(epsilon, sensitivity=1)`` on one count in lo..hi."""
    return _diffprivlib("Laplace", {"epsilon": epsilon, "lo": lo, "hi": hi}, Domain((lo,), (hi,)), one_differ,
                        epsilon=float(epsilon), sensitivity=1)


def diffprivlib_geometric(epsilon: float = 0.5, lo: int = 0, hi: int = 10) -> BlackBox:
    """diffprivlib's ``Geometric(epsilon, sensitivity=1)`` on one count in lo..hi."""
    return _diffprivlib("Geometric", {"epsilon": epsilon, "lo": lo, "hi": hi}, Domain((lo,), (hi,)), one_differ,
                        encode=int, decode=int, epsilon=float(epsilon), sensitivity=1)


def diffprivlib_binary(epsilon: float = 1.0) -> BlackBox:
    """diffprivlib's ``Binary`` randomised response on one bit: e^eps = P(keep) / P(flip)."""
    return _diffprivlib("Binary", {"epsilon": epsilon}, Domain((0,), (1,)), replace_one,
                        encode=str, decode=int, epsilon=float(epsilon), value0="0", value1="1")


@dataclass(frozen=True)
class LibraryMechanism:
    make: Callable[..., BlackBox]
    types: Mapping[str, type]


LIBRARY: dict[str, LibraryMechanism] = {
    "opendp:randomized_response": LibraryMechanism(opendp_randomized_response, {"k": int, "p": float}),
    "opendp:laplace": LibraryMechanism(opendp_laplace, {"scale": float, "lo": int, "hi": int}),
    "opendp:geometric": LibraryMechanism(opendp_geometric, {"scale": float, "lo": int, "hi": int}),
    "diffprivlib:laplace": LibraryMechanism(diffprivlib_laplace, {"epsilon": float, "lo": int, "hi": int}),
    "diffprivlib:geometric": LibraryMechanism(diffprivlib_geometric, {"epsilon": float, "lo": int, "hi": int}),
    "diffprivlib:binary": LibraryMechanism(diffprivlib_binary, {"epsilon": float}),
}


def library_mechanism(name: str, params: Mapping[str, str]) -> BlackBox:
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

