"""The recording generator that stands in for StatDP's ``prng`` (a ``numpy.random.Generator``).

Each call records a draw of the mechanism language instead of drawing: ``laplace``,
``exponential`` and ``normal`` become continuous noise, ``integers`` and ``choice``
exact finite laws, with ``loc``, ``scale``, ``size`` and ``p`` as numpy spells them
(``size=n`` gives n independent draws as a :class:`~samplers.plain.symbolic.SymArray`).
Two draws have no exact law on their own and are accepted in the forms code uses them:
``prng.random() < p`` (a coin; each ``random()`` may be compared once),
``np.log(prng.random())`` (minus exponential noise of mean 1, the hand-written inversion
``-scale * np.log(prng.random())``: see below) and ``prng.geometric(p) - prng.geometric(p)``
(two-sided geometric noise, i.e. discrete Laplace; clamp it with ``np.clip`` as the language
requires).

The finite laws are numpy's own, not their real-number ideals: ``random()`` is
``k / 2**53`` for ``k`` uniform in ``0 .. 2**53 - 1`` (every bit generator's
``next_double``), so ``random() < p`` has probability ``ceil(p * 2**53) / 2**53`` --
exactly ``p`` when ``p`` is a multiple of ``2**-53`` (0.25, 0.75, ...), and ``2**-53``,
not 0, for ``random() <= 0``; ``choice(a, p=p)`` compares one ``random()`` with numpy's
float64 cumulative sums of ``p``, and refuses what numpy refuses (negative
probabilities, a sum that is not 1 within numpy's tolerance).

``np.log(prng.random())`` is traced as ``-E`` with ``E`` the language's exponential noise of
scale 1 (an :class:`~samplers.lang.inversion.InversionScale`), and what the code does with it
(``-b * ...``, ``q - ...``) as the float64 operations it is: over the reals ``-log U`` is
exponential for ``U`` uniform on (0, 1).  numpy's ``random()`` is 0.0 with probability
``2**-53``, where ``np.log`` gives ``-inf``: the real-number reading leaves out that atom.  It
is the same ``+-inf`` noise whatever the input, so a bound proved on the rest still holds with it
(mixing every input's law with one common law cannot raise a ratio above the larger of the
two), and the float-level audit models it (``k = 0`` gives an infinite value; no finite output
comes from it).
"""

from __future__ import annotations

import math
import numbers
from fractions import Fraction
from typing import Any, Callable

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin

from samplers.errors import DPHybridError, ParameterError
from samplers.lang import noise
from samplers.lang.inversion import InversionScale
from samplers.lang.trace import Sym
from samplers.plain.dispatch import elementwise, scalar
from samplers.plain.forking import Driver
from samplers.plain.site import current_site, refusal, untraceable
from samplers.plain.symbolic import Noisy, NoisyBool, SymArray

UNIT = 2**53  # numpy's random() is k / UNIT, k uniform in 0 .. UNIT - 1


def coin(op: str, p: Any) -> Fraction:
    """P(random() op p) for numpy's random() (see the module docstring); ``op`` is <, <=, > or >=.

    numpy compares with an int's float64 (OverflowError beyond it) and with a Fraction exactly."""
    if isinstance(p, numbers.Integral):
        p = float(p)
    if not isinstance(p, (float, Fraction)):
        raise untraceable(f"prng.random() compared with a {type(p).__name__}: only ints, floats and Fractions "
                          "are traced", "prng.random")
    if isinstance(p, float) and math.isnan(p):  # every comparison with nan is false
        return Fraction(0)
    if op in (">", ">="):
        return 1 - coin("<=" if op == ">" else "<", p)
    if isinstance(p, float) and math.isinf(p):
        return Fraction(int(p > 0))
    scaled = Fraction(p) * UNIT  # the k with k / UNIT below p
    k = math.ceil(scaled) if op == "<" else math.floor(scaled) + 1
    return Fraction(min(max(k, 0), UNIT), UNIT)


def choice_law(p: Any) -> noise.Law:
    """The law of ``choice(len(p), p=p)`` as numpy draws it: the first cumulative sum above one random()."""
    p = np.asarray(p, dtype=np.float64)
    if p.ndim != 1 or not np.all(np.isfinite(p)):
        raise untraceable("choice(p=...): p must be a flat list of finite probabilities", "prng.choice")
    if np.any(p < 0):
        raise untraceable("choice(p=...): probabilities are not non-negative (numpy raises)", "prng.choice")
    if abs(math.fsum(p.tolist()) - 1) > math.sqrt(np.finfo(np.float64).eps):
        raise untraceable(f"choice(p=...): probabilities sum to {math.fsum(p.tolist())!r}, not 1 (numpy raises)",
                          "prng.choice")
    cdf = p.cumsum()
    cdf /= cdf[-1]
    ups = [coin("<", c) for c in cdf.tolist()]
    return 0, tuple(hi - lo for lo, hi in zip([Fraction(0)] + ups, ups))


