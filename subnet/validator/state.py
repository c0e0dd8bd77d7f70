"""Score-state arithmetic: a round's per-hotkey summary, the moving average, and weights from it.

Pure functions, no I/O: the store applies them inside its transactions, the
weights job maps standings to chain weights with them.

The weight mapping (also in docs/validator.md): a hotkey is eligible when it is
on the metagraph now (under the uid it holds now), is not excluded (validators,
this validator), and rests on at least ``min_samples`` scored responses. Its raw
weight is ``((average - floor) / (1 - floor)) ** power`` when its moving average
is above ``floor``, else nothing; raw weights are then normalised to sum to 1.

The floor (0.4) sits above what a miner earns by never calling a tool (the
no-call tasks, irrelevance and missing_param, are 30% of the default mix and
are right for it) plus the partial credit of well-formed but wrong answers, so
garbage and relayed answers (which carry another miner's surface names) earn
nothing. The power (2) widens the gap between good and merely fair miners.
When nobody qualifies no weights are set: nothing goes to a fixed owner hotkey.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from tasks.catalog import episode_category_names


@dataclass(frozen=True)
class ScoredResponse:
    """What the state math needs from one stored response."""

    hotkey: str
    uid: int
    category: str
    valid: bool
    score: float
    error_type: str | None = None


#: The categories of multi-turn episodes, from their registry (tasks.episodes.EPISODE_CATEGORIES;
#: BFCL's multi-turn entries use the same names): a round's episodes weigh half of its score, its
#: single-turn tasks the other half. Reading it imports the task generator's modules, not the
#: episodes' environments nor BFCL's package.
EPISODE_CATEGORIES: frozenset[str] = episode_category_names()
#: The share of a round's score that its episodes carry, when it has both kinds.
EPISODE_WEIGHT = 0.5
#: A miner that attempts a forbidden action in an episode scores 0 for the whole round.
UNSAFE_ERROR = "multi_turn:unsafe"


@dataclass
class RoundSummary:
    """One hotkey's results in one round."""

    hotkey: str
    uid: int
    total: int = 0
    valid: int = 0
    score_sum: float = 0.0
    by_category: dict[str, tuple[int, int, float]] = field(default_factory=dict)
    episode_total: int = 0
    episode_score_sum: float = 0.0
    unsafe: bool = False

    @property
    def mean_score(self) -> float:
        """The round's score: tasks and episodes weigh half each (either alone: all of it); 0
        when the miner attempted a forbidden action."""
        if self.unsafe or not self.total:
            return 0.0
        tasks = self.total - self.episode_total
        if not self.episode_total:
            return self.score_sum / self.total
        episode_mean = self.episode_score_sum / self.episode_total
        if not tasks:
            return episode_mean
        task_mean = (self.score_sum - self.episode_score_sum) / tasks
        return (1.0 - EPISODE_WEIGHT) * task_mean + EPISODE_WEIGHT * episode_mean


def summarise_round(responses: Iterable[ScoredResponse]) -> dict[str, RoundSummary]:
    summaries: dict[str, RoundSummary] = {}
    for response in responses:
        summary = summaries.setdefault(response.hotkey, RoundSummary(response.hotkey, response.uid))
        score = min(max(response.score, 0.0), 1.0)
        summary.total += 1
        summary.valid += int(response.valid)
        summary.score_sum += score
        if response.category in EPISODE_CATEGORIES:
            summary.episode_total += 1
            summary.episode_score_sum += score
            summary.unsafe = summary.unsafe or response.error_type == UNSAFE_ERROR
        total, valid, score_sum = summary.by_category.get(response.category, (0, 0, 0.0))
        summary.by_category[response.category] = (total + 1, valid + int(response.valid), score_sum + score)
    return summaries


def update_moving_average(previous: float, observation: float, alpha: float) -> float:
    """Exponential moving average; a new hotkey starts from 0, so trust is earned over rounds."""
    if not 0.0 < alpha <= 1.0:
        raise ValueError(f"alpha must be in (0, 1], got {alpha}")
    return alpha * observation + (1.0 - alpha) * previous


@dataclass(frozen=True)
class Standing:
    """A hotkey's persisted standing, as the weight mapping sees it."""

    hotkey: str
    moving_average: float
    responses_total: int


@dataclass(frozen=True)
class WeightPolicy:
    floor: float = 0.4
    power: float = 2.0
    min_samples: int = 8

    def raw_weight(self, standing: Standing) -> float:
        if standing.responses_total < self.min_samples or standing.moving_average <= self.floor:
            return 0.0
        return ((standing.moving_average - self.floor) / (1.0 - self.floor)) ** self.power


def why_no_weights(
    standings: Iterable[Standing],
    uid_of_hotkey: Mapping[str, int],
    policy: WeightPolicy,
    excluded_hotkeys: frozenset[str] = frozenset(),
) -> str:
    """Why no hotkey qualifies for weight, in one line an operator can act on: how many miners
    are still short of --scoring.min_samples answers and how many are at or below the floor
    (with the best moving average), e.g. "2 miners below the floor 0.40: best 0.048"."""
    miners = [
        standing
        for standing in standings
        if standing.hotkey in uid_of_hotkey and standing.hotkey not in excluded_hotkeys
    ]
    if not miners:
        return "no miner on the metagraph has been scored yet"
    few = [s for s in miners if s.responses_total < policy.min_samples]
    low = [s for s in miners if s.responses_total >= policy.min_samples and s.moving_average <= policy.floor]
    parts = []
    if few:
        most = max(s.responses_total for s in few)
        flag = f"--scoring.min_samples; most {most}"
        parts.append(f"{_miners(len(few))} with fewer than {policy.min_samples} answers ({flag})")
    if low:
        best = max(s.moving_average for s in low)
        parts.append(
            f"{_miners(len(low))} below the floor {policy.floor:.2f} (--weights.floor): best {best:.3f}"
        )
    return "; ".join(parts) or "no miner qualifies"


def _miners(count: int) -> str:
    return f"{count} miner{'s' if count != 1 else ''}"


def compute_weights(
    standings: Iterable[Standing],
    uid_of_hotkey: Mapping[str, int],
    policy: WeightPolicy,
    excluded_hotkeys: frozenset[str] = frozenset(),
) -> dict[int, float]:
    """Normalised weights by current uid; empty when nobody qualifies."""
    raw: dict[int, float] = {}
    for standing in standings:
        uid = uid_of_hotkey.get(standing.hotkey)
        if uid is None or standing.hotkey in excluded_hotkeys:
            continue
        weight = policy.raw_weight(standing)
        if weight > 0.0:
            raw[uid] = raw.get(uid, 0.0) + weight
    total = sum(raw.values())
    if total <= 0.0:
        return {}
    return {uid: weight / total for uid, weight in sorted(raw.items())}
