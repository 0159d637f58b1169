"""The prover: eps-DP proved for every input of the declared domain, as data that is re-checked.

A proof rule turns a program and a claimed eps into a :class:`~verifiers.prover.proof.Proof`
(or a :class:`~verifiers.prover.proof.NoProof` saying which draw or path failed).
:func:`~verifiers.prover.prove.prove` tries the rules and reports a proof only after the
rule's independent checker confirmed it; :func:`~verifiers.prover.prove.tightest` finds
the smallest claim the rules can prove.  Rules live in their own modules and are listed
in :data:`~verifiers.prover.prove.RULES`.

The prover is a room of ``verifiers`` like the backends: it imports the shared core
(and reaches exact backends only through :mod:`verifiers.backends`), never another room.
"""
