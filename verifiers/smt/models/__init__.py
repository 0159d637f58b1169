"""Example model files for ``dphybrid pufferfish`` (FAIER's instances; see each file's description)."""
