"""The continuous backend: enclosures contain closed forms and 50-digit quadrature, decisions are sound."""

from __future__ import annotations

import random
from fractions import Fraction

import mpmath
import pytest

from samplers import catalogue
from samplers.errors import UnsupportedByBackend
from samplers.lang import all_differ, argmax, exponential, gaussian, ints, ite, laplace, maximum, mechanism, flip
from verifiers.continuous.approx_dp import event_delta, threshold_delta
from verifiers.backends import get_backend
from verifiers.continuous.backend import ContinuousBackend, NumericOutputs
from verifiers.enumerate import Enumerator
from verifiers.continuous.linear import Form
from verifiers.continuous.paths import NonlinearProgram


@pytest.fixture(autouse=True)
def _mpmath_digits():
    """This module's truths at 50 digits, whatever precision other modules leave behind."""
    with mpmath.workdps(50):
        yield



def mp(q: Fraction) -> mpmath.mpf:
    return mpmath.mpf(q.numerator) / q.denominator


def encloses(e, value, slack=mpmath.mpf(10) ** -40) -> bool:
    return mp(e.lo) - slack <= value <= mp(e.hi) + slack


def lap_cdf(u, b):
    return mpmath.exp(u / b) / 2 if u < 0 else 1 - mpmath.exp(-u / b) / 2


def test_laplace_tail_ratio_is_exactly_e_eps():
    """P(Y >= a | 1) / P(Y >= a | 0) = e^0.1 for a >= 1 (REFERENCE.md): certified, never above."""
    b = ContinuousBackend(catalogue.get("laplace").trace(eps=0.1))
    for a in (Fraction(1), Fraction(7, 2), Fraction(-3, 4)):
        def event(run, a=a):
            return run.require(a, run.output(0), strict=False)

        p = b.event_probability((1,), event)
        assert encloses(p, 1 - lap_cdf(mp(a) - 1, mpmath.mpf(10)))
        assert p.hi - p.lo < Fraction(1, 10**17)
        r = b.witness_ratio((1,), (0,), event).ratio
        truth = (1 - lap_cdf(mp(a) - 1, 10)) / (1 - lap_cdf(mp(a), 10))
        assert mp(r.lo) <= truth <= mp(r.hi)
    assert mp(r.lo) < mpmath.exp(mpmath.mpf(1) / 10)


def test_noisy_max_of_two_laplace_values():
    """P(x1 + Z1 > x2 + Z2) = 1 - e^(-d/b) (1 + d/(2b)) / 2 for iid Laplace(b), d = x1 - x2 >= 0."""
    prog = catalogue.get("report_noisy_max1").trace(eps=0.1, n=2)
    b = ContinuousBackend(prog)
    scale = mpmath.mpf(20)  # 2 / eps
    for x in ((3, 0), (1, 1), (-10, 10)):
        d = mpmath.mpf(x[0] - x[1])
        p0 = 1 - mpmath.exp(-abs(d) / scale) * (1 + abs(d) / (2 * scale)) / 2
        p0 = p0 if d >= 0 else 1 - p0
        dist = b.distribution(x)
        assert encloses(dist[0], p0) and encloses(dist[1], 1 - p0)


def test_distribution_sums_to_one_and_matches_enumerate_on_discrete_programs():
    for name, params, x in (("noisy_max_geom", {"m": 3}, (0, 1, 2)), ("above_threshold_geom", {"L": 2}, (1, 2))):
        prog = catalogue.get(name).trace(**params)
        exact = Enumerator(prog).distribution(x)
        enc = ContinuousBackend(prog).distribution(x)
        assert set(exact) == set(enc)
        assert all(enc[o].lo == enc[o].hi == p for o, p in exact.items())


def _star_program(laws, consts, ties):
    """A random program: comparisons of shifted noise values against a shared one, and an argmax."""
    noise = {"laplace": laplace, "exponential": exponential, "gaussian": gaussian}

    @mechanism(domain=ints(lo=0, hi=1, size=1), neighbours=all_differ)
    def prog(x):
        hub = noise[laws[0][0]](laws[0][1])
        vals = [x[0] * c + noise[k](s) for (k, s), c in zip(laws[1:], consts)]
        bits = tuple(ite(v >= hub + c, 1, 0) for v, c in zip(vals, consts[::-1]))
        return bits + (argmax([hub] + vals, ties=ties),)

    return prog.trace()


def _cdf(kind, scale, u):
    if kind == "laplace":
        return lap_cdf(u, scale)
    if kind == "exponential":
        return 1 - mpmath.exp(-u / scale) if u > 0 else mpmath.mpf(0)
    return mpmath.ncdf(u, 0, scale)


