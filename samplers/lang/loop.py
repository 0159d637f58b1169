"""The loop construct ``scan`` and the symbolic trace of one loop iteration (for proofs for every n).

``scan(x, step, state)`` runs ``out, state = step(q, state)`` for every element ``q`` of the
input vector in order and returns ``(outs, state)``: the tuple of the non-None ``out`` and the
final state.  Traced for a concrete input it is exactly the Python ``for`` loop it replaces
(the same operations in the same order, hence the same IR).  With ``indexed=True`` the step
is ``step(i, q, state)`` with ``i`` the element's index (0, 1, ...), as ``enumerate`` gives
it; the input may be a prefix ``x[:k]`` (a constant ``k``, e.g. ``T + 1``).

:func:`trace_loop` traces a mechanism written with ``scan`` once for a *symbolic* iteration:
the input vector is a :class:`SymbolicVector` (no length, no indexing), the size parameter is
poisoned (any use refuses), and ``scan`` traces ``step`` once with fresh leaves for the element
and for every state component (and a fresh integer leaf ``i >= 0`` for the index of an indexed
scan: the proof holds for every index value).  A prefix ``x[:k]`` is recorded as ``stop = k``:
the loop runs over the first ``min(k, n)`` elements, a loop of some length, which the
induction covers; the elements after it are never read.  The result, a :class:`LoopTrace`, splits the nodes into the
prologue (before the loop: it cannot read the input), the body (one iteration over the leaves)
and the epilogue (over fresh leaves standing for the final state).  Why a mechanism cannot be
traced so is a :class:`NotALoop`.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Callable

from samplers.errors import LanguageError
from samplers.lang.builder import Builder
from samplers.lang.ir import FLOAT, INT, Node
from samplers.lang.trace import Sym, lift, tracing

STATE_RANGE = 2**40  # an integer state leaf's placeholder range (overflow checks); nothing is decided by it


class NotALoop(LanguageError):
    """A mechanism that ``--every-n`` cannot trace as one symbolic loop iteration (and why)."""


def scan(xs: Any, step: Callable[..., tuple[Any, tuple]], state: tuple = (), *,
         indexed: bool = False) -> tuple[tuple, tuple]:
    """``out, state = step(q, state)`` (``indexed``: ``step(i, q, state)``) for each ``q`` of ``xs``
    in order; ``(outs, final state)``."""
    if isinstance(xs, SymbolicVector):
        return xs.scan(step, tuple(state), indexed)
    outs = []
    for i, q in enumerate(xs):
        out, state = step(i, q, state) if indexed else step(q, state)
        if out is not None:
            outs.append(out)
    return tuple(outs), state


@dataclass
class LoopTrace:
    """One symbolic iteration of a mechanism's loop (node ids into ``nodes``).

    ``state_in`` / ``state_out``: the state leaves before and the state values after the
    iteration; ``init``: the initial state (prologue nodes or constants); ``out``: the
    iteration's output (None: it outputs nothing); ``final``: leaves for the state after the
    last iteration, read by the epilogue, whose outputs are ``results`` (empty when the
    mechanism returns the iterations' outputs).  Nodes below ``body_start`` are the prologue,
    from ``epilogue_start`` on the epilogue.
    """

    nodes: list[Node]
    element: int
    lo: int
    hi: int
    init: tuple[int, ...]
    state_in: tuple[int, ...]
    state_out: tuple[int, ...]
    out: int | None
    final: tuple[int, ...]
    results: tuple[int, ...]
    body_start: int
    epilogue_start: int
    reduce: tuple[str, Any, int] | None = None  # (argmax / max / min, its ties, its result leaf)
    index: int | None = None  # the index leaf of an indexed scan
    stop: int | None = None  # the loop runs over x[:stop] (None: the whole input)

    @property
    def leaves(self) -> set[int]:
        """Leaves that stand for values, not draws (state before and after the loop, the index)."""
        return (set(self.state_in) | set(self.final) | ({self.reduce[2]} if self.reduce else set())
                | ({self.index} if self.index is not None else set()))


class _Poisoned:
    """The size parameter during a symbolic trace: any use of it refuses."""

    def __init__(self, name: str) -> None:
        self.name = name

    def _refuse(self, *_: Any) -> Any:
        raise NotALoop(f"the mechanism reads the size parameter {self.name} outside the loop's length: "
                       "a proof for every n needs a loop whose iteration does not depend on n")

    __add__ = __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = _refuse
    __floordiv__ = __rfloordiv__ = __mod__ = __lt__ = __le__ = __gt__ = __ge__ = __index__ = __int__ = _refuse
    __float__ = __bool__ = __neg__ = __pos__ = __abs__ = __round__ = __rmod__ = __pow__ = __rpow__ = _refuse
    __divmod__ = __rdivmod__ = __and__ = __rand__ = __or__ = __ror__ = __xor__ = __rxor__ = _refuse
    __lshift__ = __rlshift__ = __rshift__ = __rrshift__ = __ne__ = __str__ = __format__ = _refuse

    def __eq__(self, other: object) -> bool:
        return self._refuse()

    __hash__ = object.__hash__


def poisoned(name: str) -> Any:
    """A stand-in for the size parameter ``name`` that refuses every use (:class:`NotALoop`)."""
    return _Poisoned(name)


class SymbolicVector:
    """The input vector of a symbolic trace: only ``scan`` may read it, once."""

    def __init__(self, builder: Builder, lo: int, hi: int, name: str, stop: int | None = None,
                 record: dict[str, Any] | None = None) -> None:
        self._b, self._lo, self._hi, self._name, self._stop = builder, lo, hi, name, stop
        self._shared = record if record is not None else {}  # the record, shared with prefixes of this vector

    @property
    def record(self) -> dict[str, Any] | None:
        return self._shared.get("loop")

    def _refuse(self, *_: Any) -> Any:
        raise NotALoop(f"{self._name} is not written with the loop construct: it reads the input vector "
                       "outside samplers.lang.scan (a Python loop, an index, len, sum); --every-n needs "
                       "one scan over the whole input or a prefix x[:k]")

    __iter__ = __len__ = __add__ = __radd__ = __mul__ = _refuse

    def __getitem__(self, key: Any) -> "SymbolicVector":
        """A prefix ``x[:k]`` (``k`` a Python int); any other index or slice refuses."""
        if not (isinstance(key, slice) and key.start in (None, 0) and key.step in (None, 1)
                and type(key.stop) is int and self._stop is None):
            return self._refuse()
        return SymbolicVector(self._b, self._lo, self._hi, self._name, key.stop, self._shared)

    def _leaf(self, b: Builder, value: Any, index: int, real: bool = False) -> int:
        """A leaf for a state component whose value (before the iteration) is ``value``; ``real``:
        a real-valued leaf whatever ``value`` is (the step makes the component a float)."""
        if real or isinstance(value, float) or (isinstance(value, Sym) and b.nodes[value.id].kind == FLOAT):
            return b.continuous("laplace", 1.0)  # a real-valued placeholder; LoopTrace.leaves says it is state
        node = b.nodes[lift(value)]
        if node.bottom or node.kind != INT:
            raise NotALoop(f"{self._name}: a loop state component is not a number")
        return b.input(index, -STATE_RANGE, STATE_RANGE)

    def _args(self, b: Builder, state: tuple, indexed: bool, real: set[int]) -> tuple[int, int | None, tuple, tuple]:
        """The element, index and state leaves of one symbolic iteration, and the step's arguments."""
        element = b.input(0, self._lo, self._hi)
        index = b.input(3000, 0, STATE_RANGE) if indexed else None
        state_in = tuple(self._leaf(b, v, 1 + k, k in real) for k, v in enumerate(state))
        args = ((Sym(index),) if indexed else ()) + (Sym(element), tuple(Sym(i) for i in state_in))
        return element, index, state_in, args

    def _real_components(self, step: Callable[..., tuple[Any, tuple]], state: tuple, indexed: bool) -> set[int]:
        """The state components the step makes floats (an integer start such as ``0`` for a noisy
        running sum): their leaves must be real-valued, not z3 integers.  Only traced (one more
        call of the step) when some component starts as an integer."""
        if all(isinstance(v, float) or (isinstance(v, Sym) and self._b.nodes[v.id].kind == FLOAT) for v in state):
            return set()
        probe = copy.deepcopy(self._b)
        with tracing(probe):
            _, new = step(*self._args(probe, state, indexed, set())[3])
            return {k for k, v in enumerate(tuple(new)) if probe.nodes[lift(v, isinstance(v, float))].kind == FLOAT}

    def scan(self, step: Callable[..., tuple[Any, tuple]], state: tuple, indexed: bool) -> tuple[tuple, tuple]:
        if self.record is not None:
            raise NotALoop(f"{self._name} scans its input twice: --every-n needs one loop")
        b = self._b
        init = tuple(lift(v, isinstance(v, float)) for v in state)
        real = self._real_components(step, state, indexed)
        body_start = len(b.nodes)
        element, index, state_in, args = self._args(b, state, indexed, real)
        twin = copy.deepcopy(b)
        out, new = step(*args)
        with tracing(twin):  # a second iteration, traced after the first: the same nodes, or hidden state
            step(*args)
        if twin.nodes != b.nodes:
            raise NotALoop(f"{self._name}: the loop's step is not the same at every iteration (it keeps Python "
                           "state between calls, e.g. an index): --every-n needs a step that is a function "
                           "of its element and state only")
        new = tuple(new)
        if len(new) != len(state):
            raise NotALoop(f"{self._name}: the loop's step returns {len(new)} state values for {len(state)}")
        state_out = tuple(lift(v, b.nodes[s].kind == FLOAT) for v, s in zip(new, state_in))
        out_id = None if out is None else lift(out, isinstance(out, float))
        epilogue_start = len(b.nodes)
        final = tuple(self._leaf(b, Sym(s), 1001 + k) for k, s in enumerate(state_in))
        self._shared["loop"] = dict(init=init, state_in=state_in, state_out=state_out, out=out_id, final=final,
                                    element=element, body_start=body_start, epilogue_start=epilogue_start,
                                    reduce=None, index=index, stop=self._stop)
        return _Outputs(self), tuple(Sym(f) for f in final)


class _Outputs(tuple):
    """The iterations' outputs in a symbolic trace: returned as they are, reduced once by
    ``argmax`` / ``maximum`` / ``minimum`` (the reduction's result is a fresh leaf), or not at all."""

    def __new__(cls, vector: "SymbolicVector") -> "_Outputs":
        out = super().__new__(cls)
        out.vector = vector
        return out

    def __getitem__(self, index: Any) -> Any:
        raise NotALoop(f"{self.vector._name} reads the loop's outputs one by one (an index or a slice): "
                       "--every-n needs them returned whole or reduced by argmax, maximum or minimum")

    def symbolic_reduce(self, op: str, attr: Any) -> Sym:
        rec, b = self.vector.record, self.vector._b
        if rec.get("reduce") is not None or rec["out"] is None:
            raise NotALoop(f"{self.vector._name}: one reduction of the loop's outputs at most")
        kind = b.nodes[rec["out"]].kind
        leaf = b.input(2000, 0, 2**31) if op == "argmax" else b.continuous("laplace", 1.0)
        if op != "argmax" and kind != FLOAT:
            raise NotALoop(f"{self.vector._name}: {op} of integer outputs has no every-n rule")
        rec["reduce"] = (op, attr, leaf)
        return Sym(leaf)


def trace_loop(fn: Callable[..., Any], params: dict[str, Any], size_param: str | None, lo: int, hi: int,
               name: str) -> LoopTrace:
    """The symbolic iteration of ``fn`` (a mechanism's function) with ``params`` (see module doc)."""
    b = Builder()
    b.decide_by_ranges = False  # the state leaves' range is a placeholder, true of no particular n
    xs = SymbolicVector(b, lo, hi, name)
    call = dict(params)
    if size_param is not None:
        call[size_param] = _Poisoned(size_param)
    with tracing(b):
        try:
            result = fn(xs, **call)
        except TypeError as e:
            raise NotALoop(f"{name} cannot be traced for a symbolic iteration: {e}") from None
        rec = xs.record
        if rec is None:
            raise NotALoop(f"{name} is not written with the loop construct (samplers.lang.scan): "
                           "--every-n needs one scan over the whole input")
        if isinstance(result, _Outputs):
            if rec["out"] is None:
                raise NotALoop(f"{name}: the loop outputs nothing and the mechanism returns its outputs")
            results: tuple[int, ...] = ()
        else:
            items = list(result) if isinstance(result, (tuple, list)) else [result]
            reduced = (rec["reduce"] is not None and len(items) == 1 and isinstance(items[0], Sym)
                       and items[0].id == rec["reduce"][2])
            if not reduced and (any(isinstance(v, _Outputs) for v in items) or rec["out"] is not None):
                raise NotALoop(f"{name} returns the loop's outputs together with other values: --every-n "
                               "needs either the iterations' outputs or values computed after the loop")
            results = tuple(lift(v, isinstance(v, float)) for v in items)
    ends = rec["epilogue_start"]
    late = [n for n in b.nodes[ends:] if any(rec["body_start"] <= a < ends for a in n.args)]
    if late or any(rec["body_start"] <= r < ends for r in results):
        raise NotALoop(f"{name}: values computed after the loop read one iteration's values: --every-n "
                       "needs them to read the final state only")
    for i in rec["init"]:
        if i >= rec["body_start"]:
            raise NotALoop(f"{name}: the loop's initial state is computed inside the loop")
    return LoopTrace(nodes=list(b.nodes), lo=lo, hi=hi, results=results, **rec)
