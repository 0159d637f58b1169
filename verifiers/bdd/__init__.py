"""The BDD backend: bit-blasting to ``dd`` BDDs and exact weighted model counting (Dice's way).

:mod:`~verifiers.bdd.lower` rewrites ``argmax`` into comparisons and coin flips,
:mod:`~verifiers.bdd.bitblast` turns the IR into a relation ``R(x, z, o)`` of BDDs,
:mod:`~verifiers.bdd.wmc` counts it exactly into weighted decision diagrams
(:mod:`~verifiers.bdd.wdd`, recursion by :mod:`~verifiers.bdd.dag`), and
:mod:`~verifiers.bdd.backend` answers the backend API on them (:class:`BDDBackend`).
"""