def _pdf(kind, scale, t):
    if kind == "laplace":
        return mpmath.exp(-abs(t) / scale) / (2 * scale)
    if kind == "exponential":
        return mpmath.exp(-t / scale) / scale if t > 0 else mpmath.mpf(0)
    return mpmath.npdf(t, 0, scale)


def _check_random_programs(seed: int, trials: int, kinds: tuple, level: int, width: Fraction) -> None:
    """P(bits = b, argmax = 0) = int f_hub(t) prod_j P(leaf j on its side of t + c_j and below t) dt."""
    rng = random.Random(seed)
    for trial in range(trials):
        laws = [(rng.choice(kinds), float(rng.choice((0.5, 1.0, 1.5, 2.0)))) for _ in range(3)]
        consts = [rng.choice((-1, 0, 1)) for _ in range(2)]
        prog = _star_program(laws, consts, "first")
        b = ContinuousBackend(prog)
        x = (1,)
        dist = b.distribution(x, level=level)
        total = sum((e.lo for e in dist.values()), Fraction(0))
        assert total <= 1 <= sum((e.hi for e in dist.values()), Fraction(0))
        (hk, hs), leaves = laws[0], laws[1:]
        shifts = [c * x[0] for c in consts]
        for out, enc in dist.items():
            if out[-1] != 0:  # the argmax-0 outputs: every leaf below the hub
                continue

            def integrand(t):
                v = _pdf(hk, hs, t)
                for j, ((k, s), sh, thr) in enumerate(zip(leaves, shifts, consts[::-1])):
                    bound = t - sh  # leaf value below the hub: z_j < t - shift_j
                    above_at = t + thr - sh  # bit j: z_j >= t + c - shift_j
                    if out[j]:
                        v *= max(mpmath.mpf(0), _cdf(k, s, bound) - _cdf(k, s, above_at))
                    else:
                        v *= _cdf(k, s, min(bound, above_at))
                return v

            points = sorted({mpmath.mpf(p) for p in (-1, 0, 1, 2, -2, 3, -3)})
            ref = mpmath.quad(integrand, [-mpmath.inf] + points + [mpmath.inf])
            assert encloses(enc, ref, slack=mpmath.mpf(10) ** -45), (laws, consts, out)
            assert enc.hi - enc.lo < width


def test_random_linear_programs_agree_with_50_digit_quadrature():
    _check_random_programs(5, 3, ("laplace", "exponential"), 0, Fraction(1, 10**15))
    _check_random_programs(11, 1, ("laplace", "gaussian"), 0, Fraction(1, 10**15))


@pytest.mark.slow
def test_random_linear_programs_agree_at_128_bits():
    _check_random_programs(5, 8, ("laplace", "exponential", "gaussian"), 1, Fraction(1, 10**30))


def test_general_region_is_enclosed_by_cells():
    """z1 + z2 > z3 is not a star: the cell bounds enclose the double integral and tighten with the level."""
    from verifiers.continuous.linear import Form
    from verifiers.continuous.paths import Law
    from verifiers.continuous.region import probability
    from verifiers.continuous.enclosure import Enclosure, working_precision

    laws = {1: Law("laplace", Fraction(2)), 2: Law("laplace", Fraction(3)), 3: Law("exponential", Fraction(1))}
    c = Form(((1, Fraction(1)), (2, Fraction(1)), (3, Fraction(-1))), Fraction(0))

    def inner(a):  # int_{b > -a} f2(b) (1 - e^(-a-b)) db in closed form (f2: Laplace(3))
        beta, low = mpmath.mpf(3), -a
        if low >= 0:
            tail = mpmath.exp(-low * (1 + 1 / beta)) / (1 + 1 / beta)
        else:
            tail = (1 - mpmath.exp(low * (1 / beta - 1))) / (1 / beta - 1) + 1 / (1 + 1 / beta)
        return (1 - lap_cdf(low, beta)) - mpmath.exp(-a) * tail / (2 * beta)

    ref = mpmath.quad(lambda a: _pdf("laplace", 2, a) * inner(a), [-mpmath.inf, 0, mpmath.inf])
    widths = []
    for level in (0, 2):
        with working_precision(level):
            e = Enclosure.from_arb(probability([c], laws, level))
        assert encloses(e, ref, slack=mpmath.mpf(10) ** -12)
        widths.append(e.hi - e.lo)
    assert widths[1] < widths[0] / 3


