"""A neuron on the dev network with a --devchain.path that names no file: one line, and no new file."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from subnet.wallets import create_dev_wallet

ROOT = Path(__file__).resolve().parents[2]


def test_a_missing_devchain_is_named_and_not_created(tmp_path: Path, isolated_env: dict[str, str]) -> None:
    create_dev_wallet("validator", "default", tmp_path / "wallets")
    missing = tmp_path / "typo" / "devchain.sqlite"
    command = [
        sys.executable,
        str(ROOT / "neurons" / "validator.py"),
        "--wallet.name",
        "validator",
        "--wallet.path",
        str(tmp_path / "wallets"),
        "--devchain.path",
        str(missing),
        "--chain.retries",
        "0",
        "--db.url",
        f"sqlite+aiosqlite:///{tmp_path / 'validator.sqlite'}",
        "--dashboard.port",
        "0",
        "--metrics.port",
        "0",
        "--rounds",
        "1",
    ]
    result = subprocess.run(command, env=isolated_env, cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        f"validator: error: no devchain at {missing}; check --devchain.path"
    )
    assert not missing.exists() and not missing.parent.exists()
