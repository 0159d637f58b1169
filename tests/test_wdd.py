"""Weighted decision diagrams against brute force on random small functions."""

import itertools
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from verifiers.ratio import INF
from verifiers.bdd.wdd import WDD, ZERO

NV = 3


def build(wdd: WDD, values: list[int]):
    """The diagram of a table over NV variables (variable 0 most significant)."""
    def rec(v: int, vals: list[int]):
        if v == NV:
            return (vals[0], 0) if vals[0] else ZERO
        half = len(vals) // 2
        return wdd.node(v, rec(v + 1, vals[:half]), rec(v + 1, vals[half:]))
    return rec(0, values)


tables = st.lists(st.integers(0, 6), min_size=2**NV, max_size=2**NV)


def points():
    return list(itertools.product((0, 1), repeat=NV))


@given(tables, tables)
@settings(max_examples=60, deadline=None)
def test_add_evaluate_and_sharing(a, b):
    w = WDD(NV)
    ea, eb = build(w, a), build(w, b)
    s = w.add(ea, eb)
    assert [w.evaluate(s, list(p)) for p in points()] == [x + y for x, y in zip(a, b)]
    assert list(w.to_array(s)) == [x + y for x, y in zip(a, b)]
    # canonical: the same function built directly is the same edge
    assert s == build(w, [x + y for x, y in zip(a, b)])
    assert w.add(ea, ea) == build(w, [2 * x for x in a])


@given(tables, st.integers(0, NV - 1), st.integers(0, 1))
@settings(max_examples=40, deadline=None)
def test_restrict(a, v, bit):
    w = WDD(NV)
    r = w.restrict(build(w, a), {v: bit})
    for p in points():
        q = list(p)
        q[v] = bit
        assert w.evaluate(r, list(p)) == a[points().index(tuple(q))]


@given(tables, tables)
@settings(max_examples=60, deadline=None)
def test_max_ratio_and_power_sum(a, b):
    w = WDD(NV)
    ea, eb = build(w, a), build(w, b)
    r, bits = w.max_ratio(ea, eb)
    ratios = [INF if y == 0 else Fraction(x, y) for x, y in zip(a, b) if x > 0]
    if not ratios:
        assert r == 0 and bits is None
        return
    assert r == max(ratios)
    i = points().index(bits)
    assert a[i] > 0 and (INF if b[i] == 0 else Fraction(a[i], b[i])) == r
    s = w.power_sum(ea, eb, 3)
    expect = INF if any(x > 0 == y for x, y in zip(a, b)) else sum(
        (Fraction(x**3, y**2) for x, y in zip(a, b) if x), Fraction(0))
    assert s == expect


@given(tables)
@settings(max_examples=30, deadline=None)
def test_items_lists_the_support(a):
    w = WDD(NV)
    got = dict(w.items(build(w, a)))
    assert got == {p: x for p, x in zip(points(), a) if x}


def test_deep_diagrams_need_no_recursion():
    """A 5000-variable product: far beyond Python's recursion limit."""
    n = 5000
    w = WDD(n)
    e = (1, 0)
    for v in reversed(range(n)):
        e = w.node(v, (3 * e[0], e[1]), (e[0], e[1]))
    doubled = w.add(e, e)
    assert doubled[0] == 2 * e[0]
    r, bits = w.max_ratio(e, w.restrict(e, {0: 1}))
    assert r == 3 and bits[0] == 0
