"""numpy's dispatch protocols for symbolic values: which ufuncs and functions trace, and how.

Every ufunc call (``a + b``, ``a > b``, ``np.abs(a)``, ``np.maximum(a, b)``) is applied
element by element (a scalar broadcasts against a 1-D array); each element operation
with a symbolic operand becomes one operation of the mechanism language, and on plain
numbers numpy computes as usual.  The array functions mechanism code uses map to the
language's own operations (``np.argmax`` to ``argmax`` with numpy's lowest-index tie
rule, ``np.max`` to ``maximum``, ``np.clip`` to ``clamp``, ``np.where`` to ``ite``),
so that a traced noisy max is the catalogue's noisy max, not a chain of forks.  Anything
else is refused with the user's line (:class:`~samplers.errors.UntraceableError`).

Results numpy holds as booleans are :class:`~samplers.plain.symbolic.NoisyBool`: those of
comparisons and logical operations, and of operations that keep booleans (``*``, ``&``,
``np.maximum``, ``np.where``, ...) when every operand is one.  Where booleans and numbers
differ, the tracer refuses rather than guess which one the real run holds: ``b1 + b2`` is
a logical or for numpy's booleans and 2 for Python's, ``-b`` and ``b1 - b2`` are errors
in numpy, and ``~`` is a logical not only on a boolean array (numpy's bitwise not on an
integer, -2 for Python's ``~True``).
"""

from __future__ import annotations

import operator
from functools import partial
from itertools import accumulate
from typing import Any, Callable, Sequence

import numpy as np

from samplers.errors import LanguageError
from samplers.lang import trace as lang
from samplers.lang.float64 import is_power_of_two
from samplers.lang.ir import BOTTOM, FLOAT
from samplers.lang.trace import Sym
from samplers.plain.site import located, untraceable
from samplers.plain.symbolic import SymArray, boolean, wrap


EXACT_FLOAT = 2**53  # integers of at most this size are float64 values exactly
EXACT_DTYPES = (np.dtype(np.float64), np.dtype(np.int64), np.dtype(np.bool_))  # the dtypes the tracer computes in
_NOT_EXACT = ("numpy's narrower and unsigned types wrap around or round, and dtype=object makes a copy that "
              "computes as Python does")


def traced_dtype(dtype: Any, what: str) -> np.dtype:
    """numpy's ``dtype`` if it is float64, int64 (intp) or bool; any other is refused (see ``_NOT_EXACT``)."""
    dt = np.dtype(dtype)
    if dt not in EXACT_DTYPES:
        raise untraceable(f"{what}: dtype={dt.name} is not traced, only float64, int64 and bool ({_NOT_EXACT})",
                          what)
    return dt


def _numpy_operand(v: Any, what: str) -> None:
    """Refuse a numpy value of another dtype than the traced ones meeting symbolic values."""
    if isinstance(v, (np.ndarray, np.generic)) and v.dtype != object and v.dtype not in EXACT_DTYPES:
        raise untraceable(f"{what}: a numpy {v.dtype.name} value meets symbolic values; only float64, int64 and "
                          f"bool are traced ({_NOT_EXACT})", what)


def scalar(v: Any) -> Any:
    """A numpy scalar as the Python number it is; everything else unchanged."""
    if isinstance(v, np.generic):
        return v.item()
    return v


def _sym_binary(name: str, a: Any, b: Any) -> Any:
    if isinstance(a, Sym):
        return getattr(Sym, f"__{name}__")(a, b)
    reflected = {"lt": "gt", "le": "ge", "gt": "lt", "ge": "le", "eq": "eq", "ne": "ne"}.get(name, f"r{name}")
    return getattr(Sym, f"__{reflected}__")(b, a)


def _divide(a: Any, b: Any) -> Any:
    if isinstance(b, Sym):
        raise untraceable("division by a symbolic value is not supported", "division")
    b = float(b)
    if not is_power_of_two(b):  # 1/b exact only for powers of two
        raise untraceable(f"a symbolic value divided by {b!r}: only division by a power of two is exact; "
                          "compute the constant factor first (e.g. x * (1 / 3))", "division")
    return _sym_binary("mul", a, 1 / b)


