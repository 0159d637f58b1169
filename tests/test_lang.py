"""The mechanism language: tracing, ranges, folding, parameters and the errors it gives."""

from fractions import Fraction

import pytest

from samplers import catalogue
from samplers.catalogue.murmur import murmur3_32
from samplers.errors import DomainError, LanguageError, ParameterError
from samplers.lang import (
    BOTTOM, all_differ, argmax, categorical, clamp, custom, discrete_laplace, exact, flip, ints, ite,
    laplace, maximum, mechanism, minimum, one_differ, replace_one, two_sided_geometric, uniform,
)
from samplers.lang.domain import Domain
from verifiers.enumerate import distribution


def _mech(body, **kw):
    spec = dict(domain=ints(lo=0, hi=2, size=2), neighbours=one_differ)
    spec.update(kw)
    return mechanism(**spec)(body)


def test_float_parameters_keep_their_exact_binary_value():
    assert exact("1/2") == Fraction(1, 2)
    assert exact(0.7) == Fraction(3152519739159347, 4503599627370496)
    assert exact("0.7") == exact(0.7) != Fraction(7, 10)
    assert exact("3") == 3
    with pytest.raises(ParameterError):
        exact("1/0")
    with pytest.raises(ParameterError):
        exact("half")


def test_parameters_are_coerced_to_the_type_of_their_default():
    mech = catalogue.get("noisy_max_geom")
    p = mech.params(m="3", a="0.25", tie="first")
    assert p == {"m": 3, "n": 2, "a": Fraction(1, 4), "tie": "first"}
    with pytest.raises(ParameterError, match="integer"):
        mech.params(m="2.5")
    with pytest.raises(ParameterError, match="unknown parameter 'q'"):
        mech.params(q=1)
    with pytest.raises(ParameterError, match="tie"):
        mech.params(tie="random")


def test_trace_ranges_and_geometric_window():
    prog = catalogue.get("trunc_geom").trace(m=2, a="1/2")
    draw = next(n for n in prog.nodes if n.op == "draw")
    lo, weights = draw.attr
    assert lo == -2 and weights == (Fraction(1, 6), Fraction(1, 6), Fraction(1, 3), Fraction(1, 6), Fraction(1, 6))
    out = prog.nodes[prog.outputs[0]]
    assert (out.lo, out.hi) == (0, 2)


def test_constant_folding_and_sharing():
    def body(x):
        a = x[0] + 1
        b = x[0] + 1  # shared with a
        return a + b + (3 * 4 - 12) + ite(x[0] < 5, 0, 7)  # the comparison folds by range

    prog = _mech(body).trace()
    assert sum(n.op == "add" for n in prog.nodes) == 2
    assert not any(n.op in ("ite", "lt", "mul") for n in prog.nodes)


def test_symbolic_values_refuse_python_control_flow():
    def body(x):
        if x[0] > 0:
            return 1
        return 0

    with pytest.raises(LanguageError, match="ite"):
        _mech(body).trace()


def test_builtin_max_is_refused_with_a_hint():
    with pytest.raises(LanguageError, match="Python bool"):
        _mech(lambda x: max(x[0], x[1])).trace()
    assert distribution(_mech(lambda x: maximum(x[0], x[1])).trace(), (1, 2)) == {2: 1}
    assert distribution(_mech(lambda x: minimum(x[0], x[1])).trace(), (1, 2)) == {1: 1}


@pytest.mark.parametrize("body, error, message", [
    (lambda x: x[0] ^ flip("3/2"), ParameterError, "outside"),
    (lambda x: x[0] + categorical([1]), ParameterError, "at least 2"),
    (lambda x: x[0] + categorical([1, -1]), ParameterError, "non-negative"),
    (lambda x: x[0] + uniform(3, 1), ParameterError, "empty"),
    (lambda x: clamp(x[0] + two_sided_geometric(1), 0, 2), ParameterError, "0 <= a < 1"),
    (lambda x: x[0] + two_sided_geometric("1/2"), LanguageError, "clamp"),
    (lambda x: x[0] * two_sided_geometric("1/2"), LanguageError, "unbounded"),
    (lambda x: x[0] + discrete_laplace(2, 3), ParameterError, "0 < a < 1"),
    (lambda x: x[0] / 3, LanguageError, "power of two"),
    (lambda x: x[0] & x[1], LanguageError, "boolean"),
    (lambda x: ite(x[0], 1, 0), LanguageError, "boolean"),
    (lambda x: ite(x[0] > 0, BOTTOM, 1) + 1, LanguageError, "bottom"),
    (lambda x: x[0] + Fraction(1, 2), LanguageError, "rational"),
    (lambda x: x[0] + laplace(-1), ParameterError, "positive"),
    (lambda x: argmax(x, ties="random"), LanguageError, "ties"),
    (lambda x: None, LanguageError, "nothing"),
    (lambda x: clamp(x[0], 3, 1), LanguageError, "exceeds"),
    (lambda x: "a", LanguageError, "program value"),
])
def test_invalid_programs_fail_at_trace_time(body, error, message):
    with pytest.raises(error, match=message):
        _mech(body).trace()


def test_definition_time_errors():
    with pytest.raises(LanguageError, match="keyword-only"):
        mechanism(domain=ints(), neighbours=one_differ)(lambda x, m: x[0])
    with pytest.raises(LanguageError, match="ints"):
        mechanism(domain=(0, 1), neighbours=one_differ)(lambda x: x[0])


def test_flip_with_certain_outcome_is_constant():
    prog = _mech(lambda x: x[0] + flip(1)).trace()
    assert not any(n.op == "draw" for n in prog.nodes)
    assert distribution(prog, (1, 0)) == {2: 1}


