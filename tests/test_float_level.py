"""search --float: certified float-level lower bounds for numpy's float64 samplers, confirmed by numpy.

Each witness is replayed through the user's own function with numpy's own Generator driven to the
witnessed 64-bit words (PCG64 states), and each proof that ``x'`` cannot reach the output is
re-checked with numpy on the draws around the gap.  Deterministic: no statistics.
"""

from __future__ import annotations

import json
import math
import random

import numpy as np
import pytest

from hybrid.cli import main
from hybrid.searcher.search import search
from samplers.plain import statdp
from verifiers.float64.chains import candidates, fixed_values, output_map
from verifiers.float64.numpy_draws import noise_model
from verifiers.float64.preimage import possible, sure
from verifiers.float64.replay import ReplayGenerator, generator_for
from verifiers.float64.witness import audit
from written_module import written_module

SOURCE = '''
import numpy as np

def alg(prng, queries, epsilon):
    return queries[0] + prng.laplace(scale=1/epsilon)

def loc(prng, queries, epsilon):
    return prng.laplace(queries[0], 1/epsilon)

def gauss(prng, queries, epsilon):
    return queries[0] + prng.normal(0.0, 1/epsilon)

def rnm_value(prng, queries, epsilon):
    noisy = [q + prng.exponential(scale=2/epsilon) for q in queries]
    return noisy[int(np.argmax(noisy))]

def rnm_index(prng, queries, epsilon):
    noisy = [q + prng.exponential(scale=2/epsilon) for q in queries]
    return int(np.argmax(noisy))

def folded(prng, queries, epsilon):
    return abs(queries[0] + prng.laplace(scale=1/epsilon))
'''


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return written_module(tmp_path_factory.mktemp("float"), "algs", SOURCE)


def _replayed(fn, witness, eps=0.1):
    """The user's function run by numpy on the witness's words (every draw, in call order)."""
    words = [int(d["word"], 16) for d in witness["draws_x"]]
    return fn(ReplayGenerator(words if witness["draws_x_joint"] else words[:1]), witness["x"], eps)


def _check_gaps(witness, fn, eps=0.1):
    """numpy itself puts the draws around each gap strictly on either side of the output."""
    o = witness["output"]
    layer_words = {"laplace": lambda k: k << 11}
    for entry in witness["proof_x_prime"]:
        ks = [a["k"] for a in entry["around"]]
        assert ks, entry
        outs = [fn(ReplayGenerator([layer_words["laplace"](k)]), witness["x_prime"], eps) for k in ks]
        assert all(v != o for v in outs)
        if len(ks) == 2:  # adjacent draws straddle o: monotonicity leaves no draw between them
            assert ks[1] == ks[0] + 1 and (outs[0] - o) * (outs[1] - o) < 0


