"""Black-box mechanisms as samplers: any callable, batched or one output per call.

A black box has no IR, so no exact backend: testers treat it exactly like a compiled
sampler (``.sample(x, n, seed)``, ``.domain``, ``.neighbours``) and its results are
statistical (``certified: false``).  Outputs are normalised to the compiled
samplers' conventions: ``(n,)`` or ``(n, k)`` arrays, int64 for integer and boolean
outputs, float64 otherwise; ``None`` becomes BOTTOM (the int sentinel, or NaN).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence

import numpy as np

from samplers import deadline
from samplers.errors import DPHybridError, ParameterError
from samplers.lang.domain import Domain
from samplers.lang.ir import BOTTOM_CODE
from samplers.lang.neighbours import Neighbours
from samplers.numerals import short_text


class BlackBoxError(DPHybridError):
    """A black-box mechanism returned something that is not a batch of outputs."""


def normalise_outputs(out: Any, n: int, name: str) -> np.ndarray:
    """A black box's outputs as a sampler array (see the module docstring)."""
    if isinstance(out, np.ndarray) and out.dtype != object:
        arr = out
        if arr.dtype.kind == "f" and np.isnan(arr).any():
            raise BlackBoxError(f"{name} returned NaN: outputs are numbers (None where nothing is released)")
    else:
        rows = list(out)
        flat = [v for r in rows for v in (r if isinstance(r, (tuple, list, np.ndarray)) else (r,))]
        odd = next((v for v in flat if v is not None and not isinstance(v, (int, float, np.integer, np.floating,
                                                                              np.bool_))), None)
        if odd is not None:
            raise BlackBoxError(f"{name} returned a {type(odd).__name__} ({short_text(repr(odd))}): outputs are "
                                "numbers, bools, None or tuples of them")
        if any(isinstance(v, (float, np.floating)) and v != v for v in flat):
            raise BlackBoxError(f"{name} returned NaN: outputs are numbers (None where nothing is released)")
        is_float = any(isinstance(v, (float, np.floating)) for v in flat)
        fill = np.nan if is_float else BOTTOM_CODE
        try:
            arr = np.asarray([[fill if v is None else v for v in r] if isinstance(r, (tuple, list, np.ndarray))
                              else (fill if r is None else r) for r in rows],
                             dtype=np.float64 if is_float else np.int64)
        except (TypeError, ValueError, OverflowError) as e:
            raise BlackBoxError(f"{name} returned outputs that are no batch of numbers: {e}") from None
    if arr.dtype == bool or arr.dtype.kind in "iu":
        arr = arr.astype(np.int64)
    elif arr.dtype.kind == "f":
        arr = arr.astype(np.float64)
    else:
        raise BlackBoxError(f"{name} returned outputs of type {arr.dtype}, not numbers")
    if arr.ndim not in (1, 2) or arr.shape[0] != n:
        raise BlackBoxError(f"{name} returned shape {arr.shape} for {n} samples")
    return arr


class BlackBox:
    """Shared part: declared domain, neighbour relation, name and parameters."""

    certified = False
    batch = 1 << 14  # outputs the testers ask for per call: a black box may be slow, progress stays live

    def __init__(self, name: str, domain: Domain, neighbours: Neighbours,
                 params: Mapping[str, Any] | None = None) -> None:
        if not isinstance(domain, Domain):
            raise ParameterError("a black box needs a Domain (samplers.lang.domain.Domain)")
        if not isinstance(neighbours, Neighbours):
            raise ParameterError("a black box needs a Neighbours relation (samplers.lang.neighbours)")
        self.name, self.domain, self.neighbours = name, domain, neighbours
        self.params = dict(params or {})

    def _check(self, x: Sequence[int], n: int) -> tuple[int, ...]:
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ParameterError(f"the number of samples must be a non-negative integer, got {n!r}")
        return self.domain.check(x)

    def sample(self, x: Sequence[int], n: int, seed: int) -> np.ndarray:
        raise NotImplementedError


class VectorisedBlackBox(BlackBox):
    """``f(x, n, rng) -> array`` of n outputs (x a numpy int64 vector, rng a numpy Generator)."""

    def __init__(self, f: Callable[[np.ndarray, int, np.random.Generator], Any], *, domain: Domain,
                 neighbours: Neighbours, name: str | None = None, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(name or getattr(f, "__name__", "blackbox"), domain, neighbours, params)
        self.f = f

    def sample(self, x: Sequence[int], n: int, seed: int) -> np.ndarray:
        xs = self._check(x, n)
        rng = np.random.default_rng(seed)
        with deadline.interrupting(f"while running {self.name}"):  # it may never return
            out = self.f(np.asarray(xs, dtype=np.int64), int(n), rng)
        return normalise_outputs(out, int(n), self.name)


class PerCallBlackBox(BlackBox):
    """``f(x, rng) -> one output`` (a number, a bool, None or a tuple), called n times."""

    def __init__(self, f: Callable[[np.ndarray, np.random.Generator], Any], *, domain: Domain,
                 neighbours: Neighbours, name: str | None = None, params: Mapping[str, Any] | None = None) -> None:
        super().__init__(name or getattr(f, "__name__", "blackbox"), domain, neighbours, params)
        self.f = f

    def sample(self, x: Sequence[int], n: int, seed: int) -> np.ndarray:
        xs = np.asarray(self._check(x, n), dtype=np.int64)
        rng = np.random.default_rng(seed)
        with deadline.interrupting(f"while running {self.name}"):  # it may never return
            out = [self.f(xs, rng) for _ in range(int(n))]
        return normalise_outputs(out, int(n), self.name)
