"""The validator's persistence: typed models, async engines and sessions, Alembic migrations.

SQLite (a file under the user's data directory) by default, PostgreSQL through
``postgresql+asyncpg://``. ``python -m subnet.db upgrade|current|downgrade``
manages the schema.
"""

from subnet.db.connection import (
    DatabaseUrlError,
    create_engine,
    default_database_url,
    is_sqlite,
    normalise_url,
    session_factory,
    sqlite_url,
)
from subnet.db.migrate import (
    MigrationsNotFound,
    NotAValidatorDatabase,
    SchemaOutOfDate,
    current_revision,
    downgrade,
    head_revision,
    prepare_schema,
    upgrade,
)
from subnet.db.models import (
    Base,
    CategoryScore,
    Miner,
    ResponseRecord,
    Round,
    RoundStatus,
    ScoreState,
    TaskRecord,
    WeightSubmission,
)

__all__ = [
    "Base",
    "CategoryScore",
    "DatabaseUrlError",
    "MigrationsNotFound",
    "Miner",
    "NotAValidatorDatabase",
    "ResponseRecord",
    "Round",
    "RoundStatus",
    "SchemaOutOfDate",
    "ScoreState",
    "TaskRecord",
    "WeightSubmission",
    "create_engine",
    "current_revision",
    "default_database_url",
    "downgrade",
    "head_revision",
    "is_sqlite",
    "normalise_url",
    "prepare_schema",
    "session_factory",
    "sqlite_url",
    "upgrade",
]
