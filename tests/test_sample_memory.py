"""`sample` in bounded memory: wide discrete outputs counted block by block, continuous ones in part.

The counts must be exactly those of the whole array of samples (never two outputs merged), in
the same order, whatever the threads, the block size and the memory limit.
"""

import json

import numpy as np
import pytest

import samplers.compile
import samplers.memory
import samplers.row_tally
from hybrid.cli import main
from samplers import catalogue
from samplers.codegen import CHUNK
from samplers.compile import compile_sampler
from samplers.counts import output_counts
from samplers.errors import ParameterError
from samplers.lang import BOTTOM, categorical, ints, ite, mechanism, one_differ
from samplers.memory import TooLarge

N = 3 * CHUNK + 5


@mechanism(domain=ints(lo=0, hi=10**6, size=2), neighbours=one_differ)
def _wide_pairs(x):
    """Pairs over 10^12 codes (no histogram), BOTTOM in the second, a few dozen outputs drawn."""
    a = x[0] + categorical([1, 2, 3, 2, 1])
    return a, ite(categorical([3, 1]) == 1, BOTTOM, x[1] + categorical([1, 1, 1, 1]))


@pytest.mark.parametrize("kernel", ["generated", "interpreter"])
def test_block_counts_are_the_array_counts_at_any_threads_and_block(kernel, monkeypatch):
    sampler = compile_sampler(_wide_pairs, kernel=kernel)
    x = (10**6 - 3, 0)
    assert not sampler.uses_fused_counts(N)
    want = list(output_counts(sampler.sample(x, N, seed=4)).items())
    assert len(want) > 20 and any(o[1] is BOTTOM for o, _ in want)
    monkeypatch.setattr(samplers.row_tally, "MERGE_MIN", 1)  # a merge after every block
    for block_bytes in (1, samplers.compile.BLOCK_BYTES):  # one chunk a thread, or all chunks at once
        monkeypatch.setattr(samplers.compile, "BLOCK_BYTES", block_bytes)
        for threads in (1, 2):
            assert list(sampler.counts(x, N, seed=4, threads=threads).items()) == want


