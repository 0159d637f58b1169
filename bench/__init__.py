"""Benchmarks: each module prints figures and ratios against baselines measured in the same run.

``python -m bench`` runs them all and writes one markdown document (see :mod:`bench.harness`).
"""
