"""The traced program is the function's, or there is no program: each hazard here once traced
something other than what numpy runs (a buffer shared by the paths, a swallowed refusal, a
dict lookup by identity, a slice copied instead of viewed, booleans added as numbers, ...).

Each case either traces to the law numpy really has -- checked against a law worked out by
hand, or against the function run by numpy (seeded, chi-square test at p < 1e-6: a wrong
law this far off fails, a right one fails by chance with probability at most 1e-6) -- or
is refused with an UntraceableError naming the user's line.
"""

from __future__ import annotations

import inspect
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from numpy import asarray
from scipy import stats

from samplers.errors import TooManyPaths, UntraceableError
from samplers.lang.ir import BOTTOM
from samplers.plain import statdp
from verifiers.enumerate import Enumerator
from verifiers.prover.prove import prove

UNIT = 2**53  # numpy's random() returns k / 2^53


def law(fn, x, **settings):
    settings = {"size": len(x), "domain": (min(0, *x), max(3, *x)), **settings}
    return Enumerator(statdp(fn, **settings).trace()).distribution(tuple(x))


# -- state shared by the runs of one trace -------------------------------------------------
_BUFFER = []


def global_buffer(prng, queries, epsilon):
    _BUFFER.clear()  # reused between calls: each path's list must be kept as it was returned
    _BUFFER.append(1 if queries[0] + prng.integers(0, 2) > 0 else 0)
    return _BUFFER


def test_a_returned_buffer_is_kept_per_path():
    assert law(global_buffer, [0]) == {(0,): Fraction(1, 2), (1,): Fraction(1, 2)}


def _grows(prng, queries, acc=[]):  # noqa: B006 (the hazard under test)
    acc.append(queries[0] + prng.integers(0, 2) > 0)
    return acc


def mutable_default(prng, queries, epsilon):
    return _grows(prng, queries)


def test_state_kept_between_calls_is_refused():
    with pytest.raises(UntraceableError, match="returned something else when run again"):
        statdp(mutable_default, size=1).trace()


# -- refusals the function could swallow ----------------------------------------------------
def swallows(prng, queries, epsilon):
    noisy = queries[0] + prng.laplace(scale=1 / epsilon)
    try:
        return float(noisy) > 0  # MARK
    except Exception:  # a refusal caught here must not let the run go on without the value
        return 0


def swallows_a_bad_scale(prng, queries, epsilon):
    try:
        noise = prng.laplace(scale=-1.0)  # MARK
    except Exception:
        noise = 0.0
    return queries[0] + noise > 0


def marked_line(fn) -> str:
    lines, start = inspect.getsourcelines(fn)
    return f"test_plain_soundness.py:{start + next(i for i, t in enumerate(lines) if '# MARK' in t)}"


@pytest.mark.parametrize("fn", [swallows, swallows_a_bad_scale])
def test_a_swallowed_refusal_still_refuses(fn):
    with pytest.raises(Exception) as info:
        statdp(fn, size=1).trace()
    assert marked_line(fn) in str(info.value)


# -- Python and numpy semantics the tracer must not guess -----------------------------------
TABLE = {0: 10, 1: 20}


def dict_lookup(prng, queries, epsilon):
    return TABLE.get(queries[0] + prng.integers(0, 2), 0)  # MARK


def set_membership(prng, queries, epsilon):
    return int(queries[0] + prng.integers(0, 2) in {1, 2})  # MARK


def bool_plus_bool(prng, queries, epsilon):
    return (queries[0] + prng.integers(0, 2) > 0) + (queries[0] > 1)  # MARK


def invert_integer(prng, queries, epsilon):
    return ~prng.integers(0, 2)  # MARK


def truncating_store(prng, queries, epsilon):
    a = np.array(queries)  # an int64 array: numpy truncates a float stored in it
    a[0] = a[0] + prng.integers(0, 2) * 0.5  # MARK
    return a[0]


def number_into_bool_array(prng, queries, epsilon):
    above = np.asarray(queries) + prng.integers(0, 2, size=len(queries)) > 1
    above[0] = prng.integers(0, 3)  # MARK
    return np.sum(above)


def writes_queries(prng, queries, epsilon):
    queries[0] = 0  # MARK
    return queries[0] + prng.integers(0, 2)


