"""Running-max loops as ``max`` / ``argmax``: the normal form the alignment rule proves.

CheckDP writes report noisy max as a loop that keeps the best noisy value ``bq`` and its
index: ``if q[i] + eta > bq: best, bq = i, q[i] + eta``.  Traced, that is a chain of
``ite`` (or, from plain numpy code that forks on the comparison, a tree of them) with
2^(n-1) paths, where the IR's ``argmax`` has n.  This module rewrites, before the prover
sees the program:

* a choice between the two sides of a comparison into ``min`` / ``max``:
  ``ite(a < b, b, a) = max(a, b)``, ``ite(a <= b, b, a) = max(b, a)``,
  ``ite(a < b, a, b) = min(b, a)``, ``ite(a <= b, a, b) = min(a, b)`` (the IR's ``max(a, b)``
  is ``a`` unless ``b > a``, ``min(a, b)`` is ``a`` unless ``b < a``: equal values are chosen
  as the ``ite`` chooses them, so even a signed zero is kept);
* an index chosen by such comparisons into ``argmax``.  A node *is the first (last)
  maximiser* of candidates ``{position: value}`` when it is a constant ``p`` (one candidate)
  or ``ite(m < b, A, B)`` (last: ``m <= b``; or either comparison the other way round with the
  branches swapped) where ``A`` is the first (last) maximiser of ``K ∪ R`` with
  ``K = {k: b}``, ``B`` of ``J ∪ R``, ``m`` is the maximum of ``J``'s values (a ``max`` tree of
  exactly them; for a lone constant ``j``, ``m`` itself) and every position of ``J`` is below
  ``k``.  Then the node is the first (last) maximiser of ``J ∪ K ∪ R``.  Proof (first): if
  ``m < b`` no position of ``J`` attains the maximum of all, so the first maximiser of all is
  ``A``'s; else the maximum of all is that of ``J ∪ R``, and ``k`` attains it only if
  ``b = m``, when some ``j < k`` attains it too, so it is ``B``'s.  (Last: if ``m <= b`` a
  ``j`` attaining the maximum has ``b = m`` too and ``k > j``; else ``k`` does not attain it.)
  Candidates at positions ``s .. s + L - 1`` (``L >= 3``: a choice between two values stays
  the comparison it is) give ``s + argmax(values)`` (first, the IR's lowest-index tie-break)
  or ``s + L - 1 - argmax(reversed values)`` (last).

Both rules hold for every real (and every non-NaN double: the comparisons are the same,
and every value is one of the operands), so they keep the exact meaning of the program in
either reading (:mod:`samplers.lang.float64`).  Nodes no output needs any more are dropped
(inputs are kept).  :mod:`verifiers.prover.equivalence_check` re-checks a rewrite
independently: z3 over all inputs and draws, and exact runs with ties; :func:`checked`
gives the rewrite only once that check confirmed it (the continuous backend's enclosures
use it: a chain of n choices has 2^(n-1) paths where ``argmax`` has n).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from samplers.lang.builder import draws_randomness
from samplers.lang.ir import INT, Node, Program, op_range

Candidates = dict[int, int | None]  # position -> value node (None: a lone constant, any value)
MIN_CANDIDATES = 3  # an index among two values stays a comparison (sparse vector's answers are such)


@dataclass
class Normal:
    """A rewritten program and, per node of it that draws noise, the original program's node."""

    program: Program
    draws: dict[int, int] = field(default_factory=dict)
    rewrites: int = 0


class _Rebuild:
    """The nodes of the normal form, appended in order (a node's arguments come first)."""

    def __init__(self) -> None:
        self.nodes: list[Node] = []
        self.seen: dict[tuple, int] = {}

    def add(self, op: str, args: tuple[int, ...], attr: Any, like: Node | None = None) -> int:
        key = (op, args, type(attr), repr(attr))  # 0, 0.0 and -0.0 are equal keys otherwise
        if op != "input" and not draws_randomness(op, attr) and key in self.seen:
            return self.seen[key]
        if like is not None:
            lo, hi, kind, bottom = like.lo, like.hi, like.kind, like.bottom
        elif op == "const":
            lo, hi, kind, bottom = attr, attr, INT, False
        else:
            lo, hi, kind = op_range(op, attr, [self.nodes[a] for a in args])
            bottom = False
        self.nodes.append(Node(op, args, attr, lo, hi, kind, bottom))
        self.seen[key] = len(self.nodes) - 1
        return len(self.nodes) - 1


