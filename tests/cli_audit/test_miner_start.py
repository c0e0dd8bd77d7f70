"""neurons/miner.py: an axon port it cannot listen on is one line and exit 2, before the model loads."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

import pytest

from subnet.wallets import create_dev_wallet

ROOT = Path(__file__).resolve().parents[2]


def _run_miner(tmp_path: Path, isolated_env: dict[str, str], *flags: str) -> subprocess.CompletedProcess[str]:
    create_dev_wallet("miner", "default", tmp_path / "wallets")
    command = [
        sys.executable,
        str(ROOT / "neurons" / "miner.py"),
        "--wallet.name",
        "miner",
        "--wallet.path",
        str(tmp_path / "wallets"),
        "--devchain.path",
        str(tmp_path / "devchain.sqlite"),
        "--model.backend",
        "openai",
        "--model.base_url",
        "http://127.0.0.1:9/v1",
        *flags,
    ]
    return subprocess.run(command, env=isolated_env, capture_output=True, text=True, timeout=60, cwd=ROOT)


def test_a_port_in_use_is_one_line_and_exit_2(tmp_path: Path, isolated_env: dict[str, str]) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        result = _run_miner(tmp_path, isolated_env, "--axon.ip", "127.0.0.1", "--axon.port", str(port))
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines[-1].startswith(f"miner: error: cannot listen on 127.0.0.1:{port}")
    assert "--axon.port" in lines[-1]


@pytest.mark.parametrize("address", ["192.0.2.1"])  # TEST-NET-1: never this machine's
def test_an_address_this_machine_lacks_is_one_line_and_exit_2(
    tmp_path: Path, isolated_env: dict[str, str], address: str
) -> None:
    result = _run_miner(tmp_path, isolated_env, "--axon.ip", address, "--axon.port", "18099")
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert (
        result.stderr.strip().splitlines()[-1].startswith(f"miner: error: cannot listen on {address}:18099")
    )
