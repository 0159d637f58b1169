"""Adversarial loops for ``prove --every-n`` found in a soundness audit.

Each loop's true level is known by hand (Laplace alignments: the threshold's shift of 1 at
scale 2/eps costs eps/2, each answer above shifted by 2 at scale 4/eps costs eps/2):

* ``count > c`` instead of ``count >= c`` lets c + 1 answers through: for c = 1 the level is
  eps/2 + 2 eps/2 = 3 eps/2, so nothing below 3/20 may be proved at eps = 1/10;
* a counter moving by 1/2 per answer lets 2c answers through with noise calibrated for c:
  the same 3 eps/2 at c = 1, and never 1/10;
* a counter fed by a second, independent comparison bounds nothing the outputs release: the
  answers above are unbounded as n grows, so no constant eps holds.

And a mechanism that reads its loop's outputs by index is refused in words (NotEveryN, one
line at the CLI), not with Python's IndexError.
"""

from __future__ import annotations

from fractions import Fraction

import pytest

from samplers.lang import BOTTOM, all_differ, ints, ite, laplace as lap, mechanism, one_differ, scan
from verifiers.prover.every_n import NotEveryN
from verifiers.prover.proof import Proof
from verifiers.prover.prove import prove

EPS = Fraction(1, 10)


def _svt(count_update, halted):
    def fn(x, *, eps=0.1, n=3, c=1):
        def step(q, st):
            count, r = st
            above = q + lap(4 * c / eps) >= r
            return ite(halted(count, c), BOTTOM, above), (count_update(count, above, q, r, eps), r)
        return scan(x, step, (0, lap(2 / eps)))[0]
    return mechanism(domain=ints(lo=-5, hi=5, size="n"), neighbours=all_differ)(fn)


_off_by_one = _svt(lambda count, above, q, r, eps: count + above, lambda count, c: count > c)


def _half_steps_fn(x, *, eps=0.1, n=3, c=1):
    def step(q, st):
        count, r = st
        above = q + lap(4 * c / eps) >= r
        return ite(count >= c, BOTTOM, above), (count + ite(above, 0.5, 0.0), r)
    return scan(x, step, (0.0, lap(2 / eps)))[0]


_half_steps = mechanism(domain=ints(lo=-5, hi=5, size="n"), neighbours=all_differ)(_half_steps_fn)
_other_comparison = _svt(lambda count, above, q, r, eps: count + (q + lap(4 / eps) >= r), lambda count, c: count >= c)


def _prove(monkeypatch, mech, eps):
    monkeypatch.setattr("samplers.plain.resolve", lambda _: mech)
    return prove(mech.trace(), eps, every_n=True)


def test_a_cutoff_one_answer_late_is_proved_only_at_its_true_level(monkeypatch):
    assert not isinstance(_prove(monkeypatch, _off_by_one, EPS), Proof)
    found = _prove(monkeypatch, _off_by_one, None)
    assert isinstance(found, Proof) and Fraction(found.eps) >= Fraction(3, 20)


@pytest.mark.parametrize("mech", [pytest.param(_half_steps, id="half_steps"),
                                  pytest.param(_other_comparison, id="other_comparison", marks=pytest.mark.slow)])
def test_a_counter_that_lets_more_answers_through_is_not_proved_at_eps(monkeypatch, mech):
    assert not isinstance(_prove(monkeypatch, mech, EPS), Proof)


@mechanism(domain=ints(lo=0, hi=10, size="n"), neighbours=one_differ)
def _first_output(x, *, eps=0.1, n=3):
    return scan(x, lambda q, s: (q + lap(1 / eps), s))[0][0]


def test_reading_the_loops_outputs_by_index_is_refused_in_words(monkeypatch):
    with pytest.raises(NotEveryN, match="reads the loop's outputs one by one"):
        _prove(monkeypatch, _first_output, EPS)
