"""The bench scripts run as their docs say: ``.venv/bin/python bench/<script>.py``, with no
``PYTHONPATH``, from any folder. (A benchmark named bench/scoring.py once hid the ``scoring``
package from the scripts beside it, and bench/integrity.py, bench/redteam.py and five more
stopped with an ImportError; only runs with ``PYTHONPATH`` set worked.)"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH_DIR = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.parametrize("script", ["integrity.py", "transport.py", "cancellation.py"])
def test_a_bench_script_starts_without_pythonpath(script: str, tmp_path: Path) -> None:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    done = subprocess.run(
        [sys.executable, str(BENCH_DIR / script), "--help"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("usage:")