def _floor(name: str) -> Callable[[Any, Any], Any]:
    def op(a: Any, b: Any) -> Any:
        if isinstance(b, Sym):
            raise untraceable(f"{name} by a symbolic value is not supported", name)
        return getattr(Sym, f"__{name}__")(a, b) if isinstance(a, Sym) else getattr(operator, name)(a, b)
    return op


# ufuncs whose result numpy holds as a boolean: always, or when every operand is one
_BOOLEAN = frozenset({np.less, np.less_equal, np.greater, np.greater_equal, np.equal, np.not_equal,
                      np.logical_and, np.logical_or, np.logical_xor, np.logical_not})
_BOOLEAN_IF_ALL = frozenset({np.multiply, np.maximum, np.minimum, np.fmax, np.fmin, np.bitwise_and, np.bitwise_or,
                             np.bitwise_xor, np.absolute})
# ufunc -> (operation on two symbolic-or-plain operands, or one)
_BINARY: dict[Any, Callable[[Any, Any], Any]] = {
    np.add: partial(_sym_binary, "add"),
    np.subtract: partial(_sym_binary, "sub"),
    np.multiply: partial(_sym_binary, "mul"),
    np.true_divide: _divide,
    np.floor_divide: _floor("floordiv"),
    np.remainder: _floor("mod"),
    np.less: partial(_sym_binary, "lt"),
    np.less_equal: partial(_sym_binary, "le"),
    np.greater: partial(_sym_binary, "gt"),
    np.greater_equal: partial(_sym_binary, "ge"),
    np.equal: partial(_sym_binary, "eq"),
    np.not_equal: partial(_sym_binary, "ne"),
    np.maximum: lang.maximum,
    np.minimum: lang.minimum,
    np.fmax: lang.maximum,
    np.fmin: lang.minimum,
    np.logical_and: partial(_sym_binary, "and"),
    np.logical_or: partial(_sym_binary, "or"),
    np.logical_xor: partial(_sym_binary, "xor"),
    np.bitwise_and: partial(_sym_binary, "and"),
    np.bitwise_or: partial(_sym_binary, "or"),
    np.bitwise_xor: partial(_sym_binary, "xor"),
}
_UNARY: dict[Any, Callable[[Any], Any]] = {
    np.negative: Sym.__neg__,
    np.positive: lambda a: a,
    np.absolute: Sym.__abs__,
    np.logical_not: Sym.__invert__,
}


def _elements(v: Any) -> list | None:
    """The elements of an array-like operand, or None for a scalar."""
    if isinstance(v, SymArray):
        return v.items
    if isinstance(v, np.ndarray):
        _numpy_operand(v, "an operation")
        if v.ndim == 0:
            return None
        if v.ndim != 1:
            raise untraceable(f"a {v.ndim}-dimensional array meets symbolic values; only 1-D arrays are traced",
                              "array shape")
        return [scalar(e) for e in v.tolist()] if v.dtype != object else list(v)
    if isinstance(v, (list, tuple)):
        return list(v)
    return None


def elementwise(fn: Callable[..., Any], args: Sequence[Any], what: str) -> Any:
    """``fn`` applied element by element with scalar broadcasting; a scalar if every argument is one."""
    lists = [_elements(a) for a in args]
    sizes = {len(v) for v in lists if v is not None and len(v) != 1}
    if len(sizes) > 1:
        raise untraceable(f"{what}: arrays of lengths {sorted(sizes)} cannot be broadcast together", what)

    def one(vals: Sequence[Any]) -> Any:
        for v in vals:
            _numpy_operand(v, what)
        vals = [scalar(v.item() if isinstance(v, np.ndarray) else v) for v in vals]
        if any(v is None or v is BOTTOM for v in vals):
            raise untraceable(f"{what} of None", what)
        try:
            return wrap(fn(*vals))
        except LanguageError as e:
            raise located(e) from None

    if all(v is None for v in lists):
        return one(args)
    n = sizes.pop() if sizes else 1
    cols = [v if v is not None and len(v) == n else (v * n if v is not None else [a] * n) for v, a in zip(lists, args)]
    return SymArray(one(row) for row in zip(*cols))


