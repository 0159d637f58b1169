"""The continuous backend: rigorous enclosures for Laplace, exponential and Gaussian noise.

:mod:`~verifiers.continuous.paths` executes a program symbolically into finitely many
paths whose values are exact affine forms (:mod:`~verifiers.continuous.linear`) in the
noise; :mod:`~verifiers.continuous.region` integrates a path's region with arb balls
(closed forms by :mod:`~verifiers.continuous.laws` and :mod:`~verifiers.continuous.expsum`),
made exact rational end points by :mod:`~verifiers.continuous.enclosure`;
:mod:`~verifiers.continuous.backend` answers the backend API with enclosures
(:class:`ContinuousBackend`) and :mod:`~verifiers.continuous.approx_dp` gives certified
lower bounds on delta(eps).
"""