def _choice(nodes: tuple[Node, ...], n: Node) -> tuple[str, int, int] | None:
    """``ite(cmp(a, b), ., .)`` choosing between ``a`` and ``b``: the equal ``min`` / ``max`` (op, first, second)."""
    if n.op != "ite" or any(nodes[a].bottom for a in n.args):
        return None
    c, t, f = nodes[n.args[0]], n.args[1], n.args[2]
    if c.op not in ("lt", "le"):
        return None
    a, b = c.args
    if (t, f) == (b, a):
        return ("max", a, b) if c.op == "lt" else ("max", b, a)
    if (t, f) == (a, b):
        return ("min", b, a) if c.op == "lt" else ("min", a, b)
    return None


def _leaves(nodes: list[Node], m: int) -> set[int]:
    """The operands of a tree of ``max`` nodes (the node itself if it is none)."""
    if nodes[m].op != "max":
        return {m}
    return _leaves(nodes, nodes[m].args[0]) | _leaves(nodes, nodes[m].args[1])


def _combine(nodes: list[Node], reps: dict[int, tuple[str | None, Candidates]], new: int, old: int, m: int,
             b: int, mode: str) -> tuple[str, Candidates] | None:
    """The candidates of ``ite(new wins, A=new, B=old)`` where new wins iff ``m < b`` (first) or
    ``m <= b`` (last), or None where the lemma's conditions fail."""
    if new not in reps or old not in reps:
        return None
    (mode_a, a), (mode_b, bs) = reps[new], reps[old]
    if {mode_a, mode_b} - {None, mode}:
        return None
    k_only, j_only = set(a) - set(bs), set(bs) - set(a)
    rest = set(a) & set(bs)
    if len(k_only) != 1 or not j_only or any(a[p] is None or a[p] != bs[p] for p in rest):
        return None
    (k,) = k_only
    if a[k] not in (None, b) or max(j_only) >= k:
        return None
    values = {p: bs[p] for p in j_only}
    if len(values) == 1 and None in values.values():
        values = {p: m for p in values}
    elif None in values.values() or set(values.values()) != _leaves(nodes, m):
        return None
    return mode, {**values, k: b, **{p: a[p] for p in rest}}


def _index(nodes: list[Node], reps: dict[int, tuple[str | None, Candidates]], n: Node) -> tuple[str, Candidates] | None:
    """An ``ite`` that picks the first or last maximiser, as its mode and candidates."""
    if n.op != "ite":
        return None
    c, t, f = nodes[n.args[0]], n.args[1], n.args[2]
    flip = c.op == "not"
    if flip:
        c, (t, f) = nodes[c.args[0]], (f, t)
    if c.op not in ("lt", "le"):
        return None
    p, q = c.args
    strict = "first" if c.op == "lt" else "last"
    loose = "last" if c.op == "lt" else "first"
    # cmp(p, q): the new value is q and wins on the true branch, or p and wins on the false one
    return _combine(nodes, reps, t, f, p, q, strict) or _combine(nodes, reps, f, t, q, p, loose)


def _emit(out: _Rebuild, mode: str, cands: Candidates) -> int | None:
    positions = sorted(cands)
    start, size = positions[0], len(positions)
    if size < MIN_CANDIDATES or positions != list(range(start, start + size)) or None in cands.values():
        return None
    values = tuple(cands[p] for p in positions)
    if mode == "last":
        top = out.add("argmax", values[::-1], "first")
        idx = out.add("sub", (out.add("const", (), size - 1), top), None)
    else:
        idx = out.add("argmax", values, "first")
    return idx if start == 0 else out.add("add", (idx, out.add("const", (), start)), None)


