"""numpy's continuous samplers as float64 maps of an integer draw (numpy 2.4, ``Generator``).

A sampler is modelled as *layers*: in each, an integer draw ``k`` (bits of one 64-bit word of the
bit generator) gives the noise value through a float64 map that is monotone in ``k`` under the
``log`` model of :mod:`verifiers.float64.libm`.  Transcribed from numpy v2.4.6,
numpy/random/src/distributions/distributions.c and numpy/random/_common.pxd:

- ``next_double`` is ``(word >> 11) * (1.0 / 9007199254740992.0)``, so ``U = k / 2^53``;
- ``random_laplace(loc, scale)``: ``U >= 0.5``: ``loc - scale * log(2.0 - U - U)``; ``U > 0``:
  ``loc + scale * log(U + U)``; ``U == 0``: draw again.  The traced noise node is
  ``laplace(loc=0)``: ``q + laplace(0, s)`` equals numpy's ``laplace(q, s)`` bit for bit unless
  ``q`` is ``-0.0`` (which :mod:`verifiers.float64.chains` refuses);
- ``random_exponential(scale) = scale * random_standard_exponential()``: a ziggurat; with
  ``ri = word >> 11`` and ``idx = (word >> 3) & 0xff``, it returns ``x = ri * we_double[idx]``
  at once when ``ri < ke_double[idx]``; otherwise, for ``idx > 0`` it returns the same ``x``
  with some probability (else draws again), and for ``idx == 0`` a tail value
  ``ziggurat_exp_r - log1p(-U)`` >= ``ziggurat_exp_r`` rounded;
- ``random_normal(loc, scale) = loc + scale * random_standard_normal()``: with ``idx = word &
  0xff``, ``sign = bit 8`` and ``rabs`` the 52 bits above it, ``x = ±rabs * wi_double[idx]``,
  returned at once when ``rabs < ki_double[idx]``, else (``idx > 0``) possibly the same ``x``
  or (``idx == 0``) a tail value of magnitude >= ``ziggurat_nor_r``;
- a hand-written inversion ``-np.log(prng.random())`` (an exponential node whose scale is an
  :class:`~samplers.lang.inversion.InversionScale`): ``random()`` is ``next_double``, so the
  value is ``-log(k / 2^53)``, decreasing in ``k``; ``k = 0`` gives ``+inf`` (``log(0.0)`` is
  ``-inf``), listed as an opaque value, which no finite output can come from.

A layer says which draws it may return (``lo .. hi - 1``) and which return with their full
weight on the first try (``lo .. sure_hi - 1``); values a path the model does not follow may
return (the ziggurat tails) are listed as ``opaque`` ranges of the noise value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np
from samplers.lang.inversion import InversionScale
from verifiers.float64 import ziggurat_tables as zt
from verifiers.float64.libm import LOG_ASSUMPTION, NP_LOG_ASSUMPTION, log_bounds

UNIT = 2**53  # next_double's grid: U = k / UNIT
NUMPY_VERSION = zt.NUMPY_VERSION


@dataclass(frozen=True)
class Layer:
    """Draws ``k`` in ``[lo, hi)`` whose noise value is monotone in ``k``.

    ``bounds(k)`` is the smallest and largest value the model allows for draw ``k`` (equal where
    no libm call is involved), ``value(k)`` the value on this machine (Python's ``math.log`` is
    the libm numpy calls), ``word(k)`` a 64-bit word of the bit generator that gives draw ``k``.
    """

    name: str
    lo: int
    hi: int
    sure_hi: int
    increasing: bool
    bounds: Callable[[int], tuple[float, float]]
    value: Callable[[int], float]
    word: Callable[[int], int]


@dataclass(frozen=True)
class NoiseModel:
    """One traced noise node's sampler: its layers, the probability of one draw ``k`` on one try
    (the same for every layer), the value ranges of paths not modelled, and the assumptions."""

    op: str
    scale: float
    layers: tuple[Layer, ...]
    weight: Fraction
    opaque: tuple[tuple[float, float], ...]
    assumptions: tuple[str, ...]


def _u(k: int) -> float:
    return k * (1.0 / 9007199254740992.0)


def _laplace(s: float) -> NoiseModel:
    def below_value(k: int) -> float:
        u = _u(k)
        return 0.0 + s * math.log(u + u)

    def below_bounds(k: int) -> tuple[float, float]:
        u = _u(k)
        lo, hi = log_bounds(u + u)
        return 0.0 + s * lo, 0.0 + s * hi

    def above_value(k: int) -> float:
        u = _u(k)
        return 0.0 - s * math.log(2.0 - u - u)

    def above_bounds(k: int) -> tuple[float, float]:
        u = _u(k)
        lo, hi = log_bounds(2.0 - u - u)
        return 0.0 - s * hi, 0.0 - s * lo

    def word(k: int) -> int:
        return k << 11

    half = UNIT // 2
    layers = (Layer("U < 1/2", 1, half, half, True, below_bounds, below_value, word),
              Layer("U >= 1/2", half, UNIT, UNIT, True, above_bounds, above_value, word))
    return NoiseModel("laplace", s, layers, Fraction(1, UNIT), (), (LOG_ASSUMPTION,))


def _inversion(s: float) -> NoiseModel:
    """``-s * np.log(random())`` as the traced node computes it: ``s`` times the exact negation of ``np.log``."""
    def value(k: int) -> float:
        return s * -float(np.log(_u(k)))

    def bounds(k: int) -> tuple[float, float]:
        lo, hi = log_bounds(_u(k))
        return s * -hi, s * -lo

    layer = Layer("U > 0", 1, UNIT, UNIT, False, bounds, value, lambda k: k << 11)
    return NoiseModel("-log(random())", s, (layer,), Fraction(1, UNIT), ((math.inf, math.inf),),
                      (NP_LOG_ASSUMPTION, "random() is next_double, k / 2^53 (k = 0 gives log(0.0) = -inf: an infinite "
                                       "output, the same from every input)"))


def _ziggurat_layer(name: str, w: float, s: float, hi: int, sure_hi: int, negative: bool,
                    word: Callable[[int], int]) -> Layer:
    def value(k: int) -> float:
        x = k * w
        return 0.0 + s * (-x if negative else x)

    def bounds(k: int) -> tuple[float, float]:
        v = value(k)
        return v, v

    return Layer(name, 0, hi, sure_hi, not negative, bounds, value, word)


def _exponential(s: float) -> NoiseModel:
    layers = []
    for idx in range(256):
        ke = zt.KE_DOUBLE[idx]
        hi = ke if idx == 0 else UNIT  # idx 0 beyond ke goes to the tail
        layers.append(_ziggurat_layer(f"idx {idx}", zt.WE_DOUBLE[idx], s, hi, ke, False,
                                      lambda k, idx=idx: (k << 11) | (idx << 3)))
    # tail: ziggurat_exp_r - log1p(-U) with log1p(-U) <= 0 up to 1 ulp of 0: at least pred(r)
    tail = 0.0 + s * math.nextafter(zt.ZIGGURAT_EXP_R, 0.0)
    # the result is scale * standard_exponential (no loc): the model's value is 0.0 + that, the same double
    return NoiseModel("exponential", s, tuple(layers), Fraction(8, 2**64), ((tail, math.inf),),
                      ("numpy's exponential ziggurat (no libm call on the modelled paths; its tail beyond "
                       f"ziggurat_exp_r = {zt.ZIGGURAT_EXP_R!r} is not modelled)",))


def _gaussian(s: float) -> NoiseModel:
    layers = []
    for idx in range(256):
        ki = zt.KI_DOUBLE[idx]
        hi = ki if idx == 0 else 2**52
        for sign in (0, 1):
            layers.append(_ziggurat_layer(f"idx {idx}{' negative' if sign else ''}", zt.WI_DOUBLE[idx], s, hi, ki,
                                          bool(sign), lambda k, idx=idx, sign=sign: idx | (sign << 8) | (k << 9)))
    r = s * math.nextafter(zt.ZIGGURAT_NOR_R, 0.0)
    return NoiseModel("gaussian", s, tuple(layers), Fraction(8, 2**64), ((-math.inf, -r), (r, math.inf)),
                      ("numpy's normal ziggurat (no libm call on the modelled paths; its tail beyond "
                       f"ziggurat_nor_r = {zt.ZIGGURAT_NOR_R!r} is not modelled)",))


def noise_model(op: str, scale: float) -> NoiseModel:
    """The model of numpy's sampler behind the IR noise node ``op`` with this scale (a double; an
    :class:`~samplers.lang.inversion.InversionScale` for a hand-written ``-log(random())``)."""
    if not (isinstance(scale, float) and 0 < scale < math.inf):
        raise ValueError(f"scale must be a positive finite double, got {scale!r}")
    if isinstance(scale, InversionScale):
        return _inversion(float(scale))
    return {"laplace": _laplace, "exponential": _exponential, "gaussian": _gaussian}[op](scale)
