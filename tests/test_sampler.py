"""Numba samplers: conformance with the exact law, reproducibility, the kernel cache.

Conformance uses Pearson's chi-square test at significance 1e-4: a correct sampler
fails a given check with probability 1e-4 over the seed, so the ~50 checks below have
a family-wise false-failure rate under 0.5%; the seeds are fixed, so CI is deterministic.
The conformance checks count with the fused kernel (:meth:`Sampler.counts`, drawing and
counting in one pass); other tests check that its counts are exactly those of the array
path (the same stream for the same seed), so the checks hold for both.
"""

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from scipy import stats

from samplers import catalogue
from samplers.compile import compile_sampler
from samplers.counts import output_counts
from samplers.errors import DomainError, ParameterError
from samplers.gof import goodness_of_fit
from samplers.lang.ir import BOTTOM_CODE
from samplers.lang import BOTTOM, categorical, exponential, gaussian, ints, laplace, mechanism, one_differ
from verifiers.enumerate import distribution

from small import SMALL, discrete_names

ALPHA = 1e-4
N = 400_000

def test_every_discrete_catalogue_mechanism_is_covered():
    assert sorted(SMALL) == discrete_names()


def _inputs(prog, k=3, seed=7):
    rng = np.random.default_rng(seed)
    dom = prog.domain
    xs = [tuple(dom.lo), tuple(dom.hi)]
    while len(xs) < k:
        xs.append(tuple(int(rng.integers(l, h + 1)) for l, h in zip(dom.lo, dom.hi)))
    return xs


@pytest.mark.parametrize("name", sorted(SMALL))
def test_sampler_matches_exact_distribution(name):
    prog = catalogue.get(name).trace(**SMALL[name])
    sampler = compile_sampler(prog)
    assert sampler.uses_fused_counts(N, threads=1) and sampler.uses_fused_counts(N)
    for i, x in enumerate(_inputs(prog)):
        counts = sampler.counts(x, N, seed=1000 + i)
        g = goodness_of_fit(counts, distribution(prog, x))
        assert g.impossible == 0, f"{name} on {x}: sampled an output of probability 0"
        assert g.pvalue > ALPHA, f"{name} on {x}: chi-square p = {g.pvalue:.2g} (stat {g.statistic:.1f}, dof {g.dof})"


def test_output_counts_are_the_distinct_rows_in_order():
    """Rows grouped by a lexicographic sort: the same counts, in the same order, as np.unique."""
    rows = np.random.default_rng(0).integers(-2, 3, size=(5000, 4))
    rows[rows == -2] = BOTTOM_CODE
    rows[:, 1] = 7  # a constant column
    want = np.unique(rows, axis=0, return_counts=True)
    got = output_counts(rows)
    assert list(got.values()) == want[1].tolist()
    assert list(got) == [tuple(BOTTOM if v == BOTTOM_CODE else int(v) for v in r) for r in want[0]]
    assert output_counts(rows[:0]) == {}


@pytest.mark.parametrize("lo,hi", [(-2, 3), (0, 5), (1, 4), (-(2**40), 2**40)])
def test_output_counts_by_code_match_np_unique(lo, hi):
    """Mixed-radix codes counted by np.bincount (small ranges) and the sort (wide ones): np.unique's
    counts and order, for vectors and rows, with BOTTOM; the samples are left as they were."""
    rng = np.random.default_rng(lo & 0xFFFF)
    rows = rng.integers(lo, hi, size=(3000, 3))
    rows[rng.random(rows.shape) < 0.1] = BOTTOM_CODE
    shifted = np.where(rows == BOTTOM_CODE, BOTTOM_CODE, rows - lo)  # non-negative values: their own digits
    for a in (rows, rows[:, 0], rows[:, :1], shifted, shifted[:, 2]):
        keep = a.copy()
        vals, counts = np.unique(a, axis=0, return_counts=True)
        key = (lambda r: tuple(BOTTOM if v == BOTTOM_CODE else int(v) for v in r)) if a.ndim == 2 else \
            (lambda v: BOTTOM if v == BOTTOM_CODE else int(v))
        got = output_counts(a)
        assert list(got) == [key(r) for r in vals] and list(got.values()) == counts.tolist()
        assert (a == keep).all()


