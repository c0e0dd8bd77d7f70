"""``python -m subnet.db upgrade|current|downgrade [--db.url URL] [--revision REV]``.

The URL comes from ``--db.url``, else ``SUBNET_DB_URL`` (as for the validator), else the
default SQLite file.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from collections.abc import Sequence

from subnet.cli import OneLineParser, UsageError, run_main
from subnet.config.flags import FLAGS_BY_NAME, add_flag
from subnet.db.connection import DatabaseUrlError, default_database_url, error_reason, normalise_url
from subnet.db.migrate import (
    MigrationsNotFound,
    NotAValidatorDatabase,
    SchemaOutOfDate,
    current_revision,
    downgrade,
    head_revision,
    upgrade,
)

DB_URL_ENV = FLAGS_BY_NAME["db.url"].env  # SUBNET_DB_URL, as for the validator


PROG = "python -m subnet.db"


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=PROG, description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("action", choices=["upgrade", "current", "downgrade"])
    add_flag(parser, "db.url", dest="url", note=f"Else ${DB_URL_ENV}, as for the validator.")
    parser.add_argument(
        "--revision", default=None, help="target revision (upgrade: head; downgrade: -1, or 'base')"
    )
    return parser


async def _run(action: str, url: str, revision: str | None) -> str:
    if action == "upgrade":
        await upgrade(url, revision or "head")
    elif action == "downgrade":
        await downgrade(url, revision or "-1")
    current = await current_revision(url)
    return f"{action}: database at {current or 'base (empty)'}; code head is {head_revision()}"


def main(argv: Sequence[str] | None = None) -> int:
    def run() -> None:
        args = build_parser().parse_args(argv)
        url = normalise_url(args.url or os.environ.get(DB_URL_ENV) or default_database_url())
        try:
            print(asyncio.run(_run(args.action, url, args.revision)))
        except (MigrationsNotFound, NotAValidatorDatabase, SchemaOutOfDate):
            raise
        except Exception as exc:  # the database is the user's: unreachable, wrong password, bad revision
            raise UsageError(f"{args.action} failed: {type(exc).__name__}: {error_reason(exc)}") from None

    return run_main(
        PROG, run, errors=(DatabaseUrlError, MigrationsNotFound, NotAValidatorDatabase, SchemaOutOfDate)
    )


if __name__ == "__main__":
    sys.exit(main())
