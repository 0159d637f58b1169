"""Proofs for every input size n (``prove(..., every_n=True)``, ``dphybrid prove --every-n``)."""

from __future__ import annotations

import copy
import importlib
import functools
import json
from fractions import Fraction

import pytest

from hybrid.cli import main
from samplers import catalogue
from samplers.lang import exponential as exp_noise
from samplers.lang import ints, laplace as lap, mechanism, one_differ, scan
from verifiers.prover import every_n
from verifiers.prover.every_n import NotEveryN
from verifiers.prover.proof import Proof
from verifiers.prover import every_n_reduce
from verifiers.prover.prove import EVERY_N_RULES, RULES, prove


@functools.cache
def _proved(name, eps):
    return _prove(name, eps)


def _prove(name, eps=None, **params):
    mech = catalogue.get(name)
    program = mech.trace(**params)
    claim = None if eps is None else Fraction(eps)
    return program, prove(program, claim, every_n=True)


@pytest.mark.parametrize("name, params", [
    ("noisy_hist1", {}), ("partialsum", {}), ("svt1", {}), ("svt1", {"c": 3}),
    ("numerical_svt", {}), ("numerical_svt", {"c": 1}), ("svt2", {}), ("svt2", {"c": 2}),
    ("report_noisy_max1", {}), ("report_noisy_max2", {}),
])
def test_proved_at_the_claim_for_every_n(name, params):
    mech = catalogue.get(name)
    claim = Fraction(mech.claimed_eps(**params))
    program, found = _prove(name, claim, **params)
    assert isinstance(found, Proof) and found.checked and found.rule in EVERY_N_RULES
    assert found.evidence["n"] == "every n >= 1"
    assert Fraction(found.eps) <= claim
    assert importlib.import_module(RULES[found.rule]).check(program, found) is None
    # the proof does not depend on the n it was asked at
    _, other = _prove(name, claim, **{**params, "n": 3})
    assert Fraction(other.eps) == Fraction(found.eps)


def test_svt4_every_n_level_is_not_below_its_true_level():
    # svt4's true level is (1 + 6c)/4 eps (Lyu et al.); an every-n proof below it would be unsound
    program, found = _prove("svt4", None, c=1)
    true = Fraction(7, 4) * Fraction(0.1)
    assert isinstance(found, Proof) and Fraction(found.eps) >= true * Fraction(999_999, 1_000_000)


@pytest.mark.parametrize("name", ["svt3", "svt6", "report_noisy_max3"])
def test_levels_growing_with_n_are_refused_and_given_in_n(name):
    # report_noisy_max3's level is n eps / 2 (0.05 n at eps = 0.1): the bound found is that closed form
    _, found = _prove(name, 0.1)
    assert isinstance(found, list)
    reason = found[-1].reason if name.startswith("report") else found[0].reason
    assert "n" in reason and "no constant eps covers every n" in reason and "1/20" in reason


def test_not_written_with_the_loop_construct_is_a_specific_error():
    program = catalogue.get("prefix_sum").trace()
    with pytest.raises(NotEveryN, match="not written with the loop construct"):
        prove(program, Fraction(1, 10), every_n=True)


def test_cli_every_n(capsys, tmp_path):
    out_file = tmp_path / "p.json"
    assert main(["prove", "svt1", "--every-n", "--eps", "0.1", "--out", str(out_file)]) == 0
    out, _ = capsys.readouterr()
    assert "every size n >= 1" in out and "every_n rule" in out
    assert main(["certify", str(out_file)]) == 0
    out, _ = capsys.readouterr()
    assert "confirmed" in out and "every size n >= 1" in out
    assert main(["prove", "prefix_sum", "--every-n"]) == 2
    _, err = capsys.readouterr()
    assert len(err.strip().splitlines()) == 1 and "loop construct" in err


def _tampered(found, edit):
    ev = copy.deepcopy(found.evidence)
    edit(ev)
    return Proof(found.rule, found.mechanism, found.params, found.eps, ev)


def _zero_shift(ev):
    row = next(r for r in ev["rows"] if r["shifts"])
    for s in row["shifts"].values():
        s["const"] = "0"


def _hide_row(ev):
    row = next(r for r in ev["rows"] if r["shifts"])
    row["feasible"] = False


def _low_top(ev):
    ev["top"] = "-1"


def _no_halt(ev):
    ev["halt"] = -1


