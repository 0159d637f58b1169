"""Hand-written inversions, ``-b * np.log(prng.random())``: exponential noise over the reals, its own float64 map.

The real-number reading is checked against numpy's ``exponential`` (same verdicts); the float-level
witness is replayed through the user's function with numpy's own ``Generator.random()`` driven to the
witnessed 64-bit word, and the proof that ``x'`` cannot reach the output is re-checked with numpy on
the draws around the gap.  Deterministic: no statistics.
"""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from hybrid.cli import main
from hybrid.searcher.search import search
from samplers.errors import UntraceableError
from samplers.lang.inversion import InversionScale
from samplers.plain import statdp
from verifiers.float64.chains import candidates
from verifiers.float64.numpy_draws import noise_model
from verifiers.float64.replay import ReplayGenerator, generator_for
from verifiers.float64.witness import _reaches, _side
from written_module import written_module

SOURCE = '''
import numpy as np

def alg(prng, queries, epsilon):
    return queries[0] - (1/epsilon) * np.log(prng.random())

def plus(prng, queries, epsilon):
    return queries[0] + (1/epsilon) * np.log(prng.random())

def vector(prng, queries, epsilon):
    return queries[0] - (1/epsilon) * np.log(prng.random(size=1))[0]

def two_sided(prng, queries, epsilon):
    return queries[0] - (1/epsilon) * np.log(prng.random()) + (1/epsilon) * np.log(prng.random())

def numpy_laplace(prng, queries, epsilon):
    return queries[0] + prng.laplace(scale=1/epsilon)

def clipped(prng, queries, epsilon):
    return np.clip(queries[0] - np.log(prng.random()), 0.0, 37.5)

def twice(prng, queries, epsilon):
    u = prng.random()
    return np.log(u) + np.log(u)

def log_query(prng, queries, epsilon):
    return np.log(queries[0] + 1.0) + prng.laplace(scale=1/epsilon)
'''


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return written_module(tmp_path_factory.mktemp("inversion"), "inv", SOURCE)


def _mech(fn):
    return statdp(fn, size=1, domain=(0, 1), neighbours="one_differ")


def _check_witness(fn, w, eps=0.1):
    """numpy computes the output from x on each listed draw, and puts the draws around each gap of x'
    strictly on either side of it (monotone: none between)."""
    o = w["output"]
    assert w["draws_x"] and all(d["sampler"] == "-log(random())" for d in w["draws_x"])
    for d in w["draws_x"]:
        word = int(d["word"], 16)
        assert generator_for(word).random() == d["k"] / 2**53
        out = fn(ReplayGenerator([word]), w["x"], eps)
        assert isinstance(out, float) and out.hex() == w["output_hex"] and float.fromhex(w["output_hex"]) == o
    for entry in w["proof_x_prime"]:
        ks = [a["k"] for a in entry["around"]]
        outs = [fn(ReplayGenerator([k << 11]), w["x_prime"], eps) for k in ks]
        assert ks and all(v != o for v in outs)
        if len(ks) == 2:
            assert ks[1] == ks[0] + 1 and (outs[0] - o) * (outs[1] - o) < 0


def test_cli_inversion_is_not_dp_in_float64(module, capsys):
    """The issue's target: q - (1/eps) * np.log(prng.random()) gets a robust float-level eps = inf, replayable."""
    argv = ["search", f"{module.PATH}:alg", "--size", "1", "--domain", "0..1", "--neighbours", "one_differ", "--float"]
    assert main([*argv, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["float_eps_lower"] == "inf" and d["float_certified"] is True
    w = d["float_witness"]
    assert w["robust"] and w["draws_x_prime_possible"] == 0 and w["ratio"] == "inf"
    assert any("np.log" in a for a in w["assumptions"])
    _check_witness(module.alg, w)
    assert main(argv) == 0
    assert "float64 (numpy's samplers): eps >= inf certified" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["plus", "vector"])
def test_other_spellings_certify_too(module, name):
    fn = getattr(module, name)
    a = search(_mech(fn), {"epsilon": 0.1}, float_semantics=True).float_audit
    assert a.certified and a.eps_lower == math.inf
    _check_witness(fn, a.witness)


def test_real_number_reading_is_exponential(module):
    """The traced node is exponential noise of scale 1 scaled by 1/eps: the two-sided form is Laplace(10) over
    the reals, with numpy's laplace's verdict; at float level its two noisy operands are said not modelled."""
    prog = _mech(module.two_sided).trace(epsilon=0.1)
    noise = [n for n in prog.nodes if n.op == "exponential"]
    assert len(noise) == 2 and all(type(n.attr) is InversionScale and n.attr == 1.0 for n in noise)
    r = search(_mech(module.two_sided), {"epsilon": 0.1}, float_semantics=True)
    lap = search(_mech(module.numpy_laplace), {"epsilon": 0.1})
    assert 0.0999 < r.eps_lower <= 0.1 and 0.0999 < lap.eps_lower <= 0.1
    assert not r.float_audit.certified and "noisy values" in r.float_audit.reason


def test_model_matches_numpy():
    """Each draw's value is -np.log(Generator.random()) on its word, within the model's bounds (seeded)."""
    rng = random.Random(11)
    (layer,) = noise_model("exponential", InversionScale(1.0)).layers
    for _ in range(300):
        k = rng.randrange(1, 2**53) >> rng.randrange(53) or 1
        v = layer.value(k)
        assert -np.log(generator_for(layer.word(k)).random()) == v
        lo, hi = layer.bounds(k)
        assert lo <= v <= hi
    assert layer.lo == 1 and not layer.increasing


def test_draw_zero_is_never_left_out(module):
    """random() = 0.0 gives -log = inf, clipped to 37.5 from every input: x' = 0 reaches 37.5 only that way
    (its finite draws stay below 36.74), and the audit must not call 37.5 unreachable from it."""
    with np.errstate(divide="ignore"):
        assert module.clipped(ReplayGenerator([0]), [0], 0.1) == 37.5
    prog = _mech(module.clipped).trace(epsilon=0.1)
    chains = candidates(prog)
    models = {c.noise: noise_model("exponential", prog.nodes[c.noise].attr) for c in chains if c.noise is not None}
    assert _reaches(models, _side(prog, chains, (0,)), 37.5, count=True)[0] is None
    assert _reaches(models, _side(prog, chains, (0,)), 37.0, count=True)[0] == 0  # above every finite draw of x'


def test_refusals_say_what_is_traced(module):
    with pytest.raises(UntraceableError, match=r"second np\.log.*-scale \* np\.log\(prng\.random\(\)\)"):
        _mech(module.twice).trace(epsilon=0.1)
    with pytest.raises(UntraceableError, match=r"np\.log is not supported on symbolic values"):
        _mech(module.log_query).trace(epsilon=0.1)