def _plain(v: Any, what: str) -> Any:
    v = scalar(v)
    if isinstance(v, (Sym, SymArray, np.ndarray, list, tuple, _Pending)):
        raise untraceable(f"{what} must be a plain number, not a symbolic value or an array", what)
    return v


def _integer(v: Any, what: str) -> int:
    v = _plain(v, what)
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != int(v):
        raise untraceable(f"{what} = {v!r}: integer bounds only", "prng.integers")
    return int(v)


def _count(size: Any) -> int | None:
    if size is None:
        return None
    if isinstance(size, tuple) and len(size) == 1:
        size = size[0]
    size = scalar(size)
    if isinstance(size, int) and not isinstance(size, bool) and size >= 0:
        return size
    raise untraceable(f"size={size!r}: only None or a non-negative integer (1-D) is traced", "size")


class RecordingGenerator:
    """A ``numpy.random.Generator`` look-alike whose draws are IR noise nodes (see the module docstring)."""

    def __init__(self, driver: Driver) -> None:
        self._driver = driver

    def __getattr__(self, name: str) -> Any:
        raise untraceable(f"prng.{name} is not supported by the tracer (it knows laplace, exponential, normal, "
                          "integers, choice, random, geometric)", f"prng.{name}")

    # -- plumbing ----------------------------------------------------------------------
    def _node(self, key: tuple, make: Callable[[], int], position: int | None = None) -> Noisy:
        try:
            return Noisy(self._driver.draw(key, make, position))
        except DPHybridError as e:
            if isinstance(e, ParameterError):
                raise refusal(ParameterError(f"{current_site()}: {e}")) from None
            raise refusal(e)

    def _many(self, size: Any, one: Callable[[], Any], loc: Any = 0, dtype: Any = None) -> Any:
        """One draw (``size`` None) or an array of ``size`` (numpy's ``dtype``, if known), plus ``loc``."""
        n = _count(size)
        if n is None and isinstance(scalar(loc), (SymArray, np.ndarray, list, tuple)):
            n = len(loc)
        draws = one() if n is None else SymArray((one() for _ in range(n)), dtype)
        if isinstance(loc, (int, float)) and loc == 0:
            return draws
        out = elementwise(lambda a, b: a + b, (loc, draws), "loc")
        if isinstance(out, SymArray):
            out.known_dtype = draws.known_dtype if isinstance(draws, SymArray) else None
        return out

    def _continuous(self, kind: str, scale: Any) -> Callable[[], Noisy]:
        try:
            s = noise.positive_scale(_plain(scale, "scale"), f"prng.{kind}")
        except ParameterError as e:
            raise refusal(ParameterError(f"{current_site()}: {e}")) from None
        op = "gaussian" if kind == "normal" else kind
        return lambda: self._node((op, s), lambda: self._driver.builder.continuous(op, s))

    def _discrete(self, law: noise.Law) -> Noisy:
        return self._node(("draw", law), lambda: self._driver.builder.draw(*law))

    # -- numpy's names -------------------------------------------------------------------
    def laplace(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        """Laplace noise, ``loc + Lap(scale)``."""
        return self._many(size, self._continuous("laplace", scale), loc, np.float64)

    def exponential(self, scale: Any = 1.0, size: Any = None) -> Any:
        """Exponential noise with mean ``scale``."""
        return self._many(size, self._continuous("exponential", scale), dtype=np.float64)

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, size: Any = None) -> Any:
        """Gaussian noise, ``loc + N(0, scale^2)``."""
        return self._many(size, self._continuous("normal", scale), loc, np.float64)

    def standard_normal(self, size: Any = None) -> Any:
        return self.normal(0.0, 1.0, size)

    def standard_exponential(self, size: Any = None) -> Any:
        return self.exponential(1.0, size)

    def integers(self, low: Any, high: Any = None, size: Any = None, dtype: Any = np.int64,
                 endpoint: bool = False) -> Any:
        """Uniform integers in ``[low, high)`` (``[low, high]`` with ``endpoint=True``)."""
        low = _integer(low, "integers(low)")
        if high is None:
            low, high = 0, low
        high = _integer(high, "integers(high)")
        top = high if endpoint else high - 1
        dt = np.dtype(dtype)
        if dt != np.dtype(np.int64):
            raise untraceable(f"integers(..., dtype={dt.name}): only int64 is traced (numpy returns booleans for "
                              "bool, and its narrower and unsigned integers wrap around on overflow)", "prng.integers")
        if not (np.iinfo(dt).min <= low and top <= np.iinfo(dt).max):
            raise untraceable(f"integers of {low}..{top}: outside int64 (numpy raises)", "prng.integers")
        if low > top:
            raise untraceable(f"integers: empty range {low}..{top} (numpy raises: low >= high)", "prng.integers")
        law = noise.uniform_law(low, top)
        return self._many(size, lambda: self._discrete(law), dtype=dt)

    def choice(self, a: Any, size: Any = None, replace: bool = True, p: Any = None, axis: int = 0,
               shuffle: bool = True) -> Any:
        """One of ``a`` (or of ``range(a)``), uniformly or with probabilities ``p``."""
        values = list(range(_plain(a, "choice(a)"))) if not isinstance(a, (list, tuple, np.ndarray, SymArray)) \
            else [_plain(v, "choice(a) elements") for v in a]
        if not values:
            raise untraceable("choice of nothing (numpy raises: a cannot be empty)", "prng.choice")
        n = _count(size)
        if not replace and (n or 1) > 1:
            raise untraceable("choice(..., replace=False) of several values is not supported", "prng.choice")
        if p is not None and len(p) != len(values):
            raise untraceable(f"choice: {len(values)} values but {len(p)} probabilities", "prng.choice")
        law = noise.uniform_law(0, len(values) - 1) if p is None else choice_law([_plain(w, "choice(p)") for w in p])

        def one() -> Any:
            idx = self._discrete(law)
            if all(isinstance(v, int) for v in values) and values == list(range(values[0], values[0] + len(values))):
                return idx + values[0] if values[0] else idx
            out: Any = values[-1]
            for i in range(len(values) - 2, -1, -1):
                out = np.where(idx == i, values[i], out)
            return out

        return self._many(size, one)

    def random(self, size: Any = None) -> Any:
        """A uniform number in [0, 1) that may only be compared once with a constant (a coin)."""
        return self._many(size, lambda: _Pending(self, "random", self._driver.position(), None))

    def geometric(self, p: Any, size: Any = None) -> Any:
        """Trials to the first success; only the difference of two such draws (same p) is traced."""
        p = _plain(p, "geometric(p)")
        if not 0 < p <= 1:
            raise untraceable(f"geometric(p): p = {p!r} is outside (0, 1] (numpy raises)", "prng.geometric")
        return self._many(size, lambda: _Pending(self, "geometric", self._driver.position(), p))


