"""The prover: eps-DP proved for every input of the declared domain, as data that is re-checked.

A proof rule turns a program and a claimed eps into a :class:`~verifiers.prover.proof.Proof`
(or a :class:`~verifiers.prover.proof.NoProof` saying which draw or path failed).
:func:`~verifiers.prover.prove.prove` tries the rules and reports a proof only after the
rule's independent checker confirmed it; without a claim it returns the smallest level
the rules prove.  Rules live in their own modules and are listed in
:data:`~verifiers.prover.prove.RULES`: ``alignment`` (randomness alignment for Laplace and
exponential noise), ``gaussian`` ((eps, delta) by the analytic Gaussian bound) and
``composition`` (independent parts, each proved exactly or by another rule).

The prover is a room of ``verifiers`` like the backends: it imports the shared core
(and reaches exact backends only through :mod:`verifiers.backends`), never another room.
"""
