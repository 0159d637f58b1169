"""Outputs are what the caller receives: type (bool, int, float), the sign of zero, NaN.

Each function here returns, on different paths, values that compare equal in Python but
that the caller tells apart (``1`` and ``1.0``, ``True`` and ``1``, ``-0.0`` and ``0.0``).
They are deterministic, so numpy's truth is worked out by running each on every input of
the domain: eps = inf where two neighbours get outputs of another type or ``repr``, else 0.
The engine must not prove less than that truth; refusing is fine.  NaN (and infinite
constants) in an output or in arithmetic gets an answer that numpy confirms or a one-line
refusal (exit 2 from the CLI, a DPHybridError from the API), never a traceback.
"""

from __future__ import annotations

import importlib.util
import itertools
import math
import textwrap

import numpy as np
import pytest

from hybrid.cli import main
from samplers.errors import DPHybridError, LanguageError, UntraceableError
from samplers.lang import ints, laplace, mechanism, one_differ
from samplers.lang.builder import Builder
from samplers.lang.neighbours import BY_NAME as NEIGHBOURS
from samplers.plain import statdp
from verifiers.enumerate import Enumerator
from verifiers.prover.proof import Proof
from verifiers.prover.prove import prove

DOMAIN = (0, 3)


def int_or_float(prng, queries, epsilon):
    return 1 if queries[0] >= 1 else 1.0


def signed_zeros(prng, queries, epsilon):
    return -0.0 if queries[0] >= 1 else 0.0


def bool_or_int(prng, queries, epsilon):
    return True if queries[0] >= 1 else 1


def float_query_or_int(prng, queries, epsilon):
    q = np.asarray(queries, dtype=np.float64)
    return np.minimum(q[0], 1) if q[0] >= 1 else 1  # 1.0 or 1


def promoted_element_or_int(prng, queries, epsilon):
    a = np.array([queries[0], 0.5])  # a float64 array: a[0] is a float
    return np.minimum(a[0], 1) if queries[0] >= 1 else 1


def stored_element_or_int(prng, queries, epsilon):
    a = np.array([0.5, 0.5])
    a = np.asarray(a) * np.asarray(queries)[0]  # symbolic, float64
    a[1] = queries[0]  # an int stored into a float64 array is a float
    return np.minimum(a[1], 1) if queries[0] >= 1 else 1


def int_array_or_float_array(prng, queries, epsilon):
    return np.array([1, 2]) if queries[0] >= 1 else np.array([1.0, 2.0])


def negative_zero_or_a_float_zero(prng, queries, epsilon):
    return -0.0 if queries[0] >= 2 else queries[0] * 1.0


def element_signed_zeros(prng, queries, epsilon):
    return [1, -0.0] if queries[0] >= 2 else [1, 0.0]


TOLD_APART = [int_or_float, signed_zeros, bool_or_int, float_query_or_int, promoted_element_or_int,
              stored_element_or_int, int_array_or_float_array, negative_zero_or_a_float_zero, element_signed_zeros]


def received(fn, x) -> str:
    """What the caller receives from ``fn`` on ``x`` (run by numpy), type and repr of every component."""
    out = fn(np.random.default_rng(0), np.array(x, dtype=np.int64), 0.1)
    items = list(out) if isinstance(out, (list, tuple, np.ndarray)) else [out]
    return f"{type(out).__name__}:" + ",".join(f"{type(v).__name__}={v!r}" for v in items)


def numpy_truth(fn, size=1) -> float:
    """eps of a deterministic ``fn``: inf if two neighbours get different outputs, else 0."""
    inputs = list(itertools.product(range(DOMAIN[0], DOMAIN[1] + 1), repeat=size))
    rel = NEIGHBOURS["one_differ"]
    outs = {x: received(fn, x) for x in inputs}
    return math.inf if any(outs[x] != outs[y] for x in inputs for y in inputs
                           if x != y and rel.contains(x, y)) else 0.0


@pytest.mark.parametrize("fn", TOLD_APART, ids=[f.__name__ for f in TOLD_APART])
def test_no_proof_below_numpys_truth(fn):
    assert numpy_truth(fn) == math.inf  # the caller tells the paths apart
    try:
        program = statdp(fn, size=1, domain=DOMAIN, neighbours="one_differ").trace()
    except (UntraceableError, LanguageError) as e:
        assert "returns" in str(e) and fn.__name__ in str(e)  # says which function and that it is its return
        return
    found = prove(program)
    assert not isinstance(found, Proof), found  # no finite eps: the truth is inf


