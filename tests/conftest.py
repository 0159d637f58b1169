"""Shared fixtures: seeds are fixed so every statistical test is deterministic in CI."""

import pytest

from samplers import catalogue


@pytest.fixture(scope="session")
def cat():
    """The built-in catalogue."""
    return catalogue
