"""The float-level witness search: an output double that ``x`` reaches and ``x'`` cannot (or rarely).

For a pair ``(x, x')`` it draws ``k`` from ``x``'s side, computes the output double ``o`` numpy gives
(other draws, if several chains may be released, held at their smallest or largest value), and asks
:mod:`verifiers.float64.preimage` for every chain on ``x'``: no draw may give ``o`` (and no
unmodelled path may reach it) is eps = inf.  With one chain, the ratio of the draws that surely
give ``o`` from ``x`` to those that may from ``x'`` is a certified lower bound on ``e^eps`` otherwise
(every draw of a sampler has the same probability, and the redraw rate is the same for both).
A witness is *robust* when some draw gives ``o`` from ``x`` whatever ``log`` the model allows;
otherwise its draws were checked with this machine's ``log``.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Iterable, Sequence

from samplers import deadline
from samplers.lang.ir import Program
from verifiers.epsilon import eps_lower
from verifiers.float64.chains import Chain, NotModelled, OutputMap, candidates, fixed_values, output_map, run
from verifiers.float64.numpy_draws import NUMPY_VERSION, Layer, NoiseModel, noise_model
from verifiers.float64.preimage import gap_proof, possible, sure
from verifiers.float64.replay import pcg64_state
from verifiers.float64.verdict import INF, FloatAudit, not_modelled

TRIES = 24  # outputs tried per pair
LISTED = 10  # draws listed in a witness
Draw = tuple[Layer, int]


@dataclass
class _Side:
    """One input's chains as output maps (None for a fixed candidate) and its noise-free values."""

    x: tuple
    maps: list[tuple[Chain, OutputMap | None]]
    fixed: dict[int, Any]


def _side(program: Program, chains: list[Chain], x: tuple) -> _Side:
    fixed = fixed_values(program, x)
    return _Side(x, [(c, None if c.noise is None else output_map(program, c, fixed)) for c in chains], fixed)


def _reaches(models: dict[int, NoiseModel], side: _Side, o: float, count: bool) -> tuple[int | None, list[dict]]:
    """Draws (over every chain) that may give ``o`` on this side, with the proof of each empty layer;
    None when a fixed candidate or an unmodelled path may give ``o`` (or, unless ``count``, any draw)."""
    total, proofs = 0, []
    for c, m in side.maps:
        if m is None:
            if side.fixed[c.top] == o:
                return None, []
            continue
        model = models[c.noise]
        for a, b in model.opaque:
            ends = sorted((m.g(a), m.g(b)))
            if any(math.isnan(e) for e in ends) or ends[0] <= o <= ends[1]:
                return None, []
        for layer in model.layers:
            hit = possible(layer, m, o)
            if hit and not count:
                return None, []
            total += len(hit)
            if not hit:
                proofs.append({"noise": c.noise, **gap_proof(layer, m, o, hit)})
    return total, proofs


def _sure(model: NoiseModel, m: OutputMap, o: float) -> tuple[int, list[Draw]]:
    """How many draws surely give ``o`` on their first try, and the first few of them."""
    n, listed = 0, []
    for layer in model.layers:
        hit = sure(layer, m, o)
        n += len(hit)
        listed += [(layer, k) for k in hit[:LISTED - len(listed)]]
    return n, listed


def _draw_json(model: NoiseModel, draw: Draw, noise: int) -> dict[str, Any]:
    layer, k = draw
    word = layer.word(k)
    st = pcg64_state(word)["state"]
    return {"noise": noise, "sampler": model.op, "layer": layer.name, "k": k, "word": hex(word),
            "value_hex": layer.value(k).hex(), "pcg64_state": st["state"], "pcg64_inc": st["inc"]}


def _extremes(model: NoiseModel) -> tuple[Draw, Draw]:
    """The draws with the smallest and the largest value among those returned on the first try."""
    ends = [(layer, k) for layer in model.layers if layer.sure_hi > layer.lo for k in (layer.lo, layer.sure_hi - 1)]
    return min(ends, key=lambda e: e[0].value(e[1])), max(ends, key=lambda e: e[0].value(e[1]))


def _pick(rng: random.Random, model: NoiseModel) -> Draw:
    """A first-try draw, its offset from a layer's end log-uniform (small and large values alike)."""
    layers = [layer for layer in model.layers if layer.sure_hi > layer.lo]
    layer = rng.choices(layers, weights=[layer.sure_hi - layer.lo for layer in layers])[0]
    span = layer.sure_hi - layer.lo
    off = rng.randrange(1 << rng.randrange(span.bit_length() + 1)) % span
    return layer, layer.lo + off if rng.random() < 0.5 else layer.sure_hi - 1 - off


