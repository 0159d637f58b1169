"""z3 decisions (FAIER's Algorithm 1) and the smt backend against the enumerator."""

from fractions import Fraction as F

import pytest

z3 = pytest.importorskip("z3")

from samplers import catalogue  # noqa: E402
from samplers.errors import ParameterError, SolverUnknown  # noqa: E402
from verifiers.backends import get_backend  # noqa: E402
from verifiers.enumerate import Enumerator  # noqa: E402
from verifiers.smt.hmm import HMM, parse_param  # noqa: E402
from verifiers.smt.poly import Poly  # noqa: E402
from verifiers.ratio import INF  # noqa: E402
from verifiers.smt.backend import SAT, UNKNOWN, UNSAT, SmtBackend, decide, rational  # noqa: E402

# The discrete catalogue at sizes a unit test affords (the bench runs the big ones).
CATALOGUE = {
    "rr": dict(n=3), "kary_rr": dict(k=4, p="7/10"), "trunc_geom": dict(m=3, a="1/4"),
    "rr_count": dict(n=3), "noisy_max_geom": dict(m=3), "noisy_max_geom_value": dict(m=3),
    "above_threshold_geom": dict(L=2), "histogram_geom": dict(m=2),
    "histogram_geom_wrong_scale": dict(m=2), "svt_geom": dict(L=2), "isvt1_geom": dict(L=2),
}


def test_rational_is_exact():
    assert rational(F(288, 73)).as_fraction() == F(288, 73)
    with pytest.raises(ParameterError):
        decide(HMM(["s"], ["o"], [{0: F(1)}], [{0: F(1)}]), {0: F(1)}, {0: F(1)}, F(-1), 1)


def _pairs(program, count=5):
    pairs = list(program.neighbours.pairs(program.domain))
    return pairs[:: max(1, len(pairs) // count)][:count]


@pytest.mark.parametrize("name", sorted(CATALOGUE))
def test_smt_backend_agrees_with_enumerate(name):
    """Same exact ratios, same distributions, same decisions at and just below every pair's ratio."""
    program = catalogue.get(name).trace(**CATALOGUE[name])
    smt, ref = get_backend(program, "smt"), Enumerator(program)
    assert smt.name == "smt"
    for x, xp in _pairs(program):
        assert smt.distribution(x) == ref.distribution(x)
        r, o = ref.pair_epsilon(x, xp)
        assert smt.pair_epsilon(x, xp) == (r, o)
        cs = [F(1), F(1, 2)] + ([r, r - F(1, 10**6)] if r != INF else [F(10**9)])
        for c in cs:
            got, want = smt.exists_violation(x, xp, c), ref.exists_violation(x, xp, c)
            assert (got is None) == (want is None), (x, xp, c, got, want)
            if got is not None:  # the SMT witness is a genuine violation
                assert ref.distribution(x).get(got, F(0)) > c * ref.distribution(xp).get(got, F(0))


def test_noisy_max_witness_pair():
    """REFERENCE.md: [1,1,1,1,1] against [0,2,2,2,2] at e^eps = 288/73, output index 1."""
    smt = SmtBackend(catalogue.get("noisy_max_geom").trace(m=5))
    x, xp = (1, 1, 1, 1, 1), (0, 2, 2, 2, 2)
    assert smt.exists_violation(x, xp, F(288, 73)) is None
    v, dec, hmm = smt.decide(x, xp, F(288, 73) - F(1, 10**12))
    assert v.status == SAT and v.ratio == F(288, 73) and dec(hmm.decode(v.observation)) == 1
    assert smt.distribution(xp)[1] == F(73, 1440)


def test_above_threshold_levels():
    """REFERENCE.md: e^eps = 2, 4, 16 for L = 1, 2, 4 ([1]*L against [2]*(L-1) + [0] for L > 1)."""
    cases = (((1,), (2,), 2, (0,)), ((1, 1), (2, 0), 4, (0, 1)), ((1,) * 4, (2, 2, 2, 0), 16, (0, 0, 0, 1)))
    for x, xp, level, output in cases:
        smt = SmtBackend(catalogue.get("above_threshold_geom").trace(L=len(x)))
        assert smt.exists_violation(x, xp, F(level)) is None
        assert smt.exists_violation(x, xp, F(level) - F(1, 1000)) == output


def _toy(p=None):
    """A two-step model; the emission of state a is 1/3 or a parameter p."""
    e = F(1, 3) if p is None else p
    return HMM(["a", "b", "c"], ["x", "y"],
               [{1: F(1, 2), 2: F(1, 2)}, {1: F(1)}, {2: F(1)}],
               [{0: e, 1: 1 - e}, {0: F(1, 4), 1: F(3, 4)}, {0: F(1)}],
               {} if p is None else {"p": parse_param("p", "[1/10, 9/10]")})


@pytest.mark.parametrize("k", [1, 2, 3])
def test_encodings_agree(k):
    """FAIER's symbolic observations and the enumerated polynomial encoding give the same answers."""
    hmm = _toy()
    pi, tau = {0: F(1)}, {0: F(1, 2), 1: F(1, 2)}
    seqs_pi, seqs_tau = hmm.sequences(pi, k), hmm.sequences(tau, k)
    best = max(seqs_pi[o] / seqs_tau[o] if o in seqs_tau else INF for o in seqs_pi)
    for c in (F(1), best - F(1, 10**9), best):
        a = decide(hmm, pi, tau, c, k, encoding="symbolic")
        b = decide(hmm, pi, tau, c, k, encoding="enumerated")
        assert a.status == b.status == (UNSAT if c >= best else SAT)
        if a.status == SAT:
            assert a.ratio > c and b.ratio > c


def test_parametric_query_synthesises_exact_parameters():
    p = Poly.var("p")
    hmm = _toy(p)
    pi, tau = {0: F(1)}, {1: F(1)}  # ratio of "x" then "x" is p / (1/4): largest 18/5 at p = 9/10
    v = decide(hmm, pi, tau, F(3), 1)
    assert v.status == SAT and v.encoding == "enumerated"
    assert F(3, 4) < v.params["p"] <= F(9, 10) and v.ratio == v.params["p"] * 4
    assert decide(hmm, pi, tau, F(18, 5), 1).status == UNSAT
    with pytest.raises(ParameterError, match="symbolic observation encoding needs a constant model"):
        decide(hmm, pi, tau, F(3), 1, encoding="symbolic")


def test_unknown_is_a_result():
    """A z3 resource limit gives 'unknown' (and the backend raises SolverUnknown), never a crash."""
    hmm = _toy()
    v = decide(hmm, {0: F(1)}, {1: F(1)}, F(1), 3, rlimit=1)
    assert v.status == UNKNOWN and v.reason
    limited = SmtBackend(catalogue.get("noisy_max_geom").trace(m=3), rlimit=1)
    with pytest.raises(SolverUnknown):
        limited.exists_violation((1, 1, 1), (0, 2, 2), F(2))
