"""Flags and the state directory: defaults, one-line usage errors, reuse, reset, foreign folders."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from subnet.localnet.run import Localnet, main
from subnet.localnet.settings import DEFAULT_FORMATS, DEFAULT_GUIDED, UsageError, parse_settings
from subnet.localnet.state import MARKER, StateDir, StateError


def test_defaults_cover_every_category_and_three_miner_setups() -> None:
    settings = parse_settings([])
    assert (settings.miners, settings.rounds, settings.tasks) == (3, 2, 6)
    assert settings.formats == DEFAULT_FORMATS and settings.guided == DEFAULT_GUIDED
    assert [settings.format_of(i) for i in range(4)] == ["json", "hermes", "hermes", "json"]
    # grounded calls, prose (unguided), a call for every request: scores differ for real reasons
    assert [settings.guided_of(i) for i in range(4)] == ["grounded", "off", "forced", "grounded"]
    setups = {(settings.format_of(i), settings.guided_of(i)) for i in range(3)}
    assert len(setups) == 3
    assert settings.dashboard_port is None and settings.db_url is None
    assert settings.state_path.name == "localnet"
    assert settings.episodes == 2  # multi-turn episodes by default, a few


def test_the_validator_plays_the_episodes_asked_for(tmp_path: Path) -> None:
    for argv, episodes in (([], "2"), (["--round.episodes", "0"], "0"), (["--round.episodes", "5"], "5")):
        localnet = Localnet(parse_settings(["--state.dir", str(tmp_path / "state"), *argv]), out=print)
        argv_seen = localnet.validator_argv()
        at = argv_seen.index("--round.episodes")
        assert argv_seen[at + 1] == episodes
        assert argv_seen[argv_seen.index("--round.tasks") + 1] == "6"


def test_flags_are_read() -> None:
    settings = parse_settings(
        [
            "--miners",
            "2",
            "--rounds",
            "5",
            "--round.tasks",
            "3",
            "--model.format",
            "json,codeact",
            "--model.guided",
            "off, grounded",
            "--reset",
            "--db.url",
            "sqlite+aiosqlite:///x.sqlite",
            "--dashboard.port",
            "0",
            "--devchain.block_time",
            "0.25",
            "--round.episodes",
            "3",
            "--state.dir",
            "/tmp/somewhere",
            "--model.max_new_tokens",
            "24",
        ]
    )
    assert (settings.miners, settings.rounds, settings.tasks) == (2, 5, 3)
    assert settings.formats == ("json", "codeact") and settings.reset
    assert settings.guided == ("off", "grounded") and [settings.guided_of(i) for i in range(3)] == [
        "off",
        "grounded",
        "off",
    ]
    assert settings.db_url == "sqlite+aiosqlite:///x.sqlite"
    assert settings.dashboard_port == 0 and settings.block_time == 0.25 and settings.episodes == 3
    assert settings.state_path == Path("/tmp/somewhere")
    assert settings.max_new_tokens == 24  # the miners' own flag, passed on as it is


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--miners", "17"], "expected 0..16"),
        (["--miners", "0"], "--miners 0 needs at least one --model.base_url"),
        (["--rounds", "x"], "expected a whole number"),
        (["--model.format", "hermes,xml"], "unknown format xml"),
        (["--model.guided", "on,maybe"], "expected off/on/forced/grounded values, got maybe"),
        (["--devchain.block_time", "-1"], "expected a number greater than 0 and at most 60, got -1"),
        (["--dashboard.port", "70000"], "expected 0..65535"),
        (["--round.episodes", "17"], "expected 0..16"),
        (["--round.episodes", "two"], "expected a whole number"),
        (["--mniers", "3"], "unrecognized arguments"),
        (["--max-new-tokens", "24"], "unrecognized arguments"),  # one spelling: --model.max_new_tokens
        (["--model.max_new_tokens", "8"], "expected 16..4096, got 8"),
    ],
)
def test_bad_flags_are_one_line_usage_errors(argv: list[str], fragment: str) -> None:
    with pytest.raises(UsageError, match=fragment):
        parse_settings(argv)


def test_main_prints_one_line_and_exits_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--miners", "many"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("localnet: error: argument --miners")


def test_prepare_marks_the_folder_and_keeps_the_record(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state")
    first = state.prepare({"block_time": 0.5, "tempo": 20})
    assert state.is_ours() and state.logs.is_dir()
    assert first["block_time"] == 0.5
    state.devchain.write_bytes(b"")  # the chain exists now: its settings are fixed
    second = state.prepare({"block_time": 2.0, "tempo": 7})
    assert second["block_time"] == 0.5 and second["created"] == first["created"]
    state.update_record(netuid=3)
    assert json.loads(state.marker.read_text())["netuid"] == 3


def test_reset_deletes_only_our_own_folder(tmp_path: Path) -> None:
    state = StateDir(tmp_path / "state")
    assert state.reset() is False  # nothing there yet
    state.prepare({})
    (state.logs / "validator.log").write_text("old run\n")
    assert state.reset() is True
    assert not state.root.exists()


def test_a_foreign_folder_is_never_used_or_deleted(tmp_path: Path) -> None:
    (tmp_path / "thesis.tex").write_text("precious")
    state = StateDir(tmp_path)
    with pytest.raises(StateError, match=f"no {MARKER}"):
        state.reset()
    with pytest.raises(StateError, match="not a localnet state directory"):
        state.prepare({})
    assert (tmp_path / "thesis.tex").read_text() == "precious"


def test_main_refuses_a_foreign_state_dir_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["--state.dir", str(tmp_path), "--reset", "--dashboard.port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a localnet state directory" in err
    assert (tmp_path / "notes.txt").exists()
