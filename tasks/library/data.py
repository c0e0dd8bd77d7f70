"""Data and databases: read-only SQL queries, table exports, database backups and table schemas."""

from __future__ import annotations

from tasks.library.common import choices, enum_req, opt, req
from tasks.spec import ToolSpec
from tasks.value_generators import Composed, Flag, Integer, words

_DATABASE = words(
    "analytics", "billing", "inventory", "crm", "users", "orders", vague=("the database", "our db")
)
_TABLE = Composed(
    (
        ("customers", "invoices", "events", "sessions", "products", "payments", "shipments"),
        ("", "_2025", "_archive"),
    ),
    "{0}{1}",
    vague=("that table", "the big table"),
)

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "run_sql_query",
        "data",
        "Runs a read-only SQL query against a database.",
        (
            req("database", "string", "Database name.", _DATABASE),
            req(
                "query",
                "string",
                "SQL SELECT statement.",
                Composed(
                    (
                        ("SELECT COUNT(*) FROM", "SELECT * FROM", "SELECT id, total FROM"),
                        ("customers", "invoices", "events", "orders", "payments"),
                        ("", " WHERE status = 'open'", " LIMIT 10", " WHERE created_at > '2026-01-01'"),
                    ),
                    "{0} {1}{2}",
                    quote=True,
                ),
            ),
        ),
        (
            "against {database}, run {query}",
            "what comes back from {query} on the {database} db?",
            "hit {database} with {query}",
            "I need the results of {query} from {database}",
        ),
        conflicts=("sql_schema",),
    ),
    ToolSpec(
        "export_table",
        "data",
        "Exports a database table to a file.",
        (
            req("table", "string", "Table name.", _TABLE),
            enum_req(
                "format",
                "File format.",
                choices(
                    ("csv", ("CSV", "a spreadsheet-friendly CSV")),
                    ("json", "JSON"),
                    ("parquet", "Parquet"),
                    ("xlsx", ("Excel", "xlsx")),
                ),
            ),
            opt(
                "destination",
                "string",
                "Where to write the file.",
                Composed(
                    (("exports", "/tmp", "reports", "s3-bucket/dumps"), ("jan", "q1", "weekly", "audit")),
                    "{0}/{1}",
                ),
            ),
        ),
        (
            "dump {table} as {format}",
            "I need {table} in {format} saved to {destination}",
            "get {table} out into a {format} file",
            "save a copy of {table} as {format} at {destination}",
        ),
    ),
    ToolSpec(
        "create_database_backup",
        "data",
        "Takes a snapshot backup of a database.",
        (
            req("database", "string", "Database name.", _DATABASE),
            opt(
                "retention_days",
                "integer",
                "Days to keep the snapshot.",
                Integer(1, 90, "{} days"),
                default=7,
            ),
            opt("compress", "boolean", "Compress the snapshot.", Flag(("compressed",)), default=True),
        ),
        (
            "snapshot {database} before the migration",
            "make a safety copy of {database} and keep it {retention_days}",
            "back {database} up, {compress}",
            "I want a restore point for {database} that sticks around for {retention_days}",
        ),
    ),
    ToolSpec(
        "get_table_schema",
        "data",
        "Describes the columns and types of a table.",
        (
            req("table", "string", "Table name.", _TABLE),
            opt("database", "string", "Database name.", _DATABASE),
        ),
        (
            "what columns does {table} have?",
            "describe the layout of {table} in {database}",
            "which fields and types are in {table}",
            "I forgot how {table} is structured in {database}, remind me",
        ),
        conflicts=("sql_schema",),
    ),
)

__all__ = ["TOOLS"]
