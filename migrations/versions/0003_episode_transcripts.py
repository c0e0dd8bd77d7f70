"""responses.transcript: the transcript of a multi-turn episode a miner played.

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-25

Reviewed by hand. An episode's result is a row of ``responses`` like a task's (its category is
the episode category, so per-category tallies, moving averages and weights need no change); the
transcript (every step: request digest, answer, calls, observations, latency) is a nullable JSON
column beside it. Rows stored before read as None; downgrading drops the transcripts only.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("responses") as batch:
        batch.add_column(sa.Column("transcript", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("responses") as batch:
        batch.drop_column("transcript")