def same_type_everywhere(prng, queries, epsilon):
    a = np.array([queries[0], 0.5])
    return a[0] if queries[0] >= 1 else 2.0


def bools_everywhere(prng, queries, epsilon):
    return [queries[0] >= 2, True] if queries[0] >= 1 else [False, queries[0] >= 0]


@pytest.mark.parametrize("fn", [same_type_everywhere, bools_everywhere])
def test_one_type_on_every_path_traces_to_numpys_values(fn):
    program = statdp(fn, size=1, domain=DOMAIN, neighbours="one_differ").trace()
    for q in range(DOMAIN[0], DOMAIN[1] + 1):
        (value, p), = Enumerator(program).distribution((q,)).items()
        out = fn(np.random.default_rng(0), np.array([q]), 0.1)
        assert p == 1 and value == (tuple(int(v) for v in out) if isinstance(out, list) else out)


def test_signed_zero_constants_are_not_shared():
    b = Builder()
    assert b.const(-0.0) != b.const(0.0)
    assert b.const(-0.0) == b.const(-0.0)
    assert math.copysign(1.0, b.nodes[b.const(-0.0)].attr) < 0


def test_nan_constants_are_shared_and_fold():
    b = Builder()
    nan = b.const(float("nan"))
    assert nan == b.const(float("nan"))  # two NaN objects, one value
    x = b.input(0, 0, 3)
    assert b.nodes[b.emit("lt", (x, nan))].attr == 0  # q < nan is False for every q, as in numpy


NAN_PROGRAMS = {
    "nan_element": "return [queries[0], np.nan]",
    "nan_result": "return float('nan')",
    "nan_on_a_path": "return np.nan if queries[0] >= 1 else 0.0",
    "nan_sum": "return queries[0] + np.nan",
    "nan_product": "return (queries[0] >= 1) * np.nan",
    "nan_maximum": "return np.maximum(queries[0] * 1.0, np.nan)",  # numpy: nan; Python's max: the query
    "nan_beside_noise": "return queries[0] + prng.laplace(scale=1.0) + np.nan",
    "nan_compared_with_noise": "return queries[0] + prng.laplace(scale=1.0) > np.nan",
    "infinite_result": "return np.inf",
    "infinite_element": "return [queries[0], -np.inf]",
}


@pytest.fixture
def nan_file(tmp_path):
    body = "\n".join(f"def {name}(prng, queries, epsilon):\n    {line}\n" for name, line in NAN_PROGRAMS.items())
    path = tmp_path / "nans.py"
    path.write_text("import numpy as np\n\n" + body + textwrap.dedent('''
        def nan_compared(prng, queries, epsilon):
            return queries[0] < np.nan
        '''))
    return path


@pytest.mark.parametrize("name", NAN_PROGRAMS)
def test_nan_and_inf_are_refused_on_one_line(capsys, nan_file, name):
    code = main(["prove", f"{nan_file}:{name}", "--size", "1", "--domain", "0..3", "--neighbours", "one_differ"])
    out, err = capsys.readouterr()
    assert code == 2, out + err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err + out, err
    spec = importlib.util.spec_from_file_location("nans", nan_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(DPHybridError):
        statdp(getattr(module, name), size=1, domain=DOMAIN, neighbours="one_differ").trace()


def test_a_comparison_with_nan_is_answered_as_numpy_does(capsys, nan_file):
    code = main(["prove", f"{nan_file}:nan_compared", "--size", "1", "--domain", "0..3", "--neighbours",
                 "one_differ"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "eps <= 0" in out  # numpy: False for every query, so eps = 0
    assert {bool(np.int64(q) < np.nan) for q in range(4)} == {False}


def test_a_non_finite_constant_beside_noise_is_refused_in_the_language_too():
    @mechanism(domain=ints(lo=0, hi=3, size=1), neighbours=one_differ)
    def above_minus_infinity(x):
        return x[0] + laplace(1.0) > float("-inf")

    with pytest.raises(LanguageError, match="-inf meets continuous noise"):
        above_minus_infinity.trace()
