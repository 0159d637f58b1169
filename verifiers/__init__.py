"""Exact verifiers over the IR: one shared contract, one room per backend (the ``dd`` way).

The shared core, imported by every backend and by nothing in it:

- :mod:`verifiers.base` -- the backend API (:class:`~verifiers.base.ExactBackend`): pair
  queries and global sweeps defined once from ``distribution``;
- :mod:`verifiers.epsilon`, :mod:`verifiers.ratio` -- exact ratios and sound rational
  brackets of ``e^eps``;
- :mod:`verifiers.joint_law` -- the exact output law by joint-law propagation (the
  reference semantics);
- :mod:`verifiers.backends` -- the dispatch by name (``get_backend``);
  :mod:`verifiers.verify` and :mod:`verifiers.accuracy` -- whole-mechanism questions asked
  of any backend.

The backends and the prover, each importing only the core and its own modules:

- :mod:`verifiers.enumerate` -- brute force, the reference every backend is tested against;
- :mod:`verifiers.bdd` -- bit-blasting to ``dd`` BDDs and exact weighted model counting;
- :mod:`verifiers.smt` -- z3 decisions on hidden Markov models, Pufferfish privacy;
- :mod:`verifiers.continuous` -- rigorous enclosures for Laplace, exponential, Gaussian noise;
- :mod:`verifiers.prover` -- eps-DP proved for every input (alignments, composition), re-checked.

``tests/test_layout.py`` keeps these arrows.
"""
