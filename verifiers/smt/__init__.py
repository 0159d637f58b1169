"""The SMT backend: z3 decisions on hidden Markov models, after FAIER.

:mod:`~verifiers.smt.hmm` holds exact (possibly parametric, :mod:`~verifiers.smt.poly`)
hidden Markov models, :mod:`~verifiers.smt.hmm_compile` compiles a program of the
language to one, :mod:`~verifiers.smt.backend` decides "is there an observation sequence
with ``P(o|pi) > c P(o|tau)``" with z3 (:class:`SmtBackend`), and
:mod:`~verifiers.smt.pufferfish` checks Pufferfish privacy with it (example model
files in ``models/``).
"""
