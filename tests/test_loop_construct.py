"""The loop construct ``scan``: catalogue mechanisms written with it trace to the IR of their Python loops."""

from __future__ import annotations

from itertools import accumulate

import pytest

from samplers import catalogue
from samplers.lang import exponential as exp_noise
from samplers.lang import BOTTOM, ite, laplace as lap, mechanism, ints, all_differ, one_differ, scan
from samplers.lang.loop import NotALoop, trace_loop

BELOW = -1000.0


def _svt_loop(x, *, T, c, threshold_scale, query_scale, cutoff=True, release=None, redraw=False):
    """The sparse-vector loop as the catalogue wrote it before ``scan``."""
    rho = lap(threshold_scale)
    out, count = [], 0
    for q in x:
        noisy = q if query_scale is None else q + lap(query_scale)
        above = noisy >= T + rho
        answer = ite(above, release(noisy), BELOW) if release else above
        if cutoff:
            out.append(ite(count >= c, BOTTOM, answer))
            count = count + above
        else:
            out.append(answer)
        if redraw:
            rho = ite(above, lap(threshold_scale), rho)
    return tuple(out)


def _numerical_svt(x, *, eps, n, c, T):
    rho = lap(3 / eps)
    out, count = [], 0
    for q in x:
        above = q + lap(6 * c / eps) >= T + rho
        answer = ite(above, q + lap(3 * c / eps), 0.0)
        out.append(ite(count >= c, BOTTOM, answer))
        count = count + above
    return tuple(out)


def _noisy_max(x, eps, noise, value):
    from samplers.lang import argmax, maximum
    noisy = [xi + noise(2 / eps) for xi in x]
    return maximum(noisy) if value else argmax(noisy)


def _prefix_sum(x, *, eps, n, T):
    out, running = [], 0
    for q in x[: T + 1]:
        running = running + q + lap(1 / eps)
        out.append(running)
    return tuple(out)


REFERENCE = {  # name -> the Python-loop definition it had before scan
    "shadowdp_prefixsum": _prefix_sum,
    "report_noisy_max1": lambda x, *, eps, n: _noisy_max(x, eps, lap, False),
    "report_noisy_max2": lambda x, *, eps, n: _noisy_max(x, eps, exp_noise, False),
    "report_noisy_max3": lambda x, *, eps, n: _noisy_max(x, eps, lap, True),
    "report_noisy_max4": lambda x, *, eps, n: _noisy_max(x, eps, exp_noise, True),
    "noisy_hist1": lambda x, *, eps, n: tuple(xi + lap(1 / eps) for xi in x),
    "partialsum": lambda x, *, eps, n: sum(x) + lap(1 / eps),
    "numerical_svt": _numerical_svt,
    "svt1": lambda x, *, eps, n, c, T: _svt_loop(x, T=T, c=c, threshold_scale=2 / eps, query_scale=4 * c / eps),
    "svt2": lambda x, *, eps, n, c, T: _svt_loop(x, T=T, c=c, threshold_scale=2 * c / eps,
                                                 query_scale=4 * c / eps, redraw=True),
    "svt3": lambda x, *, eps, n, c, T: _svt_loop(x, T=T, c=c, threshold_scale=2 / eps, query_scale=2 * c / eps,
                                                 release=lambda v: v),
    "svt4": lambda x, *, eps, n, c, T: _svt_loop(x, T=T, c=c, threshold_scale=4 / eps,
                                                 query_scale=4 / (3 * eps)),
    "svt5": lambda x, *, eps, n, c, T: _svt_loop(x, T=T, c=c, threshold_scale=2 / eps, query_scale=None,
                                                 cutoff=False),
    "svt6": lambda x, *, eps, n, c, T: _svt_loop(x, T=T, c=c, threshold_scale=2 / eps, query_scale=2 / eps,
                                                 cutoff=False),
}


