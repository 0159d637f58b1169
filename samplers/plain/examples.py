"""Textbook mechanisms written the way StatDP users write them: ``alg(prng, queries, epsilon, **kwargs)``.

Plain numpy code with Python control flow (``for``, ``if``, ``break``, counters), to be
traced unchanged by :mod:`samplers.plain`.  Each has a catalogue twin written in the
mechanism language (named in its docstring) and is certified at the same level, except
:func:`snapping`, which the tracer refuses (its rounding to a grid has no traced form).
"""

import numpy as np


def noisy_max_laplace(prng, queries, epsilon):
    """Report noisy max, Laplace noise, the index (twin: report_noisy_max1); epsilon-DP."""
    noisy = np.asarray(queries, dtype=np.float64) + prng.laplace(scale=2.0 / epsilon, size=len(queries))
    return noisy.argmax()


def noisy_max_exponential(prng, queries, epsilon):
    """Report noisy max, exponential noise, the index (twin: report_noisy_max2); epsilon-DP."""
    noisy = np.asarray(queries) + prng.exponential(scale=2.0 / epsilon, size=len(queries))
    return np.argmax(noisy)


def noisy_max_laplace_value(prng, queries, epsilon):
    """Noisy max releasing the value, Laplace noise (twin: report_noisy_max3); not epsilon-DP."""
    noisy = np.asarray(queries) + prng.laplace(scale=2.0 / epsilon, size=len(queries))
    return noisy.max()


def noisy_max_exponential_value(prng, queries, epsilon):
    """Noisy max releasing the value, exponential noise (twin: report_noisy_max4); not DP."""
    noisy = np.array(queries, dtype=float) + prng.exponential(scale=2.0 / epsilon, size=len(queries))
    return np.max(noisy)


def histogram(prng, queries, epsilon):
    """Every count plus Lap(1/epsilon) (twin: noisy_hist1); epsilon-DP."""
    return np.asarray(queries) + prng.laplace(scale=1.0 / epsilon, size=len(queries))


def histogram_wrong_scale(prng, queries, epsilon):
    """Every count plus Lap(epsilon): the scale inverted (twin: noisy_hist2); 1/epsilon-DP."""
    return np.asarray(queries) + prng.laplace(scale=epsilon, size=len(queries))


def svt(prng, queries, epsilon, N=1, T=0.5):
    """Sparse vector, stopping after N answers above (twin: svt1); epsilon-DP."""
    out = []
    rho = prng.laplace(scale=2.0 / epsilon)
    count = 0
    for q in queries:
        nu = prng.laplace(scale=4.0 * N / epsilon)
        if q + nu >= T + rho:
            out.append(True)
            count += 1
            if count >= N:
                break
        else:
            out.append(False)
    return out


def isvt1(prng, queries, epsilon, N=1, T=1.0):
    """No noise on the queries and no cutoff (twin: svt5); not DP."""
    rho = prng.laplace(scale=2.0 / epsilon)
    return [bool(q >= T + rho) for q in queries]


def isvt2(prng, queries, epsilon, N=1, T=1.0):
    """Query noise not scaled by N, no cutoff (twin: svt6); not DP."""
    rho = prng.laplace(scale=2.0 / epsilon)
    out = []
    for q in queries:
        if q + prng.laplace(scale=2.0 / epsilon) >= T + rho:
            out.append(True)
        else:
            out.append(False)
    return out


def isvt3(prng, queries, epsilon, N=1, T=1.0):
    """Query noise Lap(4/(3 epsilon)) whatever N (twin: svt4); (1 + 6N)/4 epsilon-DP."""
    rho = prng.laplace(scale=4.0 / epsilon)
    out, count = [], 0
    for q in queries:
        if count >= N:
            break
        above = q + prng.laplace(scale=4.0 / (3.0 * epsilon)) >= T + rho
        out.append(bool(above))
        if above:
            count += 1
    return out


def isvt4(prng, queries, epsilon, N=1, T=1.0):
    """Releases the noisy answer above the threshold (twin: svt3); not DP as the queries grow."""
    rho = prng.laplace(scale=2.0 / epsilon)
    out, count = [], 0
    for q in queries:
        noisy = q + prng.laplace(scale=2.0 * N / epsilon)
        if noisy >= T + rho:
            out.append(noisy)
            count += 1
            if count >= N:
                break
        else:
            out.append(-1000.0)
    return out


def snapping(prng, queries, epsilon, B=100.0):
    """Mironov's snapping mechanism (CCS 2012) on one query, with numpy's Laplace: clamp to [-B, B], add
    Lap(1/epsilon), round to the nearest multiple of the smallest power of two >= 1/epsilon, clamp again.
    No catalogue twin: the tracer refuses np.round of a noisy value (docs: Floating point)."""
    scale = 1.0 / epsilon
    grain = 2.0 ** np.ceil(np.log2(scale))
    noisy = np.clip(np.asarray(queries, dtype=np.float64)[0], -B, B) + prng.laplace(scale=scale)
    return np.clip(grain * np.round(noisy / grain), -B, B)
