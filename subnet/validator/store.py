"""The validator's reads and writes, each a transaction with one clear meaning.

Idempotency lives here: a response is unique per (round, task, hotkey) and a
duplicate insert is dropped; a round's moving-average update runs in the same
transaction that moves the round from ``collected`` to ``scored``, guarded by a
conditional UPDATE, so it is applied exactly once whatever gets killed when.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, Protocol

from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert as postgresql_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.ext.asyncio import AsyncEngine, AsyncSession

from subnet.db import (
    CategoryScore,
    Miner,
    ResponseRecord,
    Round,
    RoundStatus,
    ScoreState,
    TaskRecord,
    WeightSubmission,
    session_factory,
)
from subnet.db.models import utcnow
from subnet.validator.rows import ResponseRow
from subnet.validator.state import (
    RoundSummary,
    ScoredResponse,
    Standing,
    summarise_round,
    update_moving_average,
)

# Both dialects' INSERT builders share on_conflict_do_nothing / on_conflict_do_update.
_INSERT_BUILDERS: dict[str, Callable[..., Any]] = {"sqlite": sqlite_insert, "postgresql": postgresql_insert}


class NeuronLike(Protocol):
    """What the store needs of a metagraph entry (subnet.chain.Neuron satisfies it)."""

    uid: int
    hotkey: str
    coldkey: str
    axon_ip: str
    axon_port: int
    validator_permit: bool


@dataclass(frozen=True)
class NewTask:
    task_key: str
    category: str
    scoring_category: str
    source: str
    payload: dict[str, Any]
    expected: list[Any]


@dataclass(frozen=True)
class Recovery:
    """What start-up did with a round an earlier process left unfinished."""

    round_id: int
    number: int
    action: str  # "finished" or "discarded"


class Store:
    def __init__(self, engine: AsyncEngine) -> None:
        self.engine = engine
        self.sessions = session_factory(engine)
        self._insert = _INSERT_BUILDERS[engine.dialect.name]

    # -- miners ---------------------------------------------------------------------------------

    async def upsert_miners(self, neurons: Iterable[NeuronLike]) -> int:
        now = utcnow()
        rows = [
            {
                "hotkey": neuron.hotkey,
                "uid": neuron.uid,
                "coldkey": neuron.coldkey,
                "axon_ip": neuron.axon_ip,
                "axon_port": neuron.axon_port,
                "is_validator": bool(neuron.validator_permit),
                "first_seen": now,
                "last_seen": now,
            }
            for neuron in neurons
        ]
        if not rows:
            return 0
        statement = self._insert(Miner)
        statement = statement.on_conflict_do_update(
            index_elements=[Miner.hotkey],
            set_={
                name: statement.excluded[name]
                for name in ("uid", "coldkey", "axon_ip", "axon_port", "is_validator", "last_seen")
            },
        )
        async with self.sessions.begin() as session:
            await session.execute(statement, rows)
        return len(rows)

    async def known_miners(self) -> list[Miner]:
        async with self.sessions() as session:
            return list((await session.scalars(select(Miner).order_by(Miner.uid))).all())

    # -- rounds ---------------------------------------------------------------------------------

    async def next_round_number(self) -> int:
        async with self.sessions() as session:
            latest = await session.scalar(select(func.max(Round.number)))
        return int(latest or 0) + 1

    async def create_round(
        self,
        *,
        number: int,
        netuid: int,
        block: int,
        block_hash: str,
        seed_commitment: str,
        generator_version: str,
        tasks: Sequence[NewTask],
        phrasing: dict[str, Any] | None = None,
    ) -> tuple[int, dict[str, int]]:
        """Insert the round and its tasks together; returns the round id and task ids by key."""
        async with self.sessions.begin() as session:
            round_row = Round(
                number=number,
                netuid=netuid,
                block=block,
                block_hash=block_hash,
                seed_commitment=seed_commitment,
                generator_version=generator_version,
                status=RoundStatus.RUNNING.value,
                n_tasks=len(tasks),
                n_miners=0,
                note="",
                phrasing=phrasing,
                started_at=utcnow(),
            )
            session.add(round_row)
            await session.flush()
            records = [
                TaskRecord(
                    round_id=round_row.id,
                    task_key=task.task_key,
                    category=task.category,
                    scoring_category=task.scoring_category,
                    source=task.source,
                    payload=task.payload,
                    expected=task.expected,
                )
                for task in tasks
            ]
            session.add_all(records)
            await session.flush()
            return round_row.id, {record.task_key: record.id for record in records}

    async def store_responses(self, rows: Sequence[ResponseRow]) -> int:
        """Insert scored responses; one already stored for (round, task, hotkey) is left as it was."""
        if not rows:
            return 0
        # A Core insert on the table: the ORM's bulk path builds per-row state that a plain
        # executemany of dicts does not need (the store's share of a round's CPU halved).
        statement = self._insert(ResponseRecord.__table__).on_conflict_do_nothing(
            index_elements=["round_id", "task_id", "hotkey"]
        )
        async with self.engine.begin() as connection:
            await connection.execute(statement, [row.columns() for row in rows])
        return len(rows)

    async def mark_collected(self, round_id: int, n_miners: int) -> None:
        async with self.sessions.begin() as session:
            await session.execute(
                update(Round)
                .where(Round.id == round_id, Round.status == RoundStatus.RUNNING.value)
                .values(status=RoundStatus.COLLECTED.value, n_miners=n_miners)
            )

    async def apply_round(
        self, round_id: int, alpha: float, *, known: dict[str, RoundSummary] | None = None
    ) -> dict[str, RoundSummary] | None:
        """Fold a collected round into the moving averages, exactly once.

        ``known``: the summaries of the rows the caller stored (a live round); they are used
        when the round holds exactly that many responses, else the rows are read back (a
        recovered round, or anything unexpected: the table is the truth).

        Returns the per-hotkey summaries, or None when the round was not in
        ``collected`` (already scored, discarded, or still running).
        """
        async with self.sessions.begin() as session:
            claimed = await session.execute(
                update(Round)
                .where(Round.id == round_id, Round.status == RoundStatus.COLLECTED.value)
                .values(status=RoundStatus.SCORED.value, finished_at=utcnow())
            )
            if getattr(claimed, "rowcount", 0) != 1:
                return None
            if known is not None:
                stored = await session.scalar(
                    select(func.count())
                    .select_from(ResponseRecord)
                    .where(ResponseRecord.round_id == round_id)
                )
                if stored == sum(summary.total for summary in known.values()):
                    await self._fold_summaries(session, round_id, known, alpha)
                    return known
            rows = await session.execute(
                select(
                    ResponseRecord.hotkey,
                    ResponseRecord.uid,
                    ResponseRecord.category,
                    ResponseRecord.valid,
                    ResponseRecord.score,
                    ResponseRecord.error_type,
                ).where(ResponseRecord.round_id == round_id)
            )
            summaries = summarise_round(
                ScoredResponse(hotkey, uid, category, bool(valid), float(score), error_type)
                for hotkey, uid, category, valid, score, error_type in rows
            )
            await self._fold_summaries(session, round_id, summaries, alpha)
            return summaries

    async def _fold_summaries(
        self, session: AsyncSession, round_id: int, summaries: dict[str, RoundSummary], alpha: float
    ) -> None:
        """Add a round to the standings: read the current rows once, write each table in one upsert.

        The arithmetic stays in Python (``update_moving_average``); only the I/O is batched,
        so a round of 256 hotkeys is two SELECTs and two executemany upserts rather than a
        unit-of-work flush of ~1,500 ORM objects.
        """
        if not summaries:
            return
        hotkeys = list(summaries)
        states_table = ScoreState.__table__
        previous = {
            row.hotkey: row
            for row in await session.execute(
                select(
                    ScoreState.hotkey,
                    ScoreState.moving_average,
                    ScoreState.rounds_scored,
                    ScoreState.responses_total,
                    ScoreState.responses_valid,
                ).where(ScoreState.hotkey.in_(hotkeys))
            )
        }
        now = utcnow()
        state_rows = []
        for hotkey, summary in summaries.items():
            before = previous.get(hotkey)
            state_rows.append(
                {
                    "hotkey": hotkey,
                    "uid": summary.uid,
                    "moving_average": update_moving_average(
                        before.moving_average if before is not None else 0.0, summary.mean_score, alpha
                    ),
                    "rounds_scored": (before.rounds_scored if before is not None else 0) + 1,
                    "responses_total": (before.responses_total if before is not None else 0) + summary.total,
                    "responses_valid": (before.responses_valid if before is not None else 0) + summary.valid,
                    "last_round_id": round_id,
                    "updated_at": now,
                }
            )
        await session.execute(self._upsert(states_table, ["hotkey"], state_rows[0]), state_rows)

        categories_table = CategoryScore.__table__
        tallies = {
            (row.hotkey, row.category): row
            for row in await session.execute(
                select(
                    CategoryScore.hotkey,
                    CategoryScore.category,
                    CategoryScore.total,
                    CategoryScore.valid,
                    CategoryScore.score_sum,
                ).where(CategoryScore.hotkey.in_(hotkeys))
            )
        }
        category_rows = []
        for hotkey, summary in summaries.items():
            for category, (total, valid, score_sum) in summary.by_category.items():
                tally = tallies.get((hotkey, category))
                category_rows.append(
                    {
                        "hotkey": hotkey,
                        "category": category,
                        "total": (tally.total if tally is not None else 0) + total,
                        "valid": (tally.valid if tally is not None else 0) + valid,
                        "score_sum": (tally.score_sum if tally is not None else 0.0) + score_sum,
                    }
                )
        if category_rows:
            await session.execute(
                self._upsert(categories_table, ["hotkey", "category"], category_rows[0]), category_rows
            )

    def _upsert(self, table: Any, keys: list[str], sample: dict[str, Any]) -> Any:
        """INSERT ... ON CONFLICT (keys) DO UPDATE SET every other column of ``sample``."""
        statement = self._insert(table)
        return statement.on_conflict_do_update(
            index_elements=keys,
            set_={name: statement.excluded[name] for name in sample if name not in keys},
        )

    async def discard_round(self, round_id: int, note: str) -> bool:
        async with self.sessions.begin() as session:
            result = await session.execute(
                update(Round)
                .where(Round.id == round_id, Round.status == RoundStatus.RUNNING.value)
                .values(status=RoundStatus.DISCARDED.value, finished_at=utcnow(), note=note)
            )
            return getattr(result, "rowcount", 0) == 1

    async def recover_interrupted(self, alpha: float) -> list[Recovery]:
        """Settle rounds a killed process left behind.

        A ``collected`` round has every response stored: finish it (apply its
        moving averages). A ``running`` round was cut off while querying, so its
        responses are a partial, biased sample: discard it (responses stay for
        audit, never counted).
        """
        async with self.sessions() as session:
            pending = (
                await session.execute(
                    select(Round.id, Round.number, Round.status)
                    .where(Round.status.in_([RoundStatus.RUNNING.value, RoundStatus.COLLECTED.value]))
                    .order_by(Round.number)
                )
            ).all()
        recoveries: list[Recovery] = []
        for round_id, number, status in pending:
            if status == RoundStatus.COLLECTED.value:
                await self.apply_round(round_id, alpha)
                recoveries.append(Recovery(round_id, number, "finished"))
            elif await self.discard_round(round_id, "interrupted while querying; discarded at restart"):
                recoveries.append(Recovery(round_id, number, "discarded"))
        return recoveries

    async def latest_block(self) -> tuple[int, str] | None:
        """Block and block hash of the most recent round, if any (a seed input while the chain is away)."""
        async with self.sessions() as session:
            row = (
                await session.execute(
                    select(Round.block, Round.block_hash).order_by(Round.number.desc()).limit(1)
                )
            ).first()
        return (int(row[0]), str(row[1])) if row is not None else None

    async def rounds(self) -> list[Round]:
        async with self.sessions() as session:
            return list((await session.scalars(select(Round).order_by(Round.number))).all())

    # -- standings and weights ------------------------------------------------------------------

    async def standings(self) -> list[Standing]:
        async with self.sessions() as session:
            rows = await session.execute(
                select(ScoreState.hotkey, ScoreState.moving_average, ScoreState.responses_total)
            )
            return [Standing(hotkey, float(average), int(total)) for hotkey, average, total in rows]

    async def score_states(self) -> dict[str, ScoreState]:
        async with self.sessions() as session:
            return {state.hotkey: state for state in await session.scalars(select(ScoreState))}

    async def category_accuracy(self, hotkey: str) -> dict[str, float]:
        async with self.sessions() as session:
            rows = await session.scalars(select(CategoryScore).where(CategoryScore.hotkey == hotkey))
            return {row.category: row.valid / row.total for row in rows if row.total}

    async def record_weights(
        self,
        *,
        block: int | None,
        weights: dict[int, float],
        hotkeys: Sequence[str],
        version_key: int,
        outcome: str,
        message: str = "",
    ) -> None:
        async with self.sessions.begin() as session:
            session.add(
                WeightSubmission(
                    attempted_at=utcnow(),
                    block=block,
                    uids=list(weights),
                    weights=list(weights.values()),
                    hotkeys=list(hotkeys),
                    version_key=version_key,
                    outcome=outcome,
                    message=message[:2000],
                )
            )

    async def weight_submissions(self) -> list[WeightSubmission]:
        async with self.sessions() as session:
            return list((await session.scalars(select(WeightSubmission).order_by(WeightSubmission.id))).all())

    # -- housekeeping ---------------------------------------------------------------------------

    async def prune_raw_outputs(self, older_than: timedelta, now: datetime | None = None) -> int:
        """Drop raw outputs and decoded calls older than ``older_than``; verdicts and scores stay."""
        cutoff = (now or utcnow()) - older_than
        async with self.sessions.begin() as session:
            result = await session.execute(
                update(ResponseRecord)
                .where(ResponseRecord.created_at < cutoff, ResponseRecord.raw_output.is_not(None))
                .values(raw_output=None, decoded_calls=None)
            )
            return int(getattr(result, "rowcount", 0) or 0)