def test_bottom_outputs_and_early_stop():
    def body(x):
        out, halted = [], 0
        for v in x:
            out.append(ite(halted, BOTTOM, v))
            halted = halted | (v > 0)
        return tuple(out)

    prog = _mech(body, domain=ints(lo=0, hi=1, size=3)).trace()
    assert distribution(prog, (0, 1, 1)) == {(0, 1, BOTTOM): 1}
    assert repr(BOTTOM) == "⊥"


def test_domain_checks_and_neighbours():
    d = Domain((0, 0), (2, 1))
    assert d.count() == 6 and len(list(d.points())) == 6
    assert not d.single() and Domain((3, 0), (3, 0)).single()
    assert d.check([2, 1]) == (2, 1)
    with pytest.raises(DomainError, match="outside"):
        d.check([3, 0])
    with pytest.raises(DomainError, match="coordinates"):
        d.check([1])
    with pytest.raises(DomainError, match="integers"):
        d.check([0.5, 1])
    assert set(one_differ.of((0, 1), d)) == {(1, 1), (0, 0)}
    assert set(all_differ.of((0, 1), d)) == {(1, 1), (0, 0), (1, 0)}
    assert set(replace_one.of((0, 1), d)) == {(1, 1), (2, 1), (0, 0)}
    far = custom(lambda a, b: abs(a[0] - b[0]) == 2 and a[1] == b[1], "far")
    assert list(far.of((0, 1), d)) == [(2, 1)]
    for rel in (one_differ, all_differ, replace_one, far):
        for x, xp in rel.pairs(d):
            assert rel.contains(x, xp) and rel.contains(xp, x)


def test_noisy_max_pair_count_matches_reference():
    """REFERENCE.md: 16,564 ordered all_differ pairs over the 243 inputs of {0..2}^5."""
    prog = catalogue.get("noisy_max_geom").trace()
    assert prog.domain.count() == 243
    assert sum(1 for _ in prog.neighbours.pairs(prog.domain)) == 16564


def test_catalogue_lookup_by_alias_and_errors():
    assert catalogue.get("ReportNoisyMax1").name == "report_noisy_max1"
    assert catalogue.get("noisy_max_v1a").name == "report_noisy_max1"
    assert catalogue.get("SVT").name == "svt1"
    with pytest.raises(Exception, match="did you mean"):
        catalogue.get("noisy_max_gem")


def test_every_catalogue_mechanism_traces_and_documents_itself():
    for mech in catalogue.mechanisms():
        prog = mech.trace()
        assert prog.nodes and prog.outputs
        assert mech.doc, f"{mech.name} lacks a docstring citing its source"


def test_kary_rr_validation_follows_opendp_in_f64():
    mech = catalogue.get("kary_rr")
    with pytest.raises(ParameterError, match="at least 2"):
        mech.trace(k=1)
    with pytest.raises(ParameterError, match="1/k"):
        mech.trace(k=4, p="1/5")
    with pytest.raises(ParameterError, match="1/k"):
        mech.trace(k=3, p=1)
    # 1/3 rounds to the same double as 1.0/3: accepted, exactly as OpenDP accepts it
    mech.trace(k=3, p="1/3")
    # a rational just below 1/3 that rounds to the same double is accepted too
    sneaky = Fraction(1, 3) - Fraction(1, 10**30)
    assert float(sneaky) == 1.0 / 3
    mech.trace(k=3, p=sneaky)


@pytest.mark.parametrize("data, seed, expected", [
    ("", 0, 0), ("", 1, 1364076727), ("hello", 0, 613153351),
    ("The quick brown fox jumps over the lazy dog", 0, 776992547),
    ("0", 0, -764297089), ("-10", 3, -2053170016), ("abc", 7, 940791465),
    ("abcd", 2, 1074168784), ("abcde", 99, 739144864),
])
def test_murmur3_matches_the_reference_implementation(data, seed, expected):
    """Vectors computed with the mmh3 package (MurmurHash3_x86_32)."""
    assert murmur3_32(data.encode(), seed) == expected


def test_rappor_bloom_bits_match_dpsniper():
    from samplers.catalogue.rappor import bloom_bits

    assert bloom_bits(0, 4, 20) == {0, 11, 18}
    assert bloom_bits(1, 4, 20) == {3, 10, 13}
    assert bloom_bits(-1, 4, 20) == {11, 15, 17, 18}


def test_division_by_a_power_of_two_is_exact_and_other_divisors_are_refused():
    from samplers.lang import laplace

    @mechanism(domain=ints(lo=0, hi=3, size=2), neighbours=one_differ)
    def average(x):
        return (x[0] + x[1]) / 2 + laplace(1)

    ops = [n.op for n in average.trace().nodes]
    assert "mul" in ops and "ite" not in ops  # (x0 + x1) * 0.5: exact, kept symbolic

    @mechanism(domain=ints(lo=0, hi=3, size=3), neighbours=one_differ)
    def thirds(x):
        return (x[0] + x[1] + x[2]) / 3 + laplace(1)

    with pytest.raises(LanguageError, match="only division by a power of two"):
        thirds.trace()


def test_settled_nodes_are_what_a_replay_gives():
    """Builder.finish keeps settled nodes as they are, without the replay: sound because a builder's
    nodes are a fixed point of replay -- for every catalogue program, replaying its nodes gives them
    back unchanged, outputs included."""
    from samplers.catalogue import mechanisms
    from samplers.lang.builder import replay

    for m in mechanisms():
        prog = m.trace()
        assert replay(prog.nodes, prog.outputs) == (list(prog.nodes), list(prog.outputs)), m.name
