"""HMMs: exact forward algorithm, file format, and compilation from the mechanism language."""

import itertools
from fractions import Fraction as F

import pytest

from samplers import catalogue
from samplers.errors import LimitExceeded, ParameterError
from verifiers.enumerate import distribution, distribution_naive
from verifiers.smt.hmm import HMM, instance_from_dict, parse_param
from verifiers.smt.hmm_compile import START, hmm_from_distribution, hmm_from_program
from verifiers.smt.poly import Poly

from small import SMALL

COMPILED = ["rr", "kary_rr", "trunc_geom", "rr_count", "noisy_max_geom", "noisy_max_geom_value",
            "above_threshold_geom", "histogram_geom", "svt_geom", "isvt2_geom"]


def _paths(hmm, init, k):
    """P(observation sequence) by summing over every state path (the definition)."""
    out = {}
    n = len(hmm.states)
    for path in itertools.product(range(n), repeat=k):
        p = init.get(path[0], F(0))
        for a, b in zip(path, path[1:]):
            p *= hmm.trans[a].get(b, F(0))
        if not p:
            continue
        for obs in itertools.product(range(len(hmm.symbols)), repeat=k):
            q = p
            for s, o in zip(path, obs):
                q *= hmm.emit[s].get(o, F(0))
            if q:
                out[obs] = out.get(obs, F(0)) + q
    return out


def test_forward_equals_sum_over_paths():
    hmm = HMM(
        ["a", "b", "c"], ["x", "y"],
        [{0: F(1, 2), 1: F(1, 3), 2: F(1, 6)}, {1: F(3, 4), 2: F(1, 4)}, {0: F(1)}],
        [{0: F(1, 5), 1: F(4, 5)}, {0: F(1)}, {1: F(2, 3), 0: F(1, 3)}],
    )
    init = {0: F(2, 7), 2: F(5, 7)}
    for k in (1, 2, 3, 4):
        seqs = hmm.sequences(init, k)
        assert seqs == _paths(hmm, init, k)
        assert sum(seqs.values()) == 1
        assert all(hmm.probability(init, o) == p for o, p in seqs.items())


def test_parametric_forward():
    p = Poly.var("p")
    hmm = HMM(["s", "t"], ["0", "1"], [{0: 1 - p, 1: p}, {1: F(1)}], [{0: F(1)}, {1: F(1)}],
              {"p": parse_param("p", "[0, 1]")})
    assert hmm.parametric
    seqs = hmm.sequences({0: F(1)}, 3)
    assert seqs[(0, 0, 0)] == (1 - p) ** 2 and seqs[(0, 0, 1)] == (1 - p) * p and seqs[(0, 1, 1)] == p
    assert sum(seqs.values(), F(0)) == 1
    fixed = hmm.substitute({"p": F(1, 4)})
    assert not fixed.parametric and fixed.sequences({0: F(1)}, 2)[(0, 1)] == F(1, 4)


@pytest.mark.parametrize("text,inside,outside", [
    ("(0, 1)", [F(1, 2)], [F(0), F(1)]),
    ("[0, 1]", [F(0), F(1)], [F(-1, 10), F(11, 10)]),
    ("(0, 1/2]", [F(1, 2)], [F(0), F(3, 5)]),
    ("[1, inf)", [F(10**9)], [F(0)]),
])
def test_param_ranges(text, inside, outside):
    p = parse_param("p", text)
    assert all(p.contains(v) for v in inside) and not any(p.contains(v) for v in outside)


@pytest.mark.parametrize("text", ["0..1", "(1, 0)", "(0, 0]", "[a, 1]"])
def test_bad_param_ranges(text):
    with pytest.raises(ParameterError):
        parse_param("p", text)


def _model(**over):
    d = {"states": ["u", "v"], "symbols": ["0", "1"], "params": {"p": "[0, 1]"},
         "transitions": {"u": {"v": 1}, "v": {"v": 1}},
         "emissions": {"u": {"0": "1 - p", "1": "p"}, "v": {"1": 1}},
         "pairs": [{"name": "u/v", "pi": {"u": 1}, "tau": {"v": 1}}], "k": 2}
    d.update(over)
    return d