def test_decision_oracle_is_sound():
    """Never "yes" where the exact answer is no: against enumerate on a discrete program, and on the
    closed form of a two-value noisy max (the answer flips exactly at the ratio)."""
    prog = catalogue.get("noisy_max_geom").trace(m=3)
    cont, exact = ContinuousBackend(prog), Enumerator(prog)
    x, xp = (1, 1, 1), (0, 2, 2)
    r = exact.pair_ratio(x, xp)  # 24/7
    for c in (r - Fraction(1, 10**30), r, r + Fraction(1, 10**30), Fraction(1)):
        d = cont.exists_violation(x, xp, c)
        assert d.yes == (exact.exists_violation(x, xp, c) is not None)
    b = ContinuousBackend(catalogue.get("report_noisy_max1").trace(eps=0.1, n=2))
    scale = mpmath.mpf(20)
    p = 1 - mpmath.exp(-1 / scale) * (1 + 1 / (2 * scale)) / 2  # P(0 | (1, 0))
    truth = p / mpmath.mpf(0.5)  # against (0, 0)
    for k in range(-3, 4):
        c = Fraction(mpmath.nstr(truth, 40)) + Fraction(k, 10**12)
        d = b.exists_violation((1, 0), (0, 0), c)
        if d.yes:
            assert truth > mp(c)
        if d.answer == "no":
            assert truth <= mp(c) or mp(c) > truth - mpmath.mpf(10) ** -30


def test_pair_and_global_levels_over_a_small_box():
    from verifiers.verify import restricted

    prog = restricted(catalogue.get("report_noisy_max1").trace(eps=0.1, n=3), 0, 2)
    b = ContinuousBackend(prog)
    lv = b.pair_epsilon((1, 1, 1), (0, 2, 2), precision=1e-3)
    assert lv.decided and lv.bracket[1] - lv.bracket[0] <= 1e-3 and lv.bracket[1] <= 0.1
    g = b.global_epsilon(precision=1e-3)
    assert g.ratio.lo >= lv.ratio.lo and g.eps_upper <= 0.1  # report noisy max is 0.1-DP
    assert g.pairs > 100


def test_infinite_ratio_is_certain():
    """Exponential noise is non-negative: max < 1 is impossible from (1, ..., 1) and certain-ish from zeros."""
    b = ContinuousBackend(catalogue.get("report_noisy_max4").trace(eps=0.1, n=3))

    def event(run):
        return run.require(run.output(0), Fraction(1))

    w = b.witness_ratio((0, 0, 0), (1, 1, 1), event)
    assert w.q.hi == 0 and w.p.lo > 0 and w.ratio.lo == float("inf")


def test_gaussian_delta_matches_the_analytic_gaussian_mechanism():
    """Balle and Wang: delta(eps) = Phi(1/2s - eps s) - e^eps Phi(-1/2s - eps s), to 1e-6 (here 1e-12)."""
    for sigma, eps in ((1.0, 0.5), (2.0, 0.1), (0.5, 1.0)):
        b = ContinuousBackend(catalogue.get("gaussian_mechanism").trace(sigma=sigma))
        s, e = mpmath.mpf(sigma), mpmath.mpf(eps)
        truth = mpmath.ncdf(1 / (2 * s) - e * s) - mpmath.exp(e) * mpmath.ncdf(-1 / (2 * s) - e * s)
        d = threshold_delta(b, (1,), (0,), eps)
        assert mp(d.lo) <= truth + mpmath.mpf(10) ** -30  # certified: never above the true optimum
        assert truth - mp(d.lo) < 1e-12
    whole = event_delta(b, (1,), (0,), lambda run: 1, eps)  # the whole space: 1 - e^eps < 0
    assert whole.lo < 0


def test_refusals():
    @mechanism(domain=ints(lo=0, hi=1, size=1), neighbours=all_differ)
    def product(x):
        return laplace(1) * laplace(1) + x[0]

    with pytest.raises(NonlinearProgram):
        ContinuousBackend(product.trace()).paths((0,), lambda run: (run.outputs(),))
    with pytest.raises(NumericOutputs):
        ContinuousBackend(catalogue.get("laplace").trace()).distribution((0,))
    with pytest.raises(UnsupportedByBackend):
        get_backend(catalogue.get("laplace").trace(), "bdd")
    assert get_backend(catalogue.get("laplace").trace()).name == "continuous"


def test_mixed_discrete_and_continuous_noise():
    """A coin chooses the scale: P(out = 1) = (P(Lap(1) > 1) + P(Lap(3) > 1)) / 2."""
    @mechanism(domain=ints(lo=0, hi=1, size=1), neighbours=all_differ)
    def coin(x):
        v = ite(flip("1/2"), laplace(1), laplace(3))
        return ite(maximum(v, -5.0) > 1.0 + x[0], 1, 0)

    d = ContinuousBackend(coin.trace()).distribution((0,))
    truth = (1 - lap_cdf(mpmath.mpf(1), 1) + 1 - lap_cdf(mpmath.mpf(1), 3)) / 2
    assert encloses(d[1], truth)


def test_equality_of_random_values():
    """v == v surely, v == an independent draw with probability zero, v != v + 1 surely."""
    @mechanism(domain=ints(lo=0, hi=1, size=1), neighbours=all_differ)
    def eq(x):
        v = laplace(1)
        return ite(v == v + 0.0, 1, 0), ite(v == laplace(1), 1, 0), ite(v != v + 1.0, 1, 0)

    d = ContinuousBackend(eq.trace()).distribution((0,))
    assert list(d) == [(1, 0, 1)] and d[(1, 0, 1)].lo == 1


