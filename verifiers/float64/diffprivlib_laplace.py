"""diffprivlib's ``Laplace`` mechanism at float level: outputs near 0 that only ``x = 0`` gives.

diffprivlib 0.6 (mechanisms/laplace.py, read for 0.6.6) randomises ``value`` as
``value - scale * (log(1 - U1) cos(pi U2) + log(1 - U3) cos(pi U4))`` with numpy's ``np.log``,
``np.cos`` and ``np.pi``, ``scale = sensitivity / (epsilon - log(1 - delta))``, and four ``random()``
draws of its generator, in that order: numpy's ``RandomState`` when a seed is given (MT19937:
``(a >> 5) * 2^26 + (b >> 6)`` over ``2^53`` for two 32-bit words ``a``, ``b``), Python's
``secrets.SystemRandom`` otherwise (56 random bits ``>> 3``, over ``2^53``).  **The model**: each
``U`` is ``k / 2^53`` with ``k`` uniform in ``0 .. 2^53 - 1``, as both compute.

The verdict is eps = inf from the grid lemma (:mod:`verifiers.float64.grid`): from ``x' != 0`` the
output ``fl(x' - W)`` is never a non-zero double below ``g = grid(x')`` (``2^-53`` for ``x' = 1``),
whatever ``W``; from ``x = 0`` it is ``-W`` itself, and the draws ``k = (1, j, 1, j)`` make ``W`` tiny:
``log(1 - 2^-53)`` is about ``-2^-53`` and ``j`` puts ``cos(pi U)`` near ``g 2^50 / scale``.  That
``0 < |W| < g`` holds whatever ``np.log`` and ``np.cos`` return within the model (``log`` within 1 ulp,
``cos`` within a relative ``2^-20``) is checked on rigorous enclosures, so the witness is *robust*; its
output double is this machine's, checked against the installed diffprivlib run on a numpy
``RandomState`` set to give the draws (:func:`~verifiers.float64.replay.mt19937_state`).
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Iterable, Sequence

import numpy as np

from verifiers.float64.grid import grid
from verifiers.float64.libm import NP_LOG_ASSUMPTION, arb_exact, log_bounds
from verifiers.float64.replay import mt19937_state
from verifiers.float64.verdict import INF, FloatAudit, not_modelled

UNIT = 2**53
MODEL = "diffprivlib's Laplace"
COS_ERROR = Fraction(1, 2**20)  # the model's relative error of np.cos (measured here: 0.52 ulp)
ROUNDING = Fraction(1, 2**53)  # a correctly rounded product or sum of normal doubles: relative error below it
SMALLEST_NORMAL = Fraction(1, 2**1022)
ASSUMPTIONS = (
    "diffprivlib's Laplace.randomise returns value - scale * (log(1 - U1) cos(pi U2) + log(1 - U3) cos(pi U4)) "
    "(read in diffprivlib 0.6.6; the installed version replays the witness to the same double)",
    "each U is random() of its generator, k / 2^53 (numpy's RandomState when seeded, secrets.SystemRandom if not)",
    NP_LOG_ASSUMPTION,
    "np.cos: any double within a relative 2^-20 of the exact cosine, of its sign (numpy documents no bound; measured "
    "at most 0.52 ulp here)",
    "float64 arithmetic, rounded to nearest, without FMA contraction (Python and numpy scalar operations)",
)


def scale_of(epsilon: float, sensitivity: float, delta: float) -> float:
    """diffprivlib's scale, computed as it does."""
    return float(sensitivity / (epsilon - np.log(1 - delta)))


def noise(ks: Sequence[int], scale: float) -> float:
    """``W = scale * standard_laplace`` on the draws ``ks``, with numpy's log and cos (this machine's)."""
    u1, u2, u3, u4 = (k * (1.0 / UNIT) for k in ks)
    return float(scale * (np.log(1 - u1) * np.cos(np.pi * u2) + np.log(1 - u3) * np.cos(np.pi * u4)))


def _cos_bounds(t: float) -> tuple[Fraction, Fraction]:
    """What the model lets ``np.cos(t)`` be, for ``cos t > 0``: the exact value within ``COS_ERROR``."""
    from flint import arb, ctx

    with ctx.workprec(128):
        c = arb(t).cos()
        lo, hi = arb_exact(c.lower()), arb_exact(c.upper())
    return lo * (1 - COS_ERROR), hi * (1 + COS_ERROR)


