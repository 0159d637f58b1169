"""StatDP-style plain functions (samplers/plain/examples.py) against their catalogue twins.

A traced function must give the twin's program (the same IR up to node numbering), or
where control flow differs (break and counters against ite and sums), the same exact
output distribution enclosures and pair levels; the slow tests run the whole search.
"""

from __future__ import annotations

import pytest

import hybrid
from samplers import catalogue
from samplers.lang.ir import Program
from samplers.plain import examples as ex
from samplers.plain import statdp
from verifiers.continuous.backend import ContinuousBackend

HIST = dict(domain=(0, 10), neighbours="one_differ")


def canonical(program: Program) -> tuple:
    """The outputs as expression trees, noise numbered by first use: equal iff the programs are isomorphic.

    A float64 conversion of an integer (``x * 1.0``, what ``np.asarray(queries, dtype=np.float64)``
    traces to) is the integer's value: the builder proved it exact, and the catalogue adds the integer.
    """
    labels: dict[int, int] = {}
    memo: dict[int, tuple] = {}

    def walk(i: int) -> tuple:
        if i not in memo:
            n = program.nodes[i]
            one = [a for a in n.args if program.nodes[a].op == "const" and program.nodes[a].attr == 1.0]
            if n.op == "mul" and n.kind == "float" and one:
                (other,) = [a for a in n.args if a != one[0]] or one
                memo[i] = walk(other)
                return memo[i]
            args = tuple(walk(a) for a in n.args)
            noise = labels.setdefault(i, len(labels)) if not n.args and n.op not in ("const", "input") else None
            memo[i] = (n.op, repr(n.attr), n.lo, n.hi, n.kind, n.bottom, noise, args)
        return memo[i]

    return (program.tuple_output, tuple(walk(o) for o in program.outputs), program.domain,
            program.neighbours.name)


SAME_PROGRAM = [
    (ex.noisy_max_laplace, {}, "report_noisy_max1"),
    (ex.noisy_max_exponential, {}, "report_noisy_max2"),
    (ex.noisy_max_laplace_value, {}, "report_noisy_max3"),
    (ex.noisy_max_exponential_value, {}, "report_noisy_max4"),
    (ex.histogram, HIST, "noisy_hist1"),
    (ex.histogram_wrong_scale, HIST, "noisy_hist2"),
]


@pytest.mark.parametrize("fn, settings, twin", SAME_PROGRAM, ids=[t for _, _, t in SAME_PROGRAM])
@pytest.mark.parametrize("eps", [0.1, 0.7])
def test_traced_function_is_the_twins_program(fn, settings, twin, eps):
    mine = statdp(fn, size=4, **settings).trace(epsilon=eps)
    theirs = catalogue.get(twin).trace(n=4, eps=eps)
    assert canonical(mine) == canonical(theirs)
    assert mine._meta["paths"] == 1  # numpy calls map to operations, nothing forks


SAME_LAW = [
    (ex.svt, "svt1", {}), (ex.svt, "svt1", {"N": 2}), (ex.isvt1, "svt5", {}), (ex.isvt2, "svt6", {}),
    (ex.isvt3, "svt4", {}), (ex.isvt3, "svt4", {"N": 2}),
]


@pytest.mark.parametrize("fn, twin, kw", SAME_LAW, ids=[f"{t}-{kw}" for _, t, kw in SAME_LAW])
def test_traced_sparse_vector_has_the_twins_exact_law(fn, twin, kw):
    mine = ContinuousBackend(statdp(fn, size=3).trace(epsilon=0.5, **kw))
    theirs = ContinuousBackend(catalogue.get(twin).trace(n=3, eps=0.5, **({"c": kw["N"]} if kw else {})))
    for x in [(0, 0, 0), (1, 0, 1), (-2, 3, 0)]:
        a, b = mine.distribution(x), theirs.distribution(x)
        assert a.keys() == b.keys()
        for o in a:
            assert abs(a[o].lo - b[o].lo) <= 1e-9 and abs(a[o].hi - b[o].hi) <= 1e-9, o
    for x, xp in [((0, 0, 0), (1, 1, 1)), ((1, 0, 1), (0, 1, 0))]:
        pa, pb = mine.pair_epsilon(x, xp), theirs.pair_epsilon(x, xp)
        assert pa.bracket[0] == pytest.approx(pb.bracket[0], abs=1e-6)
        assert pa.bracket[1] == pytest.approx(pb.bracket[1], abs=1e-6)


def test_svt_paths_are_forked_not_sampled():
    """SVT with cutoff 1 over n queries has n + 1 paths: the first answer above at i, or none."""
    for n in (1, 4, 10):
        assert statdp(ex.svt, size=n).trace()._meta["paths"] == n + 1


SEARCHED = [(ex.svt, {}, "svt1", {}), (ex.isvt4, {}, "svt3", {}), (ex.isvt1, {}, "svt5", {})]


@pytest.mark.slow
@pytest.mark.parametrize("fn, kw, twin, tw", SEARCHED, ids=[t for _, _, t, _ in SEARCHED])
def test_search_certifies_the_twins_bound_and_refutes_the_same_claims(fn, kw, twin, tw):
    mine = hybrid.search(statdp(fn, size=2), {"epsilon": 0.1, **kw}, claimed_eps=0.05)
    theirs = hybrid.search(twin, {"n": 2, "eps": 0.1, **tw}, claimed_eps=0.05)
    assert mine.certified and theirs.certified
    assert mine.eps_lower == pytest.approx(theirs.eps_lower, abs=1e-6)
    assert mine.refuted == theirs.refuted
