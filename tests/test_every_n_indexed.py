"""Every-n proofs of indexed scans, of loops over a prefix (SmartSum, ShadowDP's prefixsum) and of
accumulators reset by a row.

SmartSum's difference at step j costs eps at its own release and eps at its block's end, where
the block sum is read and reset: 2 eps for every n.  The adversarial loops read the carried sum
without resetting it (released again at every block end: the level grows with n), misuse the
index, or keep a float state that starts as an int (q released exactly when 0 < r < 1); none
may be proved at the claim.
"""

from __future__ import annotations

import copy
import importlib
import json
from fractions import Fraction

import pytest

from hybrid.cli import main
from samplers import catalogue
from samplers.lang import ints, ite, laplace as lap, mechanism, one_differ, scan
from samplers.lang.loop import trace_loop
from verifiers.prover.every_n import NotEveryN
from verifiers.prover.loop_agreement import _concrete_outputs, _Draws
from verifiers.prover.proof import Proof
from verifiers.prover.prove import RULES, prove

EPS = Fraction(1, 10)


@pytest.mark.parametrize("params", [{}, {"n": 20, "T": 19, "M": 4}, {"n": 9, "T": 6, "M": 3, "eps": 1.0}])
def test_smartsum_is_proved_at_its_claim_for_every_n(params):
    mech = catalogue.get("smartsum")
    program = mech.trace(**params)
    claim = Fraction(mech.claimed_eps(**params))
    found = prove(program, claim, every_n=True)
    assert isinstance(found, Proof) and found.rule == "every_n" and found.checked
    p = mech.params(**params)
    assert Fraction(found.eps) == 2 / Fraction(1 / p["eps"]) <= claim  # 2 / scale: the true level, not below it
    ev = found.evidence
    assert ev["n"] == "every n >= 1" and [r["resets"] for r in ev["rows"]] == [False, True]
    assert importlib.import_module(RULES[found.rule]).check(program, found) is None


@pytest.mark.parametrize("params", [{}, {"n": 20, "T": 7}])
def test_shadowdp_prefixsum_over_a_prefix_is_proved_at_eps_for_every_n(params):
    mech = catalogue.get("shadowdp_prefixsum")
    program = mech.trace(**params)
    found = prove(program, Fraction(mech.claimed_eps(**params)), every_n=True)
    assert isinstance(found, Proof) and found.rule == "every_n" and Fraction(found.eps) == Fraction(1, 10)


def _smartsum_for_loop(x, *, eps, T, M):
    """SmartSum as the catalogue wrote it before the indexed scan."""
    out, running, block = [], 0, 0
    for i, q in enumerate(x[: T + 1]):
        if (i + 1) % M == 0:
            running = block + q + lap(1 / eps)
            block = 0
        else:
            running = running + q + lap(1 / eps)
            block = block + q
        out.append(running)
    return tuple(out)


@pytest.mark.parametrize("params", [{}, {"n": 7, "T": 6, "M": 3}, {"n": 8, "T": 2, "M": 5}])
def test_the_indexed_scan_computes_what_the_python_loop_did(params):
    mech = catalogue.get("smartsum")
    p = mech.params(**params)
    new = mech.trace(**params)
    ref = mechanism(domain=ints(lo=0, hi=10, size="n"), neighbours=one_differ)(
        lambda x, *, eps=p["eps"], n=p["n"], T=p["T"], M=p["M"]: _smartsum_for_loop(x, eps=eps, T=T, M=M)).trace()
    assert len(new.nodes) == len(ref.nodes) and len(new.outputs) == len(ref.outputs) == p["T"] + 1
    for seed in range(20):  # one shared sequence of draws (one per step, in step order): the same outputs
        x = [(seed * 7 + 3 * k) % 11 for k in range(p["n"])]
        assert _concrete_outputs(list(new.nodes), tuple(new.outputs), x, _Draws(seed)) == \
            _concrete_outputs(list(ref.nodes), tuple(ref.outputs), x, _Draws(seed))


def test_smartsum_symbolic_iteration_reads_the_index_and_a_prefix():
    mech = catalogue.get("smartsum")
    lt = trace_loop(mech.fn, mech.params(T=5, n=9), "n", 0, 10, "smartsum")
    assert lt.index is not None and lt.stop == 6 and len(lt.state_in) == 2


def test_badsmartsum_is_refused_at_the_block_end():
    found = prove(catalogue.get("badsmartsum").trace(), Fraction(1, 5), every_n=True)
    assert isinstance(found, list) and "resetting an accumulator" in found[0].reason


def test_the_every_n_level_is_the_certified_level_at_small_n():
    from hybrid.searcher.budget import Budget
    from hybrid.searcher.search import search

    r = search(catalogue.get("smartsum"), {"n": 4, "T": 3, "M": 2}, claimed_eps=0.2, budget=Budget(samples=1_000_000))
    found = prove(catalogue.get("smartsum").trace(), Fraction(1, 5), every_n=True)
    assert r.certified and 0.199 < r.eps_lower <= float(found.eps)


def _tamper(edit):
    program = catalogue.get("smartsum").trace()
    found = prove(program, Fraction(1, 5), every_n=True)
    ev = copy.deepcopy(found.evidence)
    edit(ev)
    bad = Proof(found.rule, found.mechanism, found.params, Fraction(ev["eps"]), ev, solver=found.solver)
    return importlib.import_module(RULES[found.rule]).check(program, bad)


def _no_reset(ev):
    ev["rows"][1]["resets"] = False


