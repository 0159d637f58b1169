"""The thinned Fisher test and Clopper-Pearson bounds (exact values; no randomness beyond fixed seeds)."""

import numpy as np
import pytest
from scipy.stats import binom, hypergeom

from hybrid.testers.binomial import cp_lower, cp_upper, logit
from hybrid.testers.fisher import stratified_uniforms, thinned_pvalue, thinned_pvalues, thinning_uniforms


def test_statdp_sanity_values():
    # StatDP's tests/test_hypotest.py
    assert thinned_pvalue(1000, 1000, 2000, 2000, 1.0) == pytest.approx(1.0)
    assert thinned_pvalue(1999, 1, 2000, 2000, 1.0) == pytest.approx(0.0, abs=1e-12)


def test_vectorised_equals_scalar_loop():
    u = thinning_uniforms(3)
    cx, cy, n, eps = np.array([5200, 800, 40]), np.array([4000, 700, 10]), 50_000, 0.2
    got = thinned_pvalues(cx, cy, n, n, eps, u)
    for i in range(3):
        draws = [binom.ppf(ui, cx[i], np.exp(-eps)) for ui in u[:, 0]]
        want = np.mean([hypergeom.sf(k - 1, 2 * n, n, k + cy[i]) for k in draws])
        assert got[i] == pytest.approx(want, rel=1e-12, abs=1e-300)


def test_pvalue_grows_with_eps_and_infinite_eps_never_rejects():
    u = stratified_uniforms()
    ps = [thinned_pvalues(3000, 2000, 10**5, 10**5, e, u)[0] for e in (0.0, 0.2, 0.4, 0.6)]
    assert ps == sorted(ps) and ps[0] < 1e-10 and ps[-1] > 0.5
    assert thinned_pvalues(10, 0, 100, 100, float("inf"), u)[0] == 1.0


def test_clopper_pearson_and_logit():
    assert cp_lower(0, 10, 0.05) == 0.0 and cp_upper(10, 10, 0.05) == 1.0
    assert cp_lower(100, 100, 0.05) == pytest.approx(0.05 ** (1 / 100))
    assert cp_lower(30, 100, 0.05) < 0.3 < cp_upper(30, 100, 0.05)
    assert logit(0.5) == 0.0 and logit(1.0) == float("inf")
    with pytest.raises(ValueError):
        cp_lower(5, 3, 0.05)


@pytest.mark.parametrize("limit", [6, 1 << 18])
def test_remembered_tails_are_scipys_even_when_forgotten(monkeypatch, limit):
    """Each tail is computed once per process; past ``MAX_TAILS`` the memory is emptied and the
    call computes all its tails again (a call's tails stay, whatever was there before it)."""
    from hybrid.testers import fisher

    monkeypatch.setattr(fisher, "_TAILS", {})
    monkeypatch.setattr(fisher, "MAX_TAILS", limit)
    first = np.array([1.0, 2, 3, 4, 5]), np.array([7.0, 7, 7, 7, 7])
    second = np.array([1.0, 2, 3, 30, 31]), np.array([7.0, 7, 7, 9, 9])  # three remembered, two new: 5 + 2 > 6
    for k, c in (first, second, first):
        want = hypergeom.sf(k - 1, 200, 100, k + c)
        assert np.array_equal(fisher._fisher_tails(k, c, 100, 100), want)
        assert len(fisher._TAILS) <= max(limit, 5)