def _plain_or(symbolic: Callable[..., Any], plain: Callable[..., Any]) -> Callable[..., Any]:
    """``plain`` on plain numbers (numpy's own result), ``symbolic`` when any operand is symbolic."""
    return lambda *vals: symbolic(*vals) if any(isinstance(v, Sym) for v in vals) else plain(*vals)


def _tagged(uf: Any, op: Callable[..., Any]) -> Callable[..., Any]:
    """``op`` whose symbolic result is a NoisyBool where numpy's result is a boolean (see the module docstring)."""
    if uf not in _BOOLEAN and uf not in _BOOLEAN_IF_ALL:
        return op

    def tagged(*vals: Any) -> Any:
        out = op(*vals)
        if not isinstance(out, Sym):
            return out
        return wrap(Sym(out.id), uf in _BOOLEAN or all(boolean(v) for v in vals))  # a fresh value, tagged anew

    return tagged


def _check_booleans(uf: Any, vals: Sequence[Any]) -> None:
    """Refuse the operations on booleans whose value numpy and Python disagree on (see the module docstring)."""
    if not any(boolean(v) for v in vals) or not any(isinstance(v, Sym) for v in vals):
        return
    if uf in (np.add, np.subtract) and all(boolean(v) for v in vals):
        raise untraceable(f"np.{uf.__name__} of two booleans (comparisons): numpy's booleans give "
                          f"{'a logical or' if uf is np.add else 'an error'}, Python's a number; convert one with "
                          "int(...) or .astype(int) first", f"np.{uf.__name__}")
    if uf in (np.negative, np.positive):
        raise untraceable(f"np.{uf.__name__} of a boolean (a comparison): an error for numpy's booleans, a number "
                          "for Python's; convert it with int(...) first", f"np.{uf.__name__}")


def _invert(a: Any) -> Any:
    """``~a``: a logical not of a boolean array; refused on a single value (numpy's and Python's booleans
    disagree) and on numbers (numpy's bitwise not)."""
    items = _elements(a)
    if items is None or not all(boolean(v) for v in items):
        raise untraceable("~ of a symbolic value is only traced on a boolean array (a logical not); on one value "
                          "~True is False for numpy's booleans but -2 for Python's, and on integers it is a "
                          "bitwise not: write np.logical_not(...) or `not`", "np.invert")
    return elementwise(_plain_or(_tagged(np.logical_not, Sym.__invert__), lambda v: scalar(np.invert(v))), (a,),
                       "np.invert")


def _log(v: Any) -> Any:
    """``np.log`` of one element of an array: numpy's value of a plain number; a draw that traces its own
    ``np.log`` (``prng.random()``: :mod:`samplers.plain.generator`) does so; any other symbolic value is refused."""
    if isinstance(v, Sym) or not hasattr(v, "__array_ufunc__"):
        if isinstance(v, Sym):
            raise untraceable("np.log is not supported on symbolic values (np.log(prng.random()) is: exponential "
                              "noise by inversion)", "np.log")
        return scalar(np.log(v))
    return v.__array_ufunc__(np.log, "__call__", v)


def ufunc(uf: np.ufunc, method: str, inputs: Sequence[Any], kwargs: dict) -> Any:
    """``__array_ufunc__`` of symbolic values."""
    try:
        return _ufunc(uf, method, inputs, kwargs)
    except LanguageError as e:
        raise located(e) from None


