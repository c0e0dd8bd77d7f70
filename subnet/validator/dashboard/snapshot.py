"""What the dashboard's front page shows: plain data, built by the reader, drawn by the templates.

Also the bounds on every read (:class:`DashboardLimits`) and the small pure helpers that turn a
stored row into what a page shows (a task's prompt and tools, an episode's summary, a round's
phrasing record in words).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, replace
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from scoring.schema import function_of
from subnet.db import RoundStatus
from subnet.registry import engine_rewrites
from subnet.validator.dashboard.chart import Chart
from subnet.validator.state import EPISODE_CATEGORIES
from subnet.validator.transcripts import EpisodeTranscript
from subnet.validator.weights import WeightsOutcome
from tasks.catalog import order_categories  # the categories' registry

# A round's tasks and answers become visible only in these states.
FINISHED_STATUSES: tuple[str, ...] = (RoundStatus.SCORED.value, RoundStatus.DISCARDED.value)

EPISODE_PATH = "/episode"
# The episode's own (validator-made) lists: offered tools shown.
MAX_TOOLS = 64


def episode_href(round_number: int, task_key: str, hotkey: str) -> str:
    """The address of one miner's transcript of one episode (served by episode.py)."""
    return f"{EPISODE_PATH}?{urlencode({'round': round_number, 'task': task_key, 'hotkey': hotkey})}"


@dataclass(frozen=True)
class DashboardLimits:
    """Bounds on every query the dashboard makes, so a page costs the same on day one and day 300."""

    leaderboard_rows: int = 256
    recent_rounds: int = 20
    history_rounds: int = 60  # scored rounds replayed for the moving-average chart
    latency_rounds: int = 10  # scored rounds the latency median is taken over
    latency_samples: int = 50_000
    weight_submissions: int = 60
    weight_rows: int = 10  # attempts listed in the table
    sample_rounds: int = 3  # finished rounds whose tasks and answers are shown
    sample_tasks_per_round: int = 3
    sample_episodes_per_round: int = 2  # and their multi-turn episodes, each answer linking its transcript
    answers_per_task: int = 8
    raw_output_chars: int = 600
    prompt_chars: int = 600
    # An episode's page (episode.py): each miner-written string cut at this many characters, at
    # most this many steps and calls per step shown, and all of its miner text together held
    # under a budget.
    transcript_chars: int = 2000
    transcript_steps: int = 40
    transcript_calls_per_step: int = 16
    transcript_budget_chars: int = 200_000
    chart_series: int = 8  # hotkeys drawn in the charts (the leaderboard's top ones)
    cache_seconds: float = 5.0


@dataclass(frozen=True)
class LeaderboardRow:
    rank: int
    hotkey: str
    uid: int
    moving_average: float
    rounds_scored: int
    responses: int
    valid_rate: float | None
    category_accuracy: dict[str, float]
    latency_p50_s: float | None
    weight: float | None


@dataclass(frozen=True)
class CategoryRow:
    category: str
    total: int
    valid: int
    mean_score: float

    @property
    def accuracy(self) -> float | None:
        return self.valid / self.total if self.total else None

    @property
    def is_episode(self) -> bool:
        return self.category in EPISODE_CATEGORIES


@dataclass(frozen=True)
class RoundRow:
    number: int
    status: str
    block: int
    n_tasks: int
    n_miners: int
    started_at: datetime | None
    finished_at: datetime | None
    note: str
    # Where the requests miners read came from: "templates", "openai: 8 of 8 phrased, ...", "" (not recorded).
    requests: str
    responses: int | None  # None while the round runs: nothing about it is shown yet
    valid: int | None
    mean_score: float | None


@dataclass(frozen=True)
class SampleAnswer:
    hotkey: str
    uid: int
    status: str
    valid: bool
    score: float
    error_type: str
    latency_s: float
    raw_output: str | None  # None once pruned
    truncated: bool
    transcript_href: str | None = None  # an episode's answer: the page of its transcript


@dataclass(frozen=True)
class SampleTask:
    round_number: int
    round_status: str
    task_key: str
    category: str
    prompt: str
    tool_names: list[str]
    expected: str
    answers: list[SampleAnswer]
    environment: str = ""  # an episode's environment; "" for a single-turn task
    turns: int = 0  # an episode's user turns

    @property
    def is_episode(self) -> bool:
        return self.category in EPISODE_CATEGORIES


@dataclass(frozen=True)
class WeightRow:
    attempted_at: datetime | None
    block: int | None
    outcome: str
    n_uids: int
    message: str

    @property
    def accepted(self) -> bool:
        return self.outcome == WeightsOutcome.OK


