"""Alembic environment: one migration history for SQLite and PostgreSQL.

Run through ``python -m subnet.db`` (which hands over an open connection), or
with the ``alembic`` command and ``-x url=...``.
"""

from __future__ import annotations

import asyncio

from alembic import context
from sqlalchemy.engine import Connection

from subnet.db.connection import create_engine, normalise_url
from subnet.db.models import Base

config = context.config
target_metadata = Base.metadata


def _configure(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things in place; batch mode copies the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def _url() -> str:
    url = config.attributes.get("database_url") or context.get_x_argument(as_dictionary=True).get("url")
    if not url:
        raise SystemExit("no database URL: pass -x url=sqlite+aiosqlite:///PATH or use python -m subnet.db")
    return normalise_url(str(url))


async def _run_online() -> None:
    engine = create_engine(_url())
    try:
        async with engine.begin() as connection:
            await connection.run_sync(_configure)
    finally:
        await engine.dispose()


def main() -> None:
    if context.is_offline_mode():
        context.configure(url=_url(), target_metadata=target_metadata, literal_binds=True)
        with context.begin_transaction():
            context.run_migrations()
        return
    connection = config.attributes.get("connection")
    if connection is not None:
        _configure(connection)
    else:
        asyncio.run(_run_online())


main()
