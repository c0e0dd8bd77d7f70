"""Nothing silently ignored, and keys where the user asked: a flag that has no effect in a
combination is refused in one line; local tools keep development wallets out of ~/.bittensor."""

from __future__ import annotations

from pathlib import Path

import pytest

from subnet.evaluate import main as evaluate_main
from subnet.tasks_cli import main as tasks_main


def _one_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize(
    ("argv", "complaint"),
    [
        (
            ["sample", "--phrasing.url", "http://127.0.0.1:9/v1"],
            "--phrasing.url has no effect without --phrasing.engine",
        ),
        (
            ["sample", "--phrasing.model", "m", "--phrasing.timeout", "5"],
            "--phrasing.model, --phrasing.timeout have no effect without --phrasing.engine",
        ),
        (["sample", "--episodes", "2", "--category", "parallel"], "--category has no effect with --episodes"),
        (
            ["export", "--episodes", "2", "--tasks.count", "3", "--out", "x.jsonl"],
            "--tasks.count has no effect with --episodes",
        ),
    ],
)
def test_tasks_refuses_a_flag_that_would_do_nothing(
    capsys: pytest.CaptureFixture[str], argv: list[str], complaint: str
) -> None:
    assert tasks_main(argv) == 2
    assert complaint in _one_error_line(capsys)


@pytest.mark.parametrize(
    ("argv", "complaint"),
    [
        (
            ["--phrasing.url", "http://127.0.0.1:9/v1"],
            "--phrasing.url has no effect without --phrasing.engine",
        ),
        (["--episodes", "2", "--category", "simple"], "--category picks single-turn tasks"),
        (["--episodes", "2", "--tasks.count", "9"], "--tasks.count counts single-turn tasks"),
        (["--episodes", "2", "--format", "markdown"], "--format markdown is for single-turn tasks"),
    ],
)
def test_evaluate_refuses_a_flag_that_would_do_nothing(
    capsys: pytest.CaptureFixture[str], argv: list[str], complaint: str
) -> None:
    with pytest.raises(SystemExit) as exit_info:
        evaluate_main(["--endpoint", "http://127.0.0.1:9/v1", *argv])
    assert exit_info.value.code == 2
    assert complaint in _one_error_line(capsys)


def test_the_signing_hint_only_when_every_answer_is_401() -> None:
    from subnet.evaluate.report import signing_hint
    from subnet.evaluate.run import TaskResult
    from subnet.transport import QueryStatus

    def result(status: int | None) -> TaskResult:
        return TaskResult(
            task_id="t",
            category="simple",
            status=QueryStatus.HTTP_ERROR if status else QueryStatus.OK,
            valid=False,
            score=0.0,
            error_type="http_error" if status else None,
            latency_s=0.1,
            http_status=status,
        )

    refused = [result(401), result(401)]
    hint = signing_hint(refused, signed=False)
    assert hint is not None and "--wallet.name" in hint
    assert signing_hint(refused, signed=True) is None  # signed and still refused: not a missing wallet
    assert signing_hint([result(401), result(None)], signed=False) is None
    assert signing_hint([], signed=False) is None


def test_local_tools_keep_wallets_out_of_the_home_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from subnet.bootstrap import parse_settings
    from subnet.config.settings import default_dev_wallet_path
    from subnet.wallets import main as wallets_main

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    settings = parse_settings([])
    assert settings.network == "dev"  # the neurons' and the localnet's default network
    assert settings.wallet_path == default_dev_wallet_path()
    assert settings.wallet_path.is_relative_to(tmp_path / "data")
    assert parse_settings(["--wallet.path", str(tmp_path / "mine")]).wallet_path == tmp_path / "mine"

    assert wallets_main(["create", "--wallet.name", "dev"]) == 0
    assert (tmp_path / "data" / "toolcall-subnet" / "wallets" / "dev" / "coldkey").is_file()
    assert not (tmp_path / "home" / ".bittensor").exists()
    assert "unencrypted" in capsys.readouterr().out