def _ufunc(uf: np.ufunc, method: str, inputs: Sequence[Any], kwargs: dict) -> Any:
    if kwargs.get("out") is not None:
        raise untraceable(f"np.{uf.__name__}(..., out=...) on symbolic values is not supported (an in-place "
                          "operator such as += on an array is one); write a = a + b", uf.__name__)
    if method == "__call__":
        if uf is np.invert and len(inputs) == 1:
            return _invert(inputs[0])
        if uf is np.log and len(inputs) == 1 and not isinstance(inputs[0], Sym):
            return elementwise(_log, inputs, "np.log")
        if uf in _BINARY and len(inputs) == 2:
            op = _plain_or(_tagged(uf, _BINARY[uf]), lambda a, b: scalar(uf(a, b)))
            return elementwise(lambda a, b: (_check_booleans(uf, (a, b)), op(a, b))[1], inputs, f"np.{uf.__name__}")
        if uf in _UNARY and len(inputs) == 1:
            op = _plain_or(_tagged(uf, _UNARY[uf]), lambda a: scalar(uf(a)))
            return elementwise(lambda a: (_check_booleans(uf, (a,)), op(a))[1], inputs, f"np.{uf.__name__}")
    if method == "reduce" and uf in (np.add, np.maximum, np.minimum, np.logical_and, np.logical_or):
        return _reduce(uf, inputs[0])
    if method == "accumulate" and uf is np.add:
        return _cumsum(inputs[0])
    call = f"np.{uf.__name__}" + ("" if method == "__call__" else f".{method}")
    raise untraceable(f"{call} is not supported on symbolic values", call)


def _items(a: Any, what: str) -> list:
    items = _elements(a)
    if items is None:
        return [a]
    if not items:
        raise untraceable(f"{what} of an empty array", what)
    return items


def _number(v: Any) -> Any:
    """A boolean as the number numpy's sums make of it (0 or 1); anything else unchanged."""
    if not boolean(v):
        return v
    return wrap(Sym(v.id)) if isinstance(v, Sym) else int(v)


def _reduce(uf: Any, a: Any) -> Any:
    what = f"np.{uf.__name__}.reduce"
    items = _items(a, what)
    if uf in (np.logical_and, np.logical_or):  # np.any / np.all: each value's truth, even a single one's
        items = [wrap(v if v.node.is_bool else Sym.__ne__(v, 0), True) if isinstance(v, Sym) else v for v in items]
    if uf is np.add:  # a sum of booleans counts them
        items = [elementwise(_number, (v,), what) for v in items]
    step = _plain_or(_tagged(uf, _BINARY[uf]), lambda x, y: scalar(uf(x, y)))
    add = partial(_elementwise_step, step, what)
    if uf is np.add and any(_is_float(v) for v in items):
        return wrap(float_sum(items, add))
    acc = items[0]
    for v in items[1:]:
        acc = add(acc, v)
    return wrap(acc)


def _elementwise_step(step: Callable[[Any, Any], Any], what: str, x: Any, y: Any) -> Any:
    return elementwise(step, (x, y), what)


def _is_float(v: Any) -> bool:
    v = scalar(v)
    return isinstance(v, float) or (isinstance(v, Sym) and v.node.kind == FLOAT)


def float_sum(items: Sequence[Any], add: Callable[[Any, Any], Any]) -> Any:
    """A float64 sum in numpy's order, which rounding makes matter: its pairwise summation (below
    8 values one by one, up to 128 in 8 accumulators, above that by halves a multiple of 8 long),
    added to the reduction's identity 0.0 (so a sum of -0.0 is 0.0, as numpy's is)."""
    def pairwise(xs: Sequence[Any]) -> Any:
        n = len(xs)
        if n < 8:
            acc = xs[0]
            for v in xs[1:]:
                acc = add(acc, v)
            return acc
        if n <= 128:
            r = list(xs[:8])
            i = 8
            while i < n - n % 8:
                r = [add(r[j], xs[i + j]) for j in range(8)]
                i += 8
            acc = add(add(add(r[0], r[1]), add(r[2], r[3])), add(add(r[4], r[5]), add(r[6], r[7])))
            for v in xs[i:]:
                acc = add(acc, v)
            return acc
        half = n // 2
        half -= half % 8
        return add(pairwise(xs[:half]), pairwise(xs[half:]))

    return add(0.0, pairwise(items))


