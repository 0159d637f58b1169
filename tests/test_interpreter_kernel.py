"""The interpreter kernel (:mod:`samplers.interpreter`): the generated kernel's samples, bit for bit.

For the same seed it must draw exactly the generated kernel's samples (floats compared bit for
bit, NaN for BOTTOM included) and counts, whatever the threads, so that choosing a kernel never
changes a result; and one compiled signature serves every program.
"""

import os
import subprocess
import sys

import numpy as np
import pytest

from samplers import catalogue, interpreter
from samplers.compile import compile_sampler
from samplers.errors import ParameterError
from samplers.lang import BOTTOM, argmax, clamp, exponential, flip, gaussian, ints, ite, laplace, maximum, \
    mechanism, minimum, one_differ, uniform

from randprog import build, random_program

N = 20_000  # more than one chunk (2^14 samples)


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    """Equal dtypes and bits (so NaN equals NaN, and -0.0 differs from 0.0)."""
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def _check(program, x) -> None:
    gen, itp = compile_sampler(program, kernel="generated"), compile_sampler(program, kernel="interpreter")
    assert itp.interpreted and not gen.interpreted
    want = gen.sample(x, N, seed=11, threads=1)
    for threads in (1, 2):
        assert _same(itp.sample(x, N, seed=11, threads=threads), want)
    if not itp.kernel.output_float:  # the fused histogram path too
        counts = gen.counts(x, N, seed=11, threads=1)
        assert itp.uses_fused_counts(N) == gen.uses_fused_counts(N)
        for threads in (1, 2):
            assert list(itp.counts(x, N, seed=11, threads=threads).items()) == list(counts.items())


@pytest.mark.parametrize("name", catalogue.names())
def test_interpreter_draws_the_generated_samples(name):
    program = catalogue.get(name).trace()
    _check(program, tuple(program.domain.hi))


@mechanism(domain=ints(lo=0, hi=3, size=3), neighbours=one_differ)
def mixed(x):
    """Integers and floats mixed in every operation the IR has (numba converts the integer)."""
    a = x[0] + laplace(1.0)
    b = x[1] * 2 + uniform(0, 3)
    g = gaussian(0.5) * -1.5
    e = exponential(2.0)
    k = argmax([a, b, e, x[2]], ties="uniform")
    k2 = argmax([b, x[2], x[0] + flip("1/3")], ties="uniform")  # integer ties, drawn at random
    return (clamp(a, -1, 4), minimum(b, e), maximum(abs(g), b), k, k2, ite(a < b, clamp(a, -1, 4), BOTTOM),
            b - a, ite(e <= 1.0, b, BOTTOM), -g, (b // 2) % 3)


def test_interpreter_draws_the_generated_samples_of_mixed_types():
    program = mixed.trace()
    assert {n.op for n in program.nodes} >= {"laplace", "gaussian", "exponential", "draw", "argmax", "clamp", "min",
                                             "max", "abs", "neg", "ite", "lt", "le", "floordiv", "mod", "mul"}
    _check(program, (1, 2, 3))
    assert np.isnan(compile_sampler(program, kernel="interpreter").sample((1, 2, 3), 1000, seed=1)).any()


@pytest.mark.parametrize("seed", range(4))
def test_interpreter_draws_the_generated_samples_of_random_programs(seed):
    program = build(random_program(seed)).trace()
    _check(program, tuple(program.domain.hi))


def test_auto_picks_the_interpreter_where_compiling_would_take_long(monkeypatch):
    monkeypatch.delenv("DPHYBRID_KERNEL", raising=False)
    small = compile_sampler(catalogue.get("noisy_hist1"), n=10)
    large = compile_sampler(catalogue.get("noisy_hist1"), n=1000)  # its generated kernel: about 5,000 s
    assert not small.interpreted and large.interpreted and large.kernel.source == ""
    assert compile_sampler(catalogue.get("noisy_hist1"), n=10, kernel="interpreter").interpreted
    monkeypatch.setenv("DPHYBRID_KERNEL", "interpreter")
    assert compile_sampler(catalogue.get("noisy_hist1"), n=10).interpreted
    monkeypatch.setenv("DPHYBRID_KERNEL", "generated")
    assert not compile_sampler(catalogue.get("noisy_hist1"), n=10).interpreted
    monkeypatch.setenv("DPHYBRID_KERNEL", "fast")
    with pytest.raises(ParameterError, match="DPHYBRID_KERNEL='fast'"):
        compile_sampler(catalogue.get("noisy_hist1"), n=10)
    with pytest.raises(ParameterError, match="kernel='fast'"):
        compile_sampler(catalogue.get("noisy_hist1"), n=10, kernel="fast")


def test_one_compiled_kernel_serves_every_program_and_size():
    """Integer and float outputs, 10 to 10,000 queries: one signature of the interpreter."""
    for name, n in [("noisy_hist1", 10), ("noisy_hist1", 10_000), ("svt1", 50), ("histogram_geom", None)]:
        params = {} if n is None else {"m" if name == "histogram_geom" else "n": n}
        s = compile_sampler(catalogue.get(name), kernel="interpreter", **params)
        x = tuple(s.program.domain.lo)
        assert s.sample(x, 3, seed=1).shape[0] == 3
        if not s.kernel.output_float:
            assert sum(s.counts(x, 100, seed=1).values()) == 100
    assert len(interpreter.kernel.signatures) == 1


def test_interpreter_counts_outputs_outside_the_ir_range_as_a_bug():
    import dataclasses

    prog = catalogue.get("noisy_max_geom").trace()
    nodes = list(prog.nodes)
    nodes[prog.outputs[0]] = dataclasses.replace(nodes[prog.outputs[0]], hi=3)  # the argmax + 1 really reaches 5
    sampler = compile_sampler(dataclasses.replace(prog, nodes=tuple(nodes)), kernel="interpreter")
    with pytest.raises(AssertionError, match="outside the range its IR records"):
        sampler.counts((0, 2, 2, 2, 2), 10_000, seed=1)


def test_cli_refuses_an_unknown_kernel_in_one_line():
    res = subprocess.run([sys.executable, "-m", "hybrid.cli", "sample", "rr", "--input", "0,1,0,1", "-n", "10"],
                         env={**os.environ, "DPHYBRID_KERNEL": "fast"}, capture_output=True,
                         text=True, timeout=120)
    assert res.returncode == 2 and "DPHYBRID_KERNEL='fast'" in res.stderr and "Traceback" not in res.stderr


@pytest.mark.slow
@pytest.mark.parametrize("name", ["report_noisy_max1", "svt1", "noisy_hist1"])
def test_interpreter_draws_the_generated_samples_at_n_100(name):
    """Programs of hundreds of nodes, whose generated kernel calls a body function (tens of seconds
    to compile cold)."""
    program = catalogue.get(name).trace(n=100)
    assert "def body(" in compile_sampler(program, kernel="generated").kernel.source
    _check(program, tuple(program.domain.hi))