def test_goodness_of_fit_detects_a_wrong_law():
    """The conformance test has power: a 2% shift in one cell is caught."""
    prog = catalogue.get("trunc_geom").trace(m=2, a="1/2")
    counts = output_counts(compile_sampler(prog).sample((0,), N, seed=3))
    law = distribution(prog, (0,))
    skewed = {0: law[0] - law[0] / 50, 1: law[1] + law[0] / 50, 2: law[2]}
    assert goodness_of_fit(counts, skewed).pvalue < ALPHA


@pytest.mark.parametrize("name, x", [("noisy_max_geom", (0, 2, 2, 2, 2)), ("svt1", (0, 1, 2, 1, 1, 1, 1, 1, 1, 1))])
def test_same_seed_same_samples_whatever_the_thread_count(name, x):
    sampler = compile_sampler(catalogue.get(name))
    one = sampler.sample(x, 100_003, seed=42, threads=1)
    two = sampler.sample(x, 100_003, seed=42, threads=2)
    np.testing.assert_array_equal(one, two)
    np.testing.assert_array_equal(sampler.sample(x, 5_000, seed=42), one[:5_000])  # prefix property
    assert not np.array_equal(sampler.sample(x, 5_000, seed=43), one[:5_000])


FUSED = [("noisy_max_geom", {}, (0, 2, 2, 2, 2)),  # ties drawn at random: a data-dependent stream
         ("above_threshold_geom", {"L": 3}, (2, 0, 2)),  # tuples with BOTTOM
         ("svt1", {}, (0, 1, 2, 1, 1, 1, 1, 1, 1, 1)),  # continuous noise, outputs 0, 1, BOTTOM
         ("rappor", {"h": 2, "m": 4}, (3,))]


@pytest.mark.parametrize("name, params, x", FUSED)
def test_fused_counts_are_the_array_counts(name, params, x, monkeypatch):
    """Counting as it draws, the fused kernel gives exactly the counts (and order) of the array the
    same seed draws, whatever the threads, the sample size (chunk boundaries included) or the
    pieces a long run is cut into."""
    import samplers.compile

    sampler = compile_sampler(catalogue.get(name), **params)
    for n in (1, 16_383, 16_385, 100_003):
        want = list(output_counts(sampler.sample(x, n, seed=42)).items())
        assert sampler.uses_fused_counts(n, threads=1)
        assert list(sampler.counts(x, n, seed=42, threads=1).items()) == want
        assert list(sampler.counts(x, n, seed=42, threads=2).items()) == want
    monkeypatch.setattr(samplers.compile, "PIECE_CHUNKS", 2)  # 7 pieces of at most 2 chunks
    assert list(sampler.counts(x, n, seed=42, threads=2).items()) == want
    assert sampler.counts(x, 0, seed=42) == {}
    assert sampler.counts(x, n, seed=43) != dict(want)


def test_sample_code_in_the_chunk_loop_or_called_draws_the_same_samples(monkeypatch):
    """Short sample code sits in the chunk loop, long code in a function the loop calls: the same
    statements, so the same samples and counts for the same seed."""
    import samplers.codegen

    x = (0, 2, 2, 2, 2)
    inline = compile_sampler(catalogue.get("noisy_max_geom"))
    monkeypatch.setattr(samplers.codegen, "INLINE_LINES", 0)
    called = compile_sampler(catalogue.get("noisy_max_geom"))
    assert "def body(" in called.kernel.source and "def body(" not in inline.kernel.source
    np.testing.assert_array_equal(called.sample(x, 40_000, seed=8), inline.sample(x, 40_000, seed=8))
    assert called.counts(x, 40_000, seed=8) == inline.counts(x, 40_000, seed=8)


def test_counts_too_wide_for_the_fused_kernel_count_the_array():
    """Outputs over more codes than the samples' array holds values are counted from the array."""
    @mechanism(domain=ints(lo=0, hi=10**6, size=1), neighbours=one_differ)
    def wide(x):  # outputs in 0 .. 10^6 + 2: a million codes
        return x[0] + categorical([1, 2, 1])

    sampler = compile_sampler(wide)
    assert sampler.kernel.codes == 10**6 + 3 and not sampler.uses_fused_counts(1000)
    want = output_counts(sampler.sample((7,), 1000, seed=5))
    assert list(sampler.counts((7,), 1000, seed=5).items()) == list(want.items()) and set(want) == {7, 8, 9}
    with pytest.raises(ValueError, match="discrete"):
        compile_sampler(catalogue.get("laplace")).counts((0,), 10, seed=0)


