"""Initial schema: miners, rounds, tasks, responses, score state, weight submissions.

Revision ID: 0001
Revises:
Create Date: 2026-11-21

Reviewed by hand. Constraint names follow subnet.db.models.NAMING_CONVENTION so
that SQLite and PostgreSQL carry the same names.
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TIMESTAMP = sa.DateTime(timezone=True)


def upgrade() -> None:
    op.create_table(
        "miners",
        sa.Column("hotkey", sa.String(length=64), nullable=False),
        sa.Column("uid", sa.Integer(), nullable=False),
        sa.Column("coldkey", sa.String(length=64), nullable=False),
        sa.Column("axon_ip", sa.String(length=64), nullable=False),
        sa.Column("axon_port", sa.Integer(), nullable=False),
        sa.Column("is_validator", sa.Boolean(), nullable=False),
        sa.Column("first_seen", TIMESTAMP, nullable=False),
        sa.Column("last_seen", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("hotkey", name="pk_miners"),
    )
    op.create_table(
        "rounds",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("netuid", sa.Integer(), nullable=False),
        sa.Column("block", sa.BigInteger(), nullable=False),
        sa.Column("block_hash", sa.String(length=80), nullable=False),
        sa.Column("seed_commitment", sa.String(length=64), nullable=False),
        sa.Column("generator_version", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=16), nullable=False),
        sa.Column("n_tasks", sa.Integer(), nullable=False),
        sa.Column("n_miners", sa.Integer(), nullable=False),
        sa.Column("note", sa.Text(), nullable=False),
        sa.Column("started_at", TIMESTAMP, nullable=False),
        sa.Column("finished_at", TIMESTAMP, nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_rounds"),
        sa.UniqueConstraint("number", name="uq_rounds_number"),
    )
    op.create_index("ix_rounds_status", "rounds", ["status"])
    op.create_table(
        "tasks",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("round_id", sa.Integer(), nullable=False),
        sa.Column("task_key", sa.String(length=128), nullable=False),
        sa.Column("category", sa.String(length=64), nullable=False),
        sa.Column("scoring_category", sa.String(length=64), nullable=False),
        sa.Column("source", sa.String(length=128), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("expected", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["round_id"], ["rounds.id"], name="fk_tasks_round_id_rounds", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_tasks"),
        sa.UniqueConstraint("round_id", "task_key", name="uq_tasks_round_id_task_key"),
    )
    op.create_table(
        "responses",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("round_id", sa.Integer(), nullable=False),
        sa.Column("task_id", sa.Integer(), nullable=False),
        sa.Column("hotkey", sa.String(length=64), nullable=False),
        sa.Column("uid", sa.Integer(), nullable=False),
        sa.Column("category", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=32), nullable=False),
        sa.Column("latency_s", sa.Float(), nullable=False),
        sa.Column("http_status", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("raw_output", sa.Text(), nullable=True),
        sa.Column("raw_truncated", sa.Boolean(), nullable=False),
        sa.Column("decoded_calls", sa.JSON(), nullable=True),
        sa.Column("valid", sa.Boolean(), nullable=False),
        sa.Column("error_type", sa.String(length=128), nullable=True),
        sa.Column("score", sa.Float(), nullable=False),
        sa.Column("components", sa.JSON(), nullable=False),
        sa.Column("created_at", TIMESTAMP, nullable=False),
        sa.ForeignKeyConstraint(
            ["round_id"], ["rounds.id"], name="fk_responses_round_id_rounds", ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["task_id"], ["tasks.id"], name="fk_responses_task_id_tasks", ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name="pk_responses"),
        # One answer per (round, task, hotkey): what keeps a response from counting twice.
        sa.UniqueConstraint(
            "round_id", "task_id", "hotkey", name="uq_responses_round_id_task_id_hotkey"
        ),
    )
    op.create_index("ix_responses_created_at", "responses", ["created_at"])
    op.create_index("ix_responses_hotkey_round", "responses", ["hotkey", "round_id"])
    op.create_table(
        "score_states",
        sa.Column("hotkey", sa.String(length=64), nullable=False),
        sa.Column("uid", sa.Integer(), nullable=False),
        sa.Column("moving_average", sa.Float(), nullable=False),
        sa.Column("rounds_scored", sa.Integer(), nullable=False),
        sa.Column("responses_total", sa.Integer(), nullable=False),
        sa.Column("responses_valid", sa.Integer(), nullable=False),
        sa.Column("last_round_id", sa.Integer(), nullable=True),
        sa.Column("updated_at", TIMESTAMP, nullable=False),
        sa.PrimaryKeyConstraint("hotkey", name="pk_score_states"),
    )
    op.create_table(
        "category_scores",
        sa.Column("hotkey", sa.String(length=64), nullable=False),
        sa.Column("category", sa.String(length=64), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("valid", sa.Integer(), nullable=False),
        sa.Column("score_sum", sa.Float(), nullable=False),
        sa.PrimaryKeyConstraint("hotkey", "category", name="pk_category_scores"),
    )
    op.create_table(
        "weight_submissions",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("attempted_at", TIMESTAMP, nullable=False),
        sa.Column("block", sa.BigInteger(), nullable=True),
        sa.Column("uids", sa.JSON(), nullable=False),
        sa.Column("weights", sa.JSON(), nullable=False),
        sa.Column("hotkeys", sa.JSON(), nullable=False),
        sa.Column("version_key", sa.BigInteger(), nullable=False),
        sa.Column("outcome", sa.String(length=32), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.PrimaryKeyConstraint("id", name="pk_weight_submissions"),
    )


def downgrade() -> None:
    op.drop_table("weight_submissions")
    op.drop_table("category_scores")
    op.drop_table("score_states")
    op.drop_index("ix_responses_hotkey_round", table_name="responses")
    op.drop_index("ix_responses_created_at", table_name="responses")
    op.drop_table("responses")
    op.drop_table("tasks")
    op.drop_index("ix_rounds_status", table_name="rounds")
    op.drop_table("rounds")
    op.drop_table("miners")
