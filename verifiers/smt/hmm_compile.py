"""Compile a program of the mechanism language to a hidden Markov model.

:func:`hmm_from_program` cuts the program's nodes (in topological order) after each
output component and, optionally, just before chosen operations, and runs the exact
joint-law propagation of :class:`verifiers.joint_law.JointLaw` segment by segment.
Layer 0 holds the inputs (emitting :data:`START`); the state of a later layer is the
tuple of values still needed afterwards (``carry``) plus the value emitted at that
cut.  Sequence-shaped mechanisms become genuine HMMs this way: above threshold's
hidden state is the noisy threshold and the halted flag, and noisy max cut before its
``argmax`` is FAIER's figure (input states, noisy-value states emitting the index).
:func:`hmm_from_distribution` is the one-step model: input states emitting the whole
output with the exact law of :mod:`verifiers.joint_law`.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Hashable, Iterable, Sequence

from samplers.errors import LimitExceeded, ParameterError
from samplers.lang.ir import Program
from verifiers.joint_law import JointLaw, distribution, last_uses
from verifiers.smt.hmm import HMM

START = "start"  # what input states emit
SILENT = "·"  # what a layer cut before an operation (not at an output) emits
MAX_STATES = 200_000  # default state budget of a compiled model


@dataclass(frozen=True)
class Decoder:
    """Observation sequences of a compiled model back to the program's outputs."""

    positions: tuple[tuple[int, ...], ...]  # per step: the output components emitted there
    arity: int
    tuple_output: bool
    whole: bool = False  # one step whose symbol is the whole output (the one-step model)

    @property
    def steps(self) -> int:
        """The observation length that covers every output component."""
        return len(self.positions)

    def __call__(self, symbols: Sequence[Hashable]) -> Any:
        if self.whole:
            return symbols[0]
        out: list[Any] = [None] * self.arity
        for step, sym in zip(self.positions, symbols):
            for pos in step:
                out[pos] = sym
        return tuple(out) if self.tuple_output else out[0]


def _cuts(program: Program, split_before: Iterable[str]) -> list[tuple[int, bool]]:
    """Cut points ``(node index, is_output)``: a layer boundary right after that node."""
    outs = set(program.outputs)
    last_out = max(program.outputs)
    splits = {i - 1 for i, n in enumerate(program.nodes) if n.op in set(split_before) and 0 < i <= last_out}
    return sorted({(i, i in outs) for i in outs | (splits - outs)})


