"""Random small programs of the mechanism language, and their exact law by brute force.

This module is the independent reference of ``test_random_programs.py``.  A program is
this module's own tiny AST (nested tuples, described below); :class:`Reference` computes
its output distribution with ``fractions.Fraction`` by brute force over every noise
outcome and every uniform tie-break choice, from the semantics written in DESIGN.md and
the docstrings of ``samplers/lang/trace.py``, without any engine code: nothing from
``verifiers`` and, from ``samplers``, only the language surface that :func:`build` uses to
write the same program for the engine (``mechanism``, ``ints``, the noise primitives,
``ite``/``minimum``/``maximum``/``clamp``/``argmax`` and ``BOTTOM``).

Semantics the reference implements (one line each, so a reviewer can check them):

* every *evaluation* of a random call (``flip``, ``categorical``, ``uniform``,
  ``discrete_laplace``, ``two_sided_geometric``, ``argmax(..., ties="uniform")``) is an
  independent draw; a value bound to a variable is drawn once and shared by its uses;
* both branches of ``ite`` are evaluated (their draws happen and are ignored);
* ``flip(p)`` is 1 w.p. p; ``categorical(w)`` is k w.p. w[k]/sum(w); ``uniform(lo, hi)``
  is uniform on lo..hi; ``discrete_laplace(a, b)`` has P(z) proportional to a^|z| on
  -b..b; ``two_sided_geometric(a)`` has P(z) = (1-a)/(1+a) a^|z| on all integers;
* ``argmax`` returns the lowest index of a maximum (``ties="first"``) or a uniformly
  random one of the maxima (``ties="uniform"``);
* ``//`` and ``%`` are Python's floor division and modulo; comparisons and logic give
  0/1; ``xor`` of 0/1 values is their inequality;
* ``BOTTOM`` (⊥, here :data:`BOT`) equals only itself under ``==``/``!=``.

The AST: an expression is a tuple ``(op, *fields)``: leaves ``("x", i)`` (input),
``("c", k)``, ``("bot",)``, ``("v", k)`` (statement k's value); noise ``("flip", p)``,
``("cat", weights)``, ``("unif", lo, hi)``, ``("dlap", a, bound)``, ``("tgeom", z, e,
sign, lo, hi, K)`` (``clamp(e + Z, lo, hi)``, or ``clamp(Z - e, ...)`` for sign -1, or
``clamp(Z, ...)`` for e None; z is ``("geom", a)``, a fresh draw, or ``("v", k)`` with
statement k a ``("geom", a)``); ``add sub mul min max and or xor`` (two operands),
``neg abs not``, ``("clamp", e, lo, hi)``, ``("div"|"mod", e, d)``, ``("cmp", lt|le|gt|
ge|eq|ne, e, e)``, ``("ite", c, a, b)`` and ``("argmax", "first"|"uniform", (e, ...))``.

An unbounded geometric Z only enters a program through ``clamp(e + Z, lo, hi)`` (or
``clamp(Z - e, lo, hi)``, ``clamp(Z, lo, hi)``).  The reference folds Z onto
``[-K, K]`` (P(Z >= K) = P(Z <= -K) = a^K/(1+a)) with K so large that every such clamp
is constant beyond it (K >= max(|lo|, |hi|) + max |e| + 1): this changes no output.
"""

from __future__ import annotations

import itertools
import random
from collections import defaultdict
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Callable, Iterator, Sequence

from samplers.lang import (
    BOTTOM,
    AllDiffer,
    OneDiffer,
    argmax,
    categorical,
    clamp,
    discrete_laplace,
    flip,
    ints,
    ite,
    maximum,
    mechanism,
    minimum,
    replace_one,
    two_sided_geometric,
    uniform,
)

BOT = "⊥"  # the reference's bottom: a value no program integer can equal

Expr = tuple  # ("op", *fields); see the module docstring
Law = dict[Any, Fraction]