def enclosure(j: int, scale: float) -> tuple[Fraction, Fraction]:
    """Bounds on ``|W|`` for the draws ``(1, j, 1, j)`` whatever log and cos the model allows (``cos(pi U) > 0``)."""
    lo_log, hi_log = log_bounds(1 - 1 * (1.0 / UNIT))  # both negative: |log| in [-hi, -lo]
    c_lo, c_hi = _cos_bounds(math.pi * (j * (1.0 / UNIT)))
    if c_lo <= 0:
        raise ArithmeticError("cos(pi U) is not surely positive")
    down, up = 1 - ROUNDING, 1 + ROUNDING
    product = (-Fraction(hi_log) * c_lo * down, -Fraction(lo_log) * c_hi * up)  # each term; both have one sign
    total = (2 * product[0] * down, 2 * product[1] * up)
    w = (Fraction(scale) * total[0] * down, Fraction(scale) * total[1] * up)
    if min(product[0], total[0], w[0]) < SMALLEST_NORMAL:  # the relative rounding bounds need normal results
        raise ArithmeticError("the noise would be subnormal")
    return w


def witness_draw(scale: float, g: Fraction) -> int | None:
    """A ``j`` whose ``|W|`` is surely in ``(0, g)``: ``cos(pi U)`` aimed at a quarter of the largest allowed."""
    target = min(0.5, float(g * UNIT / (8 * Fraction(scale))))
    for aim in (target, target / 4, target / 16):
        j = round(math.acos(aim) / math.pi * UNIT)
        if not 0 < j < UNIT // 2:
            continue
        try:
            if enclosure(j, scale)[1] < g:
                return j
        except ArithmeticError:
            continue
    return None


def _replay(epsilon: float, delta: float, sensitivity: float, ks: Sequence[int], value: float) -> float:
    """The installed diffprivlib's own output on the draws (a RandomState set to give them)."""
    from diffprivlib.mechanisms import Laplace

    rs = np.random.RandomState()
    rs.set_state(mt19937_state(ks))
    return float(Laplace(epsilon=epsilon, delta=delta, sensitivity=sensitivity, random_state=rs).randomise(value))


def audit(epsilon: float, pairs: Iterable[tuple[Sequence[int], Sequence[int]]], *, delta: float = 0.0,
          sensitivity: float = 1.0) -> FloatAudit:
    """The float-level verdict on diffprivlib's ``Laplace`` over the given ``(x, x')`` pairs of one count each
    (``randomise(float(x[0]))``, as :func:`samplers.libraries.diffprivlib_laplace` calls it)."""
    scale = scale_of(epsilon, sensitivity, delta)
    usable = [(x[0], xp[0]) for x, xp in pairs if x[0] == 0 and xp[0] != 0]
    if not usable:
        return not_modelled("no neighbour pair has x = 0 and x' != 0: the grid argument certifies outputs near 0 "
                            "that only the input 0 gives, and no other argument is modelled", MODEL)
    x, xp = min(usable, key=lambda p: abs(p[1]))  # any pair will do; the smallest x' has the finest grid
    g = grid(float(xp))
    j = witness_draw(scale, g)
    if j is None:
        return not_modelled(f"no draws found whose noise is surely below {float(g)!r} (the grid of x' = {xp!r}) "
                            f"at scale {scale!r}: the grid argument gives no witness here", MODEL)
    ks = (1, j, 1, j)
    w_here = noise(ks, scale)
    o = float(x) - w_here  # randomise(value) returns value - W
    library = _replay(epsilon, delta, sensitivity, ks, float(x))
    from_xp = _replay(epsilon, delta, sensitivity, ks, float(xp))
    if library != o or from_xp != float(xp) - w_here:
        return not_modelled(f"the installed diffprivlib gives {library!r} (and {from_xp!r} from x'), not the model's "
                            f"{o!r}: its Laplace is not the one read (diffprivlib 0.6.6)", MODEL)
    w_lo, w_hi = enclosure(j, scale)
    state = mt19937_state(ks)
    witness = {
        "x": [x], "x_prime": [xp], "output": o, "output_hex": o.hex(),
        "draws_x": [{"noise": i, "sampler": "diffprivlib Laplace", "layer": f"U{i + 1}", "k": k,
                     "uniform_hex": (k * (1.0 / UNIT)).hex()} for i, k in enumerate(ks)],
        "draws_x_joint": True, "draws_x_sure": 1, "draws_x_prime_possible": 0, "robust": True,
        "robust_under": "any log within 1 ulp and cos within 2^-20",
        "noise_enclosure": [w_lo.__float__().hex(), w_hi.__float__().hex()],
        "random_state": {"mt19937_key_head": [int(v) for v in state[1][:8]], "pos": 0,
                         "how": "np.random.RandomState().set_state(('MT19937', key, 0)) with key[:8] these words: "
                                "its next four random() are the draws"},
        "proof_x_prime": {"lemma": "the grid lemma, verifiers/float64/grid.py", "grid": float(g).hex(),
                          "statement": f"every non-zero fl({xp!r} - W) below |{xp!r}|/2 is a multiple of "
                                       f"{float(g)!r}, whatever the double W: {o!r} is not one"},
        "assumptions": list(ASSUMPTIONS), "ratio": "inf",
    }
    return FloatAudit(INF, True, witness, model=MODEL)
