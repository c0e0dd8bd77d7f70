"""The validator's tables as SQLAlchemy 2 typed models.

Everything a miner earns is keyed by its hotkey, never by its uid: when a uid
changes hands the new hotkey starts from zero. The schema only ever changes
through the Alembic revisions in ``migrations/``; a test checks that these
models and that history agree.
"""

from __future__ import annotations

import enum
from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

# Fixed constraint names so that SQLite and PostgreSQL carry the same names and
# Alembic can drop or alter them later.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}


def utcnow() -> datetime:
    return datetime.now(UTC)


def storable_text(value: str) -> str:
    """`value` in a form every backend stores: NUL and lone surrogates written as escapes.

    PostgreSQL refuses a NUL in text, and no UTF-8 encoder takes a lone surrogate (both drivers
    refuse the whole statement, so one miner's answer would fail a round's insert for every
    miner). They are written as Python writes them (`\\x00`, `\\ud800`), so what the miner
    sent stays readable; everything else is kept as it was.
    """
    if value.isascii():
        return value.replace("\x00", "\\x00") if "\x00" in value else value
    return value.replace("\x00", "\\x00").encode("utf-8", "backslashreplace").decode("utf-8")


class StorableText(TypeDecorator[str]):
    """Text a miner (or a chain node) can reach: made storable on the way in (`storable_text`)."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        return None if value is None else storable_text(value)


class Base(DeclarativeBase):
    metadata = MetaData(naming_convention=NAMING_CONVENTION)
    type_annotation_map: ClassVar[dict[Any, Any]] = {
        dict[str, Any]: JSON,
        list[Any]: JSON,
        datetime: DateTime(timezone=True),
    }


class RoundStatus(enum.StrEnum):
    """Life of a round. Only ``scored`` rounds count towards the moving averages."""

    RUNNING = "running"  # tasks generated, miners being queried, responses trickling in
    COLLECTED = "collected"  # every response stored; moving averages not yet applied
    SCORED = "scored"  # moving averages applied, in the same transaction as this status
    DISCARDED = "discarded"  # interrupted while querying; its responses never count


class Miner(Base):
    """A hotkey seen on the metagraph, with where it was last seen."""

    __tablename__ = "miners"

    hotkey: Mapped[str] = mapped_column(String(64), primary_key=True)
    uid: Mapped[int] = mapped_column(Integer)
    coldkey: Mapped[str] = mapped_column(String(64), default="")
    axon_ip: Mapped[str] = mapped_column(String(64), default="")
    axon_port: Mapped[int] = mapped_column(Integer, default=0)
    is_validator: Mapped[bool] = mapped_column(Boolean, default=False)
    first_seen: Mapped[datetime] = mapped_column(default=utcnow)
    last_seen: Mapped[datetime] = mapped_column(default=utcnow)


class Round(Base):
    """One round. It stores a commitment to its seed and the public inputs, never the secret."""

    __tablename__ = "rounds"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    number: Mapped[int] = mapped_column(Integer, unique=True)
    netuid: Mapped[int] = mapped_column(Integer)
    block: Mapped[int] = mapped_column(BigInteger)
    block_hash: Mapped[str] = mapped_column(String(80))
    # sha256 of the round seed; the seed is HMAC(secret, netuid, block_hash, number).
    seed_commitment: Mapped[str] = mapped_column(String(64))
    generator_version: Mapped[str] = mapped_column(String(64), default="")
    status: Mapped[str] = mapped_column(String(16), default=RoundStatus.RUNNING.value, index=True)
    n_tasks: Mapped[int] = mapped_column(Integer, default=0)
    n_miners: Mapped[int] = mapped_column(Integer, default=0)
    note: Mapped[str] = mapped_column(StorableText, default="")
    # What the phrasing step did (tasks.phrasing.PhrasingStats.to_dict); None: none was configured.
    phrasing: Mapped[dict[str, Any] | None] = mapped_column(nullable=True)
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(nullable=True)


class TaskRecord(Base):
    """A task as generated for a round (before any per-miner variant)."""

    __tablename__ = "tasks"
    __table_args__ = (UniqueConstraint("round_id", "task_key"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    round_id: Mapped[int] = mapped_column(ForeignKey("rounds.id", ondelete="CASCADE"))
    task_key: Mapped[str] = mapped_column(String(128))
    category: Mapped[str] = mapped_column(String(64))
    scoring_category: Mapped[str] = mapped_column(String(64))
    source: Mapped[str] = mapped_column(String(128), default="")
    payload: Mapped[dict[str, Any]] = mapped_column()
    expected: Mapped[list[Any]] = mapped_column()


class ResponseRecord(Base):
    """One miner's answer to one task of one round, with its verdict.

    The unique (round, task, hotkey) key is what keeps a response from being
    counted twice, whatever happens to the process.
    """

    __tablename__ = "responses"
    __table_args__ = (
        UniqueConstraint("round_id", "task_id", "hotkey"),
        Index("ix_responses_hotkey_round", "hotkey", "round_id"),
        Index("ix_responses_created_at", "created_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    round_id: Mapped[int] = mapped_column(ForeignKey("rounds.id", ondelete="CASCADE"))
    task_id: Mapped[int] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"))
    hotkey: Mapped[str] = mapped_column(String(64))
    uid: Mapped[int] = mapped_column(Integer)
    category: Mapped[str] = mapped_column(String(64))
    status: Mapped[str] = mapped_column(String(32))
    latency_s: Mapped[float] = mapped_column(Float, default=0.0)
    http_status: Mapped[int | None] = mapped_column(Integer, nullable=True)
    # What the miner sent or caused: made storable on every backend (StorableText).
    error: Mapped[str | None] = mapped_column(StorableText, nullable=True)
    raw_output: Mapped[str | None] = mapped_column(StorableText, nullable=True)
    raw_truncated: Mapped[bool] = mapped_column(Boolean, default=False)
    decoded_calls: Mapped[list[Any] | None] = mapped_column(nullable=True)
    valid: Mapped[bool] = mapped_column(Boolean, default=False)
    error_type: Mapped[str | None] = mapped_column(String(128), nullable=True)
    score: Mapped[float] = mapped_column(Float, default=0.0)
    components: Mapped[dict[str, Any]] = mapped_column(default=dict)
    # An episode's transcript (every step: request digest, answer, calls, observations,
    # latency), bounded in size; None for single-turn tasks.
    transcript: Mapped[dict[str, Any] | None] = mapped_column(JSON(none_as_null=True), nullable=True)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ScoreState(Base):
    """A hotkey's running standing: its moving average and how much evidence it rests on."""

    __tablename__ = "score_states"

    hotkey: Mapped[str] = mapped_column(String(64), primary_key=True)
    uid: Mapped[int] = mapped_column(Integer)
    moving_average: Mapped[float] = mapped_column(Float, default=0.0)
    rounds_scored: Mapped[int] = mapped_column(Integer, default=0)
    responses_total: Mapped[int] = mapped_column(Integer, default=0)
    responses_valid: Mapped[int] = mapped_column(Integer, default=0)
    last_round_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow)


class CategoryScore(Base):
    """Per-hotkey, per-category tallies: a BFCL-like accuracy table for each miner."""

    __tablename__ = "category_scores"

    hotkey: Mapped[str] = mapped_column(String(64), primary_key=True)
    category: Mapped[str] = mapped_column(String(64), primary_key=True)
    total: Mapped[int] = mapped_column(Integer, default=0)
    valid: Mapped[int] = mapped_column(Integer, default=0)
    score_sum: Mapped[float] = mapped_column(Float, default=0.0)


class WeightSubmission(Base):
    """Every attempt to set weights, with what the chain said."""

    __tablename__ = "weight_submissions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    attempted_at: Mapped[datetime] = mapped_column(default=utcnow)
    block: Mapped[int | None] = mapped_column(BigInteger, nullable=True)
    uids: Mapped[list[Any]] = mapped_column()
    weights: Mapped[list[Any]] = mapped_column()
    hotkeys: Mapped[list[Any]] = mapped_column()
    version_key: Mapped[int] = mapped_column(BigInteger, default=0)
    outcome: Mapped[str] = mapped_column(String(32))
    message: Mapped[str] = mapped_column(StorableText, default="")
