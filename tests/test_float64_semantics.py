"""Noise-free float arithmetic means what numpy computes in float64, for every backend.

Each program here once got a proof below the level of the code numpy runs: the prover read
``(q + 0.1) - 0.1`` and ``(q + 2**53) - 2**53`` as the real numbers ``q``.  The truth is
computed independently, by running each function in numpy on every input of its domain;
a proof must not claim less than that truth, the enumerator must give numpy's value on each
input, and the symbolic backends (BDD, SMT) must agree with it.  A property test does the
same for random functions mixing float constants with integer queries.
"""

from __future__ import annotations

import itertools
import math
import random
from fractions import Fraction

import numpy as np
import pytest

from hybrid import search
from samplers.errors import LanguageError, UntraceableError
from samplers.lang import ints, mechanism, one_differ
from samplers.lang.float64 import TABLE_LIMIT, Grid, value_grid
from samplers.plain import statdp
from verifiers.backends import get_backend
from verifiers.enumerate import Enumerator
from verifiers.prover.proof import Proof
from verifiers.prover.prove import prove
from verifiers.ratio import INF


def as_float64(queries):
    return np.asarray(queries, dtype=np.float64)


def round_trip_tenth(prng, queries, epsilon):
    q = as_float64(queries)
    return bool((q[0] + 0.1) - 0.1 == q[0])


def absorbed(prng, queries, epsilon):
    q = as_float64(queries)
    return (q[0] + 2.0**53) - 2.0**53 - q[0]


def absorbed_scaled_plus_noise(prng, queries, epsilon):
    q = as_float64(queries)
    return prng.laplace(scale=10.0) + ((q[0] + 2.0**53) - 2.0**53 - q[0]) * 1000.0


def absorbed_plus_noise(prng, queries, epsilon):
    q = as_float64(queries)
    return (q[0] + 2.0**53) - 2.0**53 + prng.laplace(scale=10.0)


def neighbour_pairs(program):
    dom = program.domain
    return [(x, y) for x in dom.points() for y in program.neighbours.of(x, dom)]


def numpy_values(fn, program):
    """What numpy returns on every input (the noise-free part: epsilon unused, no draws)."""
    return {x: fn(None, list(x), 0.1) for x in program.domain.points()}


def noisy_part_truth(fn, scale, program):
    """The level of ``f(q) + Lap(scale)`` with f run in numpy: max |f(x) - f(x')| / scale over neighbours."""
    f = {x: fn(np.random.default_rng(0), list(x), 0.1) for x in program.domain.points()}
    return max(abs(Fraction(f[x]) - Fraction(f[y])) for x, y in neighbour_pairs(program)) / Fraction(scale)


def traced(fn, domain, size=1):
    return statdp(fn, size=size, domain=domain, neighbours="one_differ").trace()


def no_proof_below(program, truth):
    found = prove(program, time_budget=60)
    if isinstance(found, Proof):
        assert truth != INF and found.eps >= truth, (found.eps, truth)


@pytest.mark.parametrize("fn, domain", [(round_trip_tenth, (-5, 10)), (absorbed, (0, 3))])
def test_deterministic_programs_mean_numpys_values_in_every_backend(fn, domain):
    program = traced(fn, domain)
    values = numpy_values(fn, program)
    assert len(set(values.values())) > 1  # numpy's outputs differ: the truth is eps = inf
    enum = Enumerator(program)
    for x, v in values.items():
        assert enum.distribution(x) == {(v,): 1} or enum.distribution(x) == {v: 1}
    no_proof_below(program, INF)
    backends = ("enumerate", "bdd", "smt") if program.output_kind == "int" else ("enumerate",)
    for name in backends:
        assert get_backend(program, name).global_epsilon().ratio == INF, name


def round_trip_after_a_coin(prng, queries, epsilon):
    q = as_float64(queries)
    z = prng.integers(0, 2)
    return bool((q[0] + z + 0.1) - 0.1 == q[0] + z)


def test_discrete_noise_meets_float64_too():
    """Values of inputs and discrete draws are finite: read in float64 like noise-free ones."""
    program = traced(round_trip_after_a_coin, (0, 5))
    for x in program.domain.points():
        numpy_law = {}
        for z in (0, 1):
            v = int(bool((np.float64(x[0]) + z + 0.1) - 0.1 == np.float64(x[0]) + z))
            numpy_law[v] = numpy_law.get(v, 0) + Fraction(1, 2)
        assert Enumerator(program).distribution(x) == numpy_law, x
    for name in ("enumerate", "bdd", "smt"):
        assert get_backend(program, name).global_epsilon().ratio == INF, name
    no_proof_below(program, INF)


def test_round_trip_of_a_tenth_is_what_numpy_says():
    program = traced(round_trip_tenth, (-5, 10))
    assert Enumerator(program).distribution((3,)) != Enumerator(program).distribution((4,))


