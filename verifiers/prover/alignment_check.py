"""The independent checker of alignment proofs (shares no code with the synthesis).

It reads only the program and the proof's evidence (per path: the outcomes that define
it and the shift of each draw as ``const + sum_i k_i d_i``, ``d = x - x'``), and checks
three ways:

A shift is ``const + sum_i k_i d_i + sum_k c_k w_k`` where ``w_k`` is the difference
between the values of node ``k`` on ``x`` and on ``x'``; such a node must read no random
node (a function of the input: a clamp of a query, a table), so for fixed neighbours the
shift is a constant and the alignment argument holds as for shifts in ``d``.

1. *Cover*: the paths form a complete decision tree (every outcome of every decision is
   followed), so every run takes exactly one path.
2. *Runs*: the IR interpreter (:func:`samplers.lang.ir.evaluate`) runs the program in
   exact Fractions on random inputs (also outside the declared domain when the proof
   claims all integers) and random neighbours, with random draws and with small
   integer / half-integer draws that make comparisons tie; on ``x'`` with the shifted
   draws the run must take the same path, give the same output, keep exponential
   draws non-negative, and cost at most eps.
3. *z3 from scratch*: the whole program is encoded as one z3 term per node for ``x``
   and for ``x'`` (``If`` for every branch, no path splitting); for each path (all of
   them up to :data:`Z3_PATHS`, else an evenly spread sample including the first and
   the last; two for programs past :data:`LARGE` nodes), "the path holds on x, and on
   x' with the shifted draws the path, an output, the support or the cost bound
   fails" must be unsat.  Programs past
   :data:`Z3_NODES` nodes are beyond what z3 answers in time with this plain encoding
   and are re-checked by 1 and 2 only.
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

import z3

from samplers import deadline
from samplers.lang.builder import draws_randomness
from samplers.lang.ir import BOTTOM, Program, evaluate
from samplers.lang.neighbours import AllDiffer, Monotone, OneDiffer, ReplaceOne
from verifiers.z3_timeout import bounded_ms

TRIALS = 80
Z3_PATHS = 12
Z3_PATHS_LARGE = 2  # paths re-asked for programs past LARGE nodes (first and last)
LARGE = 300
Z3_NODES = 1000
SHAPED = {"lt", "le", "eq", "ne", "argmax", "min", "max", "abs", "clamp"}


Shift = tuple[Fraction, dict[int, Fraction], dict[int, Fraction]]  # const, per input d_i, per node w_k


BOXES = {"x >= x'": 1, "x <= x'": -1}  # a monotone proof's boxes: the sign every d = x - x' has


def _read(proof: Any) -> tuple[Fraction, dict[str | None, list[tuple[dict[int, int], dict[int, Shift]]]]]:
    """eps and the paths, grouped by box (None: one alignment for every difference)."""
    ev = proof.evidence
    out: dict[str | None, list] = {}
    for p in ev["paths"]:
        dec = {int(k): int(v) for k, v in p["decisions"].items()}
        shifts = {int(e): (Fraction(s["const"]), {int(i): Fraction(k) for i, k in s["d"].items()},
                           {int(i): Fraction(k) for i, k in s.get("w", {}).items()})
                  for e, s in p["shifts"].items()}
        out.setdefault(p.get("box"), []).append((dec, shifts))
    return Fraction(ev["eps"]), out


def _box_of(d: list[int]) -> str:
    """The box of a monotone difference (a d with no negative entry is in ``x >= x'``)."""
    return "x >= x'" if all(v >= 0 for v in d) else "x <= x'"


def _described(ev: dict[str, Any]) -> tuple[str, dict[int, tuple[str, Fraction]]]:
    """What the evidence says of the program: its neighbour relation and its draws' laws and scales."""
    return ev["neighbours"], {int(e): (d["law"], Fraction(d["scale"])) for e, d in ev["draws"].items()}


def _noise_free(program: Program) -> list[bool]:
    """Nodes that read no random node: functions of the input alone, which a shift may read."""
    free: list[bool] = []
    for n in program.nodes:
        free.append(not draws_randomness(n.op, n.attr) and not n.bottom and all(free[a] for a in n.args))
    return free


def _outcome(op: str, attr: Any, vals: list[Any], value: Any) -> int:
    if op in ("lt", "le", "eq", "ne", "argmax"):
        return int(value)
    if op == "min":
        return 0 if vals[0] <= vals[1] else 1
    if op == "max":
        return 0 if vals[0] >= vals[1] else 1
    if op == "abs":
        return 0 if vals[0] >= 0 else 1
    lo, hi = attr
    return 0 if vals[0] < lo else (2 if vals[0] > hi else 1)


def _evaluate(program: Program, x: list[int], eta: dict[int, Fraction]) -> tuple[list[Any], dict[int, int]]:
    """Every node's exact value (float clamp bounds at their exact binary value) and the outcome
    of every shaped node."""
    vals: list[Any] = []
    outcomes: dict[int, int] = {}
    for i, n in enumerate(program.nodes):
        if n.op == "input":
            v: Any = Fraction(x[n.attr])
        elif i in eta:
            v = eta[i]
        elif n.op == "const":
            v = n.attr if n.attr is BOTTOM else Fraction(n.attr)
        else:
            args = [vals[a] for a in n.args]
            if n.op == "ite":
                v = args[1] if args[0] else args[2]
            else:
                attr = tuple(Fraction(a) for a in n.attr) if n.op == "clamp" else n.attr
                v = evaluate(n.op, attr, args)
                if n.op in SHAPED:
                    outcomes[i] = _outcome(n.op, attr, args, v)
        vals.append(v)
    return vals, outcomes


def run(program: Program, x: list[int], eta: dict[int, Fraction]) -> tuple[tuple, dict[int, int]]:
    """Outputs and the outcome of every shaped node that could be evaluated."""
    vals, outcomes = _evaluate(program, x, eta)
    return tuple(vals[o] for o in program.outputs), outcomes


def _shift(s: Shift, d: list[int], w: dict[int, Fraction]) -> Fraction:
    """The shift's amount for ``d = x - x'`` and ``w[k] = value of node k on x minus on x'``."""
    return s[0] + sum((k * d[i] for i, k in s[1].items()), Fraction(0)) + sum((k * w[i] for i, k in s[2].items()),
                                                                             Fraction(0))


ALIGNED = ("laplace", "exponential")  # the laws whose shift by a costs |a| / b (a >= 0 when one-sided)


def _laws(program: Program) -> dict[int, tuple[str, Fraction]]:
    return {i: (n.op, Fraction(n.attr)) for i, n in enumerate(program.nodes) if n.op in ALIGNED}


def _unaligned(program: Program) -> str | None:
    """The first random node whose law has no alignment cost (Gaussian: unbounded loss; discrete:
    bounded support; a uniform argmax tie-break: a coin flip, never shifted)."""
    for i, n in enumerate(program.nodes):
        if draws_randomness(n.op, n.attr) and n.op not in ALIGNED:
            return f"node %{i} draws {n.op} {n.attr if n.op == 'argmax' else 'noise'}: a shift of it has no pure-DP cost"
    return None


def _neighbour(program: Program, x: list[int], rng: random.Random) -> list[int]:
    rel, dom = program.neighbours, program.domain
    xp = list(x)
    if isinstance(rel, AllDiffer):
        while xp == x:
            xp = [v + rng.randint(-rel.sensitivity, rel.sensitivity) for v in x]
    elif isinstance(rel, Monotone):
        sign = rng.choice([1, -1])
        while xp == x:
            xp = [v + sign * rng.randint(0, rel.sensitivity) for v in x]
    elif isinstance(rel, OneDiffer):
        i = rng.randrange(len(x))
        xp[i] = x[i] + rng.choice([1, -1]) * rng.randint(1, rel.sensitivity)
    elif isinstance(rel, ReplaceOne):
        i = rng.randrange(len(x))
        choices = [v for v in range(dom.lo[i], dom.hi[i] + 1) if v != x[i]]
        xp[i] = rng.choice(choices) if choices else x[i]
    return xp


def _draw(law: str, scale: Fraction, rng: random.Random, boundary: bool) -> Fraction:
    if boundary:
        v = Fraction(rng.randint(-6, 6), 2)
        return abs(v) if law == "exponential" else v
    if law == "exponential":
        return Fraction(rng.expovariate(1 / float(scale)))
    return Fraction(rng.choice([-1, 1]) * rng.expovariate(1 / float(scale)))


def check_runs(program: Program, eps: Fraction, groups: dict[str | None, list], seed: int = 0) -> str | None:
    """Random runs on ``x`` and, with the shifted draws, on ``x'``; the paths of the pair's box."""
    rng = random.Random(seed)
    laws = _laws(program)
    dom = program.domain
    beyond = not isinstance(program.neighbours, ReplaceOne)
    indices = {box: {frozenset(dec.items()): k for k, (dec, _) in enumerate(paths)} for box, paths in groups.items()}
    keysets = {box: {frozenset(dec) for dec, _ in paths} for box, paths in groups.items()}
    for trial in range(TRIALS):
        deadline.check("while re-running an alignment proof")
        pad = 5 if beyond and trial % 3 == 0 else 0
        x = [rng.randint(l - pad, h + pad) for l, h in zip(dom.lo, dom.hi)]
        xp = _neighbour(program, x, rng)
        if xp == x:
            continue
        d = [a - b for a, b in zip(x, xp)]
        box = None if None in groups else _box_of(d)
        paths, index = groups[box], indices[box]
        eta = {e: _draw(law, b, rng, trial % 2 == 1) for e, (law, b) in laws.items()}
        out, outcomes = run(program, x, eta)
        k = next((index[key] for ks in keysets[box]
                  if (key := frozenset((n, outcomes.get(n)) for n in ks)) in index), None)
        if k is None:
            return f"x={x}, draws {eta}: the run takes no path of the proof"
        dec, shifts = paths[k]
        (here, _), (there, _) = _evaluate(program, x, eta), _evaluate(program, xp, eta)  # noise-free: eta is moot
        w = {i: here[i] - there[i] for s in shifts.values() for i in s[2]}
        etap = {e: v + (_shift(shifts[e], d, w) if e in shifts else 0) for e, v in eta.items()}
        if any(laws[e][0] == "exponential" and etap[e] < 0 for e in etap):
            return f"x={x}, x'={xp}: a shifted exponential draw is negative"
        outp, outcomesp = run(program, xp, etap)
        if any(outcomesp.get(n) != v for n, v in dec.items()):
            return f"x={x}, x'={xp}: the shifted run leaves path {k}"
        if outp != out:
            return f"x={x}, x'={xp}: outputs differ ({out} vs {outp})"
        cost = sum((abs(_shift(s, d, w)) / laws[e][1] for e, s in shifts.items()), Fraction(0))
        if cost > eps:
            return f"x={x}, x'={xp}: path {k} costs {cost} > {eps}"
    return None


class _Encoder:
    """z3 terms for every node on one side: (is_bottom, value, outcome)."""

    def __init__(self, program: Program, xs: list, eta: dict[int, Any], tag: str) -> None:
        self.tag = tag
        self.facts: list[Any] = []  # definitions of fresh variables
        self.wins: dict[int, list[Any]] = {}  # argmax node -> "index k wins" formulas
        self.bot: list[Any] = []
        self.val: list[Any] = []
        self.outcome: dict[int, Any] = {}
        for i, n in enumerate(program.nodes):
            b, v = self._node(i, n, xs, eta)
            self.bot.append(b)
            self.val.append(v)

    def _node(self, i: int, n: Any, xs: list, eta: dict[int, Any]) -> tuple[Any, Any]:
        F = z3.BoolVal(False)
        if n.op == "input":
            return F, z3.ToReal(xs[n.attr])
        if i in eta:
            return F, eta[i]
        if n.op == "const":
            return (z3.BoolVal(True), z3.RealVal(0)) if n.attr is BOTTOM else (F, z3.RealVal(Fraction(n.attr)))
        a = [self.val[k] for k in n.args]
        one, zero = z3.RealVal(1), z3.RealVal(0)
        op = n.op
        if op == "ite":
            c = a[0] != 0
            return z3.simplify(z3.If(c, self.bot[n.args[1]], self.bot[n.args[2]])), z3.If(c, a[1], a[2])
        if any(not z3.is_false(self.bot[k]) for k in n.args):
            raise ValueError(f"node {i} ({op}) may read BOTTOM: the checker's encoding has no such value")
        simple = {"add": lambda: a[0] + a[1], "sub": lambda: a[0] - a[1], "mul": lambda: a[0] * a[1],
                  "neg": lambda: -a[0], "lt": lambda: z3.If(a[0] < a[1], one, zero),
                  "le": lambda: z3.If(a[0] <= a[1], one, zero), "eq": lambda: z3.If(a[0] == a[1], one, zero),
                  "ne": lambda: z3.If(a[0] != a[1], one, zero),
                  "and": lambda: z3.If(z3.And(a[0] != 0, a[1] != 0), one, zero),
                  "or": lambda: z3.If(z3.Or(a[0] != 0, a[1] != 0), one, zero),
                  "xor": lambda: z3.If(z3.Xor(a[0] != 0, a[1] != 0), one, zero),
                  "not": lambda: z3.If(a[0] == 0, one, zero)}
        if op in simple:
            v = simple[op]()
            if op in ("lt", "le", "eq", "ne"):
                self.outcome[i] = v
            return F, v
        if op == "argmax":  # a fresh index pinned by "index k wins" for each k (linear size)
            idx = z3.Real(f"argmax{i}_{self.tag}")
            wins = [z3.And([a[k] > a[j] if j < k else a[k] >= a[j] for j in range(len(a)) if j != k])
                    for k in range(len(a))]
            self.facts += [z3.Implies(w, idx == k) for k, w in enumerate(wins)]
            self.outcome[i] = idx
            self.wins[i] = wins
            return F, idx
        if op in ("min", "max"):
            first = a[0] <= a[1] if op == "min" else a[0] >= a[1]
            self.outcome[i] = z3.If(first, zero, one)
            return F, z3.If(first, a[0], a[1])
        if op == "abs":
            self.outcome[i] = z3.If(a[0] >= 0, zero, one)
            return F, z3.If(a[0] >= 0, a[0], -a[0])
        if op == "clamp":
            lo, hi = (z3.RealVal(Fraction(v)) for v in n.attr)
            self.outcome[i] = z3.If(a[0] < lo, zero, z3.If(a[0] > hi, z3.RealVal(2), one))
            return F, z3.If(a[0] < lo, lo, z3.If(a[0] > hi, hi, a[0]))
        raise ValueError(f"the checker has no z3 encoding of {op}")


def _related(program: Program, xs: list, xps: list, box: str | None = None) -> Any:
    """z3: ``x, x'`` are neighbours (in the given box of a monotone relation)."""
    rel, dom = program.neighbours, program.domain
    differ = [x != y for x, y in zip(xs, xps)]
    if isinstance(rel, AllDiffer):
        s = rel.sensitivity
        return z3.And(z3.Or(differ), *[z3.And(x - y <= s, y - x <= s) for x, y in zip(xs, xps)])
    if isinstance(rel, Monotone):
        s = rel.sensitivity
        up = z3.And([z3.And(y - x >= 0, y - x <= s) for x, y in zip(xs, xps)])
        down = z3.And([z3.And(x - y >= 0, x - y <= s) for x, y in zip(xs, xps)])
        return z3.And(z3.Or(differ), {None: z3.Or(up, down), "x >= x'": down, "x <= x'": up}[box])
    count = z3.PbEq([(c, 1) for c in differ], 1)
    if isinstance(rel, OneDiffer):
        s = rel.sensitivity
        return z3.And(count, *[z3.And(x - y <= s, y - x <= s) for x, y in zip(xs, xps)])
    if not isinstance(rel, ReplaceOne):
        raise ValueError(f"the checker has no z3 encoding of the neighbour relation {rel.name}")
    inside = [z3.And(v >= l, v <= h) for vs in (xs, xps) for v, l, h in zip(vs, dom.lo, dom.hi)]
    return z3.And(count, *inside)


def _neighbour_sides(program: Program, xs: list, split: bool) -> list[list]:
    """The ``x'`` variables to ask about: all free, or (``split``, where one coordinate differs)
    one list per coordinate, the others being ``x``'s own, so that z3 sees equal values as equal."""
    n = len(xs)
    if not split or isinstance(program.neighbours, (AllDiffer, Monotone)):
        return [[z3.Int(f"xp{i}") for i in range(n)]]
    return [[z3.Int(f"xp{i}") if i == j else xs[i] for i in range(n)] for j in range(n)]


def cost_bound(program: Program, shifts: dict[int, Shift]) -> Fraction | None:
    """An upper bound of ``max sum_e |a_e| / b_e`` over the neighbour relation, by interval
    arithmetic (None for shifts that read a derived value's difference ``w``).  For one
    moving coordinate (one_differ, replace_one) the cost is convex in its move ``t``, so
    largest at an end of the move's range; for all_differ and the monotone relations each
    shift is bounded on its own over the box (a sum of maxima bounds the maximum of a sum)."""
    if any(s[2] for s in shifts.values()):
        return None
    laws, rel, dom = _laws(program), program.neighbours, program.domain

    def total(move: dict[int, Fraction]) -> Fraction:
        return sum((abs(s[0] + sum((k * move.get(i, 0) for i, k in s[1].items()), Fraction(0))) / laws[e][1]
                    for e, s in shifts.items()), Fraction(0))

    if isinstance(rel, (AllDiffer, Monotone)):
        return sum(((abs(s[0]) + rel.sensitivity * sum((abs(k) for k in s[1].values()), Fraction(0))) / laws[e][1]
                    for e, s in shifts.items()), Fraction(0))
    if isinstance(rel, OneDiffer):
        ends = {i: rel.sensitivity for i in range(dom.size)}
    elif isinstance(rel, ReplaceOne):
        ends = {i: dom.hi[i] - dom.lo[i] for i in range(dom.size)}
    else:
        return None
    read = {i for s in shifts.values() for i in s[1]}
    return max([total({})] + [total({i: t}) for i in read for t in (ends[i], -ends[i])])


def check_z3(program: Program, eps: Fraction, paths: list, box: str | None = None) -> str | None:
    n = program.domain.size
    laws = _laws(program)
    xs = [z3.Int(f"x{i}") for i in range(n)]
    eta = {e: z3.Real(f"eta{e}") for e in laws}
    side = _Encoder(program, xs, eta, "x")
    support = [eta[e] >= 0 for e, (law, _) in laws.items() if law == "exponential"]

    def holds(enc: _Encoder, dec: dict[int, int]) -> Any:
        return z3.And([enc.wins[k][v] if k in enc.wins else enc.outcome[k] == v for k, v in dec.items()])

    picks = list(range(len(paths)))
    many = Z3_PATHS if len(program.nodes) <= LARGE else Z3_PATHS_LARGE
    if len(picks) > many:
        step = (len(paths) - 1) / (many - 1)
        picks = sorted({round(i * step) for i in range(many)})
    # shifts that read differences of values without noise are asked coordinate by coordinate
    split = any(s[2] for _, shifts in paths for s in shifts.values())
    for k in picks:
        dec, shifts = paths[k]
        bound = cost_bound(program, shifts)
        if bound is not None and bound > eps:
            bound = None  # the bound is not tight for all_differ: z3 asks for the cost itself
        if any(node not in side.outcome for node in dec):
            return f"path {k} names a node that makes no decision"
        for xps in _neighbour_sides(program, xs, split):
            deadline.check("while re-asking z3 about an alignment proof")
            unshifted = _Encoder(program, xps, eta, "xq")  # the values on x' that read no draw, for w
            d = [x - y for x, y in zip(xs, xps)]
            amount = {e: z3.RealVal(s[0]) + z3.Sum([z3.RealVal(c) * z3.ToReal(d[i]) for i, c in s[1].items()]
                                                   + [z3.RealVal(c) * (side.val[i] - unshifted.val[i])
                                                      for i, c in s[2].items()] or [z3.RealVal(0)])
                      for e, s in shifts.items()}
            etap = {e: eta[e] + amount.get(e, z3.RealVal(0)) for e in laws}
            other = _Encoder(program, xps, etap, "xp")
            same = [z3.And(side.bot[o] == other.bot[o], z3.Or(side.bot[o], side.val[o] == other.val[o]))
                    for o in program.outputs]
            cost = z3.Sum([z3.If(a >= 0, a, -a) / z3.RealVal(laws[e][1]) for e, a in amount.items()] or [z3.RealVal(0)])
            within = [] if bound is not None else [cost <= z3.RealVal(eps)]  # else bounded exactly above
            good = z3.And(holds(other, dec), *same, *within,
                          *[etap[e] >= 0 for e, (law, _) in laws.items() if law == "exponential"])
            solver = z3.Solver()
            solver.set("timeout", bounded_ms(60_000))
            solver.add(_related(program, xs, xps, box), *side.facts, *other.facts, *unshifted.facts, holds(side, dec),
                       *support, z3.Not(good))
            ans = solver.check()
            deadline.check("while re-checking an alignment with z3")
            if ans != z3.unsat:
                return f"path {k}: z3 answered {ans} (expected unsat) to 'the alignment fails'"
    return None


def _arity(program: Program, node: int) -> int:
    n = program.nodes[node]
    return len(n.args) if n.op == "argmax" else (3 if n.op == "clamp" else 2)


def check_cover(program: Program, paths: list) -> str | None:
    """The paths form a complete decision tree: some decision every path names, each of
    its outcomes followed by paths that again cover, down to a single path.  Each
    decision's outcomes exhaust its possible values, so every run takes exactly one path."""
    pending = [([dec for dec, _ in paths], {})]
    while pending:
        group, fixed = pending.pop()
        rest = [{k: v for k, v in dec.items() if k not in fixed} for dec in group]
        if len(group) == 1 and not rest[0]:
            continue
        common = set.intersection(*(set(r) for r in rest)) if rest else set()
        if not common:
            return f"after outcomes {fixed} the paths name no common decision: cannot confirm they cover"
        node = min(common)
        if program.nodes[node].op not in SHAPED:
            return f"node {node} makes no decision"
        for o in range(_arity(program, node)):
            sub = [dec for dec, r in zip(group, rest) if r[node] == o]
            if not sub:
                return f"no path of the proof follows %{node} = {o} after {fixed}"
            pending.append((sub, {**fixed, node: o}))
    return None


def check(program: Program, proof: Any) -> str | None:
    """None when both the runs and z3 confirm the alignment proof, else what failed."""
    try:
        eps, groups = _read(proof)
        neighbours, listed = _described(proof.evidence)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        return f"malformed alignment evidence ({type(exc).__name__}: {exc})"
    if proof.eps != eps:
        return f"the proof claims {proof.eps} but its evidence proves {eps}"
    if proof.delta != 0:
        return f"an alignment proves pure eps-DP, the proof says delta = {proof.delta}"
    unaligned = _unaligned(program)
    if unaligned is not None:
        return unaligned
    draws, n, free = _laws(program), program.domain.size, _noise_free(program)
    if neighbours != program.neighbours.name:
        return f"the proof is for {neighbours} neighbours, the program has {program.neighbours.name}"
    if listed != draws:
        return "the proof's draws (their laws and scales) are not the program's"
    if set(groups) != {None} and not (isinstance(program.neighbours, Monotone) and set(groups) == set(BOXES)):
        return (f"the proof's paths are split by box ({sorted(map(str, groups))}): only a monotone relation's "
                f"two boxes {sorted(BOXES)}, each with its own paths, may be")
    for dec, shifts in (p for paths in groups.values() for p in paths):
        if any(e not in draws or any(not 0 <= i < n for i in s[1]) for e, s in shifts.items()):
            return f"a path ({dec}) shifts a node that is no draw or names an input the program does not have"
        if any(not (0 <= i < len(free) and free[i]) for s in shifts.values() for i in s[2]):
            return f"a path ({dec}) shifts by the difference of a node that reads noise (or is no node)"
    try:
        problem = next(filter(None, (check_cover(program, paths) for paths in groups.values())), None)
        problem = problem or check_runs(program, eps, groups)
        if problem is None and len(program.nodes) <= Z3_NODES:
            problem = next(filter(None, (check_z3(program, eps, paths, box) for box, paths in groups.items())), None)
    except (TypeError, ValueError, ArithmeticError) as exc:
        return f"the checker cannot run or encode the program: {exc}"
    return problem