@pytest.mark.parametrize("name", sorted(REFERENCE))
@pytest.mark.parametrize("n", [1, 2, 5, 12])
@pytest.mark.parametrize("c", [1, 3])
def test_scan_traces_to_the_same_ir_as_the_python_loop(name, n, c):
    mech = catalogue.get(name)
    params = {k: v for k, v in {"n": n, "c": c}.items() if k in mech.defaults}
    new = mech.trace(**params)
    ref = mechanism(domain=mech.domain_spec, neighbours=mech.neighbours_spec, name=mech.name)(
        _named(REFERENCE[name], mech)).trace(**params)
    assert (new.nodes, new.outputs, new.tuple_output) == (ref.nodes, ref.outputs, ref.tuple_output)


def _named(fn, mech):
    """``fn`` with the mechanism's keyword parameters (and defaults), as @mechanism needs them."""
    def wrapper(x, **kw):
        return fn(x, **kw)
    import inspect
    wrapper.__signature__ = inspect.Signature(
        [inspect.Parameter("x", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
        + [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=d) for k, d in mech.defaults.items()])
    return wrapper


def test_scan_returns_outputs_and_final_state():
    @mechanism(domain=ints(lo=0, hi=3, size="n"), neighbours=one_differ)
    def running(x, *, n=3):
        outs, (total,) = scan(x, lambda q, s: (s[0] + q, (s[0] + q,)), (0,))
        return outs + (total,)

    prog = running.trace(n=3)
    assert len(prog.outputs) == 4 and prog.outputs[2] == prog.outputs[3]


def _loop_of(name, **params):
    mech = catalogue.get(name)
    size = mech.domain_spec.size
    return trace_loop(mech.fn, mech.params(**params), size if isinstance(size, str) else None, -10, 10, name)


def test_symbolic_iteration_of_svt1_has_one_state_counter_and_threshold():
    lt = _loop_of("svt1")
    assert len(lt.state_in) == 2 and lt.out is not None and lt.results == ()
    assert all(i < lt.body_start for i in lt.init)


@pytest.mark.parametrize("name", ["prefix_sum", "laplace"])
def test_mechanisms_without_the_loop_construct_are_refused(name):
    with pytest.raises(NotALoop, match="not written with the loop construct|reads the size parameter"):
        _loop_of(name)


def test_a_step_with_hidden_python_state_is_refused():
    seen = []

    @mechanism(domain=ints(lo=0, hi=3, size="n"), neighbours=one_differ)
    def indexed(x, *, n=3, eps=1.0):
        def step(q, s):
            seen.append(1)
            return q + lap(len(seen) / eps), s
        return scan(x, step)[0]

    with pytest.raises(NotALoop, match="not the same at every iteration"):
        trace_loop(indexed.fn, indexed.params(), "n", 0, 3, "indexed")


def test_a_mechanism_reading_n_is_refused():
    @mechanism(domain=ints(lo=0, hi=3, size="n"), neighbours=one_differ)
    def scaled(x, *, n=3):
        return scan(x, lambda q, s: (q + lap(n), s))[0]

    with pytest.raises(NotALoop, match="size parameter n"):
        trace_loop(scaled.fn, scaled.params(), "n", 0, 3, "scaled")


@pytest.mark.parametrize("use", [lambda n: n ** 1, lambda n: 2 ** n, lambda n: n & 1, lambda n: abs(n), lambda n: f"{n}"])
def test_any_use_of_the_size_parameter_is_refused_in_words(use):
    """Power, bit operations, abs, formatting of n: the every-n refusal, not Python's TypeError."""

    @mechanism(domain=ints(lo=0, hi=3, size="n"), neighbours=one_differ)
    def sized(x, *, n=3, eps=1.0):
        use(n)
        return scan(x, lambda q, s: (q + lap(1 / eps), s))[0]

    with pytest.raises(NotALoop, match="reads the size parameter n"):
        trace_loop(sized.fn, sized.params(), "n", 0, 3, "sized")
