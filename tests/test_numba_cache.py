"""Compiled code finds a writable cache folder, or the command runs without one (never a crash at import)."""

from __future__ import annotations

import os
import subprocess
import sys

from samplers import numba_cache


def test_a_home_that_is_a_file_gets_a_temporary_kernel_folder(tmp_path, monkeypatch):
    home = tmp_path / "home"
    home.write_text("not a folder")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("DPHYBRID_CACHE_DIR", raising=False)
    folder = numba_cache.kernel_folder()
    assert folder == numba_cache.fallback() / "kernels" and not str(folder).startswith(str(home))


def test_sampling_works_without_a_writable_home_or_package_folder(tmp_path):
    """numba refused to define the sampler's cache=True functions: 'no locator available'."""
    home = tmp_path / "home"
    home.write_text("not a folder")
    script = (  # the package's own __pycache__ taken as read-only (an installed package), the home is a file
        "from pathlib import Path\n"
        "import samplers.numba_cache as c\n"
        "package_cache = Path(c.__file__).parent / '__pycache__'\n"
        "real = c._writable\n"
        "c._writable = lambda folder: folder != package_cache and real(folder)\n"
        "import os\n"
        "from samplers import catalogue\n"
        "from samplers.compile import compile_sampler\n"
        "print(os.environ['NUMBA_CACHE_DIR'].startswith(str(c.fallback())))\n"
        "s = compile_sampler(catalogue.get('rr'), n=2)\n"
        "print(s.sample((0, 1), n=1000, seed=1).shape[0])\n")
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "DPHYBRID_CACHE_DIR")}
    env["HOME"] = str(home)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=300,
                         cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["True", "1000"]
