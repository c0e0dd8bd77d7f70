"""One name per concept: every command line takes the neurons' dotted names, and a former spelling
is refused in one line that names the flag now (never argparse's "unrecognized arguments", never a
traceback)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from subnet.bootstrap import main as bootstrap_main
from subnet.devchain.__main__ import main as devchain_main
from subnet.evaluate import main as evaluate_main
from subnet.localnet.run import main as localnet_main
from subnet.tasks_cli import main as tasks_main
from subnet.wallets import main as wallets_main

Main = Callable[[Sequence[str]], int]

CASES: list[tuple[str, Main, list[str], str, str]] = [
    # (tool, main, argv with the old spelling, old, new)
    (
        "localnet",
        localnet_main,
        ["--miner-endpoint", "http://h:1/v1"],
        "--miner-endpoint",
        "--model.base_url",
    ),
    ("localnet", localnet_main, ["--miner-endpoint-model", "m"], "--miner-endpoint-model", "--model.name"),
    ("localnet", localnet_main, ["--state-dir", "x"], "--state-dir", "--state.dir"),
    ("localnet", localnet_main, ["--tasks", "3"], "--tasks", "--round.tasks"),
    ("localnet", localnet_main, ["--episodes=1"], "--episodes", "--round.episodes"),
    ("localnet", localnet_main, ["--formats", "json"], "--formats", "--model.format"),
    ("localnet", localnet_main, ["--guided", "off"], "--guided", "--model.guided"),
    ("localnet", localnet_main, ["--start-timeout", "9"], "--start-timeout", "--miner.start_timeout"),
    ("evaluate", evaluate_main, ["--endpoint", "http://h/v1", "--n", "3"], "--n", "--tasks.count"),
    (
        "evaluate",
        evaluate_main,
        ["--endpoint", "http://h/v1", "--timeout", "3"],
        "--timeout",
        "--query.timeout",
    ),
    (
        "evaluate",
        evaluate_main,
        ["--endpoint", "http://h/v1", "--concurrency", "3"],
        "--concurrency",
        "--query.concurrency",
    ),
    (
        "evaluate",
        evaluate_main,
        ["--endpoint", "http://h/v1", "--api-key", "sk"],
        "--api-key",
        "--model.api_key_env",
    ),
    ("evaluate", evaluate_main, ["--endpoint", "http://h/v1", "--model", "m"], "--model", "--model.name"),
    (
        "evaluate",
        evaluate_main,
        ["--endpoint", "http://h/v1", "--miner-hotkey", "5F"],
        "--miner-hotkey",
        "--miner.hotkey",
    ),
    ("tasks", tasks_main, ["sample", "--n", "2"], "--n", "--tasks.count"),
    ("tasks", tasks_main, ["sample", "--sources", "builtin=1"], "--sources", "--tasks.sources"),
    ("tasks", tasks_main, ["export", "--bfcl", "x", "--out", "o"], "--bfcl", "--tasks.bfcl"),
    ("devchain", devchain_main, ["status", "--path", "x"], "--path", "--devchain.path"),
    ("devchain", devchain_main, ["reset", "--block-time", "1"], "--block-time", "--devchain.block_time"),
    ("wallets", wallets_main, ["create", "--name", "x"], "--name", "--wallet.name"),
    (
        "wallets",
        wallets_main,
        ["create", "--wallet.name", "x", "--hotkey", "h"],
        "--hotkey",
        "--wallet.hotkey",
    ),
    ("wallets", wallets_main, ["create", "--wallet.name", "x", "--path", "p"], "--path", "--wallet.path"),
    ("bootstrap", bootstrap_main, ["--sudo-uri", "//Bob"], "--sudo-uri", "--devchain.sudo_uri"),
    ("bootstrap", bootstrap_main, ["--hotkey", "h"], "--hotkey", "--wallet.hotkey"),
    ("bootstrap", bootstrap_main, ["--state-file", "f"], "--state-file", "--state.file"),
    ("bootstrap", bootstrap_main, ["--start-timeout", "5"], "--start-timeout", "--subnet.start_timeout"),
    ("bootstrap", bootstrap_main, ["--no-create-wallets"], "--no-create-wallets", "--wallet.no_create"),
]


def _exit_code(main: Main, argv: list[str]) -> int:
    """The command's exit status, whether it returns it or exits with it."""
    try:
        return main(argv)
    except SystemExit as exit_info:
        return int(exit_info.code or 0)


@pytest.mark.parametrize(
    ("tool", "main", "argv", "old", "new"), CASES, ids=[f"{case[0]} {case[3]}" for case in CASES]
)
def test_a_former_spelling_is_refused_with_the_new_name(
    capsys: pytest.CaptureFixture[str], tool: str, main: Main, argv: list[str], old: str, new: str
) -> None:
    assert _exit_code(main, argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert f"error: {old} is now {new}" in lines[0]


def test_the_new_spellings_parse() -> None:
    from subnet.evaluate.cli import parse_settings as evaluate_settings
    from subnet.localnet.settings import parse_settings as localnet_settings

    localnet = localnet_settings(
        [
            *("--model.base_url", "http://h:1/v1", "--model.name", "m", "--state.dir", "s"),
            *("--round.tasks", "3", "--round.episodes", "1", "--model.format", "json,hermes"),
            *("--model.guided", "on,off", "--miner.start_timeout", "9"),
        ]
    )
    assert localnet.endpoints == ("http://h:1/v1",) and localnet.endpoint_models == ("m",)
    assert (localnet.state_dir, localnet.tasks, localnet.episodes) == (Path("s"), 3, 1)
    assert (localnet.formats, localnet.guided, localnet.start_timeout) == (
        ("json", "hermes"),
        ("on", "off"),
        9.0,
    )
    evaluate = evaluate_settings(
        [
            *("--endpoint", "http://h/v1", "--tasks.count", "3", "--query.timeout", "4"),
            *("--query.concurrency", "2", "--model.name", "m"),
        ]
    )
    assert (evaluate.n, evaluate.timeout_s, evaluate.concurrency, evaluate.model) == (3, 4.0, 2, "m")


def test_evaluate_reads_the_api_key_from_the_variable_it_names(monkeypatch: pytest.MonkeyPatch) -> None:
    from subnet.evaluate.cli import parse_settings as evaluate_settings
    from subnet.evaluate.report import rerun_command

    monkeypatch.setenv("MY_ENGINE_KEY", "sk-secret")
    settings = evaluate_settings(["--endpoint", "http://h/v1", "--model.api_key_env", "MY_ENGINE_KEY"])
    assert settings.api_key == "sk-secret"
    rerun = rerun_command(settings)
    assert "--model.api_key_env MY_ENGINE_KEY" in rerun and "sk-secret" not in rerun


def test_evaluate_refuses_an_unset_key_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(SystemExit) as exit_info:
        evaluate_main(["--endpoint", "http://h/v1", "--model.api_key_env", "NO_SUCH_KEY_VAR"])
    assert exit_info.value.code == 2
    assert "NO_SUCH_KEY_VAR is not set or empty" in capsys.readouterr().err
