"""The page of one miner's transcript of one episode: ``/episode?round=N&task=KEY&hotkey=HK``.

It shows the episode as the validator generated it (category, environment, each turn's user
message, offered tools and reference plan), then what the miner did, turn by turn (each step's
text, or its calls with their arguments and the observations the environment returned, the
refused unsafe ones marked, latency), and the verdict (valid, error type, score).

Only finished rounds (``scored`` or ``discarded``) are read, in the SQL itself
(:func:`~subnet.validator.dashboard.reader.read_episode`), as everywhere in the dashboard: a
running round's episodes would hand its answers to miners still playing them. The parameters are
checked before anything is read; a malformed one and a round, episode or miner that is not there
all answer the same 404.

This module turns the stored record into :class:`EpisodePage`, plain data that
``templates/episode.html`` draws (autoescaped). Everything a miner wrote is bounded here, while
the page is built: each string is cut at ``DashboardLimits.transcript_chars``, at most
``transcript_steps`` steps and ``transcript_calls_per_step`` calls per step are shown, and the
page's text as a whole stays under ``transcript_budget_chars``; the page says where it cut.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace

from multidict import MultiMapping

from subnet.validator.dashboard.snapshot import MAX_TOOLS, DashboardLimits, EpisodeQuery, EpisodeRecord
from subnet.validator.transcripts import CallEntry, StepEntry, TurnEntry, Unreadable
from tasks.catalog import category_title

# What a parameter may look like: a round number, an episode's key (``episode-<category>-<hex>``,
# BFCL's ``multi_turn_base_12``), an SS58 hotkey. Anything else is a 404 without a query.
_ROUND = re.compile(r"[0-9]{1,12}")
_TASK_KEY = re.compile(r"[A-Za-z0-9_.:\-]{1,128}")
_HOTKEY = re.compile(r"[A-Za-z0-9]{1,64}")
# The episode's own (validator-made) lists: turns and reference calls shown (tools: MAX_TOOLS).
MAX_TURNS = 32
MAX_PLAN_CALLS = 32


def parse_episode_query(query: MultiMapping[str]) -> EpisodeQuery | None:
    """The page's three parameters, each given once and well-formed; None otherwise."""
    values: dict[str, str] = {}
    for name, pattern in (("round", _ROUND), ("task", _TASK_KEY), ("hotkey", _HOTKEY)):
        given = query.getall(name, [])
        if len(given) != 1 or not isinstance(given[0], str) or not pattern.fullmatch(given[0]):
            return None
        values[name] = given[0]
    return EpisodeQuery(int(values["round"]), values["task"], values["hotkey"])


# -- bounded text ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Clipped:
    """A stored value as text, cut where needed; ``note`` says how much was left out (None: nothing)."""

    text: str
    note: str | None = None


