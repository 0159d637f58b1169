"""Shared fixtures: seeds are fixed so every statistical test is deterministic in CI."""

import pytest

from samplers import catalogue


@pytest.fixture(scope="session")
def cat():
    """The built-in catalogue."""
    return catalogue



def pytest_addoption(parser, pluginmanager):
    """Accept addopts' ``--numprocesses`` without pytest-xdist (``-p no:xdist``): the tests then run serially."""
    if not pluginmanager.has_plugin("xdist"):
        parser.addoption("--numprocesses", default=None, help="ignored: pytest-xdist is not loaded")


def pytest_sessionfinish(session, exitstatus):
    """Leave no temporary files: the answer files of suite runs that tests killed with kill -9."""
    from hybrid.suites.entry_process import sweep_stale_answers

    sweep_stale_answers()
