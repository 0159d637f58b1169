"""The attack's numba kernels compute bit for bit what the numpy definitions compute."""

import numpy as np

from hybrid.testers.attack import Model
from hybrid.testers.transforms import Column, Transform
from samplers.lang.ir import BOTTOM_CODE


def numpy_features(t: Transform, samples: np.ndarray) -> np.ndarray:
    """The numpy definition of the per-column transform (see hybrid.testers.transforms)."""
    cols = samples.reshape(len(samples), -1)
    blocks = []
    for j, c in enumerate(t.columns):
        v = cols[:, j]
        if c.kind == "onehot":
            blocks += [(v == val).astype(np.float64) for val in c.values]
            continue
        f = v.astype(np.float64)
        f[v == BOTTOM_CODE] = np.nan
        missing = np.isnan(f)
        special = [f == code for code in c.values]
        plain = ~missing
        for s in special:
            plain &= ~s
        blocks.append(np.where(plain, f, 0.0))
        if c.cut is not None:
            blocks.append((plain & (f > c.cut)).astype(np.float64))
        blocks += [s.astype(np.float64) for s in special]
        if c.bottom:
            blocks.append(missing.astype(np.float64))
    return np.stack(blocks, axis=1)


def numpy_scores(m: Model, features: np.ndarray) -> np.ndarray:
    acc = np.full(len(features), m.biases[0][0])
    for j in range(features.shape[1]):
        acc = acc + ((features[:, j] - m.mean[j]) / m.scale[j]) * m.weights[0][j, 0]
    return acc


def test_features_and_scores_match_numpy_bitwise():
    rng = np.random.default_rng(1)
    n = 50_000
    ints = rng.integers(-3, 4, size=(n, 2))
    ints[rng.random((n, 2)) < 0.1] = BOTTOM_CODE
    floats = rng.laplace(size=(n, 2)) * 100
    floats[rng.random((n, 2)) < 0.2] = -1000.0
    floats[rng.random((n, 2)) < 0.1] = np.nan
    t_int = Transform("onehot", columns=(Column("onehot", (-1, 0, 2, BOTTOM_CODE)), Column("numeric", (0.0,), True, 1.0)))
    t_float = Transform("flags", columns=(Column("numeric", (-1000.0,), True, -3.5), Column("numeric", (), True)))
    for t, samples in ((t_int, ints), (t_float, floats)):
        got, want = t(samples), numpy_features(t, samples)
        assert got.shape == want.shape and np.array_equal(got, want)
        d = got.shape[1]
        m = Model("logistic", rng.normal(size=d), rng.uniform(0.5, 2, d), (rng.normal(size=(d, 1)),), (rng.normal(size=1),))
        scores = m.scores(got)
        assert np.array_equal(scores, numpy_scores(m, got))
        assert all(m.scores(got[i:i + 1])[0] == scores[i] for i in range(0, n, 997))  # alone as in a batch
