"""The float-level audit: certified lower bounds on eps for what numpy's float64 samplers compute.

The real-number backends prove and certify against the ideal laws of the noise; this package
reads the same traced program as the float64 computation numpy performs on the exact grid of
its draws, one idea per module:

- :mod:`~verifiers.float64.ziggurat_tables` -- numpy's ziggurat tables, verbatim;
- :mod:`~verifiers.float64.libm` -- the accuracy model of the platform's ``log``;
- :mod:`~verifiers.float64.numpy_draws` -- numpy's Laplace, exponential and normal samplers as
  monotone float64 maps of an integer draw;
- :mod:`~verifiers.float64.chains` -- which programs are read, as monotone maps of one draw;
- :mod:`~verifiers.float64.preimage` -- the draws that give an output double (bisection);
- :mod:`~verifiers.float64.witness` -- the search for an output double with a certified ratio;
- :mod:`~verifiers.float64.replay` -- numpy's own generator driven to a witness's draws;
- :mod:`~verifiers.float64.verdict` -- the result.
"""
