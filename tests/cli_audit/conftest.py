"""Fixtures for the command-line audit tests."""

from __future__ import annotations

import os
from pathlib import Path

import pytest


@pytest.fixture
def isolated_env(tmp_path: Path) -> dict[str, str]:
    """The environment for a neuron run as a subprocess: none of the caller's BT_*/SUBNET_*
    settings, and HOME and the data directory inside the test's own folder. The Python generator
    modules, as in the rest of the suite (a stale compiled build would add a warning)."""
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("BT_", "SUBNET_"))},
        "SUBNET_COMPILED": "0",
        "HOME": str(tmp_path),
        "XDG_DATA_HOME": str(tmp_path / "data"),
    }