@dataclass(frozen=True)
class Prog:
    """A random program: domain, neighbour relation, statements ``v0 = ...`` and outputs."""

    name: str
    lo: tuple[int, ...]
    hi: tuple[int, ...]
    neighbours: tuple[str, int]  # ("replace_one" | "one_differ" | "all_differ", sensitivity)
    stmts: tuple[Expr, ...]
    outputs: tuple[Expr, ...]
    tuple_output: bool

    def points(self) -> list[tuple[int, ...]]:
        return list(itertools.product(*(range(a, b + 1) for a, b in zip(self.lo, self.hi))))

    def source(self) -> str:
        """The program as the mechanism-language Python a user would write."""
        return render(self)


# -- the reference semantics ----------------------------------------------------------
def _geom_law(a: Fraction, k: int) -> Law:
    """Two-sided geometric folded onto [-k, k] (tails on the end points)."""
    a = Fraction(a)
    law = {z: (1 - a) / (1 + a) * a ** abs(z) for z in range(-k + 1, k)}
    law[k] = law[-k] = a**k / (1 + a)
    return {z: p for z, p in law.items() if p}


def _normalised(weights: dict[int, Fraction]) -> Law:
    total = sum(weights.values())
    return {v: w / total for v, w in weights.items() if w}


def _product(laws: Sequence[Law]) -> Iterator[tuple[tuple, Fraction]]:
    """Every joint outcome of independent laws, with its probability."""
    for combo in itertools.product(*(list(law.items()) for law in laws)):
        p = Fraction(1)
        for _, q in combo:
            p *= q
        yield tuple(v for v, _ in combo), p


def _lift(laws: Sequence[Law], f: Callable[..., Any]) -> Law:
    out: Law = defaultdict(Fraction)
    for vals, p in _product(laws):
        out[f(*vals)] += p
    return dict(out)


_CMP = {
    "lt": lambda a, b: a < b, "le": lambda a, b: a <= b, "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b, "eq": lambda a, b: a == b, "ne": lambda a, b: a != b,
}
_PURE = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
    "neg": lambda a: -a, "abs": abs, "min": min, "max": max,
    "and": lambda a, b: int(a == 1 and b == 1), "or": lambda a, b: int(a == 1 or b == 1),
    "xor": lambda a, b: int(a != b), "not": lambda a: 1 - a,
    "ite": lambda c, a, b: a if c == 1 else b,
}


def _clamp(v: int, lo: int, hi: int) -> int:
    return min(max(v, lo), hi)


def _argmax_law(ties: str, laws: Sequence[Law]) -> Law:
    out: Law = defaultdict(Fraction)
    for vals, p in _product(laws):
        top = max(vals)
        tied = [i for i, v in enumerate(vals) if v == top]
        if ties == "first":
            out[tied[0]] += p
        else:
            for i in tied:
                out[i] += p / len(tied)
    return dict(out)


class Reference:
    """The exact output law of a :class:`Prog` on each input, by brute force."""

    def __init__(self, prog: Prog) -> None:
        self.prog = prog
        self.geom_k = _geometric_windows(prog)

    def law(self, e: Expr, x: Sequence[int], env: tuple) -> Law:
        """The law of one evaluation of ``e`` (its random calls drawn afresh)."""
        op = e[0]
        if op == "x":
            return {x[e[1]]: Fraction(1)}
        if op == "c":
            return {e[1]: Fraction(1)}
        if op == "bot":
            return {BOT: Fraction(1)}
        if op == "v":
            return {env[e[1]]: Fraction(1)}
        if op == "flip":
            p = Fraction(e[1])
            return {v: w for v, w in ((0, 1 - p), (1, p)) if w}
        if op == "cat":
            return _normalised({k: Fraction(w) for k, w in enumerate(e[1])})
        if op == "unif":
            return {v: Fraction(1, e[2] - e[1] + 1) for v in range(e[1], e[2] + 1)}
        if op == "dlap":
            a = Fraction(e[1])
            return _normalised({z: a ** abs(z) for z in range(-e[2], e[2] + 1)})
        if op == "tgeom":
            _, z, off, sign, lo, hi, k = e
            zlaw = _geom_law(z[1], k) if z[0] == "geom" else self.law(z, x, env)
            olaw = {0: Fraction(1)} if off is None else self.law(off, x, env)
            if sign > 0:
                return _lift([zlaw, olaw], lambda zv, ov: _clamp(ov + zv, lo, hi))
            return _lift([zlaw, olaw], lambda zv, ov: _clamp(zv - ov, lo, hi))
        if op in ("clamp", "div", "mod"):
            sub = self.law(e[1], x, env)
            f = {
                "clamp": lambda v: _clamp(v, e[2], e[3]),
                "div": lambda v: v // e[2],
                "mod": lambda v: v % e[2],
            }[op]
            return _lift([sub], f)
        if op == "cmp":
            return _lift([self.law(e[2], x, env), self.law(e[3], x, env)], lambda a, b: int(_CMP[e[1]](a, b)))
        if op == "argmax":
            return _argmax_law(e[1], [self.law(s, x, env) for s in e[2]])
        return _lift([self.law(s, x, env) for s in e[1:]], _PURE[op])

    def statement_law(self, k: int, x: Sequence[int], env: tuple) -> Law:
        st = self.prog.stmts[k]
        if st[0] == "geom":
            return _geom_law(st[1], self.geom_k.get(k, 1))
        return self.law(st, x, env)

    def distribution(self, x: Sequence[int]) -> Law:
        """``P(o | x)`` for every output of positive probability."""
        states: Law = {(): Fraction(1)}
        for k in range(len(self.prog.stmts)):
            new: Law = defaultdict(Fraction)
            for env, p in states.items():
                for v, q in self.statement_law(k, x, env).items():
                    new[env + (v,)] += p * q
            states = new
        out: Law = defaultdict(Fraction)
        for env, p in states.items():
            for vals, q in _product([self.law(o, x, env) for o in self.prog.outputs]):
                out[vals if self.prog.tuple_output else vals[0]] += p * q
        return {o: p for o, p in out.items() if p}