def test_fused_kernel_refuses_outputs_outside_the_ir_range():
    """An output beyond the range the IR records is never written outside the histogram: it is
    counted in a slot of its own and reported as a bug (here a range narrowed by hand)."""
    import dataclasses

    prog = catalogue.get("noisy_max_geom").trace()
    out = prog.outputs[0]
    nodes = list(prog.nodes)
    nodes[out] = dataclasses.replace(nodes[out], hi=3)  # the argmax + 1 really reaches 5
    sampler = compile_sampler(dataclasses.replace(prog, nodes=tuple(nodes)))
    with pytest.raises(AssertionError, match="outside the range its IR records"):
        sampler.counts((0, 2, 2, 2, 2), 10_000, seed=1)


def _noise_mechanism(draw):
    @mechanism(domain=ints(lo=0, hi=3, size=1), neighbours=one_differ)
    def m(x):
        return x[0] + draw()

    return m


@pytest.mark.parametrize("draw, law", [
    (lambda: laplace(2.0), stats.laplace(loc=1, scale=2.0)),
    (lambda: exponential(0.5), stats.expon(loc=1, scale=0.5)),
    (lambda: gaussian(3.0), stats.norm(loc=1, scale=3.0)),
])
def test_continuous_noise_follows_its_law(draw, law):
    """Kolmogorov-Smirnov test at significance 1e-4 (seeded)."""
    s = compile_sampler(_noise_mechanism(draw)).sample((1,), 1_000_000, seed=5)
    assert s.dtype == np.float64
    assert stats.kstest(s, law.cdf).pvalue > ALPHA


def test_float_outputs_encode_bottom_as_nan():
    s = compile_sampler(catalogue.get("svt3"), n=4, eps=1.0, T=0.0).sample((2, 2, 2, 2), 10_000, seed=1)
    assert s.shape == (10_000, 4) and np.isnan(s).any() and (s == -1000.0).any()
    for row in s:  # c = 1: "below" codes, one released value, then BOTTOM (NaN) to the end
        above = np.flatnonzero(row != -1000.0)
        if len(above):
            k = above[0]
            assert np.isfinite(row[k]) and np.isnan(row[k + 1:]).all()


def test_integer_outputs_encode_bottom_as_the_sentinel():
    s = compile_sampler(catalogue.get("above_threshold_geom"), L=3).sample((2, 2, 2), 10_000, seed=1)
    assert (s == BOTTOM_CODE).any()
    assert BOTTOM in {v for row in output_counts(s) for v in row}


def test_sample_rejects_bad_arguments():
    sampler = compile_sampler(catalogue.get("rr"), n=2)
    with pytest.raises(DomainError):
        sampler.sample((0, 2), 10, seed=0)
    with pytest.raises(ParameterError):
        sampler.sample((0, 1), -1, seed=0)
    with pytest.raises(ParameterError):
        sampler.sample((0, 1), 10, seed="x")
    assert sampler.sample((0, 1), 0, seed=0).shape == (0, 2)


@pytest.mark.slow
def test_second_process_loads_the_compiled_kernel_from_disk(tmp_path):
    script = textwrap.dedent("""
        import json, sys
        from samplers import catalogue
        from samplers.compile import compile_sampler
        s = compile_sampler(catalogue.get("trunc_geom"), m=7, a="2/7")
        s.warm_up()
        st = s._module.kernel.stats
        print(json.dumps({"hits": sum(st.cache_hits.values()), "misses": sum(st.cache_misses.values())}))
    """)
    env = dict(os.environ, DPHYBRID_CACHE_DIR=str(tmp_path))
    runs = [json.loads(subprocess.run([sys.executable, "-c", script], env=env, check=True,
                                      capture_output=True, text=True).stdout) for _ in range(2)]
    assert runs[0]["misses"] >= 1
    assert runs[1] == {"hits": 1, "misses": 0}
