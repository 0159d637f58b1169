"""Every construct the path-forking tracer refuses: a specific error naming the user's line."""

from __future__ import annotations

import inspect
import random
import threading

import numpy as np
import pytest

from samplers.errors import TooManyPaths, UntraceableError
from samplers.plain import statdp
from verifiers.enumerate import Enumerator


def to_float(prng, queries, epsilon):
    noisy = queries[0] + prng.laplace(scale=1 / epsilon)
    return float(noisy)  # MARK


def loop_bound(prng, queries, epsilon):
    k = prng.integers(0, 3)
    return [q for q in queries[:k]]  # MARK


def range_bound(prng, queries, epsilon):
    total = 0
    for _ in range(queries[0]):  # MARK
        total += 1
    return total


def unknown_ufunc(prng, queries, epsilon):
    return np.exp(queries[0] + prng.laplace(scale=1.0))  # MARK


def unknown_function(prng, queries, epsilon):
    return np.sort(np.asarray(queries) + prng.laplace(scale=1.0, size=len(queries)))  # MARK


def noisy_index(prng, queries, epsilon):
    i = prng.integers(0, len(queries))
    return queries[i]  # MARK


def dtype_float(prng, queries, epsilon):
    return np.asarray(queries, dtype=np.float32) + 1.0  # MARK


def unknown_generator_method(prng, queries, epsilon):
    return queries[0] + prng.uniform(0.0, 1.0)  # MARK


def random_twice(prng, queries, epsilon):
    u = prng.random()
    if u < 0.25:
        return 0
    return 1 if u < 0.5 else 2  # MARK


def inexact_division(prng, queries, epsilon):
    return (queries[0] + prng.laplace(scale=1.0)) / 3  # MARK


def formatted(prng, queries, epsilon):
    return f"{queries[0] + prng.laplace(scale=1.0):.2f}"  # MARK


def returns_dict(prng, queries, epsilon):
    return {"answer": queries[0]}  # MARK


RUNS = []


def not_deterministic(prng, queries, epsilon):
    RUNS.append(1)
    t = float(len(RUNS) % 2)  # state kept between calls: the second run branches on another condition
    if queries[0] + prng.laplace(scale=1.0) > t:  # MARK
        return 1
    return 0


def many_paths(prng, queries, epsilon):
    out = 0
    for q in queries:
        if q + prng.laplace(scale=1.0) > 0:  # MARK
            out += 1
    return out


def unpaired_geometric(prng, queries, epsilon):
    return queries[0] + prng.geometric(0.5) - prng.geometric(0.5)  # MARK: (q + g) - g, left to right


CASES = [
    (unpaired_geometric, UntraceableError, "q + (prng.geometric(p) - prng.geometric(p))"),
    (to_float, UntraceableError, "float"),
    (loop_bound, UntraceableError, "int"),
    (range_bound, UntraceableError, "range"),
    (unknown_ufunc, UntraceableError, "np.exp"),
    (unknown_function, UntraceableError, "np.sort"),
    (noisy_index, UntraceableError, "indexed by a symbolic value"),
    (dtype_float, UntraceableError, "dtype=float32"),
    (unknown_generator_method, UntraceableError, "prng.uniform"),
    (random_twice, UntraceableError, "second comparison"),
    (inexact_division, UntraceableError, "power of two"),
    (formatted, UntraceableError, "formatted"),
    (returns_dict, UntraceableError, "dict"),
    (not_deterministic, UntraceableError, "differently"),
]


def marked_line(fn) -> int:
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, text in enumerate(lines) if "# MARK" in text)


@pytest.mark.parametrize("fn, error, words", CASES, ids=[c[0].__name__ for c in CASES])
def test_unsupported_construct_names_the_line(fn, error, words):
    with pytest.raises(error) as info:
        statdp(fn, size=3).trace()
    site = f"test_plain_errors.py:{marked_line(fn)}"
    assert info.value.site.endswith(site), (info.value.site, site)
    assert str(info.value).startswith(info.value.site)
    assert words in str(info.value)


def test_too_many_paths_is_a_limit_not_a_guess():
    with pytest.raises(TooManyPaths, match="more than 8 paths"):
        statdp(many_paths, size=4, max_paths=8).trace()
    assert statdp(many_paths, size=3, max_paths=8).trace()._meta["paths"] == 8


def global_generator(prng, queries, epsilon):
    return queries[0] + np.random.laplace(scale=1 / epsilon)  # noise the tracer cannot see


def python_coin(prng, queries, epsilon):
    if random.random() < 0.5:  # half the time the same result: only the generator's state tells
        return 0
    return queries[0] + prng.laplace(scale=1 / epsilon) > 0


CALLS = []


def counter_kept(prng, queries, epsilon):
    CALLS.append(1)
    return queries[0] + len(CALLS)


@pytest.mark.parametrize("fn, words", [(global_generator, "numpy's global generator"),
                                       (python_coin, "Python's random module"),
                                       (counter_kept, "returned something else when run again")])
def test_hidden_randomness_or_state_is_caught(fn, words):
    for _ in range(5):  # every time, not by luck
        with pytest.raises(UntraceableError, match=words):
            statdp(fn, size=1).trace()


_BITS = np.random.PCG64(5)  # made before the trace: only the Generator below is made during it


def own_default_rng(prng, queries, epsilon):
    if np.random.default_rng().random() < 1e-12:  # MARK: never seen in a run, so no replay can tell
        return 2
    return queries[0] + prng.integers(0, 2) > 0


def own_generator(prng, queries, epsilon):
    if np.random.Generator(_BITS).random() < 1e-12:  # MARK
        return 2
    return queries[0] + prng.integers(0, 2) > 0


def own_random_state(prng, queries, epsilon):
    if np.random.RandomState().random_sample() < 1e-12:  # MARK
        return 2
    return queries[0] + prng.integers(0, 2) > 0


def own_python_random(prng, queries, epsilon):
    if random.Random().random() < 1e-12:  # MARK
        return 2
    return queries[0] + prng.integers(0, 2) > 0


OWN_GENERATORS = [(own_default_rng, "np.random.default_rng"), (own_generator, "np.random.Generator"),
                  (own_random_state, "np.random.RandomState"), (own_python_random, "random.Random")]
REAL = (np.random.default_rng, np.random.Generator, np.random.RandomState, random.Random)


@pytest.mark.parametrize("fn, words", OWN_GENERATORS, ids=[f.__name__ for f, _ in OWN_GENERATORS])
def test_a_generator_of_the_functions_own_is_refused(fn, words):
    with pytest.raises(UntraceableError) as info:
        statdp(fn, size=1).trace()
    assert info.value.site.endswith(f"test_plain_errors.py:{marked_line(fn)}"), info.value.site
    assert words in str(info.value) and "tracing cannot see" in str(info.value)
    assert (np.random.default_rng, np.random.Generator, np.random.RandomState, random.Random) == REAL


def other_thread(prng, queries, epsilon):
    seen = []

    def draw():
        rng = np.random.default_rng(1)
        seen.append(isinstance(rng, np.random.Generator) and isinstance(random.Random(1), random.Random))

    worker = threading.Thread(target=draw)
    worker.start()
    worker.join()
    return queries[0] + prng.integers(0, 2) > 0 if seen == [True] else 2


def test_other_threads_keep_their_generators_while_a_trace_runs():
    """The refusal is the tracing thread's: a tester drawing beside a trace is not stopped."""
    assert Enumerator(statdp(other_thread, size=1, domain=(0, 0)).trace()).distribution((0,)) == {0: 1 / 2, 1: 1 / 2}