def _mean(a: Any, axis: Any = None, **kw: Any) -> Any:
    """numpy's mean: the float64 sum (:func:`float_sum`) divided by the count."""
    _no_axis("mean", {"axis": axis})
    items = [cast(v, np.float64, "np.mean") for v in _items(a, "np.mean")]
    total, n = scalar(_reduce(np.add, items)), len(items)
    if not isinstance(total, Sym):
        return scalar(np.float64(total) / n)
    if n & (n - 1):
        raise untraceable(f"np.mean divides the float64 sum by n = {n}, a division float64 rounds; the tracer "
                          "follows only divisions by powers of two: use a power-of-two size, or write "
                          f"np.sum(q) * (1 / {n}) (multiplying by the rounded constant: a slightly different "
                          "function)", "np.mean")
    return wrap(_divide(total, n))


def _cumsum(a: Any) -> SymArray:
    add = _plain_or(_BINARY[np.add], operator.add)
    items = [elementwise(_number, (v,), "np.cumsum") for v in _items(a, "np.cumsum")]
    return SymArray(accumulate(items, lambda x, y: elementwise(add, (x, y), "np.cumsum")))


def _no_axis(name: str, kwargs: dict) -> None:
    if kwargs.get("axis") is not None:
        raise untraceable(f"np.{name}(..., axis=...) is not supported (traced arrays are 1-D)", f"np.{name}")


def _argmax(a: Any, axis: Any = None, **kw: Any) -> Any:
    _no_axis("argmax", {"axis": axis})
    items = _items(a, "np.argmax")
    if not any(isinstance(v, Sym) for v in items):
        return int(np.argmax([scalar(v) for v in items]))
    return wrap(lang.argmax(items, ties="first"))


def _argmin(a: Any, axis: Any = None, **kw: Any) -> Any:
    _no_axis("argmin", {"axis": axis})
    return _argmax(elementwise(_plain_or(_UNARY[np.negative], operator.neg), (a,), "np.argmin"))


def _clip(a: Any, a_min: Any = None, a_max: Any = None, **kw: Any) -> Any:
    lo, hi = scalar(a_min), scalar(a_max)
    if isinstance(lo, Sym) or isinstance(hi, Sym) or _elements(lo) is not None or _elements(hi) is not None:
        raise untraceable("np.clip bounds must be plain numbers", "np.clip")

    def clip(v: Any) -> Any:
        if isinstance(v, Sym) and boolean(v):
            raise untraceable("np.clip of booleans (comparisons) is not supported; convert them with "
                              ".astype(int) first", "np.clip")
        if not isinstance(v, Sym):
            return scalar(np.clip(v, lo, hi))
        if lo is not None and hi is not None:
            return lang.clamp(v, lo, hi)
        return lang.maximum(v, lo) if lo is not None else lang.minimum(v, hi)

    return elementwise(clip, (a,), "np.clip")


def _where(cond: Any, *rest: Any) -> Any:
    if len(rest) != 2:
        raise untraceable("np.where(cond) without values (the positions) is not supported; "
                          "write np.where(cond, a, b)", "np.where")

    def where(c: Any, a: Any, b: Any) -> Any:
        if not isinstance(c, Sym):
            return a if c else b
        return wrap(lang.ite(c, a, b), boolean(a) and boolean(b))

    return elementwise(where, (cond, *rest), "np.where")


def _fold(name: str, uf: Any) -> Callable[..., Any]:
    def fn(a: Any, axis: Any = None, **kw: Any) -> Any:
        _no_axis(name, {"axis": axis})
        return _reduce(uf, a)
    return fn


def _count_nonzero(a: Any, axis: Any = None, **kw: Any) -> Any:
    _no_axis("count_nonzero", {"axis": axis})
    ne = elementwise(_plain_or(_BINARY[np.not_equal], operator.ne), (a, 0), "np.count_nonzero")
    return _reduce(np.add, elementwise(lambda v: v if isinstance(v, Sym) else int(v), (ne,), "np.count_nonzero"))


def _concatenate(arrays: Sequence[Any], axis: Any = 0, **kw: Any) -> SymArray:
    if axis not in (0, None):
        raise untraceable("np.concatenate(..., axis=...) is not supported (traced arrays are 1-D)", "np.concatenate")
    return SymArray(v for a in arrays for v in _items(a, "np.concatenate"))