def test_halted_outputs_are_bottom_in_symbolic_events():
    """A sparse vector that halts releases BOTTOM constants: the searcher's events count them as
    bottom (they equal BOTTOM itself, not its int64 code) and its tuner skips them as constants
    (numerical_svt, svt3 and svt34_parallel crashed in search on float(BOTTOM))."""
    from hybrid.searcher.numeric_events import output_constants
    from hybrid.searcher.regions import symbolic
    from hybrid.testers.events import SetEvent
    from hybrid.testers.features import Feature

    program = catalogue.get("numerical_svt").trace(n=3, c=1)
    backend = ContinuousBackend(program)
    assert set(output_constants(backend.specialised((1, 1, 1)))) == {0.0}  # the "below" answer, not BOTTOM
    probs = []
    for k in range(4):
        event = symbolic(SetEvent(Feature("count", value="bottom"), (k,)), arity=3, tuple_output=True)
        e = backend.event_probability((1, 1, 1), event)
        probs.append((e.lo, e.hi))
    assert probs[3] == (0, 0) and all(lo > 0 for lo, _ in probs[:3])  # halting after query 1, 2 or never
    assert sum(lo for lo, _ in probs) <= 1 <= sum(hi for _, hi in probs)


def _running_sums_below(n: int, c: Fraction):
    """The event "every running sum is below c" (a chain of constraints: cells, not a star)."""
    def event(run):
        return all(run.require(run.output(k), c) for k in range(n))

    return event


def test_a_stalled_refinement_stops_and_a_converging_one_goes_on():
    """Raising the level refines cells that end in stars (n = 3: to the last level), but not a region
    cut to box bounds beyond the cell depth (n = 5: the widths barely move, so the refinement stops at
    level 1 instead of spending four more levels, each about four times the last, on nothing)."""
    for n, level in ((3, 4), (5, 1)):
        b = ContinuousBackend(catalogue.get("prefix_sum").trace(eps=1, n=n))
        w = b.witness_ratio((0,) * n, (1,) * n, _running_sums_below(n, Fraction(n, 2) + 1))
        assert (w.level, w.decided) == (level, False)
        assert w.p.lo <= w.p.hi and w.q.lo <= w.q.hi


def test_too_many_runs_on_one_input_skips_the_count_on_the_others(monkeypatch):
    """Finding out that an input has more than COMPLETE_RUNS finished runs costs that many runs (seconds
    on a sparse vector of 20 queries); once one input has too many the others are not explored again,
    and an event gets the same enclosure either way (the same paths, found lazily)."""
    import verifiers.continuous.backend as backend_module

    program = catalogue.get("numerical_svt").trace(eps=1, n=6)
    calls = []
    original = backend_module.complete_runs

    def counted(spec, **kw):
        calls.append(spec)
        return original(spec, **kw)

    def event(run):  # reads every output first, then "the first released value is at least 1"
        released = [v for v in [run.output(k) for k in range(6)] if isinstance(v, Form)]
        return 1 if released and run.require(Fraction(1), released[0], strict=False) else 0

    event.reads_every_output = True
    whole = ContinuousBackend(program)
    expected = [whole.event_probability(x, event) for x in ((0,) * 6, (1,) * 6)]
    monkeypatch.setattr(backend_module, "complete_runs", counted)
    monkeypatch.setattr(backend_module, "COMPLETE_RUNS", 5)
    b = ContinuousBackend(program)
    assert b._complete_runs((0,) * 6) is None and b._complete_runs((1,) * 6) is None
    assert len(calls) == 1
    assert [b.event_probability(x, event) for x in ((0,) * 6, (1,) * 6)] == expected


def test_numeric_outputs_are_found_on_the_first_path(monkeypatch):
    """Whether a program releases continuous values is known from the first path that releases one:
    the other paths (tens of thousands on two sparse vectors over 20 queries) are not explored."""
    import verifiers.continuous.backend as backend_module

    yielded = []
    original = backend_module.explore

    def counted(*args, **kw):
        for p in original(*args, **kw):
            yielded.append(p)
            yield p

    monkeypatch.setattr(backend_module, "explore", counted)
    b = ContinuousBackend(catalogue.get("svt34_parallel").trace(eps=1, n=4))
    assert not b.finite_outputs((0, 1, 0, 1))
    assert len(yielded) <= 1
    with pytest.raises(NumericOutputs):
        b.output_paths((0, 1, 0, 1))
    assert ContinuousBackend(catalogue.get("svt1").trace(eps=1, n=4)).finite_outputs((0, 1, 0, 1))
