"""The validator's migrations never touch a database another program owns, and name a newer revision."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from subnet.db import (
    NotAValidatorDatabase,
    SchemaOutOfDate,
    create_engine,
    prepare_schema,
    sqlite_url,
    upgrade,
)
from subnet.db.__main__ import main as db_main


def _foreign_database(path: Path) -> None:
    connection = sqlite3.connect(path)
    connection.execute("CREATE TABLE rounds (note TEXT)")  # a name our schema uses too
    connection.execute("INSERT INTO rounds VALUES ('keep me')")
    connection.commit()
    connection.close()


def _contents(path: Path) -> list[tuple[str, list[tuple[object, ...]]]]:
    """Every table with its rows (the file's bytes may differ: opening it switches on WAL)."""
    connection = sqlite3.connect(path)
    try:
        names = sorted(
            row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        )
        return [(name, connection.execute(f'SELECT * FROM "{name}"').fetchall()) for name in names]
    finally:
        connection.close()


def _tables(path: Path) -> list[str]:
    connection = sqlite3.connect(path)
    try:
        return sorted(
            row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")
        )
    finally:
        connection.close()


async def test_the_validator_refuses_a_foreign_database_before_writing(tmp_path: Path) -> None:
    path = tmp_path / "theirs.sqlite"
    _foreign_database(path)
    url = sqlite_url(path)
    engine = create_engine(url)
    try:
        with pytest.raises(NotAValidatorDatabase, match="rounds"):
            await prepare_schema(url, engine)
    finally:
        await engine.dispose()
    assert _contents(path) == [("rounds", [("keep me",)])]  # none of our tables was added beside theirs


def test_upgrade_command_on_a_foreign_database_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "theirs.sqlite"
    _foreign_database(path)
    assert db_main(["upgrade", "--db.url", sqlite_url(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "not a validator database" in err
    assert _contents(path) == [("rounds", [("keep me",)])]


async def _prepare(url: str) -> None:
    engine = create_engine(url)
    try:
        await prepare_schema(url, engine)
    finally:
        await engine.dispose()


def test_a_revision_this_code_does_not_know_is_named_as_such(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "newer.sqlite"
    url = sqlite_url(path)
    asyncio.run(upgrade(url))
    connection = sqlite3.connect(path)
    connection.execute("UPDATE alembic_version SET version_num = 'f00d'")
    connection.commit()
    connection.close()
    with pytest.raises(SchemaOutOfDate, match="revision f00d, which this code does not know"):
        asyncio.run(_prepare(url))
    for action in ("upgrade", "downgrade"):
        assert db_main([action, "--db.url", url]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "does not know" in err
    connection = sqlite3.connect(path)
    assert connection.execute("SELECT version_num FROM alembic_version").fetchall() == [("f00d",)]
    connection.close()


@pytest.mark.parametrize(
    ("argv", "complaint"),
    [
        ([], "the following arguments are required: action"),
        (["upgrade", "--bogus"], "unrecognized arguments: --bogus"),
        (["frob"], "invalid choice: 'frob'"),
    ],
)
def test_db_command_usage_mistakes_are_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], complaint: str
) -> None:
    assert db_main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("python -m subnet.db: error: ") and complaint in err


def test_a_file_that_is_no_database_is_one_line_without_sqlalchemy_links(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "garbage.sqlite"
    path.write_bytes(b"garbage, not a database")
    assert db_main(["current", "--db.url", sqlite_url(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "file is not a database" in err and "sqlalche.me" not in err
    assert path.read_bytes() == b"garbage, not a database"