def test_file_format_round():
    inst = instance_from_dict(_model())
    assert inst.k == 2 and inst.params["p"].lo == 0 and inst.hmm.parametric
    assert inst.hmm.sequences(inst.pairs[0].pi, 1)[(1,)] == Poly.var("p")


@pytest.mark.parametrize("over,match", [
    ({"transitions": {"u": {"v": "1/2"}, "v": {"v": 1}}}, "sums to 1/2"),
    ({"emissions": {"u": {"0": "1 - q", "1": "q"}, "v": {"1": 1}}}, "unknown parameter 'q'"),
    ({"transitions": {"u": {"w": 1}, "v": {"v": 1}}}, "unknown name 'w'"),
    ({"transitions": {"u": {"v": 1}}}, "needs a transition row"),
    ({"emissions": {"u": {"0": "3/2", "1": "-1/2"}, "v": {"1": 1}}}, "not a probability"),
    ({"pairs": []}, "no initial pairs"),
    ({"pairs": [{"name": "x", "pi": {"u": 0}, "tau": {"v": 1}}]}, "no positive weight"),
    ({"k": 0}, "k must be a positive integer"),
])
def test_file_format_errors(over, match):
    with pytest.raises(ParameterError, match=match):
        instance_from_dict(_model(**over))


def test_hmm_needs_declared_params():
    q = Poly.var("q")
    with pytest.raises(ParameterError, match="undeclared"):
        HMM(["u", "w"], ["0"], [{0: 1 - q, 1: q}, {1: F(1)}], [{0: F(1)}, {0: F(1)}])


@pytest.mark.parametrize("name", COMPILED)
def test_compiled_model_has_the_exact_distribution(name):
    program = catalogue.get(name).trace(**SMALL[name])
    points = list(program.domain.points())[:: max(1, program.domain.count() // 6)]
    for split in ((), ("argmax",)):
        hmm, dec = hmm_from_program(program, points, split_before=split)
        for x in points:
            seqs = hmm.sequences({hmm.state_index[(0, x, START)]: F(1)}, dec.steps)
            got = {}
            for obs, p in seqs.items():
                o = dec(hmm.decode(obs))
                got[o] = got.get(o, F(0)) + p
            assert got == distribution(program, x) == distribution_naive(program, x)
    one, dec1 = hmm_from_distribution(program, points[:2])
    assert one.sequences({0: F(1)}, 1) and dec1(one.decode((0,))) in distribution(program, points[0])


def test_noisy_max_is_faiers_figure():
    """Cut before the argmax: input states, noisy-value states emitting the index, 2 steps."""
    program = catalogue.get("noisy_max_geom").trace(m=3)
    hmm, dec = hmm_from_program(program, split_before=("argmax",))
    layers = [s[0] for s in hmm.states]
    assert layers.count(0) == 27 and layers.count(1) == 27 and dec.steps == 2
    state = next(i for i, s in enumerate(hmm.states) if s[0] == 1 and s[1] == (0, 2, 1))
    # the noisy-value layer emits the index itself (folded), not a silent symbol
    assert hmm.emit[state] == {hmm.symbol_index[2]: F(1)}
    x = hmm.state_index[(0, (0, 1, 1), START)]
    # P(0|0) P(2|1) P(1|1); FAIER's figure prints the last factor as 2/3, but P(1|1) = 1/3
    assert hmm.trans[x][state] == F(2, 3) * F(1, 3) * F(1, 3)
    y = hmm.state_index[(0, (1, 2, 0), START)]
    assert hmm.trans[y][state] == F(1, 3) * F(2, 3) * F(1, 6)


def test_state_budget_is_explicit():
    program = catalogue.get("noisy_max_geom").trace(m=3)
    with pytest.raises(LimitExceeded, match="exceed 10 states"):
        hmm_from_program(program, split_before=("argmax",), max_states=10)