def walk(e: Any) -> Iterator[tuple]:
    """Every sub-expression of ``e`` (an expression or a tuple of them)."""
    if isinstance(e, tuple) and e and isinstance(e[0], str):
        yield e
        for f in e[1:]:
            yield from walk(f)
    elif isinstance(e, tuple):
        for f in e:
            yield from walk(f)


def _geometric_windows(prog: Prog) -> dict[int, int]:
    """For each geometric statement, the largest fold point K its clamps need."""
    ks: dict[int, int] = {}
    for e in walk(prog.stmts + prog.outputs):
        if e[0] == "tgeom" and e[1][0] == "v":
            ks[e[1][1]] = max(ks.get(e[1][1], 1), e[6])
    return ks


def neighbours(prog: Prog, x: Sequence[int], xp: Sequence[int]) -> bool:
    """The declared neighbour relation, from its definition in DESIGN.md."""
    kind, s = prog.neighbours
    diffs = [abs(a - b) for a, b in zip(x, xp)]
    if kind == "replace_one":
        return sum(d > 0 for d in diffs) == 1
    if kind == "one_differ":
        return sum(d > 0 for d in diffs) == 1 and max(diffs) <= s
    return any(diffs) and max(diffs) <= s


def pair_ratio(p: Law, q: Law) -> Fraction | float:
    """max over outputs of p(o)/q(o) (``inf`` when q misses an output of p)."""
    best: Fraction | float = Fraction(0)
    for o, v in p.items():
        w = q.get(o, Fraction(0))
        best = max(best, float("inf") if w == 0 else v / w)
    return best


# -- building the same program for the engine ------------------------------------------
_NEIGHBOURS = {"replace_one": lambda s: replace_one, "one_differ": OneDiffer, "all_differ": AllDiffer}