def _rebuild(program: Program, banned: set[int]) -> tuple[_Rebuild, dict[int, int], dict[int, int]]:
    """The rewritten nodes, the map from the program's nodes, and per rewritten ``ite`` (not in
    ``banned``) its condition."""
    out = _Rebuild()
    new: dict[int, int] = {}
    reps: dict[int, tuple[str | None, Candidates]] = {}  # by node of the rebuild
    conditions: dict[int, int] = {}
    for i, n in enumerate(program.nodes):
        args = tuple(new[a] for a in n.args)
        moved = Node(n.op, args, n.attr, n.lo, n.hi, n.kind, n.bottom)
        allowed = n.op == "ite" and i not in banned
        choice = _choice(tuple(out.nodes), moved) if allowed else None
        if choice is not None:
            op, a, b = choice
            new[i], conditions[i] = out.add(op, (a, b), None), n.args[0]
            continue
        found = _index(out.nodes, reps, moved) if n.op == "ite" and n.kind == INT else None
        if found is not None and allowed:
            emitted = _emit(out, *found)
            if emitted is not None and (out.nodes[emitted].lo, out.nodes[emitted].hi) == (n.lo, n.hi):
                new[i], conditions[i] = emitted, n.args[0]
                reps[emitted] = found
                continue
        new[i] = out.add(n.op, args, n.attr, like=n)
        if n.op == "const" and type(n.attr) is int:
            reps[new[i]] = (None, {n.attr: None})
        elif found is not None:
            reps[new[i]] = found
    return out, new, conditions


def normal_form(program: Program) -> Normal:
    """The program with its running-max chains as ``max`` / ``argmax`` (the same program object
    when nothing matched).  A rewrite whose comparison the program still needs elsewhere (a
    threshold test that also counts, as in adaptive sparse vector) would only add a decision: such
    rewrites are undone until every rewritten comparison is gone."""
    banned: set[int] = set()
    while True:
        out, new, conditions = _rebuild(program, banned)
        if not conditions:
            return Normal(program)
        live = _live(out.nodes, [new[o] for o in program.outputs])
        kept = {i for i, c in conditions.items() if new[c] in live or (program.nodes[c].op == "not" and
                                                                      new[program.nodes[c].args[0]] in live)}
        if not kept:
            return _pruned(program, out.nodes, [new[o] for o in program.outputs], new, len(conditions))
        banned |= kept


def _live(nodes: list[Node], outputs: list[int]) -> set[int]:
    """The nodes the outputs need, and every input."""
    needed = set(outputs) | {k for k, n in enumerate(nodes) if n.op == "input"}
    for k in range(len(nodes) - 1, -1, -1):
        if k in needed:
            needed.update(nodes[k].args)
    return needed


def _pruned(program: Program, nodes: list[Node], outputs: list[int], new: dict[int, int], rewrites: int) -> Normal:
    """Only the nodes the outputs need (and every input), renumbered in order."""
    order = sorted(_live(nodes, outputs))
    at = {old: k for k, old in enumerate(order)}
    kept = tuple(Node(nodes[k].op, tuple(at[a] for a in nodes[k].args), nodes[k].attr, nodes[k].lo, nodes[k].hi,
                      nodes[k].kind, nodes[k].bottom) for k in order)
    origin = {at[v]: k for k, v in new.items() if v in at and draws_randomness(program.nodes[k].op, program.nodes[k].attr)}
    normal = Program(name=program.name, params=program.params, nodes=kept, outputs=tuple(at[o] for o in outputs),
                     tuple_output=program.tuple_output, domain=program.domain, neighbours=program.neighbours)
    return Normal(normal, origin, rewrites)


def checked(program: Program) -> Program:
    """The normal form once :mod:`verifiers.prover.equivalence_check` confirmed that it gives the
    program's outputs for every input and draw, else the program itself.  Kept with the program
    (for that program object only: ``dataclasses.replace`` shares ``_meta`` with a changed copy)."""
    cached = program._meta.get("normal_form")
    if cached is not None and cached[0] is program:
        return cached[1]
    from verifiers.prover import equivalence_check

    normal = normal_form(program)
    ok = normal.rewrites and equivalence_check.check(program, normal.program, normal.draws) is None
    program._meta["normal_form"] = (program, normal.program if ok else program)
    return program._meta["normal_form"][1]