def _no_carry(ev):
    ev["rows"][1]["carry"] = {}


def _cheap(ev):
    ev["eps"] = "1/10"


@pytest.mark.parametrize("edit", [_no_reset, _no_carry, _cheap])
def test_the_checker_rejects_a_tampered_smartsum_proof(edit):
    assert _tamper(edit) is not None


def _every_n(monkeypatch, mech, eps=EPS * 2):
    monkeypatch.setattr("samplers.plain.resolve", lambda _: mech)
    return prove(mech.trace(), eps, every_n=True)


@mechanism(domain=ints(lo=0, hi=10, size="n"), neighbours=one_differ)
def _never_reset(x, *, eps=0.1, n=6):
    """Every odd step releases the sum of everything so far (never reset): a difference is released
    again at every block end, about n eps / 2 in all."""
    def step(i, q, s):
        (acc,) = s
        noise = lap(1 / eps)
        return ite(i % 2 >= 1, acc + q + noise, q + noise), (acc + q,)
    return scan(x, step, (0,), indexed=True)[0]


@mechanism(domain=ints(lo=0, hi=10, size="n"), neighbours=one_differ)
def _reset_only_the_release(x, *, eps=0.1, n=6):
    """As SmartSum, but the block sum is not reset at the block end: grows with n too."""
    def step(i, q, s):
        running, block = s
        noise = lap(1 / eps)
        last = i % 2 >= 1
        running = ite(last, block + q + noise, running + q + noise)
        return running, (running, block + q)
    return scan(x, step, (0, 0), indexed=True)[0]


def test_a_carry_on_a_row_that_does_not_reset_is_rejected(monkeypatch):
    """The plan reading _never_reset's carried sum at odd steps keeps every row (z3); only the rule
    that such a row must reset stands between it and a cost of 2 eps for every n."""
    from verifiers.prover.every_n import loop_of
    from verifiers.prover.every_n_check import Frame, NoEveryN, Plan, Row, bound, row_holds, setting, verify

    monkeypatch.setattr("samplers.plain.resolve", lambda _: _never_reset)
    program = _never_reset.trace()
    st = setting(program, loop_of(program)[1])
    [draw], [odd] = st.draws("body"), st.decisions()
    one = (Fraction(0), Fraction(1))
    plan = Plan({}, [("acc", Fraction(-1))], rows=[Row({odd: 0}, {draw: one}),
                                                   Row({odd: 1}, {draw: one}, carry={draw: Fraction(-1)})])
    assert all(row_holds(Frame(st), plan, r) for r in plan.rows)
    assert "neither resets nor halts" in verify(st, plan)
    with pytest.raises(NoEveryN, match="neither resets nor halts"):
        bound(st, plan)


@mechanism(domain=ints(lo=0, hi=10, size="n"), neighbours=one_differ)
def _released_from_step_3(x, *, eps=0.1, n=6):
    return scan(x, lambda i, q, s: (ite(i >= 3, q, q + lap(1 / eps)), s), indexed=True)[0]


@pytest.mark.parametrize("mech", [_never_reset, _reset_only_the_release, _released_from_step_3])
def test_an_index_misused_is_never_proved(monkeypatch, mech):
    found = _every_n(monkeypatch, mech, Fraction(1))
    assert not isinstance(found, Proof)


@mechanism(domain=ints(lo=0, hi=10, size="n"), neighbours=one_differ)
def _tests_the_index_type(x, *, eps=0.1, n=6):
    """A Python test of the index (an int at a concrete size, symbolic in the every-n trace): the
    symbolic iteration never releases q, the mechanism does from step 3 on."""
    return scan(x, lambda i, q, s: (q if isinstance(i, int) and i >= 3 else q + lap(1 / eps), s), indexed=True)[0]


def test_a_step_unlike_its_mechanism_at_some_index_is_named(monkeypatch):
    with pytest.raises(NotEveryN, match="not a function of its element and state alone"):
        _every_n(monkeypatch, _tests_the_index_type)


@mechanism(domain=ints(lo=0, hi=10, size="n"), neighbours=one_differ)
def _fractional_state(x, *, eps=0.1, n=4):
    """The state starts as the int 0 and becomes a Laplace draw: q is released exactly whenever
    0 < r < 1 (no eps holds).  Read as a z3 integer, r never lies there: proved at 0.1 before."""
    def step(q, s):
        (r,) = s
        noisy = q + lap(1 / eps)
        return ite(r > 0, ite(r < 1, q, noisy), noisy), (lap(1 / eps),)
    return scan(x, step, (0,))[0]


def test_a_state_starting_as_an_int_that_becomes_a_float_is_read_as_a_real(monkeypatch):
    mech = _fractional_state
    lt = trace_loop(mech.fn, mech.params(), "n", 0, 10, "fractional_state")
    assert lt.nodes[lt.state_in[0]].kind == "float"
    assert not isinstance(_every_n(monkeypatch, mech, Fraction(1)), Proof)


def test_the_statement_starts_at_the_smallest_size_the_mechanism_is_defined(tmp_path, capsys):
    """smartsum needs n > T (T = 3 here): its every-n proof covers every size n >= 4, and the checker
    of the saved file says the same."""
    out = tmp_path / "smartsum.json"
    assert main(["prove", "smartsum", "--every-n", "--out", str(out)]) == 0
    assert "every size n >= 4 (elements in 0..10)" in capsys.readouterr().out
    assert main(["certify", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["domain"] == "every size n >= 4 (elements in 0..10)"