class _Pending(NDArrayOperatorsMixin):
    """A draw whose law only becomes finite in one use: ``random() < p`` or ``geometric(p) - geometric(p)``."""

    __array_priority__ = 2000

    def __init__(self, gen: RecordingGenerator, kind: str, position: int, p: Any) -> None:
        self.gen, self.kind, self.position, self.p, self.used = gen, kind, position, p, False

    def _refuse(self, what: str) -> Any:
        hint = ("compare it once with a constant, as in prng.random() < p, or take its np.log once, as in "
                "-scale * np.log(prng.random())" if self.kind == "random" else
                "subtract two draws with the same p first, as in q + (prng.geometric(p) - prng.geometric(p))")
        raise untraceable(f"prng.{self.kind}() used in {what}: its law has no exact finite form there; {hint}",
                          f"prng.{self.kind}")

    def _take(self, what: str) -> None:
        if self.used:
            self._refuse(f"a second {what}")
        self.used = True

    def _log(self) -> Noisy:
        """``np.log(random())``: ``-E`` for exponential noise ``E`` of scale 1 drawn by inversion."""
        self._take("np.log")
        builder = self.gen._driver.builder
        e = self.gen._node(("exponential", "inversion", 1.0),
                           lambda: builder.continuous("exponential", InversionScale(1.0)), self.position)
        return -e

    def __array_ufunc__(self, uf: np.ufunc, method: str, *inputs: Any, **kwargs: Any) -> Any:
        if self.kind == "random" and uf is np.log and method == "__call__" and len(inputs) == 1 and not kwargs:
            return self._log()
        if method != "__call__" or len(inputs) != 2:
            return self._refuse(f"np.{uf.__name__}")
        a, b = inputs
        if self.kind == "random" and uf in (np.less, np.less_equal, np.greater, np.greater_equal):
            me_left = a is self
            other = scalar(b if me_left else a)
            if isinstance(other, (Sym, _Pending, SymArray, np.ndarray, list, tuple)):
                return self._refuse("a comparison with a symbolic value")
            self._take("comparison")
            op = {np.less: "<", np.less_equal: "<=", np.greater: ">", np.greater_equal: ">="}[uf]
            if not me_left:  # p < u is u > p
                op = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}[op]
            law = noise.bernoulli_law(coin(op, other))
            node = self.gen._node(("draw", law), lambda: self.gen._driver.builder.draw(*law), self.position)
            return NoisyBool(node.id)
        if self.kind == "geometric" and uf is np.subtract and isinstance(a, _Pending) and isinstance(b, _Pending) \
                and b.kind == "geometric" and a.p == self.p == b.p and a is not b:
            a._take("subtraction")
            b._take("subtraction")
            base = 1 - noise.probability(self.p, "geometric(p): p")
            builder = self.gen._driver.builder
            return self.gen._node(("geom", base), lambda: builder.geometric(base), a.position)
        return self._refuse(f"np.{uf.__name__}")

    def __bool__(self) -> bool:
        return self._refuse("a condition")

    def program_value(self) -> Any:
        """Met by another program value (``q + prng.geometric(p)``): refused with the way to write it."""
        return self._refuse("arithmetic")

    def __float__(self) -> float:
        return self._refuse("float()")
