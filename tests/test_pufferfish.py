"""FAIER's reference instances (the shipped model files), Pufferfish specs, DP as a special case."""

import json
import math
from fractions import Fraction as F

import pytest

pytest.importorskip("z3")

from samplers import catalogue  # noqa: E402
from samplers.errors import DomainError, DPHybridError  # noqa: E402
from verifiers.enumerate import Enumerator  # noqa: E402
from verifiers.smt.pufferfish import (  # noqa: E402
    bisect_instance, check_instance, check_lengths, dp_instance, instance_from_model, load_model,
    shipped_models, spec_from_dict,
)
from verifiers.smt.poly import Poly  # noqa: E402
from verifiers.smt.backend import UNSAT  # noqa: E402


def _observed(inst, check):
    return inst.hmm.decode(check.verdict.observation)


def test_every_shipped_model_loads():
    assert set(shipped_models()) >= {
        "geometric_dp", "geometric_contagious", "geometric_independent", "noisy_max_independent",
        "noisy_max_contagious", "above_threshold_loop", "noisy_max5_witness"}
    for name in shipped_models():
        inst = load_model(name)
        assert inst.pairs and inst.k >= 1 and inst.description


def test_geometric_dp():
    inst = load_model("geometric_dp")
    assert check_instance(inst, F(2)).status == "holds"
    r = check_instance(inst, F(1999, 1000))
    assert r.status == "violated" and r.witness.verdict.ratio == 2


def test_geometric_contagious_ratio_4():
    inst = load_model("geometric_contagious")
    r = check_instance(inst, F(2))
    assert r.status == "violated" and _observed(inst, r.witness)[1] in (0, 2)
    v = r.witness.verdict
    assert 0 < v.params["p"] < 1 and v.ratio == 4
    assert check_instance(inst, F(4)).status == "holds"


def test_geometric_independent_holds_for_every_p():
    r = check_instance(load_model("geometric_independent"), F(2), exhaustive=True)
    assert r.status == "holds" and all(ch.verdict.status == UNSAT for ch in r.checks)


def test_noisy_max_independent_holds_for_every_prior():
    inst = load_model("noisy_max_independent")
    assert set(inst.params) == {"p1", "p2", "p3"} and inst.k == 2
    assert sum(1 for s in inst.hmm.states if s[0] == 1) == 27  # FAIER's noisy-value states
    r = check_instance(inst, F(2), exhaustive=True)
    assert r.status == "holds" and all(ch.verdict.encoding == "enumerated" for ch in r.checks)


def test_noisy_max_contagious_violated_for_some_p():
    inst = load_model("noisy_max_contagious")
    r = check_instance(inst, F(2))
    assert r.status == "violated"
    v = r.witness.verdict
    assert _observed(inst, r.witness) == ("start", 1) and 0 < v.params["p"] < 1
    assert F(49, 24) <= v.ratio <= F(24, 7)
    assert check_instance(inst, F(4)).status == "holds"
    # ln 2 is violated for every p: fix p anywhere and the ratio still exceeds 2
    for p in (F(1, 100), F(1, 2), F(99, 100)):
        assert check_instance(inst.substitute({"p": p}), F(2)).status == "violated"
    assert check_instance(inst.substitute({"p": F(1, 100)}), F(49, 24)).status == "violated"
    assert check_instance(inst.substitute({"p": F(1, 100)}), F(24, 7)).status == "holds"


def test_above_threshold_loop_is_sat_once_k_is_large_enough():
    inst = load_model("above_threshold_loop")
    for c in (F(2), F(4), F(16), F(100)):
        res = check_lengths(inst, c, 16)
        assert res.status == "violated" and res.largest_k_proved == res.results[-1].k - 1
        assert res.results[-1].witness.verdict.ratio > c
    ks = [check_lengths(inst, c, 16).results[-1].k for c in (F(2), F(16), F(100))]
    assert ks == sorted(ks) and ks[0] < ks[-1]


