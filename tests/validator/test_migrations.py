"""Migrations: empty -> head -> base on SQLite and PostgreSQL; models and history agree."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import inspect
from sqlalchemy.engine import Connection

from subnet.db import (
    Base,
    SchemaOutOfDate,
    create_engine,
    current_revision,
    downgrade,
    head_revision,
    prepare_schema,
    upgrade,
)

EXPECTED_TABLES = {
    "miners",
    "rounds",
    "tasks",
    "responses",
    "score_states",
    "category_scores",
    "weight_submissions",
}


async def _tables(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        async with engine.connect() as connection:
            names = await connection.run_sync(lambda sync: set(inspect(sync).get_table_names()))
    finally:
        await engine.dispose()
    return names - {"alembic_version"}


async def _model_differences(url: str) -> list[object]:
    engine = create_engine(url)

    def compare(connection: Connection) -> list[object]:
        context = MigrationContext.configure(connection, opts={"compare_type": True})
        return list(compare_metadata(context, Base.metadata))

    try:
        async with engine.connect() as connection:
            return await connection.run_sync(compare)
    finally:
        await engine.dispose()


async def _round_trip(url: str) -> None:
    assert await current_revision(url) is None
    await upgrade(url)
    assert await current_revision(url) == head_revision()
    assert await _tables(url) == EXPECTED_TABLES
    assert await _model_differences(url) == []
    await downgrade(url, "base")
    assert await current_revision(url) is None
    assert await _tables(url) == set()
    await upgrade(url)
    assert await current_revision(url) == head_revision()


async def test_sqlite_upgrade_downgrade_round_trip(sqlite_db_url: str) -> None:
    await _round_trip(sqlite_db_url)


@pytest.mark.postgres
async def test_postgres_upgrade_downgrade_round_trip(pg_url: str) -> None:
    await _round_trip(pg_url)


@pytest.mark.postgres
async def test_postgres_out_of_date_schema_is_refused_with_the_command(pg_url: str) -> None:
    engine = create_engine(pg_url)
    try:
        with pytest.raises(SchemaOutOfDate, match=r"python -m subnet\.db upgrade"):
            await prepare_schema(pg_url, engine)
        await upgrade(pg_url)
        assert await prepare_schema(pg_url, engine) == head_revision()
    finally:
        await engine.dispose()


async def test_sqlite_is_upgraded_automatically_at_start(sqlite_db_url: str) -> None:
    engine = create_engine(sqlite_db_url)
    try:
        assert await prepare_schema(sqlite_db_url, engine) == head_revision()
    finally:
        await engine.dispose()


def test_cli_works_from_any_directory(tmp_path: Path) -> None:
    url = f"sqlite+aiosqlite:///{tmp_path / 'cli.sqlite3'}"
    for action, expected in (("upgrade", f"at {head_revision()}"), ("current", f"at {head_revision()}")):
        result = subprocess.run(
            [sys.executable, "-m", "subnet.db", action, "--db.url", url],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert expected in result.stdout
    down = subprocess.run(
        [sys.executable, "-m", "subnet.db", "downgrade", "--revision", "base", "--db.url", url],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert down.returncode == 0 and "base (empty)" in down.stdout


def test_cli_bad_url_is_one_line_and_exit_2(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "subnet.db", "current", "--db.url", "mysql://nobody@localhost/x"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "unsupported database" in result.stderr


async def _rounds_survive_0002(url: str) -> None:
    """A round stored before rounds.phrasing existed reads as None after 0002 and survives its downgrade."""
    from sqlalchemy import text

    await upgrade(url, "0001")
    engine = create_engine(url)
    insert = text(
        "INSERT INTO rounds (number, netuid, block, block_hash, seed_commitment, generator_version, status,"
        " n_tasks, n_miners, note, started_at) VALUES (1, 1, 10, '0x1', 'c', '2', 'scored', 0, 0, '',"
        " CURRENT_TIMESTAMP)"
    )
    try:
        async with engine.begin() as connection:
            await connection.execute(insert)
        await upgrade(url)
        async with engine.connect() as connection:
            rows = (await connection.execute(text("SELECT number, phrasing FROM rounds"))).all()
        assert [(number, phrasing) for number, phrasing in rows] == [(1, None)]
        await downgrade(url, "0001")
        async with engine.connect() as connection:
            assert (await connection.execute(text("SELECT count(*) FROM rounds"))).scalar_one() == 1
    finally:
        await engine.dispose()


async def test_sqlite_rounds_survive_the_phrasing_column(sqlite_db_url: str) -> None:
    await _rounds_survive_0002(sqlite_db_url)


@pytest.mark.postgres
async def test_postgres_rounds_survive_the_phrasing_column(pg_url: str) -> None:
    await _rounds_survive_0002(pg_url)
