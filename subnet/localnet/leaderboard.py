"""The final leaderboard: what the validator stored about each miner, and what the devchain made of it.

From the validator's database, read with the dashboard's queries
(``subnet.validator.dashboard.reader``): the moving-average score, answers valid
per category (the multi-turn episodes' categories after the single-turn ones), latency of the
single-turn answers. From the devchain: the weight the validator's row gives each miner, and
the incentive the epoch after those weights computed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy.ext.asyncio import AsyncEngine

from subnet.validator.dashboard.reader import (
    WeightAttempt,
    category_tallies,
    latency_medians,
    score_states,
    weight_attempts,
)
from tasks.catalog import category_label, order_categories

U16_MAX = 65535
LEGEND = (
    "score: the validator's moving average; valid and per-category: answers right / asked "
    "(irrel: no offered tool fits, miss-param: a required value is missing; both right without a call); "
    "mt-*: multi-turn episodes (base, missing parameter, missing function, long context) and "
    "agent-step: one step of an episode, each right when it passed as a whole; "
    "latency: median single-turn answer time; weight: the validator's weights on chain; "
    "incentive: the devchain's"
)


_SETUP_SUFFIX = {"off": "", "on": "+guided"}  # other --model.guided modes show as +mode


@dataclass(frozen=True)
class MinerInfo:
    """A miner of this localnet: its wallet name, keys and how it answers (output format, and
    its --model.guided mode)."""

    label: str
    hotkey: str
    uid: int
    format: str
    guided: str = "off"  # --model.guided
    endpoint: str | None = None  # an openai-backend miner: its engine's URL
    model: str | None = None  # and the model the engine serves

    @property
    def setup(self) -> str:
        """The format and the guided mode: ``hermes`` (off), ``json+guided`` (on),
        ``hermes+forced``, ``json+grounded``; for a miner in front of an engine, its model and URL."""
        if self.endpoint is not None:
            return f"{self.model} @ {self.endpoint}"
        return self.format + _SETUP_SUFFIX.get(self.guided, f"+{self.guided}")


@dataclass
class Row:
    miner: MinerInfo
    score: float | None = None  # moving average; None: never scored
    rounds: int = 0
    valid: int = 0
    total: int = 0
    categories: dict[str, tuple[int, int]] = field(default_factory=dict)  # category -> (valid, total)
    latency_s: float | None = None  # median over answered queries
    weight: float | None = None  # the validator's weight row on chain, normalised
    incentive: float | None = None  # devchain incentive, 0..1


@dataclass(frozen=True)
class ChainStanding:
    """What the devchain says after the epoch: the validator's weights and each uid's incentive."""

    block: int
    last_epoch_block: int
    weights: dict[int, float]
    incentives: dict[int, float]


def short_hotkey(hotkey: str) -> str:
    return f"{hotkey[:6]}…{hotkey[-4:]}" if len(hotkey) > 12 else hotkey


def normalised_row(row: Sequence[Sequence[int]]) -> dict[int, float]:
    """A chain weight row [(uid, u16), ...] as shares that sum to 1."""
    total = sum(int(value) for _, value in row)
    return {int(uid): int(value) / total for uid, value in row} if total else {}


def chain_standing(graph: Mapping[str, Any], weight_row: Sequence[Sequence[int]]) -> ChainStanding:
    """From the devchain's metagraph record and the validator's ``Weights`` row."""
    incentives = {uid: int(value) / U16_MAX for uid, value in enumerate(graph.get("incentives", []))}
    return ChainStanding(
        block=int(graph.get("block", 0)),
        last_epoch_block=int(graph.get("last_step", 0)),
        weights=normalised_row(weight_row),
        incentives=incentives,
    )


async def database_rows(engine: AsyncEngine, miners: Sequence[MinerInfo]) -> list[Row]:
    """One row per miner from the validator's tables (hotkey-keyed, as the validator stores them),
    read with the dashboard's queries."""
    hotkeys = [miner.hotkey for miner in miners]
    async with engine.connect() as connection:
        states = {state.hotkey: state for state in await score_states(connection, hotkeys=hotkeys)}
        categories = await category_tallies(connection, hotkeys)
        latencies = await latency_medians(connection, hotkeys)  # single-turn answers, every round
    rows = []
    for miner in miners:
        state = states.get(miner.hotkey)
        row = Row(miner, categories=categories.get(miner.hotkey, {}))
        if state is not None:
            row.score = state.moving_average
            row.rounds = state.rounds_scored
            row.valid, row.total = state.responses_valid, state.responses_total
        row.latency_s = latencies.get(miner.hotkey)
        rows.append(row)
    return rows


async def last_weights(engine: AsyncEngine, since_id: int = 0) -> tuple[WeightAttempt | None, list[str]]:
    """The validator's last accepted weight submission after ``since_id``, and the outcomes seen."""
    async with engine.connect() as connection:
        attempts = (await weight_attempts(connection, after_id=since_id))[::-1]  # oldest first
    accepted = [attempt for attempt in attempts if attempt.accepted]
    outcomes = [f"{a.outcome}{': ' + a.message if a.message else ''}" for a in attempts]
    return (accepted[-1] if accepted else None), outcomes


def with_chain(rows: Sequence[Row], chain: ChainStanding | None) -> list[Row]:
    for row in rows:
        if chain is not None:
            row.weight = chain.weights.get(row.miner.uid, 0.0)
            row.incentive = chain.incentives.get(row.miner.uid)
    return sorted(rows, key=lambda row: (-(row.score if row.score is not None else -1.0), row.miner.uid))


def _number(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def render(rows: Sequence[Row]) -> str:
    """A plain-text table, best score first; a category column per category any miner saw."""
    seen = order_categories(name for row in rows for name in row.categories)
    titles = ["#", "uid", "miner", "hotkey", "format", "score", "valid"]
    titles += [category_label(name) for name in seen]
    titles += ["latency", "weight", "incentive"]
    table = []
    for place, row in enumerate(rows, start=1):
        cells = [
            str(place),
            str(row.miner.uid),
            row.miner.label,
            short_hotkey(row.miner.hotkey),
            row.miner.setup,
            _number(row.score),
            f"{row.valid}/{row.total}",
        ]
        for name in seen:
            valid, total = row.categories.get(name, (0, 0))
            cells.append(f"{valid}/{total}" if total else "-")
        cells += [
            "-" if row.latency_s is None else f"{row.latency_s:.1f}s",
            _number(row.weight),
            _number(row.incentive),
        ]
        table.append(cells)
    widths = [max(len(title), *(len(cells[i]) for cells in table)) for i, title in enumerate(titles)]
    numeric = {0, 1, 5, *range(7 + len(seen), len(titles))}

    def line(cells: Sequence[str]) -> str:
        padded = [
            cell.rjust(width) if index in numeric else cell.ljust(width)
            for index, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(padded).rstrip()

    return "\n".join([line(titles), line(["-" * width for width in widths]), *(line(c) for c in table)])