def maybe_aliased(prng, queries, epsilon):
    a = np.asarray(queries, dtype=np.float64) + prng.laplace(size=len(queries))
    b = np.asarray(a, dtype=np.float64)  # numpy: a itself; the tracer cannot tell a's dtype
    b[0] = 100.0  # MARK
    return a[0] > 50


def numpys_own_asarray(prng, queries, epsilon):
    a = asarray(queries)  # MARK: numpy's own (bound at import): an object array, where numpy makes int64
    a[0] = a[0] + prng.integers(0, 2) * 0.5
    return a[0] * 2 >= 1


def scale_on_noise(prng, queries, epsilon):
    x = queries[0] + prng.laplace(scale=1.0)
    return prng.laplace(scale=abs(x))  # MARK


def sum_with_initial(prng, queries, epsilon):
    return np.sum(np.asarray(queries) + prng.integers(0, 2, size=len(queries)), initial=5)  # MARK


def text_of_noise(prng, queries, epsilon):
    return len(str(queries[0] + prng.laplace(scale=1.0)))  # MARK


def choice_not_summing_to_one(prng, queries, epsilon):
    return prng.choice(3, p=[0.5, 0.5, 0.5])  # MARK


def geometric_zero(prng, queries, epsilon):
    return np.clip(prng.geometric(0.0) - prng.geometric(0.0), -2, 2)  # MARK


def integers_fractional_bound(prng, queries, epsilon):
    return prng.integers(0, 2.5)  # MARK


def integers_as_booleans(prng, queries, epsilon):
    return prng.integers(0, 2, dtype=bool)  # MARK


def raises_on_a_path(prng, queries, epsilon):
    if queries[0] + prng.laplace(scale=1.0) > 0:
        raise ValueError("boom")  # MARK
    return 1


def exits(prng, queries, epsilon):
    raise SystemExit(3)  # MARK


REFUSED = [
    (dict_lookup, "hashed"), (set_membership, "hashed"), (bool_plus_bool, "two booleans"),
    (invert_integer, "bitwise not"), (truncating_store, "truncate"), (number_into_bool_array, "bool(value)"),
    (writes_queries, "queries argument"), (maybe_aliased, "share memory"),
    (numpys_own_asarray, "does not replace"), (scale_on_noise, "plain number"), (sum_with_initial, "initial="),
    (text_of_noise, "text"), (choice_not_summing_to_one, "sum to 1.5"),
    (geometric_zero, "outside (0, 1]"), (integers_fractional_bound, "integer bounds only"),
    (integers_as_booleans, "dtype=bool"), (raises_on_a_path, "raised ValueError: boom"),
    (exits, "raised SystemExit"),
]


@pytest.mark.parametrize("fn, words", REFUSED, ids=[f.__name__ for f, _ in REFUSED])
def test_what_numpy_and_the_tracer_would_disagree_on_is_refused_at_the_line(fn, words):
    with pytest.raises(UntraceableError) as info:
        statdp(fn, size=2, domain=(0, 3)).trace()
    assert info.value.site.endswith(marked_line(fn)), (info.value.site, marked_line(fn))
    assert words in str(info.value)


def paths_share_shapes(prng, queries, epsilon):
    return [1] if queries[0] + prng.integers(0, 2) > 1 else [1, None]


def number_or_list(prng, queries, epsilon):
    return 1 if queries[0] + prng.integers(0, 2) > 1 else [1]


def none_or_empty(prng, queries, epsilon):
    return None if queries[0] + prng.integers(0, 2) > 1 else []


@pytest.mark.parametrize("fn", [paths_share_shapes, number_or_list, none_or_empty])
def test_results_that_padding_would_merge_are_refused(fn):
    """[1] and [1, None] are different outputs: traced as (1, ⊥) both, a proof would be about neither."""
    with pytest.raises(UntraceableError, match="return|list"):
        statdp(fn, size=1, domain=(0, 3)).trace()


# -- loops that never stop forking ----------------------------------------------------------
def count_down(prng, queries, epsilon):
    x = queries[0] + prng.laplace(scale=1.0)
    k = 0
    while x > 0:  # the first path takes every new fork's True branch: it never ends
        x = x - 1
        k += 1
    return k > 2


def coin_loop(prng, queries, epsilon):
    k = 0
    while not prng.random() < 0.5:  # path k forks k times: quadratic work before the path limit
        k += 1
    return k


