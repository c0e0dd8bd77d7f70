"""rounds.phrasing: what the phrasing step did for a round's requests.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-25

Reviewed by hand. A nullable JSON column: rounds stored before it (and rounds of a validator
without a phrasing step) read as None. The phrased request itself is in each task's payload
(messages), beside the template text it replaced (payload["phrasing"]["template"]).
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("rounds") as batch:
        batch.add_column(sa.Column("phrasing", sa.JSON(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("rounds") as batch:
        batch.drop_column("phrasing")