def test_block_counts_never_merge_rows_that_differ_in_one_value():
    """Rows equal but for one value, anywhere, stay apart (the grouping compares every byte)."""
    from samplers.row_tally import RowTally

    rows = np.zeros((64, 3), dtype=np.int64)
    for i in range(64):
        rows[i, i % 3] = (i // 3) * (1 << (8 * (i % 8)))  # one differing value, each byte position in turn
    tally = RowTally(3, "test")
    tally.add(rows)
    tally.add(rows[:10])
    got = tally.counts(rows=True)
    assert got == output_counts(np.concatenate([rows, rows[:10]]))


def test_counts_within_a_memory_limit_or_refused():
    rr = compile_sampler(catalogue.get("rr"), n=30, lam="1/64")
    x = (0,) * 30
    limit = 8 * 2**20  # the whole array would need 3 x 8 x N x 30 bytes: 35 MiB
    assert rr.counts(x, N, seed=1, memory=limit) == output_counts(rr.sample(x, N, seed=1))
    spread = compile_sampler(catalogue.get("rr"), n=30, lam="1/2")  # every sample a new output
    with pytest.raises(TooLarge, match="distinct outputs"):
        spread.counts(x, N, seed=1, memory=limit)


@pytest.mark.parametrize("kernel", ["generated", "interpreter"])
def test_continuous_columns_are_the_first_columns_of_the_whole_array(kernel):
    sampler = compile_sampler(catalogue.get("noisy_hist1"), kernel=kernel, n=4)
    x = (1, 5, 0, 2)
    full = sampler.sample(x, 20_000, seed=6)
    for k in (1, 3, 4):
        np.testing.assert_array_equal(sampler.sample(x, 20_000, seed=6, threads=1, columns=k), full[:, :k])
    with pytest.raises(ParameterError, match="first 1..4"):
        sampler.sample(x, 10, seed=0, columns=5)
    with pytest.raises(ParameterError, match="continuous"):
        compile_sampler(catalogue.get("rr"), n=3).sample((0, 0, 0), 10, seed=0, columns=1)


def _cli(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_samples_what_the_whole_array_would_not_fit(capsys, monkeypatch):
    """With 100 MiB available, both commands used to be refused (the whole array and its sort)."""
    monkeypatch.setattr(samplers.memory, "available_bytes", lambda: 100 * 2**20)
    monkeypatch.setenv("DPHYBRID_KERNEL", "interpreter")  # n = 300: no generated kernel to compile
    x = ",".join(["2"] * 300)
    code, out, err = _cli(capsys, "sample", "noisy_hist1", "-p", "n=300", "--input", x, "-n", "60000",
                          "--top", "2", "--json")
    assert code == 0, err
    res = json.loads(out)
    assert res["components"] == 300 and [s["component"] for s in res["summary"]] == [0, 1]
    assert abs(res["summary"][1]["median"] - 2) < 1
    code, _, err = _cli(capsys, "sample", "noisy_hist1", "-p", "n=300", "--input", x, "-n", "60000", "--top", "0")
    assert code == 2 and "--top" in err and err.count("\n") == 1
    zeros = ",".join(["0"] * 30)
    code, out, err = _cli(capsys, "sample", "rr", "-p", "n=30", "-p", "lam=1/64", "--input", zeros,
                          "-n", "200000", "--seed", "2", "--memory", "0.05", "--json")
    assert code == 0, err
    res = json.loads(out)
    want = output_counts(compile_sampler(catalogue.get("rr"), n=30, lam="1/64").sample((0,) * 30, 200000, 2))
    assert res["distinct_outputs"] == len(want)
    assert {tuple(r["output"]): r["count"] for r in res["counts"]} == {
        o: c for o, c in sorted(want.items(), key=lambda oc: (-oc[1], oc[0]))[:20]}


def test_a_time_limit_stops_the_kernel_within_a_piece():
    """Two chunks of 10^4 coordinates (3 x 10^8 draws, seconds) are one piece: the kernels stop at the
    deadline inside it (their halt flag), not after it."""
    from samplers import deadline

    sampler = compile_sampler(catalogue.get("noisy_hist1"), kernel="interpreter", n=10_000)
    sampler.warm_up()
    with deadline.time_limit(0.2), pytest.raises(deadline.TimeLimitReached, match="while drawing"):
        sampler.sample((1,) * 10_000, 2 * CHUNK, seed=0, columns=1)


def test_cli_draws_only_the_summarised_components(capsys):
    """noisy_hist1 at n = 3000 with --top 3: the slice of three bins is drawn, each Laplace(x_i, 1/eps)."""
    x = ",".join(str(i % 7) for i in range(3000))
    code, out, err = _cli(capsys, "sample", "noisy_hist1", "-p", "n=3000", "-p", "eps=0.5", "--input", x,
                          "-n", "200000", "--top", "3", "--json")
    assert code == 0, err
    res = json.loads(out)
    assert res["components"] == 3000 and res["drawn_components"] == 3
    for s in res["summary"]:  # median x_i, std sqrt(2) / eps: 5 and 1 in 10^4 off at 200,000 samples
        assert abs(s["median"] - s["component"] % 7) < 0.05 and abs(s["std"] / (2**0.5 / 0.5) - 1) < 0.01


def test_the_summarised_slice_has_the_programs_joint_law():
    """prefix_sum's first 3 running sums drawn on their slice and on the whole program (n = 40): the
    same law, per component and for the differences of neighbours.  Two-sample Kolmogorov-Smirnov at
    alpha = 10^-4 on each of 5 statistics (false failure at most 5 in 10^4; seeded: deterministic)."""
    from scipy.stats import ks_2samp

    from hybrid.cli.sample import _summarised_slice

    program = catalogue.get("prefix_sum").trace(n=40, eps=1)
    x = tuple(i % 5 for i in range(40))
    sliced, xs = _summarised_slice(program, x, 3)
    assert sliced.arity == 3 and len(sliced.nodes) < len(program.nodes) and xs == (0, 1, 2)
    a = compile_sampler(sliced).sample(xs, 20000, seed=1)
    b = compile_sampler(program).sample(x, 20000, seed=2, columns=3)
    stats = [a[:, 0], a[:, 1], a[:, 2], a[:, 1] - a[:, 0], a[:, 2] - a[:, 1]]
    others = [b[:, 0], b[:, 1], b[:, 2], b[:, 1] - b[:, 0], b[:, 2] - b[:, 1]]
    assert all(ks_2samp(s, o).pvalue > 1e-4 for s, o in zip(stats, others))
    assert _summarised_slice(program, x, 40) == (program, x)  # every component: the whole program
