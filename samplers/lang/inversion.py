"""Exponential noise a plain function draws itself, by inversion: ``-np.log(prng.random())``.

Over the reals ``-log U`` is exponential of mean 1, so the traced node is the language's
``exponential`` and every real-number backend reads it as such.  In float64 it is another
computation than numpy's ``Generator.exponential`` (a ziggurat): the platform's ``log`` of
``k / 2**53``.  The node's scale carries that difference as its type, :class:`InversionScale`,
a ``float`` (so the real-number backends see the number they always see) that the float-level
audit (:mod:`verifiers.float64.numpy_draws`) reads as "model ``-log(k / 2**53)``, not the ziggurat".
"""

from __future__ import annotations


class InversionScale(float):
    """The scale of exponential noise computed as ``-log(random())`` in the user's code (see the module doc)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return float.__repr__(self)