def _no_halting_row(ev):
    for r in ev["rows"]:
        r["halts"] = False


def _cheap_threshold(ev):
    for e in ev["prologue"]:
        ev["prologue"][e] = "0"


@pytest.mark.parametrize("edit", [_zero_shift, _hide_row, _low_top, _no_halt, _cheap_threshold, _no_halting_row])
@pytest.mark.parametrize("name", ["svt1", "svt2"])
def test_the_checker_rejects_tampered_evidence(edit, name):
    program, found = _proved(name, 0.1)
    assert every_n.check(program, _tampered(found, edit)) is not None


@pytest.mark.parametrize("part", ["winner", "other"])
def test_the_reduce_checker_rejects_tampered_shifts(part):
    program, found = _proved("report_noisy_max1", 0.1)
    def edit(ev):
        ev["winner"] = {}
        if part == "other":  # the winner's shift moved to every other element: the order flips
            ev["other"] = found.evidence["winner"]
    assert every_n_reduce.check(program, _tampered(found, edit)) is not None


def test_the_checker_rejects_an_eps_below_the_cost():
    program, found = _proved("svt1", 0.1)
    low = Proof(found.rule, found.mechanism, found.params, Fraction(found.eps) / 2, found.evidence)
    assert "above its eps" in every_n.check(program, low)


@mechanism(domain=ints(lo=0, hi=10, size="n"), neighbours=one_differ)
def _weak_hist(x, *, eps=0.1, n=4):
    """Lap(eps) where Lap(1/eps) is due: level 1/eps."""
    return scan(x, lambda q, s: (q + lap(eps), s))[0]


def test_a_buggy_loop_is_proved_only_at_its_true_level(monkeypatch):
    monkeypatch.setattr(every_n, "loop_of", lambda program: (_weak_hist, _loop(program)))
    program = _weak_hist.trace()
    found = prove(program, None, rules=["every_n"])
    assert isinstance(found, Proof) and Fraction(found.eps) == 1 / Fraction(0.1)
    assert isinstance(prove(program, Fraction(1, 10), rules=["every_n"]), list)


def _loop(program):
    from samplers.lang.loop import trace_loop
    return trace_loop(_weak_hist.fn, dict(program.params), "n", 0, 10, "weak")


@mechanism(domain=ints(lo=0, hi=10, size="n"), neighbours=one_differ)
def _exp_threshold(x, *, eps=0.1, n=4):
    """An exponential threshold shifted down would leave its support."""
    def step(q, state):
        (rho,) = state
        return q + lap(1 / eps) >= rho, state
    return scan(x, step, (exp_noise(1 / eps),))[0]


def test_an_exponential_prologue_draw_shifted_down_is_rejected(monkeypatch):
    from samplers.lang.loop import trace_loop
    from verifiers.prover.every_n_check import Plan, init_holds, setting, Frame
    program = _exp_threshold.trace()
    loop = trace_loop(_exp_threshold.fn, dict(program.params), "n", 0, 10, "exp")
    st = setting(program, loop)
    f = Frame(st)
    (e,) = st.draws("prologue")
    assert init_holds(f, Plan({e: Fraction(1)}, [("delta", Fraction(1))]))
    assert not init_holds(f, Plan({e: Fraction(-1)}, [("delta", Fraction(-1))]))


@mechanism(domain=ints(lo=0, hi="n", size="n"), neighbours=one_differ)
def _range_in_n(x, *, eps=0.1, n=4):
    return scan(x, lambda q, s: (q + lap(1 / eps), s))[0]


def test_an_element_range_depending_on_n_is_refused(monkeypatch):
    monkeypatch.setattr("samplers.plain.resolve", lambda name: _range_in_n)
    with pytest.raises(NotEveryN, match="range depends on the size parameter"):
        prove(_range_in_n.trace(), None, every_n=True)


def test_a_proof_file_round_trip_and_a_tampered_eps(capsys, tmp_path):
    out_file = tmp_path / "p.json"
    assert main(["prove", "report_noisy_max1", "--every-n", "--out", str(out_file)]) == 0
    assert main(["certify", str(out_file)]) == 0
    data = json.loads(out_file.read_text())
    data["eps"], data["eps_upper"] = "1/20", 0.05
    out_file.write_text(json.dumps(data))
    assert main(["certify", str(out_file)]) != 0
    out, _ = capsys.readouterr()
    assert "REJECTED" in out and "above its eps" in out
