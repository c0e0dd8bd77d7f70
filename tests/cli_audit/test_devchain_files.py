"""The devchain never writes into, or deletes, an SQLite file that is not a devchain."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import pytest

from subnet.devchain import DevChain
from subnet.devchain.__main__ import main as devchain_main
from subnet.devchain.store import StoreError


def _someone_elses_database(path: Path) -> str:
    """An SQLite file in rollback-journal mode holding one row of someone's data; returns its digest."""
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE notes (text TEXT)")
    connection.execute("INSERT INTO notes VALUES ('keep me')")
    connection.commit()
    connection.close()
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_foreign_sqlite_file_opened_as_the_chain_is_refused_and_left_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "validator.sqlite"
    before = _someone_elses_database(path)
    with pytest.raises(StoreError, match="not a devchain"):
        DevChain(path).current_block()
    assert _digest(path) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["validator.sqlite"]  # no -wal / -shm left


def test_status_on_a_foreign_file_is_one_line_and_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "other.sqlite"
    before = _someone_elses_database(path)
    assert devchain_main(["status", "--devchain.path", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a devchain" in err and "notes" in err
    assert _digest(path) == before


@pytest.mark.parametrize("kind", ["sqlite", "text"])
def test_reset_deletes_only_a_devchain_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    path = tmp_path / "precious"
    if kind == "sqlite":
        before = _someone_elses_database(path)
    else:
        path.write_text("my notes\n")
        before = _digest(path)
    assert devchain_main(["reset", "--devchain.path", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "left as it is" in err
    assert _digest(path) == before


def test_reset_still_starts_an_existing_devchain_over(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "chain.sqlite"
    assert devchain_main(["reset", "--devchain.path", str(path)]) == 0
    assert devchain_main(["reset", "--devchain.path", str(path), "--devchain.block_time", "0.5"]) == 0
    assert "block time 0.5 s" in capsys.readouterr().out
    assert devchain_main(["status", "--devchain.path", str(path)]) == 0


ADDRESS = "5HB6HN267dzn6gmXDtWqc9LySYnLGsHnMjHuyW2icpQjK89t"


@pytest.mark.parametrize(
    ("address", "tao", "complaint"),
    [
        (ADDRESS, "nan", "expected an amount"),
        (ADDRESS, "inf", "expected an amount"),
        (ADDRESS, "1e30", "expected an amount"),  # overflowed the chain's 64-bit balance: a traceback
        (ADDRESS, "0", "expected an amount"),
        ("not-an-address", "5", "expected an ss58 address"),
    ],
)
def test_fund_refuses_amounts_and_addresses_that_cannot_be_real(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], address: str, tao: str, complaint: str
) -> None:
    path = tmp_path / "chain.sqlite"
    assert devchain_main(["reset", "--devchain.path", str(path)]) == 0
    capsys.readouterr()
    assert devchain_main(["fund", address, tao, "--devchain.path", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and complaint in err
    connection = sqlite3.connect(path)
    try:
        credited = connection.execute("SELECT free FROM accounts WHERE address = ?", (address,)).fetchall()
    finally:
        connection.close()
    assert credited == []


def test_a_block_time_that_is_no_number_names_the_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        devchain_main(
            ["reset", "--devchain.path", str(tmp_path / "c.sqlite"), "--devchain.block_time", "abc"]
        )
        == 2
    )
    err = capsys.readouterr().err
    assert (
        err == "devchain: error: argument --devchain.block_time: expected a number, got 'abc' (see --help)\n"
    )
    assert not (tmp_path / "c.sqlite").exists()
