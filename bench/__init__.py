"""Benchmarks: each module prints figures and ratios against baselines measured in the same run."""
