"""Alembic, driven from code: upgrade, downgrade, current revision and the start-up schema check.

The revisions live in the repository's top-level ``migrations/`` folder; the
Alembic configuration is built here, so ``python -m subnet.db upgrade`` works
from any working directory and needs no alembic.ini.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import inspect
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncEngine

from subnet.db.connection import create_engine, is_sqlite, normalise_url

MIGRATIONS_ENV = "SUBNET_MIGRATIONS_DIR"


class MigrationsNotFound(RuntimeError):
    """The Alembic scripts are not where this installation expects them."""


class SchemaOutOfDate(RuntimeError):
    """The database's schema revision is not the one this code needs."""


class NotAValidatorDatabase(RuntimeError):
    """The database holds tables but no Alembic revision: someone else's data, left untouched."""


def migrations_dir() -> Path:
    override = os.environ.get(MIGRATIONS_ENV)
    candidate = Path(override) if override else Path(__file__).resolve().parents[2] / "migrations"
    if not (candidate / "env.py").is_file():
        raise MigrationsNotFound(
            f"Alembic scripts not found in {candidate}; run from a checkout or set {MIGRATIONS_ENV}"
        )
    return candidate


def alembic_config(url: str) -> Config:
    config = Config()
    config.set_main_option("script_location", str(migrations_dir()))
    # '%' would be read as interpolation by configparser; the env reads the URL from attributes.
    config.attributes["database_url"] = normalise_url(url)
    return config


def head_revision() -> str | None:
    return ScriptDirectory.from_config(alembic_config("sqlite+aiosqlite://")).get_current_head()


def known_revisions() -> set[str]:
    script = ScriptDirectory.from_config(alembic_config("sqlite+aiosqlite://"))
    return {revision.revision for revision in script.walk_revisions()}


def check_database_is_ours(connection: Connection) -> None:
    """Refuse, before any DDL, a database that another program owns or a newer version wrote.

    Tables without an ``alembic_version`` table are someone else's data (migrating would add
    our tables beside theirs, or fail half way); a revision this code does not know cannot be
    upgraded or downgraded from here.
    """
    tables = sorted(inspect(connection).get_table_names())
    if tables and "alembic_version" not in tables:
        shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
        raise NotAValidatorDatabase(
            f"the database holds tables ({shown}) but no alembic_version: it is not a validator "
            "database, so it was left as it is; point --db.url at a validator database or an empty one"
        )
    current = MigrationContext.configure(connection).get_current_revision()
    if current is not None and current not in known_revisions():
        raise SchemaOutOfDate(
            f"the database schema is at revision {current}, which this code does not know (written by a "
            "newer version?); run that version, or point --db.url at another database"
        )


async def _run_with_connection(engine: AsyncEngine, action: Callable[[Connection], Any]) -> Any:
    async with engine.begin() as connection:
        return await connection.run_sync(action)


async def _run_command(url: str, engine: AsyncEngine | None, step: Callable[[Config], None]) -> None:
    config = alembic_config(url)
    owned = engine is None
    engine = engine or create_engine(url)

    def run(connection: Connection) -> None:
        check_database_is_ours(connection)
        config.attributes["connection"] = connection
        step(config)

    try:
        await _run_with_connection(engine, run)
    finally:
        if owned:
            await engine.dispose()


async def upgrade(url: str, revision: str = "head", engine: AsyncEngine | None = None) -> None:
    await _run_command(url, engine, lambda config: command.upgrade(config, revision))


async def downgrade(url: str, revision: str = "-1", engine: AsyncEngine | None = None) -> None:
    await _run_command(url, engine, lambda config: command.downgrade(config, revision))


async def current_revision(url: str, engine: AsyncEngine | None = None) -> str | None:
    owned = engine is None
    engine = engine or create_engine(url)

    def read(connection: Connection) -> str | None:
        return MigrationContext.configure(connection).get_current_revision()

    try:
        result: str | None = await _run_with_connection(engine, read)
        return result
    finally:
        if owned:
            await engine.dispose()


async def prepare_schema(url: str, engine: AsyncEngine) -> str | None:
    """At start: upgrade SQLite to head; refuse an out-of-date PostgreSQL with the command to run."""
    if is_sqlite(url):
        await upgrade(url, engine=engine)
    else:
        await _run_with_connection(engine, check_database_is_ours)
    head = head_revision()
    current = await current_revision(url, engine=engine)
    if current != head:
        raise SchemaOutOfDate(
            f"database schema is at {current or 'empty'}, this validator needs {head}: "
            f"run `python -m subnet.db upgrade --db.url <your url>` first"
        )
    return current