def test_a_path_that_forks_without_end_is_a_limit():
    with pytest.raises(TooManyPaths, match="more than 50 times on one path"):
        statdp(count_down, size=1, max_paths=50).trace()


def test_forks_over_all_paths_are_a_limit():
    with pytest.raises(TooManyPaths, match="branches on noisy values over its paths"):
        statdp(coin_loop, size=1, max_paths=100).trace()


# -- laws as numpy draws them ---------------------------------------------------------------
def test_numpy_random_is_a_lattice_of_2_to_the_minus_53():
    """The premise of the exact coin: every random() is k / 2^53 (checked on numpy itself)."""
    u = np.random.default_rng(5).random(100_000)
    assert np.all(u * UNIT == np.floor(u * UNIT))


NEAR_ONE = Fraction(UNIT - 1, UNIT) + Fraction(2, 5 * UNIT)  # float(NEAR_ONE) is (2^53 - 1) / 2^53


def test_numpy_compares_a_fraction_exactly():
    """The premise of the NEAR_ONE coins below: numpy compares its float64 with a Fraction exactly."""
    top = np.float64((UNIT - 1) / UNIT)  # the largest random()
    assert float(NEAR_ONE) == top and top < NEAR_ONE and np.all(np.array([top]) < NEAR_ONE)


@pytest.mark.parametrize("compare, prob", [
    (lambda u: u <= 0.0, Fraction(1, UNIT)),  # k = 0
    (lambda u: u < 2.0**-60, Fraction(1, UNIT)),  # k = 0 again: 2^-60 < 2^-53
    (lambda u: 0.0 < u, Fraction(UNIT - 1, UNIT)),
    (lambda u: u < 0.1, Fraction(math.ceil(Fraction(0.1) * UNIT), UNIT)),  # ceil: 0.1 is not on the lattice
    (lambda u: u >= 0.75, Fraction(1, 4)),
    (lambda u: u < float("nan"), Fraction(0)),
    (lambda u: u < 2.0, Fraction(1)),
    (lambda u: u < NEAR_ONE, Fraction(1)),  # compared exactly: above the top lattice point (2^53 - 1) / 2^53
    (lambda u: NEAR_ONE > u, Fraction(1)),
])
def test_coins_have_numpys_probability(compare, prob):
    got = law(lambda prng, queries, epsilon: compare(prng.random()), [0], domain=(0, 0))
    assert got.get(1, Fraction(0)) == prob


def test_choice_compares_random_with_numpys_cumulative_sums():
    """cdf = [1e-20, 0.5, 1]: numpy returns 0 only when random() < 1e-20, i.e. k = 0."""
    got = law(lambda prng, queries, epsilon: prng.choice(3, p=[1e-20, 0.5, 0.5 - 1e-20]), [0], domain=(0, 0))
    assert got == {0: Fraction(1, UNIT), 1: Fraction(1, 2) - Fraction(1, UNIT), 2: Fraction(1, 2)}


# -- traced laws against numpy's own runs ---------------------------------------------------
def view_write(prng, queries, epsilon):
    a = np.asarray(queries) + prng.integers(0, 2, size=len(queries))
    v = a[:1]  # a view: the write below changes a
    v[0] = 100
    return a.argmax(), a[1]


def asarray_is_the_array(prng, queries, epsilon):
    a = np.asarray(queries) + prng.integers(0, 2, size=len(queries))
    b = np.asarray(a)
    b[1] = -100
    return int(a.argmax())


def boolean_arrays(prng, queries, epsilon):
    above = np.asarray(queries) + prng.integers(-1, 2, size=len(queries)) > 1
    return tuple(~above) + (np.sum(above), np.cumsum(above)[-1], above.astype(int)[0] + above.astype(int)[1])


def float_store(prng, queries, epsilon):
    a = np.asarray(queries, dtype=np.float64)  # a copy of the int64 queries: float stores are exact
    a[0] = a[0] + prng.integers(0, 2) * 0.5
    return int(a[0] * 2 >= 1)


def coin_arrays(prng, queries, epsilon):
    heads = prng.random(size=len(queries)) < 0.75
    return tuple(np.where(heads, queries, 1 - np.asarray(queries)))


def ties_in_python(prng, queries, epsilon):
    xs = [q + prng.integers(0, 2) for q in queries]
    return xs.index(max(xs)), sorted(range(len(xs)), key=lambda i: xs[i])[0]


