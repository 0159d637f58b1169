"""Exact linear forms ``c + sum k_v * v`` over named variables (Fraction coefficients).

The prover's symbolic values: a program value on a path is a linear form over the
inputs ``("x", i)`` and the noise draws ``("e", node)``; an alignment shift is a linear
form over the neighbour differences ``("d", i)`` (``d_i = x_i - x'_i``).
"""

from __future__ import annotations

from collections.abc import Mapping
from fractions import Fraction

Var = tuple[str, int]


class Lin:
    """An immutable linear form; ``coef`` never holds a zero coefficient."""

    __slots__ = ("coef", "const")

    def __init__(self, const: Fraction | int = 0, coef: Mapping[Var, Fraction] | None = None) -> None:
        self.const = const if type(const) is Fraction else Fraction(const)
        self.coef = {v: (k if type(k) is Fraction else Fraction(k)) for v, k in (coef or {}).items() if k != 0}

    @classmethod
    def _make(cls, const: Fraction, coef: dict[Var, Fraction]) -> Lin:
        out = cls.__new__(cls)
        out.const = const
        out.coef = coef
        return out

    @staticmethod
    def var(v: Var) -> Lin:
        return Lin(0, {v: Fraction(1)})

    def __add__(self, other: Lin) -> Lin:
        coef = dict(self.coef)
        for v, k in other.coef.items():
            s = coef.get(v, 0) + k
            if s:
                coef[v] = s
            else:
                coef.pop(v, None)
        return Lin._make(self.const + other.const if other.const else self.const, coef)

    def scale(self, k: Fraction | int) -> Lin:
        k = Fraction(k)
        if k == 1:
            return self
        if k == 0:
            return Lin()
        return Lin._make(self.const * k, {v: c * k for v, c in self.coef.items()})

    def __neg__(self) -> Lin:
        return Lin._make(-self.const, {v: -c for v, c in self.coef.items()})

    def __sub__(self, other: Lin) -> Lin:
        coef = dict(self.coef)
        for v, k in other.coef.items():
            s = coef.get(v, 0) - k
            if s:
                coef[v] = s
            else:
                coef.pop(v, None)
        return Lin._make(self.const - other.const if other.const else self.const, coef)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Lin) and self.const == other.const and self.coef == other.coef

    def __hash__(self) -> int:
        return hash((self.const, frozenset(self.coef.items())))

    @property
    def is_const(self) -> bool:
        return not self.coef

    def vars_of(self, kind: str) -> list[Var]:
        return [v for v in self.coef if v[0] == kind]

    def part(self, *kinds: str) -> Lin:
        """The terms over variables of the given kinds (no constant)."""
        return Lin(0, {v: k for v, k in self.coef.items() if v[0] in kinds})

    def rename(self, kind: str, to: str) -> Lin:
        return Lin(self.const, {((to if v[0] == kind else v[0]), v[1]): k for v, k in self.coef.items()})

    def differences(self) -> Lin:
        """The input terms as neighbour differences: ``x_i`` to ``d_i``, a noise-free derived
        value ``v_k`` to its difference ``w_k = v_k(x) - v_k(x')`` (no constant, no noise)."""
        return self.part("x", "v").rename("x", "d").rename("v", "w")

    def substitute(self, values: Mapping[Var, Lin]) -> Lin:
        out = Lin(self.const)
        for v, k in self.coef.items():
            out = out + (values[v].scale(k) if v in values else Lin(0, {v: k}))
        return out

    def __repr__(self) -> str:
        return render(self)


def _name(v: Var) -> str:
    if v[0] in "vw":  # a noise-free derived value (the IR node), its difference between x and x'
        return f"%{v[1]}" if v[0] == "v" else f"(%{v[1]} - %{v[1]}')"
    return {"x": "x", "e": "eta_", "d": "d"}[v[0]] + (f"[{v[1]}]" if v[0] in "xd" else str(v[1]))


def render(form: Lin, names: Mapping[Var, str] | None = None) -> str:
    """A readable form such as ``1 + d[3]`` or ``2*x[0] - eta_7 + 1/2``."""
    parts: list[str] = []
    for v, k in sorted(form.coef.items()):
        name = (names or {}).get(v) or _name(v)
        mag = abs(k)
        term = name if mag == 1 else f"{mag}*{name}"
        parts.append(("- " if k < 0 else "+ ") + term)
    if form.const != 0 or not parts:
        parts.append(("- " if form.const < 0 else "+ ") + str(abs(form.const)))
    text = " ".join(parts)
    return text[2:] if text.startswith("+ ") else "-" + text[2:]