def _as_text(value: object) -> str:
    """A stored value as text: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(type(value))


def _list(value: object) -> list[object]:
    return value if isinstance(value, list) else []


class Budget:
    """Cuts each text at ``per_text`` characters and all of them together at ``total``."""

    def __init__(self, per_text: int, total: int) -> None:
        self.per_text = per_text
        self.left = total
        self.cuts = 0

    @property
    def spent(self) -> bool:
        return self.left <= 0

    def clip(self, value: object, limit: int | None = None) -> Clipped:
        text = value if isinstance(value, str) else _as_text(value)
        cap = max(0, min(limit or self.per_text, self.per_text, self.left))
        shown = text[:cap]
        self.left -= len(shown)
        if len(shown) == len(text):
            return Clipped(shown)
        self.cuts += 1
        return Clipped(shown, f"… cut: {len(text):,} characters, the first {len(shown):,} shown")


# -- the page as data -------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanCall:
    name: Clipped
    arguments: Clipped


@dataclass(frozen=True)
class Plan:
    calls: list[PlanCall]
    more: int  # calls not shown


@dataclass(frozen=True)
class EpisodeTurn:
    number: int
    user: Clipped
    tools: Clipped
    plan: Plan
    needed: Clipped | None


@dataclass(frozen=True)
class EpisodeView:
    """The episode as generated for the round (the validator's own text, on a budget of its own)."""

    task_key: str
    category: str
    category_title: str
    environment: Clipped
    size: Clipped
    source: Clipped
    step_cap: Clipped
    turn_count: int
    forbidden: Clipped
    predicted: PlanCall | None  # an agent_step: the call of the reference plan to predict
    predicted_number: int
    turns: list[EpisodeTurn]
    turns_more: int


@dataclass(frozen=True)
class CallView:
    index: int
    raw: Clipped | None = None  # not a call object: shown as text in one cell
    name: Clipped | None = None
    env_name: Clipped | None = None  # the tool actually run; None: not run
    arguments: Clipped | None = None
    observation: Clipped | None = None
    unsafe: Clipped | None = None
    mutates: bool = False


@dataclass(frozen=True)
class StepView:
    number: int
    raw: Clipped | None = None  # not a step object: shown as text
    latency_s: float | None = None
    error: Clipped | None = None
    calls: tuple[CallView, ...] = ()
    calls_more: int = 0
    answer: Clipped | None = None  # with calls: the raw answer, folded away
    text: Clipped | None = None  # without calls: what the miner wrote


@dataclass(frozen=True)
class TurnView:
    number: int
    step_count: int
    ended: str
    steps: list[StepView]
    state: Clipped | None


@dataclass(frozen=True)
class TranscriptView:
    kind: str  # "missing", "truncated", "agent_step" or "turns"
    stored_chars: int = 0  # a truncated transcript: the characters of JSON kept
    body: Clipped | None = None  # the truncated JSON, or the agent step's answer
    turns: tuple[TurnView, ...] = ()
    steps_cut: str = ""  # what was left out of the steps, and why
    failed: Clipped | None = None
    cuts: int = 0  # texts cut on the page


@dataclass(frozen=True)
class VerdictView:
    hotkey: str
    uid: int
    valid: bool
    verdict: str
    score: float
    status: str
    latency_s: float
    requests: int | None
    error: Clipped | None


@dataclass(frozen=True)
class EpisodePage:
    title: str
    round_number: int
    round_status: str
    task_key: str
    category_title: str
    verdict: VerdictView
    episode: EpisodeView
    transcript: TranscriptView


def episode_page(record: EpisodeRecord, limits: DashboardLimits) -> EpisodePage:
    """The page's data, every miner-written text cut to the limits."""
    budget = Budget(limits.transcript_chars, limits.transcript_budget_chars)
    # The miner's part first, so that the budget goes to it rather than to the episode's text.
    transcript = replace(_transcript(record, limits, budget), cuts=budget.cuts)
    verdict = _verdict(record, budget)
    # The episode is the validator's own text: a budget of its own, a quarter of the miner's.
    episode = _episode(record, Budget(limits.transcript_chars, limits.transcript_budget_chars // 4))
    return EpisodePage(
        title=f"Episode {record.task_key}, round {record.round_number}",
        round_number=record.round_number,
        round_status=record.round_status,
        task_key=record.task_key,
        category_title=category_title(record.category),
        verdict=verdict,
        episode=episode,
        transcript=transcript,
    )


def _plan(plan: object, budget: Budget) -> Plan:
    calls = [call for call in plan if isinstance(call, dict)] if isinstance(plan, list) else []
    shown = [
        PlanCall(budget.clip(call.get("name", "?"), 200), budget.clip(call.get("arguments", {}), 1000))
        for call in calls[:MAX_PLAN_CALLS]
    ]
    return Plan(shown, max(0, len(calls) - MAX_PLAN_CALLS))


def _episode(record: EpisodeRecord, budget: Budget) -> EpisodeView:
    episode = record.payload if isinstance(record.payload, dict) else {}
    turns = [turn for turn in episode.get("turns") or [] if isinstance(turn, dict)]
    forbidden = [str(item) for item in episode.get("forbidden") or []]
    environment = budget.clip(episode.get("environment", "?"), 64)
    size = budget.clip(episode.get("size", "?"), 32)
    source = budget.clip(episode.get("source", "?"), 64)
    step_cap = budget.clip(episode.get("step_cap", "?"), 32)
    forbidden_text = budget.clip("; ".join(forbidden) or "nothing beyond the environment's rules")
    cut = episode.get("cut")
    plan = [call for turn in turns for call in _list(turn.get("plan")) if isinstance(call, dict)]
    predicted = None
    if record.category == "agent_step" and isinstance(cut, int) and 0 <= cut < len(plan):
        # The conversation is cut before this call of the reference plan: the one to predict.
        predicted = PlanCall(
            budget.clip(plan[cut].get("name", "?"), 200), budget.clip(plan[cut].get("arguments", {}), 1000)
        )
    shown = []
    for index, turn in enumerate(turns[:MAX_TURNS]):
        tools = [str(name) for name in turn.get("tools") or []]
        needed = turn.get("needed") or []
        user = budget.clip(turn.get("user", ""))
        offered = budget.clip(", ".join(tools[:MAX_TOOLS]) or "none", 2000)
        turn_plan = _plan(turn.get("plan"), budget)
        shown.append(
            EpisodeTurn(index + 1, user, offered, turn_plan, budget.clip(needed, 500) if needed else None)
        )
    return EpisodeView(
        task_key=record.task_key,
        category=record.category,
        category_title=category_title(record.category),
        environment=environment,
        size=size,
        source=source,
        step_cap=step_cap,
        turn_count=len(turns),
        forbidden=forbidden_text,
        predicted=predicted,
        predicted_number=(cut + 1) if predicted is not None and isinstance(cut, int) else 0,
        turns=shown,
        turns_more=max(0, len(turns) - MAX_TURNS),
    )


def _verdict(record: EpisodeRecord, budget: Budget) -> VerdictView:
    requests = record.transcript.request_digests if record.transcript is not None else None
    return VerdictView(
        hotkey=record.hotkey,
        uid=record.uid,
        valid=record.valid,
        verdict="valid" if record.valid else (record.error_type or "invalid"),
        score=record.score,
        status=record.status,
        latency_s=record.latency_s,
        requests=len(requests) if requests is not None else None,
        error=budget.clip(record.error, 1000) if record.error else None,
    )


def _call(index: int, call: CallEntry | Unreadable, budget: Budget) -> CallView:
    if isinstance(call, Unreadable):
        return CallView(index, raw=budget.clip(call.value, 500))
    # The order the texts take from the budget: the mark, then the row's cells.
    unsafe = budget.clip(call.unsafe, 300) if call.unsafe else None
    name = budget.clip(call.name, 200)
    return CallView(
        index,
        name=name,
        env_name=budget.clip(call.env_name, 200) if call.env_name else None,
        arguments=budget.clip(call.arguments, 1000),
        observation=budget.clip(call.observation, 1500),
        unsafe=unsafe,
        mutates=call.mutates,
    )


def _step(number: int, step: StepEntry | Unreadable, limits: DashboardLimits, budget: Budget) -> StepView:
    if isinstance(step, Unreadable):
        return StepView(number, raw=budget.clip(step.value, 500))
    error = budget.clip(step.error, 500) if step.error else None
    if step.calls:
        shown = step.calls[: limits.transcript_calls_per_step]
        views = tuple(_call(index, call, budget) for index, call in enumerate(shown, start=1))
        return StepView(
            number,
            latency_s=step.latency_s,
            error=error,
            calls=views,
            calls_more=len(step.calls) - len(shown),
            answer=budget.clip(step.answer, 1000) if step.answer is not None else None,
        )
    text = step.text
    if text is None or text == "":
        text = step.answer
    return StepView(
        number,
        latency_s=step.latency_s,
        error=error,
        text=budget.clip(text) if text is not None and text != "" else None,
    )


def _turns(
    turns: tuple[TurnEntry | Unreadable, ...], limits: DashboardLimits, budget: Budget
) -> tuple[list[TurnView], str]:
    """The turns shown, and what was left out (or "")."""
    views: list[TurnView] = []
    steps_left = limits.transcript_steps
    hidden_steps = hidden_turns = 0
    for index, turn in enumerate(turns):
        if isinstance(turn, Unreadable):
            continue
        steps = turn.steps
        if steps_left <= 0 or budget.spent or index >= MAX_TURNS:
            hidden_turns += 1
            hidden_steps += len(steps)
            continue
        shown: list[StepView] = []
        for number, step in enumerate(steps, start=1):
            if steps_left <= 0 or budget.spent:
                hidden_steps += len(steps) - number + 1
                break
            shown.append(_step(number, step, limits, budget))
            steps_left -= 1
        views.append(
            TurnView(
                number=index + 1,
                step_count=len(steps),
                ended=turn.ended,
                steps=shown,
                state=budget.clip(turn.state, 1500) if turn.state else None,
            )
        )
    cut = ""
    if hidden_steps or hidden_turns:
        reason = (
            "page size limit reached"
            if budget.spent
            else f"the page shows at most {limits.transcript_steps} steps"
        )
        cut = (
            f"… {hidden_steps} more steps"
            + (f" in {hidden_turns} more turns" if hidden_turns else "")
            + f" not shown ({reason})."
        )
    return views, cut


def _transcript(record: EpisodeRecord, limits: DashboardLimits, budget: Budget) -> TranscriptView:
    transcript = record.transcript
    if transcript is None:
        return TranscriptView("missing")
    if transcript.truncated_text is not None:
        text = transcript.truncated_text
        return TranscriptView("truncated", stored_chars=len(text), body=budget.clip(text))
    if transcript.agent_step is not None:
        answer = transcript.agent_step.answer
        return TranscriptView("agent_step", body=budget.clip(answer) if answer is not None else None)
    turns, cut = _turns(transcript.turns, limits, budget)
    failed = transcript.failed
    return TranscriptView(
        "turns", turns=tuple(turns), steps_cut=cut, failed=budget.clip(failed, 500) if failed else None
    )
