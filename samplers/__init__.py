"""Mechanisms and how to draw from them: the language, its IR, numba kernels, the catalogue.

- :mod:`samplers.lang` -- the mechanism language, traced once into a typed SSA IR (the
  single source of truth every backend compiles);
- :mod:`samplers.codegen`, :mod:`samplers.compile`, :mod:`samplers.rng` -- IR to batched,
  seeded numba kernels; :mod:`samplers.counts` tallies their outputs,
  :mod:`samplers.gof` tests them against exact laws;
- :mod:`samplers.catalogue` -- the built-in mechanisms; :mod:`samplers.blackbox` and
  :mod:`samplers.libraries` -- vectorised black boxes and real DP libraries;
- :mod:`samplers.readers` -- inputs, parameters and witnesses as users write them.

The process utilities every package uses also live here, in four small modules:
:mod:`samplers.errors` (the exception family the CLI maps to exit 2),
:mod:`samplers.deadline` (time as a safety limit), :mod:`samplers.memory` (refuse
allocations that cannot fit) and :mod:`samplers.seed` (seed range checks).  They stay in
``samplers`` because it is the bottom of the package graph (``samplers`` imports neither
``verifiers`` nor ``hybrid``): any other home would either make ``samplers`` import
upwards or add a fourth top-level package the design card does not have.
"""