def _assumptions(models: dict[int, NoiseModel]) -> list[str]:
    out = [f"numpy {NUMPY_VERSION} Generator samplers (numpy/random/src/distributions/distributions.c), "
           "U = k / 2^53 from next_double; float64 arithmetic as traced, without FMA contraction "
           "(as numpy's x86-64 build)"]
    for m in models.values():
        out += [a for a in m.assumptions if a not in out]
    return out


def _joint(program: Program, models: dict[int, NoiseModel], sx: _Side, noise: int, draw: Draw,
           o: float) -> dict[int, Draw] | None:
    """Draws of every noise node giving output ``o`` with ``draw`` at ``noise``: the others at their
    smallest values, else at their largest; None if neither releases ``o``."""
    for pick in (0, 1):
        joint = {n: draw if n == noise else _extremes(m)[pick] for n, m in models.items()}
        if run(program, sx.x, {n: lay.value(k) for n, (lay, k) in joint.items()}) == o:
            return joint
    return None


def _try(program: Program, models: dict[int, NoiseModel], sx: _Side, sxp: _Side, rng: random.Random,
         ) -> tuple[Fraction | float, dict[str, Any]] | None:
    """One output drawn from ``x``: its certified ratio and witness, or None."""
    keys = {m.key for _, m in sxp.maps if m is not None}
    noisy = [(c, m) for c, m in sx.maps if m is not None and m.key not in keys]  # others: x' reaches all
    if not noisy:
        return None
    c, m = rng.choice(noisy)
    model = models[c.noise]
    draw = _pick(rng, model)
    o = m.g(draw[0].value(draw[1]))
    if not (isinstance(o, float) and math.isfinite(o)) or o == 0:
        return None
    single = len(sx.maps) == 1
    joint = {c.noise: draw} if single else _joint(program, models, sx, c.noise, draw, o)
    if joint is None:
        return None
    n_xp, proofs = _reaches(models, sxp, o, count=single)
    if n_xp is None:
        return None
    if single:
        n_x, listed = _sure(model, m, o)
    else:  # robust when no libm call is involved in any value of the joint draw
        n_x, listed = int(all(lay.bounds(k)[0] == lay.bounds(k)[1] for lay, k in joint.values())), []
    if n_xp and not n_x:
        return None
    witness = {
        "x": list(sx.x), "x_prime": list(sxp.x), "output": o, "output_hex": o.hex(),
        "draws_x": [_draw_json(models[n], d, n) for n, d in sorted(joint.items())] if not single or not listed
        else [_draw_json(model, d, c.noise) for d in listed],
        "draws_x_joint": not single,  # one draw per noise node (call order), else alternative draws of one
        "draws_x_sure": n_x, "draws_x_prime_possible": n_xp, "robust": bool(n_x),
        "assumptions": _assumptions(models),
    }
    if n_xp == 0:
        witness["proof_x_prime"] = proofs
    return (INF if n_xp == 0 else Fraction(n_x, n_xp)), witness


def _scale(attr: Any) -> float:
    """A noise node's scale as a double (a float, its type kept: it may say how the draw is computed)."""
    return attr if isinstance(attr, float) else float(attr)


def audit(program: Program, pairs: Iterable[tuple[Sequence[int], Sequence[int]]], seed: int = 0) -> FloatAudit:
    """The best certified float-level lower bound over the given pairs (stops at a robust eps = inf)."""
    try:
        chains = candidates(program)
        if not any(c.noise is not None for c in chains):
            return not_modelled("no continuous noise reaches the output: the float-level audit models numpy's "
                                "continuous samplers")
        nodes = program.nodes
        models = {c.noise: noise_model(nodes[c.noise].op, _scale(nodes[c.noise].attr))
                  for c in chains if c.noise is not None}
        rng = random.Random(seed)
        best: tuple[Fraction | float, dict[str, Any]] | None = None
        for x, xp in pairs:
            sx, sxp = _side(program, chains, tuple(x)), _side(program, chains, tuple(xp))
            for _ in range(TRIES):
                if deadline.expired():
                    break
                got = _try(program, models, sx, sxp, rng)
                if got is not None and (best is None or (got[0], got[1]["robust"]) > (best[0], best[1]["robust"])):
                    best = got
                    if got[0] == INF and got[1]["robust"]:
                        break
            if best is not None and best[0] == INF and best[1]["robust"] or deadline.expired():
                break
    except NotModelled as e:
        return not_modelled(f"not modelled: {e}")
    if best is None or best[0] <= 1:
        return not_modelled("no output double certified above ratio 1: every output tried is reachable from both "
                            "inputs at least as often (or by a path the model does not follow)")
    ratio, witness = best
    witness["ratio"] = "inf" if ratio == INF else f"{ratio.numerator}/{ratio.denominator}"
    return FloatAudit(eps_lower(ratio), True, witness)