def hmm_from_program(
    program: Program,
    inputs: Iterable[Sequence[int]] | None = None,
    *,
    split_before: Iterable[str] = (),
    max_states: int = MAX_STATES,
) -> tuple[HMM, Decoder]:
    """The layered HMM of ``program`` over ``inputs`` (default: the whole domain).

    Returns the model and a :class:`Decoder` from observation sequences (length
    :attr:`Decoder.steps`) to outputs.  Input ``x`` is state ``(0, x, START)``.
    Raises :class:`LimitExceeded` when the model would have more than ``max_states``
    states.
    """
    nodes = program.nodes
    points = [program.domain.check(x) for x in (program.domain.points() if inputs is None else inputs)]
    points = list(dict.fromkeys(points))
    if not points:
        raise ParameterError(f"{program.name}: no inputs to compile")
    input_ids = sorted((i for i, n in enumerate(nodes) if n.op == "input"), key=lambda i: nodes[i].attr)
    # outputs must survive until their own cut only; later layers do not carry them
    last = last_uses(nodes, ())
    for o in program.outputs:
        last[o] = max(last[o], o)
    cuts = _cuts(program, split_before)
    consts = {i: n.attr for i, n in enumerate(nodes) if n.op == "const"}

    states: list[Hashable] = [(0, x, START) for x in points]
    index = {s: i for i, s in enumerate(states)}
    trans: list[dict[int, Fraction]] = [{} for _ in points]
    emit_sym: list[Hashable] = [START] * len(points)
    used_inputs = [i for i in input_ids if last[i] >= 0]
    frontier = {i: tuple(x[nodes[j].attr] for j in used_inputs) for i, x in enumerate(points)}
    carry_ids = used_inputs
    prev = -1
    for layer, (cut, is_output) in enumerate(cuts, start=1):
        # what later layers need: carried values (inputs included, whatever their index) and
        # the values computed in this segment
        live = sorted(set(carry_ids) | {i for i in range(prev + 1, cut + 1) if nodes[i].op not in ("input", "const")})
        next_carry = [j for j in live if last[j] > cut]
        next_frontier: dict[int, tuple] = {}
        for src, carry in frontier.items():
            law = JointLaw(carry_ids, carry)
            law.consts.update(consts)
            for i in range(prev + 1, cut + 1):
                if nodes[i].op in ("input", "const"):
                    continue
                law.apply(i, nodes[i])
                if any(last[j] <= i and j != cut for j in law.live):
                    law.keep([j for j in law.live if last[j] > i or j == cut])
            for key, p in law.project(next_carry + [cut]).items():
                sym = key[-1] if is_output else SILENT
                state = (layer, key[:-1], sym)
                if state not in index:
                    if len(states) >= max_states:
                        raise LimitExceeded(f"{program.name}: the HMM would exceed {max_states} states "
                                            f"(layer {layer} of {len(cuts)}); raise max_states or use fewer inputs")
                    index[state] = len(states)
                    states.append(state)
                    trans.append({})
                    emit_sym.append(sym)
                    next_frontier[index[state]] = key[:-1]
                trans[src][index[state]] = p
        frontier, carry_ids, prev = next_frontier, next_carry, cut
    for s in frontier:  # the last layer loops on itself
        trans[s] = {s: Fraction(1)}

    positions = [()] + [tuple(k for k, o in enumerate(program.outputs) if o == cut) if is_out else ()
                        for cut, is_out in cuts]
    emit_rows: list[dict[Hashable, Fraction]] = [{sym: Fraction(1)} for sym in emit_sym]
    if len(cuts) >= 2 and not cuts[-2][1] and _only_emits(cuts, nodes, last):
        states, trans, emit_rows = _fold_last(states, trans, emit_rows, len(cuts))
        positions = positions[:-2] + positions[-1:]
    symbols = list(dict.fromkeys(sym for row in emit_rows for sym in row))
    sym_index = {o: i for i, o in enumerate(symbols)}
    hmm = HMM(states, symbols, trans, [{sym_index[o]: p for o, p in row.items()} for row in emit_rows],
              name=program.name)
    return hmm, Decoder(tuple(positions), program.arity, program.tuple_output)


def _only_emits(cuts: list[tuple[int, bool]], nodes: Sequence[Any], last: list[int]) -> bool:
    """True when the last layer carries nothing but its emitted value (so it can be folded)."""
    cut = cuts[-1][0]
    return not [j for j in range(cut + 1) if last[j] > cut and nodes[j].op != "const"]


def _fold_last(states: list, trans: list, emit_rows: list, last_layer: int) -> tuple[list, list, list]:
    """Replace a silent layer's transition into the final (emit-only) layer by an emission."""
    keep = [i for i, s in enumerate(states) if s[0] != last_layer]
    new_index = {old: new for new, old in enumerate(keep)}
    out_states, out_trans, out_emit = [], [], []
    for old in keep:
        row = trans[old]
        out_states.append(states[old])
        if row and states[next(iter(row))][0] == last_layer:
            emission: dict[Hashable, Fraction] = {}
            for j, p in row.items():
                emission[states[j][2]] = emission.get(states[j][2], Fraction(0)) + p
            out_emit.append(emission)
            out_trans.append({new_index[old]: Fraction(1)})
        else:
            out_emit.append(emit_rows[old])
            out_trans.append({new_index[j]: p for j, p in row.items()})
    return out_states, out_trans, out_emit


def hmm_from_distribution(program: Program, inputs: Iterable[Sequence[int]] | None = None) -> tuple[HMM, Decoder]:
    """The one-step model: input states emit the whole output with its exact law."""
    points = list(dict.fromkeys(program.domain.check(x) for x in (program.domain.points() if inputs is None else inputs)))
    dists = [distribution(program, x) for x in points]
    symbols = sorted({o for d in dists for o in d}, key=lambda o: (isinstance(o, tuple), o))
    sym_index = {o: i for i, o in enumerate(symbols)}
    hmm = HMM(
        [(0, x, START) for x in points], symbols,
        [{i: Fraction(1)} for i in range(len(points))],
        [{sym_index[o]: p for o, p in d.items()} for d in dists],
        name=program.name,
    )
    return hmm, Decoder(((0,),), program.arity, program.tuple_output, whole=True)