@dataclass(frozen=True)
class Snapshot:
    generated_at: datetime
    alpha: float
    leaderboard: list[LeaderboardRow]
    categories: list[CategoryRow]
    rounds: list[RoundRow]
    samples: list[SampleTask]
    weights: list[WeightRow]
    moving_average_chart: Chart
    weight_chart: Chart

    @property
    def category_names(self) -> list[str]:
        return order_categories({name for row in self.leaderboard for name in row.category_accuracy})

    def leaderboard_json(self) -> dict[str, Any]:
        return {
            "generated_at": self.generated_at.isoformat(),
            "alpha": self.alpha,
            "rows": [asdict(row) for row in self.leaderboard],
            "categories": [{**asdict(row), "accuracy": row.accuracy} for row in self.categories],
            "last_weights": _weight_json(self.weights[0]) if self.weights else None,
        }


def _weight_json(row: WeightRow) -> dict[str, Any]:
    return {
        "attempted_at": row.attempted_at.isoformat() if row.attempted_at else None,
        "block": row.block,
        "outcome": row.outcome,
        "n_uids": row.n_uids,
    }


@dataclass(frozen=True)
class EpisodeQuery:
    """The episode page's parameters: which miner's answer to which episode of which round."""

    round_number: int
    task_key: str
    hotkey: str


@dataclass(frozen=True)
class EpisodeRecord:
    """One miner's stored result for one episode of a finished round, with the episode itself."""

    round_number: int
    round_status: str
    task_key: str
    category: str
    payload: object  # Episode.to_dict() as generated (before the miner's variant)
    hotkey: str
    uid: int
    status: str
    valid: bool
    score: float
    error_type: str
    error: str
    latency_s: float
    transcript: EpisodeTranscript | None  # None when nothing was stored


# -- from stored rows to what a page shows ------------------------------------------------------


def clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def prompt_of(payload: object, limit: int) -> tuple[str, list[str]]:
    """The last user message and the offered tool names of a stored task payload."""
    if not isinstance(payload, dict):
        return "", []
    prompt = ""
    for message in payload.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            prompt = content if isinstance(content, str) else json.dumps(content, default=str)
    names: list[str] = []
    for tool in payload.get("tools") or []:
        function = function_of(tool)
        if isinstance(function, dict) and isinstance(function.get("name"), str):
            names.append(function["name"])
    return clip(prompt, limit), names


def requests_text(phrasing: object) -> str:
    """What a round's phrasing record says, in a few words."""
    if not isinstance(phrasing, dict):
        return ""
    engine = str(phrasing.get("engine", "?"))
    if not engine_rewrites(engine):
        return "template text (no phrasing engine)"
    parts = [f"{engine}: {phrasing.get('phrased', 0)} of {phrasing.get('slots', 0)} phrased"]
    for key in ("retried", "dropped", "unfilled"):
        if phrasing.get(key):
            parts.append(f"{phrasing[key]} {key}")
    return ", ".join(parts)


def task_sample(
    round_number: int,
    round_status: str,
    task_key: str,
    category: str,
    payload: object,
    expected: object,
    answers: list[SampleAnswer],
    limits: DashboardLimits,
) -> SampleTask:
    """A single-turn task as the front page lists it: its prompt, tools and expected answer."""
    prompt, tool_names = prompt_of(payload, limits.prompt_chars)
    return SampleTask(
        round_number=round_number,
        round_status=round_status,
        task_key=task_key,
        category=category,
        prompt=prompt,
        tool_names=tool_names,
        expected=clip(json.dumps(expected, default=str), limits.prompt_chars),
        answers=answers,
    )


def episode_sample(
    round_number: int,
    round_status: str,
    task_key: str,
    category: str,
    payload: object,
    answers: list[SampleAnswer],
    limits: DashboardLimits,
) -> SampleTask:
    """An episode as the front page lists it: its first turn, and each answer linking its transcript."""
    episode = payload if isinstance(payload, dict) else {}
    turns = [turn for turn in episode.get("turns") or [] if isinstance(turn, dict)]
    first = turns[0] if turns else {}
    plan_calls = sum(len(turn.get("plan") or []) for turn in turns)
    return SampleTask(
        round_number=round_number,
        round_status=round_status,
        task_key=task_key,
        category=category,
        prompt=clip(str(first.get("user", "")), limits.prompt_chars),
        tool_names=[str(name) for name in (first.get("tools") or [])][:MAX_TOOLS],
        expected=f"reference plan: {plan_calls} calls over {len(turns)} turns",
        answers=[
            replace(answer, transcript_href=episode_href(round_number, task_key, answer.hotkey))
            for answer in answers
        ],
        environment=clip(str(episode.get("environment", "")), 64),
        turns=len(turns),
    )