def truth_of_numbers(prng, queries, epsilon):
    a = np.asarray(queries) + prng.integers(-1, 1, size=len(queries))
    return np.any(a[:1]), np.all(a), np.any([queries[0] - prng.integers(0, 2)])


def shapes_of_values(prng, queries, epsilon):
    noisy = queries[0] + prng.integers(0, 2)
    return np.ndim(noisy), len(np.shape(noisy)), np.ndim(queries), np.shape(queries)[0], noisy


def branch_on_a_query(prng, queries, epsilon):
    if queries[0] > 1:  # queries are symbolic: this forks, the program holds for every input of the domain
        return prng.integers(0, 2) + queries[1]
    return queries[1] // 2 - (queries[0] + prng.integers(-2, 2)) % 3


def chained_and_short_circuit(prng, queries, epsilon):
    a = queries[0] + prng.integers(0, 3)
    b = queries[1] + prng.integers(0, 2) > 1
    return int(0 < a < 3), int(b and a > 1), int(b or a > 2)


CONFORMANCE = [view_write, asarray_is_the_array, boolean_arrays, float_store, coin_arrays, ties_in_python,
               truth_of_numbers, shapes_of_values, branch_on_a_query, chained_and_short_circuit]
RUNS = 4_000


def _as_output(v):
    if isinstance(v, (list, tuple, np.ndarray)):
        return tuple(_as_output(e) for e in v)
    return BOTTOM if v is None else int(v)


@pytest.mark.parametrize("fn", CONFORMANCE, ids=[f.__name__ for f in CONFORMANCE])
def test_traced_law_is_numpys(fn):
    program = statdp(fn, size=2, domain=(0, 2)).trace()
    exact = Enumerator(program)
    rng = np.random.default_rng(3)
    for x in [(0, 1), (2, 2), (1, 0)]:
        expected = exact.distribution(x)
        runs = Counter(_as_output(fn(rng, np.asarray(x, dtype=np.int64), 0.5)) for _ in range(RUNS))
        assert set(runs) <= set(expected), (x, set(runs) - set(expected))
        outcomes = sorted(expected, key=repr)
        if len(outcomes) > 1:
            observed = [runs[o] for o in outcomes]
            p = stats.chisquare(observed, [float(expected[o]) * RUNS for o in outcomes]).pvalue
            assert p > 1e-6, (x, dict(runs), expected)


# -- numpy's law, or a refusal at the line -------------------------------------------------
def view_before_share(prng, queries, epsilon):
    a = np.asarray(queries) + prng.integers(0, 2, size=len(queries))
    v = a[:]  # a view taken before b: numpy's b is a itself, so the write below changes b
    b = np.asarray(a, dtype=np.int64)
    v[0] = 100  # MARK
    return b[0] > 50


def object_copy(prng, queries, epsilon):
    a = np.asarray(queries) + prng.integers(0, 2, size=len(queries))
    b = np.asarray(a, dtype=object)  # MARK: numpy copies a (int64) into a new object array
    b[0] = 100
    return a.argmax()


def int8_draw(prng, queries, epsilon):
    a = prng.integers(0, 100, size=1, dtype=np.int8) + 100  # MARK: numpy's int8 wraps above 127
    return a[0] > 0


def uint8_queries(prng, queries, epsilon):
    a = np.asarray(queries, dtype=np.uint8) - 1  # MARK: numpy's uint8 wraps 0 - 1 to 255
    return a[0] + prng.integers(0, 2) > 5


def int16_astype(prng, queries, epsilon):
    a = (np.asarray(queries) + prng.integers(0, 2, size=len(queries))).astype(np.int16)  # MARK
    return a[1] * 30_000 > 0  # numpy's int16 wraps 2 * 30000 to -5536


def uint8_operand(prng, queries, epsilon):
    return (np.zeros(1, dtype=np.uint8) - (prng.random() < 0.5))[0] > 1  # MARK: numpy's uint8 0 - True is 255


def private_generator(prng, queries, epsilon):
    if np.random.default_rng().random() < 0.02:  # MARK: randomness the tracer cannot see
        return int(queries[0] > 1) + 10  # releases a bit of the input outright
    return prng.random() < 0.5