def _emit(e: Expr, x: Sequence[Any], env: list[Any]) -> Any:
    op = e[0]
    if op == "x":
        return x[e[1]]
    if op == "c":
        return e[1]
    if op == "bot":
        return BOTTOM
    if op == "v":
        return env[e[1]]
    if op == "flip":
        return flip(e[1])
    if op == "cat":
        return categorical(list(e[1]))
    if op == "unif":
        return uniform(e[1], e[2])
    if op == "dlap":
        return discrete_laplace(e[1], e[2])
    if op == "geom":
        return two_sided_geometric(e[1])
    if op == "tgeom":
        _, z, off, sign, lo, hi, _k = e
        zv = _emit(z, x, env)
        if off is None:
            return clamp(zv, lo, hi)
        ov = _emit(off, x, env)
        return clamp(ov + zv if sign > 0 else zv - ov, lo, hi)
    if op in ("clamp", "div", "mod"):
        a = _emit(e[1], x, env)
        return clamp(a, e[2], e[3]) if op == "clamp" else (a // e[2] if op == "div" else a % e[2])
    if op == "cmp":
        a, b = _emit(e[2], x, env), _emit(e[3], x, env)
        return _CMP[e[1]](a, b)
    if op == "argmax":
        return argmax([_emit(s, x, env) for s in e[2]], ties=e[1])
    args = [_emit(s, x, env) for s in e[1:]]
    if op == "add":
        return args[0] + args[1]
    if op == "sub":
        return args[0] - args[1]
    if op == "mul":
        return args[0] * args[1]
    if op == "neg":
        return -args[0]
    if op == "abs":
        return abs(args[0])
    if op == "min":
        return minimum(args[0], args[1])
    if op == "max":
        return maximum(args[0], args[1])
    if op == "and":
        return args[0] & args[1]
    if op == "or":
        return args[0] | args[1]
    if op == "xor":
        return args[0] ^ args[1]
    if op == "not":
        return 1 - args[0] if isinstance(args[0], int) else ~args[0]
    if op == "ite":
        return ite(*args)
    raise ValueError(f"unknown op {op!r}")


def build(prog: Prog) -> Any:
    """The engine's mechanism for ``prog``, written with the language's surface only."""

    def fn(x):  # noqa: ANN001 - a mechanism body
        env: list[Any] = []
        for st in prog.stmts:
            env.append(_emit(st, x, env))
        outs = [_emit(o, x, env) for o in prog.outputs]
        return tuple(outs) if prog.tuple_output else outs[0]

    kind, s = prog.neighbours
    return mechanism(
        domain=ints(lo=list(prog.lo), hi=list(prog.hi), size=len(prog.lo)),
        neighbours=_NEIGHBOURS[kind](s),
        name=prog.name,
    )(fn)


# -- rendering (for failure messages and reports) ---------------------------------------
def _q(p: Any) -> str:
    return repr(p) if isinstance(p, float) else f'"{p}"'


def show(e: Any) -> str:
    """One expression as mechanism-language Python."""
    op = e[0]
    simple = {
        "x": lambda: f"x[{e[1]}]", "c": lambda: str(e[1]), "bot": lambda: "BOTTOM", "v": lambda: f"v{e[1]}",
        "flip": lambda: f"flip({_q(e[1])})",
        "cat": lambda: f"categorical([{', '.join(_q(w) for w in e[1])}])",
        "unif": lambda: f"uniform({e[1]}, {e[2]})",
        "dlap": lambda: f"discrete_laplace({_q(e[1])}, {e[2]})",
        "geom": lambda: f"two_sided_geometric({_q(e[1])})",
    }
    if op in simple:
        return simple[op]()
    if op == "tgeom":
        _, z, off, sign, lo, hi, _k = e
        zs = show(z)
        inner = zs if off is None else (f"{show(off)} + {zs}" if sign > 0 else f"{zs} - ({show(off)})")
        return f"clamp({inner}, {lo}, {hi})"
    infix = {"add": "+", "sub": "-", "mul": "*", "and": "&", "or": "|", "xor": "^"}
    if op in infix:
        return f"({show(e[1])} {infix[op]} {show(e[2])})"
    if op == "cmp":
        sym = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}[e[1]]
        return f"({show(e[2])} {sym} {show(e[3])})"
    if op in ("div", "mod"):
        return f"({show(e[1])} {'//' if op == 'div' else '%'} {e[2]})"
    if op == "clamp":
        return f"clamp({show(e[1])}, {e[2]}, {e[3]})"
    if op == "argmax":
        return f"argmax([{', '.join(show(s) for s in e[2])}], ties={e[1]!r})"
    names = {"neg": "-", "abs": "abs", "min": "minimum", "max": "maximum", "not": "~", "ite": "ite"}
    return f"{names[op]}({', '.join(show(s) for s in e[1:])})"


