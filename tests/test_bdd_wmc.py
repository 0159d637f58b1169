"""The BDD backend's counting: precision with complement edges, libraries, limits, refusals."""

import warnings
from fractions import Fraction

import pytest

from samplers import catalogue
from samplers.errors import BudgetExceeded, UnsupportedByBackend
from verifiers.bdd.backend import BDDBackend
from verifiers.bdd.bitblast import bdd_library, compile_program
from verifiers.enumerate import Enumerator
from verifiers.verify import verify


def _has_complement_edges(u) -> bool:
    seen, stack = set(), [u]
    while stack:
        f = stack.pop()
        if f.negated:
            return True
        if f.var is None or int(f) in seen:
            continue
        seen.add(int(f))
        stack += [f.low, f.high]
    return False


@pytest.mark.parametrize("library", ["dd.cudd", "dd.autoref"])
def test_tiny_probability_is_exact_with_complement_edges(library):
    """RR n=10, lam=1/5: P(out = 0^10 | in = 1^9 0) = (1/5)^9 (4/5) = 4.096e-7 exactly."""
    program = catalogue.get("rr").trace(n=10, lam="1/5")
    b = BDDBackend(program, library=library)
    x = (1,) * 9 + (0,)
    p = b.event_probability(x, [(0,) * 10])
    assert p == Fraction(4096, 10**10) == Fraction(1, 5) ** 9 * Fraction(4, 5)
    assert b.library == library
    if library == "dd.cudd":
        c = b.compiled
        assert _has_complement_edges(c.bdd.let(c.input_assignment(x), c.relation))


def test_libraries_agree():
    program = catalogue.get("noisy_max_geom").trace(m=3)
    cudd, auto = BDDBackend(program, library="dd.cudd"), BDDBackend(program, library="dd.autoref")
    for x in [(0, 2, 2), (1, 1, 1), (2, 0, 1)]:
        assert cudd.distribution(x) == auto.distribution(x) == Enumerator(program).distribution(x)


def test_default_library_is_cudd_when_it_imports():
    assert bdd_library()[1] == "dd.cudd"


def test_rr_relation_is_linear_in_n():
    sizes = [compile_program(catalogue.get("rr").trace(n=n)).size for n in (10, 20, 40)]
    assert sizes[1] - sizes[0] == (sizes[2] - sizes[1]) / 2  # the same nodes per client


def test_node_budget_exceeded_is_reported():
    program = catalogue.get("noisy_max_geom").trace()
    with pytest.raises(BudgetExceeded) as e:
        _ = BDDBackend(program, node_budget=50).compiled
    assert "budget" in str(e.value) and e.value.value == 50
    v = verify(program, backend="bdd", node_budget=50)
    assert v.status == "budget_exceeded" and v.result is None and v.limit == {"bdd_nodes": 50}


def test_continuous_noise_is_refused():
    with pytest.raises(UnsupportedByBackend, match="continuous noise"):
        BDDBackend(catalogue.get("laplace").trace())


def test_table_matches_the_enumerator():
    program = catalogue.get("noisy_max_geom").trace(m=3)
    t = BDDBackend(program).table()
    e = Enumerator(program)
    assert len(t.inputs) == 27
    for i, x in enumerate(t.inputs):
        d = e.distribution(x)
        for j, o in enumerate(t.outputs):
            assert Fraction(int(t.numerators[i, j]), t.denominator) == d.get(o, 0)


def test_weighted_diagram_budget():
    """The BDD fits but the joint count over every input and output does not."""
    program = catalogue.get("noisy_max_geom").trace(m=4)
    b = BDDBackend(program, node_budget=1000)
    assert b.size < 1000
    with pytest.raises(BudgetExceeded) as e:
        b.global_epsilon()
    assert e.value.limit == "wdd_nodes"


def test_dynamic_reordering_keeps_the_answers():
    program = catalogue.get("above_threshold_geom").trace(L=6)
    plain, sifted = BDDBackend(program), BDDBackend(program, reorder=True)
    x, xp = (1,) * 6, (2,) * 5 + (0,)
    assert plain.pair_epsilon(x, xp) == sifted.pair_epsilon(x, xp)
    assert plain.distribution((0, 1, 2, 0, 1, 2)) == sifted.distribution((0, 1, 2, 0, 1, 2))
    with warnings.catch_warnings():  # dd warns that a statistics unit changed
        warnings.simplefilter("ignore")
        assert sifted.compiled.bdd.statistics()["n_reorderings"] >= 1


def test_table_size_limit():
    with pytest.raises(BudgetExceeded, match="table"):
        BDDBackend(catalogue.get("rr").trace(n=14)).table()


def test_rappor_full_size_is_linear_in_cone_order():
    """RAPPOR draws all permanent bits before any instantaneous one; cone order keeps it small.

    Inputs 0 and 1 set 6 different Bloom bits; each costs 0.5125/0.4875 = 41/39.
    """
    from fractions import Fraction

    from samplers import catalogue
    from verifiers.bdd.backend import BDDBackend

    b = BDDBackend(catalogue.get("rappor").trace())
    assert b.pair_epsilon((0,), (1,))[0] == Fraction(41, 39) ** 6