@pytest.mark.parametrize("fn, scale", [(absorbed_plus_noise, 10.0), (absorbed_scaled_plus_noise, 10.0)])
def test_noise_on_inexact_values_is_proved_no_lower_than_numpy(fn, scale):
    program = traced(fn, (0, 3))

    def noise_free(prng, queries, epsilon):
        q = as_float64(queries)
        base = (q[0] + 2.0**53) - 2.0**53
        return base if fn is absorbed_plus_noise else (base - q[0]) * 1000.0

    truth = noisy_part_truth(noise_free, scale, program)
    assert truth in (Fraction(1, 5), 100)  # 0.2 = 2 / 10 (1 + 2^53 rounds to 2^53), 100 = 1000 / 10
    no_proof_below(program, truth)
    r = search(statdp(fn, size=1, domain=(0, 3), neighbours="one_differ"), seed=1)  # the continuous backend
    assert r.certified and truth * Fraction(99, 100) <= Fraction(r.eps_lower) <= truth


def big_sum(prng, queries, epsilon):
    q = as_float64(queries)
    return q[0] + q[1] + prng.laplace(scale=1.0)


def test_integers_converted_to_float64_round_like_floats():
    """Near 2^53 a float64 sum rounds to even: a change of 1 in a query moves it by 0 or 2."""
    program = traced(big_sum, (2**52, 2**52 + 3), size=2)

    def noise_free(prng, queries, epsilon):
        q = as_float64(queries)
        return q[0] + q[1]

    truth = noisy_part_truth(noise_free, 1.0, program)
    assert truth == 2
    no_proof_below(program, truth)


def test_the_language_and_the_enumerator_agree_on_rounding():
    @mechanism(domain=ints(lo=0, hi=3, size=1), neighbours=one_differ)
    def absorbed_lang(x):
        q = x[0] * 1.0
        return (q + 2.0**53) - 2.0**53 - q

    program = absorbed_lang.trace()
    assert get_backend(program, "enumerate").global_epsilon().ratio == INF
    no_proof_below(program, INF)
    enum = Enumerator(program)
    for v in range(4):
        numpy_value = (np.float64(v) + 2.0**53) - 2.0**53 - np.float64(v)
        assert set(enum.distribution((v,))) in ({numpy_value}, {(numpy_value,)})


def test_exact_float_arithmetic_stays_symbolic():
    """Integers times 0.5, plus 0.25: a grid of quarters, no table: the program keeps its inputs."""
    @mechanism(domain=ints(lo=-10, hi=10, size=2), neighbours=one_differ)
    def halves(x):
        return x[0] * 0.5 + x[1] * 0.25 + 3.0

    ops = [n.op for n in halves.trace().nodes]
    assert "ite" not in ops and ops.count("input") == 2


def test_an_untabulable_inexact_operation_is_refused_with_the_users_line():
    def tenths(prng, queries, epsilon):
        q = as_float64(queries)
        return np.sum(q * 0.1) + prng.laplace(scale=1 / epsilon)

    with pytest.raises(UntraceableError, match="float64 rounding") as err:
        statdp(tenths, size=6, domain=(-10, 10)).trace()
    assert "test_float64_semantics.py" in err.value.site


def test_signed_zeros_an_output_tells_apart_are_refused():
    @mechanism(domain=ints(lo=-2, hi=2, size=1), neighbours=one_differ)
    def signed_zero(x):
        return x[0] * 1.0 * 0.0  # -0.0 for negative x, 0.0 otherwise: the sign of x leaks

    with pytest.raises(LanguageError, match="-0.0"):
        signed_zero.trace()


def test_value_grid_reads_exact_binary_values():
    assert value_grid([0.1]) == Grid(-55, 3602879701896397)
    assert value_grid([2.0**53, 1]) == Grid(0, 2**53)
    assert not Grid(0, 2**53 + 1).doubles and Grid(-1074, 1).doubles


# -- property test: random functions of integer queries and float constants ---------------------
CONSTANTS = ("0.1", "2.0**53", "(1/3)", "0.5", "3.0", "-2.0", "1e16")
OPERATORS = ("+", "-", "*")


def random_expression(rng: random.Random, depth: int) -> str:
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(["q[0]", "q[1]", rng.choice(CONSTANTS)])
    op = rng.choice(OPERATORS)
    return f"({random_expression(rng, depth - 1)} {op} {random_expression(rng, depth - 1)})"


def random_linear(rng: random.Random, terms: int) -> str:
    """A sum of scaled queries, constants and round trips ``(q + C) - C``: mostly provable, sometimes inexact."""
    def term() -> str:
        q, c = rng.choice(["q[0]", "q[1]"]), rng.choice(CONSTANTS)
        return rng.choice([q, c, f"({q} * {c})", f"(({q} + {c}) - {c})"])
    return " ".join([term()] + [f"{rng.choice('+-')} {term()}" for _ in range(terms - 1)])


def compile_function(expression: str, noise: bool):
    source = ("def alg(prng, queries, epsilon):\n"
              "    q = np.asarray(queries, dtype=np.float64)\n"
              f"    return {expression}" + (" + prng.laplace(scale=1.0)\n" if noise else "\n"))
    scope = {"np": np}
    exec(compile(source, f"<random {expression}>", "exec"), scope)  # noqa: S102 (generated test code)
    return scope["alg"]


