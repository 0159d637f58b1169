"""Does the symbolic iteration compute what the mechanism's concrete traces compute?

An every-n proof is about the loop traced once for a symbolic iteration
(:func:`samplers.lang.loop.trace_loop`); the mechanism the user runs is its Python function,
traced at each size.  The two agree when the step is a function of its element and state
only, which the language cannot enforce: a step may count its calls in a closure, or look at
the type of the state (a plain int before the first iteration, an IR value after it).  So the
loop is run here, prologue, n iterations and epilogue, beside the concrete program at sizes
1 .. :data:`SIZES` (and, for a loop over a prefix ``x[:k]``, at size ``k``: a mechanism such as
SmartSum is defined only for ``n > T``, and at every larger size it runs the same ``k``
iterations, its other elements unread), on random inputs and one shared sequence of random draws (the k-th draw
of either gets the same value when its law is the same), and every output is compared.  A
disagreement refuses the proof.  A step whose Python code changes only after more calls
than that is not caught: the documented contract is that the step is pure.
"""

from __future__ import annotations

import functools
import random
from fractions import Fraction
from typing import Any, Callable

from samplers.errors import DPHybridError
from samplers.lang.builder import draws_randomness
from samplers.lang.ir import CONTINUOUS_NOISE, Node, evaluate, tied_maxima
from samplers.lang.loop import LoopTrace

SIZES = 6  # concrete sizes 1 .. SIZES
RUNS = 12  # random inputs (and draws) per size


def _draw(rng: random.Random, n: Node, vals: list[Any]) -> Any:
    """A value of draw ``n``: any value of its support will do, both runs get the same one."""
    if n.op == "argmax":  # a uniform tie-break among the maxima
        ties = tied_maxima(vals)
        return ties[rng.randrange(len(ties))]
    if n.op in CONTINUOUS_NOISE:
        v = Fraction(rng.randint(-4000, 4000), 97)
        return abs(v) if n.op == "exponential" else v
    return rng.randint(int(max(n.lo, -50)), int(min(n.hi, 50))) if n.lo <= n.hi else 0


class _Draws:
    """The k-th draw's value from a generator seeded by (seed, k) and the draw's law."""

    def __init__(self, seed: int) -> None:
        self.seed, self.k = seed, 0

    def __call__(self, n: Node, vals: list[Any]) -> Any:
        self.k += 1
        return _draw(random.Random(f"{self.seed}:{self.k}:{n.op}:{n.attr!r}"), n, vals)  # str seeds: sha512, same in every process


def _run(nodes: list[Node], start: int, stop: int, env: dict[int, Any], draws: _Draws,
         inputs: Callable[[int, Node], Any], live: set[int] | None = None) -> None:
    for i in range(start, stop):
        if i in env or (live is not None and i not in live):
            continue
        n = nodes[i]
        vals = [env.get(a) if live is not None else env[a] for a in n.args]  # None: an ite's branch not taken
        if draws_randomness(n.op, n.attr):
            env[i] = draws(n, vals)
        elif n.op == "input":
            env[i] = inputs(i, n)
        else:
            env[i] = evaluate(n.op, n.attr, vals)


def _index_only(lt: LoopTrace) -> set[int]:
    """The nodes computed from constants and the index alone (constants in a concrete trace)."""
    fixed = {i for i, n in enumerate(lt.nodes) if n.op == "const"} | ({lt.index} if lt.index is not None else set())
    for i in range(lt.body_start, lt.epilogue_start):
        n = lt.nodes[i]
        if n.args and all(a in fixed for a in n.args) and not draws_randomness(n.op, n.attr) and n.op != "input":
            fixed.add(i)
    return fixed