def render(prog: Prog) -> str:
    kind, s = prog.neighbours
    nb = kind if kind == "replace_one" or s == 1 else f"{kind}(sensitivity={s})"
    his = prog.hi[0] if len(set(prog.hi)) == 1 else list(prog.hi)
    los = prog.lo[0] if len(set(prog.lo)) == 1 else list(prog.lo)
    lines = [f"@mechanism(domain=ints(lo={los}, hi={his}, size={len(prog.lo)}), neighbours={nb})",
             f"def {prog.name}(x):"]
    lines += [f"    v{k} = {show(st)}" for k, st in enumerate(prog.stmts)]
    outs = ", ".join(show(o) for o in prog.outputs)
    if prog.tuple_output:
        outs = f"({outs}{',' if len(prog.outputs) == 1 else ''})"
    lines.append(f"    return {outs}")
    return "\n".join(lines)


# -- the generator ----------------------------------------------------------------------
PROBS = ["1/2", "1/3", "1/4", "2/3", "3/4", "1/5", 0.3]
BASES = ["1/2", "1/3", "2/3", "1/4", 0]
MAX_OUTCOMES = 600  # joint noise outcomes per program (before tie-breaks): brute force stays instant
MAX_RANGE = 6  # integer values stay in [-MAX_RANGE, MAX_RANGE]