def numpy_truth(fn, program, noise: bool):
    values = {x: fn(_NoNoise(), list(x), 0.1) for x in program.domain.points()}
    if any(not math.isfinite(v) for v in values.values()):
        return None
    diffs = [abs(Fraction(values[x]) - Fraction(values[y])) for x, y in neighbour_pairs(program)]
    if noise:
        return max(diffs)  # Lap(1) on f computed in float64: the level is f's float64 sensitivity
    return INF if any(diffs) else 0


class _NoNoise:
    """A generator whose Laplace draw is 0: the noise-free part of ``f(q) + Lap(1)``."""

    def laplace(self, scale):
        return 0.0


@pytest.mark.parametrize("seed", range(12))
def test_random_float_programs_get_no_proof_below_numpy(seed):
    rng = random.Random(seed)
    for noise, linear in itertools.product((False, True), repeat=2):
        expression = random_linear(rng, 3) if linear else random_expression(rng, 3)
        fn = compile_function(expression, noise)
        try:
            program = traced(fn, (0, 3), size=2)
        except (UntraceableError, LanguageError):
            continue  # a refusal is sound
        truth = numpy_truth(fn, program, noise)
        if truth is None:
            continue
        found = prove(program, time_budget=60)
        if isinstance(found, Proof):
            assert found.eps >= truth, (expression, noise, found.eps, truth)
        if not noise:
            enum = Enumerator(program)
            for x in program.domain.points():
                (out,) = enum.distribution(x)
                out = out[0] if isinstance(out, tuple) else out
                assert Fraction(out) == Fraction(fn(None, list(x), 0.1)), (expression, x)


def test_tables_are_bounded():
    """A table is evaluated on at most TABLE_LIMIT input combinations (a count, not a clock)."""
    side = math.isqrt(TABLE_LIMIT) + 1

    @mechanism(domain=ints(lo=0, hi=side, size=2), neighbours=one_differ)
    def two_tenths(x):
        return x[0] * 0.1 + x[1] * 0.1

    with pytest.raises(LanguageError, match="combinations"):
        two_tenths.trace()


def infinite_sum(prng, queries, epsilon):
    q = as_float64(queries)
    return q[0] + float("inf") + prng.laplace(scale=1.0)


def nan_product(prng, queries, epsilon):
    return as_float64(queries)[0] * np.nan


def overflow(prng, queries, epsilon):
    return as_float64(queries)[0] * 1e308 * 10.0


@pytest.mark.parametrize("fn, value", [(infinite_sum, "inf"), (nan_product, "nan"), (overflow, "inf")])
def test_non_finite_float64_values_are_refused_with_the_line(fn, value):
    with pytest.raises(UntraceableError, match=f"gives {value} in float64") as err:
        traced(fn, (0, 3))
    assert "test_float64_semantics.py" in err.value.site


# -- sums: numpy's pairwise order, which rounding makes visible -------------------------------------
@pytest.mark.parametrize("ones", [1, 7, 8, 15, 130])
def test_a_float_sum_is_numpys_pairwise_sum(ones):
    """1e16 + 1 + 1 + ... depends on the order: numpy sums pairwise from 8 values on (a sequential fold
    gives 1e16 each time); the traced program must give numpy's value on every input."""
    def big_sum(prng, queries, epsilon):
        q = as_float64(queries)
        return np.sum(np.concatenate(([1e16], q, [1.0] * ones)))

    program = traced(big_sum, (0, 3))
    enum = Enumerator(program)
    for x in program.domain.points():
        (value,) = enum.distribution(x)
        assert value == big_sum(None, list(x), 0.1), (ones, x)


def test_a_mean_of_a_power_of_two_count_is_traced_and_others_refused():
    def mean(prng, queries, epsilon):
        return np.mean(np.clip(queries, 0, 5)) + prng.laplace(scale=1 / epsilon)

    assert traced(mean, (0, 10), size=4).continuous
    with pytest.raises(UntraceableError, match="np.mean divides the float64 sum by n = 5"):
        traced(mean, (0, 10), size=5)


def test_a_long_table_is_a_balanced_tree_and_a_choice_among_doubles_stays_exact():
    """q * 0.1 over 601 inputs: one table (depth ~10, not a chain of 600 ite that the prover's
    recursive walks could not follow), and the ite choosing among its doubles needs no check of its own."""
    def tenth(prng, queries, epsilon):
        return queries[0] * 0.1 + prng.laplace(scale=1 / epsilon)

    program = traced(tenth, (-300, 300))
    depth: dict[int, int] = {}
    for i, n in enumerate(program.nodes):
        depth[i] = 1 + max((depth[a] for a in n.args), default=0)
    assert max(depth.values()) < 30
    found = prove(program, time_budget=60)  # an answer (here none: z3 gives up on the table), no RecursionError
    assert not isinstance(found, Proof) or found.eps >= Fraction(1, 100)