def test_above_threshold_loop_matches_the_language():
    """The hand-written loop model is the catalogue mechanism on constant query streams."""
    inst = load_model("above_threshold_loop")
    pair = inst.pairs[0]
    for L in (1, 2, 3):
        ref = Enumerator(catalogue.get("above_threshold_geom").trace(L=L))
        for init, x in ((pair.pi, (1,) * L), (pair.tau, (2,) * L)):
            got = {}
            for obs, p in inst.hmm.sequences(init, L + 1).items():
                sym = inst.hmm.decode(obs)[1:]
                out = tuple({"0": 0, "1": 1}.get(s, "bottom") for s in sym)
                got[out] = p
            want = {tuple("bottom" if v < -1 else v for v in o): p for o, p in ref.distribution(x).items()}
            assert got == want


def test_noisy_max5_witness_model():
    inst = load_model("noisy_max5_witness")
    assert check_instance(inst, F(288, 73)).status == "holds"
    r = check_instance(inst, F(288, 73) - F(1, 10**9))
    assert r.status == "violated" and r.witness.verdict.ratio == F(288, 73)
    assert inst.decode(_observed(inst, r.witness)) == 1


def test_dp_is_the_special_case():
    """Every neighbour pair, point masses: the DP level of rr with lam = 1/4 is 3."""
    program = catalogue.get("rr").trace(n=2)
    inst = dp_instance(program)
    assert len(inst.pairs) == 4
    assert check_instance(inst, F(3)).status == "holds"
    assert check_instance(inst, F(3) - F(1, 10**6)).status == "violated"
    with pytest.raises(DomainError):
        dp_instance(program, [((0, 0), (1, 1))])


def test_bisection_brackets_the_level():
    b = bisect_instance(load_model("geometric_dp"), 0.001)
    assert b.lo <= math.log(2) <= b.hi and b.hi - b.lo <= 0.001
    assert b.witness.verdict.ratio == 2


def _spec(**over):
    d = json.loads(json.dumps({
        "kind": "pufferfish", "name": "t", "params": {"p": "(0, 1)"},
        "entries": {"J": [0, 1], "A": [0, 1]},
        "prior": [{"entry": "J", "law": {"0": "1 - p", "1": "p"}}, {"entry": "A", "law": {"0": "1 - p", "1": "p"}}],
        "secrets": [["J == 1", "J == 0"]], "statistic": ["J + A"],
        "mechanism": {"name": "trunc_geom", "params": {"m": 2, "a": "1/2"}},
    }))
    d.update(over)
    return d


def test_spec_builds_conditioned_priors():
    inst = instance_from_model(_spec())
    pair = inst.pairs[0]
    by_x = {inst.hmm.states[s][1]: w for s, w in pair.pi.items()}
    p = Poly.var("p")
    assert spec_from_dict(_spec()).prior[0].table[(1,)] == p
    assert by_x == {(1,): p * (1 - p), (2,): p * p}  # unnormalised: P(J = 1, count)


@pytest.mark.parametrize("over,match", [
    ({"prior": [{"entry": "J", "law": {"0": "1 - p", "1": "p"}}]}, "exactly one prior factor"),
    ({"prior": [{"entry": "J", "law": {"0": "1/2", "1": "1/3"}}, {"entry": "A", "law": {"0": 1}}]}, "sum to 5/6"),
    ({"secrets": [["J == 2", "J == 0"]]}, "probability 0"),
    ({"secrets": [["__import__('os')", "J == 0"]]}, "not allowed|unknown data entry"),
    ({"secrets": [["K == 1", "J == 0"]]}, "unknown data entry 'K'"),
    ({"statistic": ["J + A + 5"]}, "outside trunc_geom's domain"),
    ({"statistic": ["J", "A"]}, "takes 1"),
    ({"mechanism": {"name": "nope"}}, "unknown mechanism"),
    ({"params": {"p": "[0, 1)"}, "prior": [{"entry": "J", "law": {"0": "1 - q", "1": "q"}},
                                           {"entry": "A", "law": {"0": 1}}]}, "unknown parameter 'q'"),
    ({"kind": "other"}, "unknown model kind"),
])
def test_spec_errors(over, match):
    with pytest.raises(DPHybridError, match=match):
        instance_from_model(_spec(**over))


def test_yaml_model_files(tmp_path):
    yaml = pytest.importorskip("yaml")
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(_spec()))
    assert check_instance(load_model(path), F(2)).status == "holds"
