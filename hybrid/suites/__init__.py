"""Built-in suites (TOML files): ``discrete``, ``statdp`` and ``dpsniper``."""