def test_cli_textbook_laplace_is_not_dp_in_float64(module, capsys):
    """The issue's target: float-level eps = inf certified (robust), the real-number verdict [0.1, 0.1] beside it."""
    argv = ["search", f"{module.PATH}:alg", "--size", "1", "--domain", "0..1", "--neighbours", "one_differ", "--float"]
    assert main([*argv, "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["float_eps_lower"] == "inf" and d["float_certified"] is True and d["float_note"] is None
    assert 0.0999 < d["eps_lower"] <= 0.1 and d["eps_upper"] == 0.1
    w = d["float_witness"]
    assert w["robust"] and w["draws_x_sure"] >= 1 and w["draws_x_prime_possible"] == 0
    assert float.fromhex(w["output_hex"]) == w["output"] and any("1 ulp" in a for a in w["assumptions"])
    out = _replayed(module.alg, w)
    assert isinstance(out, float) and out.hex() == w["output_hex"]
    for d_ in w["draws_x"]:  # every listed draw gives the output, through numpy's own laplace
        assert module.alg(ReplayGenerator([int(d_["word"], 16)]), w["x"], 0.1) == w["output"]
        bg = np.random.PCG64()
        bg.state = {"bit_generator": "PCG64", "state": {"state": d_["pcg64_state"], "inc": d_["pcg64_inc"]},
                    "has_uint32": 0, "uinteger": 0}
        assert w["x"][0] + np.random.Generator(bg).laplace(scale=10.0) == w["output"]
    _check_gaps(w, module.alg)
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "real numbers: eps in [0.099999, 0.1]" in text and "float64 (numpy's samplers): eps >= inf certified" in text


def test_loc_form_same_certificate(module):
    r = search(statdp(module.loc, size=1, domain=(0, 1), neighbours="one_differ"), {"epsilon": 0.1},
               float_semantics=True)
    a = r.float_audit
    assert a.certified and a.eps_lower == math.inf and a.witness["robust"]
    assert _replayed(module.loc, a.witness) == a.witness["output"]
    _check_gaps(a.witness, module.loc)


def test_report_noisy_max_value_with_exponential(module):
    """Releasing the noisy maximum: eps = inf at float level; the joint draw replays through numpy."""
    prog = statdp(module.rnm_value, size=2, domain=(0, 1), neighbours="one_differ").trace(epsilon=0.1)
    a = audit(prog, [((1, 0), (0, 0))])
    assert a.certified and a.eps_lower == math.inf and a.witness["robust"]
    w = a.witness
    assert w["draws_x_joint"] and len(w["draws_x"]) == 2
    assert _replayed(module.rnm_value, w) == w["output"]
    assert len(w["proof_x_prime"]) == 2 * 256  # every ziggurat layer of both draws of x'


def test_released_index_is_said_not_modelled(module):
    prog = statdp(module.rnm_index, size=2, domain=(0, 1), neighbours="one_differ").trace(epsilon=0.1)
    a = audit(prog, [((1, 0), (0, 0))])
    assert not a.certified and a.eps_lower is None and "index" in a.reason


def test_unsupported_operation_is_said_not_modelled(module):
    r = search(statdp(module.folded, size=1, domain=(0, 1), neighbours="one_differ"), {"epsilon": 0.1},
               float_semantics=True)
    d = r.to_json()
    assert d["float_certified"] is False and d["float_eps_lower"] is None and "abs" in d["float_note"]


def test_gaussian_bulk_is_modelled(module):
    prog = statdp(module.gauss, size=1, domain=(0, 1), neighbours="one_differ").trace(epsilon=0.1)
    a = audit(prog, [((1,), (0,)), ((0,), (1,))])
    assert a.certified and a.eps_lower == math.inf
    assert _replayed(module.gauss, a.witness) == a.witness["output"]


@pytest.mark.parametrize("op,scale", [("laplace", 10.0), ("exponential", 20.0), ("gaussian", 3.0)])
def test_models_match_numpy(op, scale):
    """Each modelled draw's value is numpy's, and lies within the model's bounds (seeded, 300 draws)."""
    rng = random.Random(7)
    model = noise_model(op, scale)
    call = {"laplace": lambda g: g.laplace(scale=scale), "exponential": lambda g: g.exponential(scale),
            "gaussian": lambda g: g.normal(0.0, scale)}[op]
    layers = [layer for layer in model.layers if layer.sure_hi > layer.lo]
    for _ in range(300):
        layer = rng.choice(layers)
        k = rng.randrange(layer.lo, layer.sure_hi)
        v = layer.value(k)
        assert call(generator_for(layer.word(k))) == v
        lo, hi = layer.bounds(k)
        assert lo <= v <= hi


def test_preimage_matches_a_scan(module):
    """Bisection agrees with scanning the draws around the interval it found."""
    prog = statdp(module.alg, size=1, domain=(0, 1), neighbours="one_differ").trace(epsilon=0.1)
    (chain,) = candidates(prog)
    m = output_map(prog, chain, fixed_values(prog, (1,)))
    model = noise_model("laplace", 10.0)
    layer = model.layers[1]
    k0 = layer.lo + 12345
    o = m.g(layer.value(k0))
    hit, sure_hit = possible(layer, m, o), sure(layer, m, o)
    assert k0 in hit and set(sure_hit) <= set(hit)
    for k in range(hit.start - 50, hit.stop + 50):
        lo, hi = layer.bounds(k)
        assert (m.g(lo) <= o <= m.g(hi)) == (k in hit)
        assert (m.g(lo) == o == m.g(hi)) == (k in sure_hit)
