"""scripts/bootstrap_localnet.py (subnet.bootstrap.main): bad numbers, files and chains: one line, exit 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from subnet.bootstrap import main as bootstrap_main


def _last_error_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


@pytest.mark.parametrize(
    ("flags", "complaint"),
    [
        (["--fund", "nan"], "argument --fund: expected a finite number, got 'nan'"),
        (["--stake", "-5"], "argument --stake: expected a number at least 0, got -5"),
        (
            ["--subnet.start_timeout", "nan"],
            "argument --subnet.start_timeout: expected a finite number, got 'nan'",
        ),
        (
            ["--subnet.start_timeout", "0"],
            "argument --subnet.start_timeout: expected a number greater than 0, got 0",
        ),
        (["--netuid", "-1"], "argument --netuid: expected 0..65535, got -1"),
        (["--tempo", "0"], "argument --tempo: expected 1..65535, got 0"),
    ],
)
def test_numbers_are_checked_before_any_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str], complaint: str
) -> None:
    argv = ["--subtensor.network", "dev", "--devchain.path", str(tmp_path / "chain.sqlite"), *flags]
    with pytest.raises(SystemExit) as stopped:
        bootstrap_main([*argv, "--wallet.path", str(tmp_path / "wallets")])
    assert stopped.value.code == 2
    assert complaint in _last_error_line(capsys)
    assert not (tmp_path / "wallets").exists() and not (tmp_path / "chain.sqlite").exists()


def test_a_state_file_that_is_a_folder_is_refused_up_front(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--subtensor.network", "dev", "--devchain.path", str(tmp_path / "chain.sqlite")]
    with pytest.raises(SystemExit) as stopped:
        bootstrap_main([*argv, "--wallet.path", str(tmp_path / "w"), "--state.file", str(tmp_path)])
    assert stopped.value.code == 2
    assert "is a folder" in _last_error_line(capsys)


def test_a_damaged_devchain_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    chain = tmp_path / "chain.sqlite"
    chain.write_bytes(b"not a database at all")
    argv = ["--subtensor.network", "dev", "--devchain.path", str(chain), "--wallet.path", str(tmp_path / "w")]
    assert bootstrap_main(argv) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert (
        err.strip().splitlines()[-1]
        == f"bootstrap: error: cannot open devchain file {chain}: file is not a database"
    )
    assert chain.read_bytes() == b"not a database at all"
