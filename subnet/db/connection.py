"""Database URLs, engines and sessions for the validator (SQLite by default, PostgreSQL for scale)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import platformdirs
from sqlalchemy import event
from sqlalchemy.engine import make_url
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession, async_sessionmaker, create_async_engine

APP_NAME = "toolcall-subnet"
DEFAULT_SQLITE_NAME = "validator.sqlite"  # the same file subnet.config names
# How long a SQLite writer waits for another connection's lock before giving up.
SQLITE_BUSY_TIMEOUT_MS = 10_000


class DatabaseUrlError(ValueError):
    """The database URL names a driver we do not support."""


def error_reason(error: BaseException) -> str:
    """The first line of a driver's error, whitespace collapsed: SQLAlchemy appends the SQL and a
    "Background on this error" link on lines of their own, which say nothing to an operator."""
    first = str(error).strip().splitlines()[0] if str(error).strip() else ""
    return " ".join(first.split()) or type(error).__name__


def default_database_url() -> str:
    """A SQLite file under the user's data directory (created on first use)."""
    return sqlite_url(Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / DEFAULT_SQLITE_NAME)


def sqlite_url(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


def is_sqlite(url: str) -> bool:
    return make_url(url).get_backend_name() == "sqlite"


def normalise_url(url: str) -> str:
    """Pick the async driver for a URL given without one, and refuse what we cannot drive."""
    try:
        parsed = make_url(url)
    except Exception as exc:
        raise DatabaseUrlError(f"not a database URL: {url!r}") from exc
    backend = parsed.get_backend_name()
    async_drivers = {"sqlite": "aiosqlite", "postgresql": "asyncpg"}
    if backend not in async_drivers:
        raise DatabaseUrlError(
            f"unsupported database {backend!r}: use sqlite+aiosqlite:///PATH or postgresql+asyncpg://..."
        )
    driver = async_drivers[backend]
    if parsed.get_driver_name() != driver:
        parsed = parsed.set(drivername=f"{backend}+{driver}")
    return parsed.render_as_string(hide_password=False)


def _set_sqlite_pragmas(dbapi_connection: Any, _record: Any) -> None:
    cursor = dbapi_connection.cursor()
    # WAL lets the dashboard read while a round writes; NORMAL is durable at each WAL checkpoint
    # and never corrupts on a crash, which is what kill -9 recovery needs.
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.close()


def create_engine(url: str, **kwargs: Any) -> AsyncEngine:
    """An async engine; for SQLite the parent directory is created and WAL is switched on."""
    url = normalise_url(url)
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        database = parsed.database or ""
        if database and database != ":memory:" and not database.startswith("file:"):
            Path(database).expanduser().parent.mkdir(parents=True, exist_ok=True)
        engine = create_async_engine(url, connect_args={"timeout": SQLITE_BUSY_TIMEOUT_MS / 1000}, **kwargs)
        event.listen(engine.sync_engine, "connect", _set_sqlite_pragmas)
        return engine
    kwargs.setdefault("pool_pre_ping", True)
    return create_async_engine(url, **kwargs)


def session_factory(engine: AsyncEngine) -> async_sessionmaker[AsyncSession]:
    return async_sessionmaker(engine, expire_on_commit=False)