class Generator:
    """Draws one random :class:`Prog` from a seed (see :func:`random_program`)."""

    def __init__(self, seed: int) -> None:
        self.r = random.Random(seed)
        self.seed = seed
        self.outcomes = 1
        self.kinds: list[tuple[str, int, int]] = []  # per statement: (int|bool|bot|geom, lo, hi)
        self.unused: list[int] = []  # statements no output reads yet (outputs prefer them)

    # noise budget
    def _afford(self, support: int) -> bool:
        if self.outcomes * support > MAX_OUTCOMES:
            return False
        self.outcomes *= support
        return True

    def _pick(self, options: list[tuple[float, Callable[[], Any]]]) -> Any:
        total = sum(w for w, _ in options)
        u = self.r.random() * total
        for w, f in options:
            u -= w
            if u < 0:
                out = f()
                if out is not None:
                    return out
                break
        # the chosen option declined (no budget, no variable): fall back to the first
        return options[0][1]()

    def _vars(self, kind: str) -> list[int]:
        return [k for k, (kd, _, _) in enumerate(self.kinds) if kd == kind]

    # boolean (0/1) expressions: every one has range [0, 1] in any reasonable range analysis
    def bool_expr(self, depth: int) -> Expr:
        r = self.r
        leaves = [
            (3, self._bool_leaf),
            (2, lambda: self._flip()),
        ]
        if depth <= 0:
            return self._pick(leaves)
        return self._pick(leaves + [
            (3, lambda: ("cmp", r.choice(list(_CMP)), self.int_expr(depth - 1)[0], self.int_expr(depth - 1)[0])),
            (2, lambda: (r.choice(["and", "or", "xor"]), self.bool_expr(depth - 1), self.bool_expr(depth - 1))),
            (1, lambda: ("not", self.bool_expr(depth - 1))),
            (1, lambda: ("ite", self.bool_expr(depth - 1), self.bool_expr(depth - 1), self.bool_expr(depth - 1))),
            (1, lambda: ("clamp", self.int_expr(depth - 1)[0], 0, 1)),
            (1, lambda: ("mod", self.int_expr(depth - 1)[0], 2)),
            (1, lambda: self._argmax(depth - 1, 2)[0]),
            (1, lambda: self._bottom_test(depth - 1)),
        ])

    def _bool_leaf(self) -> Expr:
        r = self.r
        opts: list[Expr] = [("x", i) for i in range(self.m) if self.lo[i] >= 0 and self.hi[i] <= 1]
        opts += [("v", k) for k in self._vars("bool")]
        if not opts or r.random() < 0.15:
            return ("c", r.randint(0, 1))
        return r.choice(opts)

    def _flip(self) -> Expr | None:
        r = self.r
        kind = r.random()
        if kind < 0.7:
            return ("flip", r.choice(PROBS)) if self._afford(2) else None
        if kind < 0.85:
            return ("unif", 0, 1) if self._afford(2) else None
        return ("cat", (r.choice(["1", "2", "1/3"]), r.choice(["1", "3", "0"]))) if self._afford(2) else None

    def _bottom_test(self, depth: int) -> Expr:
        b = self.bot_expr(depth)
        other = ("c", self.r.randint(-1, 2)) if self.r.random() < 0.7 else self.bot_expr(depth)
        return ("cmp", self.r.choice(["eq", "ne"]), b, other)

    # integer expressions, returned with a sound range (lo, hi)
    def int_expr(self, depth: int) -> tuple[Expr, int, int]:
        r = self.r
        leaves = [
            (4, self._int_leaf),
            (3, self._noise),
        ]
        if depth <= 0:
            e = self._pick(leaves)
        else:
            e = self._pick(leaves + [
                (2, lambda: self._binary(depth, "add")),
                (2, lambda: self._binary(depth, "sub")),
                (1, lambda: self._mul(depth)),
                (1, lambda: self._unary(depth, "neg")),
                (1, lambda: self._unary(depth, "abs")),
                (2, lambda: self._binary(depth, r.choice(["min", "max"]))),
                (1, lambda: self._clamp(depth)),
                (1, lambda: self._divmod(depth)),
                (2, lambda: self._ite(depth)),
                (3, lambda: self._argmax(depth - 1, r.choice([2, 2, 3]))),
                (1, lambda: self._bool_as_int(depth)),
            ])
        return self._bounded(e)

    def _bounded(self, e: tuple[Expr, int, int]) -> tuple[Expr, int, int]:
        expr, lo, hi = e
        if lo < -MAX_RANGE or hi > MAX_RANGE:
            lo2, hi2 = max(lo, -MAX_RANGE), min(hi, MAX_RANGE)
            if lo2 > hi2:
                lo2 = hi2 = max(-MAX_RANGE, min(MAX_RANGE, lo))
            return ("clamp", expr, lo2, hi2), lo2, hi2
        return e

    def _bool_as_int(self, depth: int) -> tuple[Expr, int, int]:
        return self.bool_expr(depth - 1), 0, 1

    def _int_leaf(self) -> tuple[Expr, int, int]:
        r = self.r
        opts: list[tuple[Expr, int, int]] = [(("x", i), self.lo[i], self.hi[i]) for i in range(self.m)]
        opts += [(("v", k), lo, hi) for k, (kd, lo, hi) in enumerate(self.kinds) if kd in ("int", "bool")]
        if r.random() < 0.15:
            c = r.randint(-2, 3)
            return ("c", c), c, c
        return r.choice(opts)

    def _noise(self) -> tuple[Expr, int, int] | None:
        r = self.r
        kind = r.choice(["flip", "cat", "unif", "dlap", "tgeom", "tgeom"])
        if kind == "flip":
            e = self._flip()
            return None if e is None else (e, 0, 1)
        if kind == "cat":
            k = r.randint(2, 3)
            ws = tuple(r.choice(["1", "2", "1/2", "0", 0.25]) for _ in range(k))
            if all(w == "0" for w in ws):
                ws = ("1",) + ws[1:]
            return (("cat", ws), 0, k - 1) if self._afford(k) else None
        if kind == "unif":
            lo = r.randint(-1, 1)
            hi = lo + r.randint(1, 2)
            return (("unif", lo, hi), lo, hi) if self._afford(hi - lo + 1) else None
        if kind == "dlap":
            b = r.randint(1, 2)
            if not self._afford(2 * b + 1):
                return None
            base, blo, bhi = self._int_leaf()
            return ("add", base, ("dlap", r.choice(BASES[:4]), b)), blo - b, bhi + b
        return self._tgeom()

    def _tgeom(self) -> tuple[Expr, int, int] | None:
        """clamp(e + Z, lo, hi) with Z fresh or a shared geometric variable."""
        r = self.r
        shared = self._vars("geom")
        if shared and r.random() < 0.6:
            z: Expr = ("v", r.choice(shared))
        else:
            z = ("geom", r.choice(BASES))
        off, olo, ohi = (None, 0, 0) if r.random() < 0.15 else self._int_leaf()
        lo = r.randint(-1, 1)
        hi = lo + r.randint(0, 2)
        if not self._afford(hi - lo + 1):
            return None
        k = max(abs(lo), abs(hi)) + max(abs(olo), abs(ohi)) + 1
        sign = 1 if off is None or r.random() < 0.75 else -1
        return ("tgeom", z, off, sign, lo, hi, k), lo, hi

    def _binary(self, depth: int, op: str) -> tuple[Expr, int, int]:
        a, alo, ahi = self.int_expr(depth - 1)
        b, blo, bhi = self._twin(a, alo, ahi) or self.int_expr(depth - 1)
        lo, hi = {
            "add": (alo + blo, ahi + bhi), "sub": (alo - bhi, ahi - blo),
            "min": (min(alo, blo), min(ahi, bhi)), "max": (max(alo, blo), max(ahi, bhi)),
        }[op]
        return (op, a, b), lo, hi

    def _mul(self, depth: int) -> tuple[Expr, int, int]:
        a, alo, ahi = self.int_expr(depth - 1)
        if self.r.random() < 0.8:
            c = self.r.choice([-2, -1, 0, 2, 3])
            b, blo, bhi = ("c", c), c, c
        else:
            b, blo, bhi = self.int_expr(0)
        prods = [p * q for p in (alo, ahi) for q in (blo, bhi)]
        if self.r.random() < 0.5:
            return ("mul", a, b), min(prods), max(prods)
        return ("mul", b, a), min(prods), max(prods)

    def _unary(self, depth: int, op: str) -> tuple[Expr, int, int]:
        a, lo, hi = self.int_expr(depth - 1)
        if op == "neg":
            return ("neg", a), -hi, -lo
        if lo >= 0:
            return ("abs", a), lo, hi
        if hi <= 0:
            return ("abs", a), -hi, -lo
        return ("abs", a), 0, max(-lo, hi)

    def _clamp(self, depth: int) -> tuple[Expr, int, int]:
        a, alo, ahi = self.int_expr(depth - 1)
        lo = self.r.randint(-2, 2)
        hi = lo + self.r.randint(0, 3)
        return ("clamp", a, lo, hi), min(max(alo, lo), hi), min(max(ahi, lo), hi)

    def _divmod(self, depth: int) -> tuple[Expr, int, int]:
        a, lo, hi = self.int_expr(depth - 1)
        d = self.r.randint(1, 3) if self.r.random() < 0.5 else self.r.randint(2, 3)
        if self.r.random() < 0.5:
            return ("div", a, d), lo // d, hi // d
        return ("mod", a, d), 0, d - 1

    def _twin(self, e: Expr, lo: int, hi: int) -> tuple[Expr, int, int] | None:
        """Sometimes the same expression again: a second, independent evaluation of it."""
        return (e, lo, hi) if self.r.random() < 0.25 and self._afford(self._draws(e)) else None

    def _draws(self, e: Expr) -> int:
        """The noise outcomes one more evaluation of ``e`` costs."""
        n = 1
        for f in walk(e):
            n *= {"flip": 2, "unif": 3, "cat": 3, "dlap": 5, "tgeom": 3, "argmax": 3}.get(f[0], 1)
        return n

    def _ite(self, depth: int) -> tuple[Expr, int, int]:
        c = self.bool_expr(depth - 1)
        a, alo, ahi = self.int_expr(depth - 1)
        b, blo, bhi = self._twin(a, alo, ahi) or self.int_expr(depth - 1)
        return ("ite", c, a, b), min(alo, blo), max(ahi, bhi)

    def _argmax(self, depth: int, k: int) -> tuple[Expr, int, int]:
        """argmax over inputs, constants and (noisy) values: ties are frequent by design."""
        r = self.r
        ties = r.choice(["uniform", "uniform", "first"])
        if ties == "uniform" and not self._afford(k):  # a tie-break is a draw too: budget it
            ties = "first"
        vals = []
        for _ in range(k):
            u = r.random()
            if u < 0.6:
                vals.append(self._int_leaf()[0])
            elif u < 0.75:
                vals.append(("c", r.randint(0, 2)))
            else:
                vals.append(self.int_expr(max(depth, 0))[0])
        return ("argmax", ties, tuple(vals)), 0, k - 1

    # expressions that may be BOTTOM: only output, compared with ==/!=, or chosen by ite
    def bot_expr(self, depth: int) -> Expr:
        r = self.r
        shared = self._vars("bot")
        if shared and r.random() < 0.4:
            return ("v", r.choice(shared))
        cond = self.bool_expr(max(depth, 0))
        v = self.bot_expr(depth - 1) if depth > 0 and r.random() < 0.3 else self.int_expr(max(depth - 1, 0))[0]
        return ("ite", cond, ("bot",), v) if r.random() < 0.6 else ("ite", cond, v, ("bot",))

    # programs
    def statement(self) -> tuple[Expr, tuple[str, int, int]]:
        r = self.r
        u = r.random()
        prior = [k for k, (kd, _, _) in enumerate(self.kinds) if kd != "geom"]
        if prior and u < 0.3 and self._afford(self._draws(self.stmts[prior[-1]])):
            k = prior[-1]  # a repeated identical call: must be an independent draw
            if self.stmts[k][0] == "argmax" and r.random() < 0.5:
                return self._near_twin(self.stmts[k]), self.kinds[k]
            return self.stmts[k], self.kinds[k]
        if u < 0.4:
            return ("geom", r.choice(BASES[:4])), ("geom", 0, 0)
        if u < 0.5:
            return self.bool_expr(2), ("bool", 0, 1)
        if u < 0.6:
            return self.bot_expr(1), ("bot", 0, 0)
        if u < 0.8:
            e, lo, hi = self._argmax(r.choice([0, 1]), r.choice([2, 2, 3]))
            return e, ("int", lo, hi)
        e, lo, hi = self.int_expr(2)
        return e, ("int", lo, hi)

    def _near_twin(self, e: Expr) -> Expr:
        """The argmax ``e`` with one input swapped for a constant of its domain (or back):
        a different call whose arguments equal the original's once the input is fixed."""
        vals = list(e[2])
        k = self.r.randrange(len(vals))
        if vals[k][0] == "x":
            i = vals[k][1]
            vals[k] = ("c", self.r.randint(self.lo[i], self.hi[i]))
        else:
            vals[k] = ("x", self.r.randrange(self.m))
        return ("argmax", e[1], tuple(vals))

    def output(self) -> Expr:
        r = self.r
        u = r.random()
        usable = [k for k, (kd, _, _) in enumerate(self.kinds) if kd != "geom"]
        fresh = [k for k in self.unused if k in usable]
        if fresh and u < 0.7:
            self.unused.remove(fresh[0])
            return ("v", fresh[0])
        if usable and u < 0.75:
            return ("v", r.choice(usable))
        if u < 0.6:
            return ("x", r.randrange(self.m))
        if u < 0.68:
            i = r.randrange(self.m)
            if self.lo[i] >= 0 and self.hi[i] <= 1:
                f = self._flip() or ("c", 0)
                return ("xor", ("x", i), f)
            noisy = self._noise() if r.random() < 0.7 else None
            return ("add", ("x", i), noisy[0] if noisy else ("c", 1))
        if u < 0.78:
            return self.bot_expr(1)
        if u < 0.88:
            return self.bool_expr(2)
        return self.int_expr(2)[0]

    def program(self) -> Prog:
        r = self.r
        self.m = r.choice([1, 2, 2, 3])
        lo0 = -1 if r.random() < 0.1 else 0
        his = [lo0 + r.choice([1, 1, 2]) for _ in range(self.m)]
        if r.random() < 0.6:
            his = [his[0]] * self.m
        self.lo, self.hi = tuple([lo0] * self.m), tuple(his)
        kind = r.choice(["replace_one", "one_differ", "all_differ"])
        sens = 2 if kind != "replace_one" and max(his) - lo0 >= 2 and r.random() < 0.3 else 1
        self.stmts: list[Expr] = []
        for _ in range(r.choice([0, 1, 2, 2, 3, 4])):
            st, kd = self.statement()
            self.stmts.append(st)
            self.kinds.append(kd)
            self.unused.append(len(self.stmts) - 1)
        outs: list[Expr] = []
        for _ in range(r.choice([1, 2, 2, 3])):
            again = outs and r.random() < 0.2 and self._afford(self._draws(outs[-1]))
            outs.append(outs[-1] if again else self.output())
        tuple_output = len(outs) > 1 or r.random() < 0.3
        return Prog(f"rand{self.seed}", self.lo, self.hi, (kind, sens), tuple(self.stmts), tuple(outs), tuple_output)


def random_program(seed: int) -> Prog:
    """The random program of this seed (the same one on every machine and run)."""
    return Generator(seed).program()