def _len(a: Any) -> int:
    return len(_items(a, "np.size"))


FUNCTIONS: dict[Any, Callable[..., Any]] = {
    np.argmax: _argmax, np.argmin: _argmin,
    np.max: _fold("max", np.maximum), np.amax: _fold("amax", np.maximum),
    np.min: _fold("min", np.minimum), np.amin: _fold("amin", np.minimum),
    np.sum: _fold("sum", np.add), np.mean: _mean, np.any: _fold("any", np.logical_or), np.all: _fold("all", np.logical_and),
    np.cumsum: lambda a, axis=None, **kw: (_no_axis("cumsum", {"axis": axis}), _cumsum(a))[1],
    np.clip: _clip, np.where: _where, np.count_nonzero: _count_nonzero,
    np.concatenate: _concatenate, np.hstack: lambda arrays, **kw: _concatenate(arrays),
    np.append: lambda a, v, axis=None: _concatenate((a, v)),
    np.copy: lambda a, **kw: a.copy() if isinstance(a, SymArray) else SymArray(_items(a, "np.copy")), np.size: _len,
    np.shape: lambda a: () if _elements(a) is None else (_len(a),), np.ndim: lambda a: int(_elements(a) is not None),
    np.abs: lambda a: ufunc(np.absolute, "__call__", (a,), {}),
}


_KEYWORDS = frozenset({"axis", "a_min", "a_max"})  # the keyword arguments the handlers read


def function(func: Any, args: Sequence[Any], kwargs: dict) -> Any:
    """``__array_function__`` of symbolic values."""
    handler = FUNCTIONS.get(func)
    name = f"np.{getattr(func, '__name__', func)}"
    if handler is None:
        raise untraceable(f"{name} is not supported on symbolic values (the tracer knows "
                          f"{', '.join(sorted('np.' + f.__name__ for f in FUNCTIONS))})", name)
    extra = sorted(set(kwargs) - _KEYWORDS)
    if extra:
        raise untraceable(f"{name}(..., {extra[0]}=...) is not supported on symbolic values", name)
    try:
        return handler(*args, **kwargs)
    except LanguageError as e:
        raise located(e) from None


def cast(v: Any, dtype: Any, what: str) -> Any:
    """One value converted to ``dtype`` where that is exact (refused where numpy would change it):
    float64 of integers within +-2^53 (the same numbers), int64 of integers in its range,
    bool of 0/1 values; other dtypes are refused (:func:`traced_dtype`).  ``what`` names the
    conversion in the error."""
    dt = traced_dtype(dtype, what)
    if not isinstance(v, Sym):
        return scalar(np.asarray(v).astype(dt)[()])
    node = v.node
    if dt == np.dtype(np.float64) and node.kind == FLOAT:
        return wrap(Sym(v.id))
    if dt == np.dtype(np.float64) and max(abs(node.lo), abs(node.hi)) <= EXACT_FLOAT and not node.bottom:
        return wrap(Sym(v.id) * 1.0)  # a float64 value: its later arithmetic rounds as numpy's does
    if dt.kind == "i" and node.kind != FLOAT and np.iinfo(dt).min <= node.lo and node.hi <= np.iinfo(dt).max:
        return wrap(Sym(v.id))
    if dt.kind == "b" and node.is_bool:
        return wrap(v, True)
    raise untraceable(f"{what} of symbolic values is not exact (values {node.lo}..{node.hi}"
                      f"{', real numbers' if node.kind == FLOAT else ''})", what)


def astype(a: SymArray, dtype: Any) -> SymArray:
    """``.astype``: a copy whose values :func:`cast` converts."""
    what = f"astype({np.dtype(dtype).name})"
    dt = traced_dtype(dtype, what)
    return SymArray((cast(v, dt, what) for v in a.items), dt)


__all__ = ["FUNCTIONS", "astype", "cast", "elementwise", "function", "scalar", "traced_dtype", "ufunc"]