def _live(lt: LoopTrace, env: dict[int, Any], fixed: set[int]) -> set[int]:
    """The body nodes one iteration reads: an ``ite`` whose condition is an index-only value follows
    its taken branch only, as the concrete trace does (it folds the ``ite`` and drops the other
    branch, draws included, so those draws take no value from the shared sequence)."""
    live: set[int] = set()
    todo = [i for i in (lt.out, *lt.state_out) if i is not None]
    while todo:
        i = todo.pop()
        if i in live:
            continue
        live.add(i)
        n = lt.nodes[i]
        if n.op == "ite" and n.args[0] in fixed:
            todo += [n.args[0], n.args[1] if env[n.args[0]] else n.args[2]]
        else:
            todo += n.args
    return live


def _loop_outputs(lt: LoopTrace, x: list[int], draws: _Draws) -> tuple:
    env: dict[int, Any] = {}
    leaves = lt.leaves | {lt.element}
    for i in leaves:
        env[i] = None  # placeholders, set before they are read
    _run(lt.nodes, 0, lt.body_start, env, draws, _no_input)
    state = [env[i] for i in lt.init]
    fixed = _index_only(lt)
    outs = []
    for k, q in enumerate(x[:lt.stop]):
        body = {i: v for i, v in env.items() if i < lt.body_start}
        body[lt.element] = q
        if lt.index is not None:
            body[lt.index] = k
        body.update(zip(lt.state_in, state))
        _run(lt.nodes, lt.body_start, lt.epilogue_start, body, draws, _no_input, fixed)
        _run(lt.nodes, lt.body_start, lt.epilogue_start, body, draws, _no_input, _live(lt, body, fixed))
        state = [body[s] for s in lt.state_out]
        if lt.out is not None:
            outs.append(body[lt.out])
    if lt.reduce is None and not lt.results:
        return tuple(outs)
    env.update(zip(lt.final, state))
    if lt.reduce is not None:
        op, attr, leaf = lt.reduce
        if op == "argmax":
            env[leaf] = draws(Node(op, (), attr, 0, 0), outs) if attr == "uniform" else evaluate(op, attr, outs)
        else:  # max / min of the outputs: the left fold samplers.lang.trace builds
            env[leaf] = functools.reduce(lambda a, v: evaluate(op, attr, [a, v]), outs)
    _run(lt.nodes, lt.epilogue_start, len(lt.nodes), env, draws, _no_input)
    return tuple(env[r] for r in lt.results)


def _no_input(i: int, n: Node) -> Any:
    raise AssertionError(f"node %{i} reads input {n.attr} outside the loop")


def _concrete_outputs(nodes: list[Node], outputs: tuple[int, ...], x: list[int], draws: _Draws) -> tuple:
    env: dict[int, Any] = {}
    _run(nodes, 0, len(nodes), env, draws, lambda i, n: x[n.attr])
    return tuple(env[o] for o in outputs)


def disagreement(lt: LoopTrace, trace_at: Callable[[int], Any], seed: int = 0) -> str | None:
    """Where the loop and the concrete program at some size differ (a sentence), else None.

    ``trace_at(k)``: the concrete program at size k (None: no program at that size)."""
    rng = random.Random(seed)
    checked = 0
    sizes = list(range(1, SIZES + 1))
    if lt.stop is not None and lt.stop > SIZES:
        sizes.append(lt.stop)
    for k in sizes:
        try:
            prog = trace_at(k)
        except DPHybridError:
            continue
        if prog is None:
            continue
        checked += 1
        for r in range(RUNS):
            x = [rng.randint(lt.lo, lt.hi) for _ in range(k)]
            run_seed = rng.getrandbits(64)
            want = _concrete_outputs(list(prog.nodes), tuple(prog.outputs), x, _Draws(run_seed))
            got = _loop_outputs(lt, x, _Draws(run_seed))
            if want != got:
                return (f"the loop traced for a symbolic iteration computes {_short(got)} where the mechanism "
                        f"traced at n = {k} computes {_short(want)} (input {x}): its step is not a function of its "
                        "element and state alone (Python state between calls, or a test of the state's type)")
    return None if checked else f"the mechanism could not be traced at any size {', '.join(map(str, sizes))}"


def _short(v: tuple) -> str:
    text = repr(tuple(float(e) if isinstance(e, Fraction) else e for e in v))
    return text if len(text) <= 80 else text[:77] + "..."