NUMPY_OR_REFUSED = [(view_before_share, "share memory"), (object_copy, "dtype=object"), (int8_draw, "dtype=int8"),
                    (uint8_queries, "dtype=uint8"), (int16_astype, "int16"), (uint8_operand, "uint8"),
                    (private_generator, "np.random.default_rng")]


@pytest.mark.filterwarnings("ignore:overflow encountered")  # numpy's own runs wrap around
@pytest.mark.parametrize("fn, words", NUMPY_OR_REFUSED, ids=[f.__name__ for f, _ in NUMPY_OR_REFUSED])
def test_numpys_law_or_a_refusal_at_the_line(fn, words):
    """Traced, the law must be numpy's (its outcomes seen in seeded runs, by chi-square); refused, the
    error must name the line and the construct."""
    x, rng = (0, 1), np.random.default_rng(7)
    runs = Counter(_as_output(fn(rng, np.asarray(x, dtype=np.int64), 0.5)) for _ in range(2_000))
    try:
        expected = law(fn, x)
    except UntraceableError as e:
        assert e.site.endswith(marked_line(fn)), (e.site, marked_line(fn))
        assert words in str(e)
        return
    assert set(runs) <= set(expected), (runs, expected)
    outcomes = sorted(expected, key=repr)
    if len(outcomes) > 1:
        observed = [runs[o] for o in outcomes]
        p = stats.chisquare(observed, [float(expected[o]) * runs.total() for o in outcomes]).pvalue
        assert p > 1e-6, (runs, expected)


# -- what a proof covers --------------------------------------------------------------------
def above_the_domain(prng, queries, epsilon):
    if queries[0] > 100:  # decided on the declared domain: never true there
        return queries[0]
    return queries[0] + prng.laplace(scale=1 / epsilon) > 0


def test_a_proof_of_traced_code_covers_the_declared_domain_only():
    program = statdp(above_the_domain, size=1, domain=(-3, 3)).trace(epsilon=0.5)
    proof = prove(program, Fraction(1, 2))
    assert "declared domain" in proof.evidence["covers"] and "Z^1" not in proof.evidence["covers"]


# -- continuous noise: numpy's parameters (scale, not rate; loc first) -------------------
def exponential_mean(prng, queries, epsilon):
    return queries[0] + prng.exponential(2.0)  # numpy: scale = mean 2, not rate 2


def laplace_positional(prng, queries, epsilon):
    return prng.laplace(queries[0]) + prng.laplace(0.0, 3.0)  # loc first; scale 1 by default


def normal_positional(prng, queries, epsilon):
    return prng.normal(queries[0], 2.0)


def draws_in_path_order(prng, queries, epsilon):
    if queries[0] + prng.laplace(scale=1.0) > 1:  # the two paths draw the same laws in opposite orders
        a, b = prng.exponential(1.0), prng.laplace(scale=1.0)
    else:
        b, a = prng.laplace(scale=1.0), prng.exponential(1.0)
    return a + 3 * b


@pytest.mark.slow
@pytest.mark.parametrize("fn", [exponential_mean, laplace_positional, normal_positional, draws_in_path_order],
                         ids=lambda f: f.__name__)
def test_continuous_draws_have_numpys_law(fn):
    """The numba sampler of the traced program against numpy running the function: a two-sample
    Kolmogorov-Smirnov test at p < 1e-6 (false failure at most 1e-6; seeded, so reproducible)."""
    from samplers.compile import Sampler

    sampler = Sampler(statdp(fn, size=1, domain=(0, 2)).trace())
    rng = np.random.default_rng(11)
    for x in [(0,), (2,)]:
        traced = sampler.sample(x, 20_000, seed=5)
        real = np.array([fn(rng, np.asarray(x, dtype=np.int64), 0.5) for _ in range(20_000)], dtype=float)
        assert stats.ks_2samp(traced, real).pvalue > 1e-6, x


def list_or_tuple(prng, queries, epsilon):
    if queries[0] + prng.laplace(scale=1 / epsilon) > 0:
        return [1]
    return (1,)  # the same value, another type: it tells the branch


def test_a_result_whose_type_tells_the_path_is_refused():
    """Merged as one output (1,), the law would say nothing is released; the type reveals the branch."""
    with pytest.raises(UntraceableError, match="list on some paths and a tuple"):
        law(list_or_tuple, (0,), domain=(0, 1))
