"""The dashboard's page of one miner's transcript of one episode: ``/episode?round=N&task=KEY&hotkey=HK``.

It shows the episode as the validator generated it (category, environment, each turn's user
message, offered tools and reference plan), then what the miner did, turn by turn (each step's
text, or its calls with their arguments and the observations the environment returned, the
refused unsafe ones marked, latency), and the verdict (valid, error type, score).

Only finished rounds (``scored`` or ``discarded``) are read, in the SQL itself, as everywhere in
the dashboard: a running round's episodes would hand its answers to miners still playing them.
The parameters are checked before anything is read; a malformed one and a round, episode or
miner that is not there all answer the same 404. Everything a miner wrote goes through
:func:`~subnet.validator.dashboard.element` (escaped) and is bounded: each string is cut at
``DashboardLimits.transcript_chars``, at most ``transcript_steps`` steps and
``transcript_calls_per_step`` calls per step are shown, and the page's text as a whole stays
under ``transcript_budget_chars``; the page says where it cut.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

from aiohttp import web
from multidict import MultiMapping
from sqlalchemy import select

from subnet.db import ResponseRecord, Round, TaskRecord
from subnet.validator.dashboard import (
    FINISHED_STATUSES,
    DashboardLimits,
    DashboardReader,
    Html,
    SampleAnswer,
    SampleTask,
    element,
    episode_href,
    html_document,
)
from subnet.validator.state import EPISODE_CATEGORIES
from tasks.categories import category_title

__all__ = [
    "EPISODE_STYLESHEET",
    "EpisodeQuery",
    "EpisodeRecord",
    "episode_page_handler",
    "episode_sample",
    "parse_episode_query",
    "read_episode",
    "render_episode_page",
]

log = logging.getLogger(__name__)

# What a parameter may look like: a round number, an episode's key (``episode-<category>-<hex>``,
# BFCL's ``multi_turn_base_12``), an SS58 hotkey. Anything else is a 404 without a query.
_ROUND = re.compile(r"[0-9]{1,12}")
_TASK_KEY = re.compile(r"[A-Za-z0-9_.:\-]{1,128}")
_HOTKEY = re.compile(r"[A-Za-z0-9]{1,64}")
# Episode pages read at once at most; more wait (each is one bounded query and a render).
CONCURRENT_READS = 2
# The episode's own (validator-made) lists: turns, offered tools and reference calls shown.
MAX_TURNS = 32
MAX_TOOLS = 64
MAX_PLAN_CALLS = 32

EPISODE_STYLESHEET = """
a.transcript { white-space: nowrap; }
th .episode-category { color: #5b3a99; display: inline-block; white-space: normal; max-width: 8em; }
section.turn { border-left: 3px solid var(--line); padding: 2px 0 2px 12px; margin: 10px 0; }
section.turn h3 { font-size: 15px; margin: 4px 0; }
ol.steps, ol.plan { padding-left: 22px; margin: 4px 0; }
ol.steps > li { margin: 8px 0; }
.unsafe { color: #b3261e; font-weight: 600; }
.cut { color: #8a5a00; font-style: italic; }
dl.about { display: grid; grid-template-columns: max-content 1fr; gap: 2px 14px; margin: 6px 0; }
dl.about dt { color: var(--muted); }
dl.about dd { margin: 0; }
"""


@dataclass(frozen=True)
class EpisodeQuery:
    round_number: int
    task_key: str
    hotkey: str


def parse_episode_query(query: MultiMapping[str]) -> EpisodeQuery | None:
    """The page's three parameters, each given once and well-formed; None otherwise."""
    values: dict[str, str] = {}
    for name, pattern in (("round", _ROUND), ("task", _TASK_KEY), ("hotkey", _HOTKEY)):
        given = query.getall(name, [])
        if len(given) != 1 or not isinstance(given[0], str) or not pattern.fullmatch(given[0]):
            return None
        values[name] = given[0]
    return EpisodeQuery(int(values["round"]), values["task"], values["hotkey"])


@dataclass(frozen=True)
class EpisodeRecord:
    """One miner's stored result for one episode of a finished round, with the episode itself."""

    round_number: int
    round_status: str
    task_key: str
    category: str
    payload: Any  # Episode.to_dict() as generated (before the miner's variant)
    hotkey: str
    uid: int
    status: str
    valid: bool
    score: float
    error_type: str
    error: str
    latency_s: float
    transcript: Any  # see subnet.validator.episodes; None when nothing was stored


async def read_episode(reader: DashboardReader, query: EpisodeQuery) -> EpisodeRecord | None:
    """The row, if the round is finished, the key is one of its episodes and the hotkey answered it."""
    async with reader.reading() as connection:
        row = (
            await connection.execute(
                select(
                    Round.number,
                    Round.status,
                    TaskRecord.task_key,
                    TaskRecord.category,
                    TaskRecord.payload,
                    ResponseRecord.hotkey,
                    ResponseRecord.uid,
                    ResponseRecord.status.label("response_status"),
                    ResponseRecord.valid,
                    ResponseRecord.score,
                    ResponseRecord.error_type,
                    ResponseRecord.error,
                    ResponseRecord.latency_s,
                    ResponseRecord.transcript,
                )
                .join(TaskRecord, TaskRecord.round_id == Round.id)
                .join(
                    ResponseRecord,
                    (ResponseRecord.task_id == TaskRecord.id) & (ResponseRecord.round_id == Round.id),
                )
                .where(
                    Round.number == query.round_number,
                    # Never a running (or collected) round's episodes: checked in the query itself.
                    Round.status.in_(FINISHED_STATUSES),
                    TaskRecord.task_key == query.task_key,
                    TaskRecord.category.in_(sorted(EPISODE_CATEGORIES)),
                    ResponseRecord.hotkey == query.hotkey,
                )
                .limit(1)
            )
        ).first()
    if row is None:
        return None
    return EpisodeRecord(
        round_number=int(row.number),
        round_status=str(row.status),
        task_key=str(row.task_key),
        category=str(row.category),
        payload=row.payload,
        hotkey=str(row.hotkey),
        uid=int(row.uid),
        status=str(row.response_status),
        valid=bool(row.valid),
        score=float(row.score),
        error_type=str(row.error_type or ""),
        error=str(row.error or ""),
        latency_s=float(row.latency_s or 0.0),
        transcript=row.transcript,
    )


def episode_sample(
    round_number: int,
    round_status: str,
    task_key: str,
    category: str,
    payload: Any,
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
        prompt=_clip(str(first.get("user", "")), limits.prompt_chars),
        tool_names=[str(name) for name in (first.get("tools") or [])][:MAX_TOOLS],
        expected=f"reference plan: {plan_calls} calls over {len(turns)} turns",
        answers=[
            replace(answer, transcript_href=episode_href(round_number, task_key, answer.hotkey))
            for answer in answers
        ],
        environment=_clip(str(episode.get("environment", "")), 64),
        turns=len(turns),
    )


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


# -- rendering, bounded ------------------------------------------------------------------------


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _as_text(value: Any) -> str:
    """A stored value as text: strings as they are, anything else as JSON."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError, RecursionError):
        return repr(type(value))


class _Budget:
    """Cuts each text at ``per_text`` characters and all of them together at ``total``."""

    def __init__(self, per_text: int, total: int) -> None:
        self.per_text = per_text
        self.left = total
        self.cuts = 0

    @property
    def spent(self) -> bool:
        return self.left <= 0

    def clip(self, value: Any, limit: int | None = None) -> tuple[str, Html | None]:
        """``value`` as text, cut where needed, and a note saying how much was left out (or None)."""
        text = value if isinstance(value, str) else _as_text(value)
        cap = max(0, min(limit or self.per_text, self.per_text, self.left))
        shown = text[:cap]
        self.left -= len(shown)
        if len(shown) == len(text):
            return shown, None
        self.cuts += 1
        note = f"… cut: {len(text):,} characters, the first {len(shown):,} shown"
        return shown, element("span", note, class_="cut")

    def text(self, value: Any, limit: int | None = None) -> Html:
        """``value`` as escaped text, cut where needed, the note after it."""
        shown, note = self.clip(value, limit)
        return element("span", shown, " ", note) if note else element("span", shown)

    def pre(self, value: Any, limit: int | None = None) -> Html:
        """``value`` in a scrolling block, cut where needed, the note under it (not hidden in the scroll)."""
        shown, note = self.clip(value, limit)
        block = element("pre", shown, class_="raw")
        return element("div", block, note) if note else block


def _about(*pairs: tuple[str, object]) -> Html:
    return element(
        "dl",
        *(part for key, value in pairs for part in (element("dt", key), element("dd", value))),
        class_="about",
    )


def _plan_html(plan: Any, budget: _Budget) -> Html:
    calls = [call for call in plan if isinstance(call, dict)] if isinstance(plan, list) else []
    if not calls:
        return element(
            "span", "no call: the right answer is text (a question, or saying it cannot)", class_="muted"
        )
    items = [
        element(
            "li",
            element("code", budget.text(call.get("name", "?"), 200)),
            " ",
            element("code", budget.text(call.get("arguments", {}), 1000)),
        )
        for call in calls[:MAX_PLAN_CALLS]
    ]
    more = len(calls) - MAX_PLAN_CALLS
    if more > 0:
        items.append(element("li", f"… {more} more calls not shown", class_="cut"))
    return element("ol", *items, class_="plan")


def _episode_html(record: EpisodeRecord, budget: _Budget) -> Html:
    episode = record.payload if isinstance(record.payload, dict) else {}
    turns = [turn for turn in episode.get("turns") or [] if isinstance(turn, dict)]
    forbidden = [str(item) for item in episode.get("forbidden") or []]
    facts: list[tuple[str, object]] = [
        ("episode", element("code", record.task_key)),
        (
            "category",
            element(
                "span", category_title(record.category), " ", element("code", record.category, class_="muted")
            ),
        ),
        ("environment", budget.text(episode.get("environment", "?"), 64)),
        ("size", budget.text(episode.get("size", "?"), 32)),
        ("source", budget.text(episode.get("source", "?"), 64)),
        ("steps per turn", budget.text(episode.get("step_cap", "?"), 32)),
        ("turns", len(turns)),
        ("forbidden", budget.text("; ".join(forbidden) or "nothing beyond the environment's rules")),
    ]
    cut = episode.get("cut")
    plan = [call for turn in turns for call in _list(turn.get("plan")) if isinstance(call, dict)]
    if record.category == "agent_step" and isinstance(cut, int) and 0 <= cut < len(plan):
        # The conversation is cut before this call of the reference plan: the one to predict.
        predicted = element(
            "span",
            element("code", budget.text(plan[cut].get("name", "?"), 200)),
            " ",
            element("code", budget.text(plan[cut].get("arguments", {}), 1000)),
            element("span", f" (call {cut + 1} of the reference plan)", class_="muted"),
        )
        facts.append(("the call to predict", predicted))
    sections = []
    for index, turn in enumerate(turns[:MAX_TURNS]):
        tools = [str(name) for name in turn.get("tools") or []]
        needed = turn.get("needed") or []
        sections.append(
            element(
                "section",
                element("h3", f"Turn {index + 1}"),
                element("p", element("strong", "user: "), budget.text(turn.get("user", ""))),
                element(
                    "p",
                    element("strong", "tools offered: "),
                    budget.text(", ".join(tools[:MAX_TOOLS]) or "none", 2000),
                ),
                element("div", element("strong", "reference plan: "), _plan_html(turn.get("plan"), budget)),
                element("p", element("strong", "the user asked to be told: "), budget.text(needed, 500))
                if needed
                else "",
                class_="turn",
                data_turn=index + 1,
            )
        )
    if len(turns) > MAX_TURNS:
        sections.append(element("p", f"… {len(turns) - MAX_TURNS} more turns not shown", class_="cut"))
    return element(
        "section",
        element("h2", "The episode"),
        _about(*facts),
        element(
            "p",
            "As generated for the round. The miner played its own variant, with the tools (and "
            "their parameters) renamed, so the names in its calls differ from these.",
            class_="muted",
        ),
        *sections,
        id="episode",
    )


def _verdict_html(record: EpisodeRecord, budget: _Budget) -> Html:
    transcript = record.transcript if isinstance(record.transcript, dict) else {}
    requests = transcript.get("request_digests")
    verdict = element(
        "span",
        "valid" if record.valid else (record.error_type or "invalid"),
        class_="valid" if record.valid else "invalid",
    )
    facts: list[tuple[str, object]] = [
        (
            "miner",
            element(
                "span",
                element("code", record.hotkey),
                " ",
                element("span", f"uid {record.uid}", class_="muted"),
            ),
        ),
        ("verdict", verdict),
        ("score", f"{record.score:.3f}"),
        ("status", record.status),
        ("time", f"{record.latency_s:.2f} s in all"),
    ]
    if isinstance(requests, list):
        facts.append(("requests", len(requests)))
    if record.error:
        facts.append(("error", budget.text(record.error, 1000)))
    return element("section", element("h2", "Verdict"), _about(*facts), id="verdict")


def _call_row(index: int, call: Any, budget: _Budget) -> Html:
    if not isinstance(call, dict):
        return element("tr", element("td", index), element("td", budget.text(call, 500), colspan=5))
    marks: list[object] = []
    if call.get("unsafe"):
        marks.append(element("div", "unsafe: ", budget.text(call["unsafe"], 300), class_="unsafe"))
    if call.get("mutates"):
        marks.append(element("div", "changes state", class_="muted"))
    env_name = call.get("env_name")
    return element(
        "tr",
        element("td", index, class_="num"),
        element("td", element("code", budget.text(call.get("name", "?"), 200))),
        element(
            "td",
            element("code", budget.text(env_name, 200))
            if env_name
            else element("span", "not run", class_="muted"),
        ),
        element("td", element("code", budget.text(call.get("arguments"), 1000))),
        element("td", budget.pre(call.get("observation"), 1500)),
        element("td", *marks),
        class_="unsafe-call" if call.get("unsafe") else None,
    )


def _step_html(number: int, step: Any, limits: DashboardLimits, budget: _Budget) -> Html:
    if not isinstance(step, dict):
        return element("li", budget.text(step, 500))
    latency = step.get("latency_s")
    head: list[object] = [element("strong", f"step {number}")]
    if isinstance(latency, int | float):
        head.append(f" · {float(latency):.2f} s")
    parts: list[object] = [element("div", *head)]
    if step.get("error"):
        parts.append(
            element("p", element("span", "failed: ", budget.text(step["error"], 500), class_="invalid"))
        )
    calls = _list(step.get("calls"))
    if calls:
        shown = calls[: limits.transcript_calls_per_step]
        rows = [_call_row(index, call, budget) for index, call in enumerate(shown, start=1)]
        parts.append(
            element(
                "table",
                element(
                    "thead",
                    element(
                        "tr",
                        *(
                            element("th", title, scope="col")
                            for title in (
                                "#",
                                "call (the miner's names)",
                                "tool run",
                                "arguments",
                                "observation",
                                "",
                            )
                        ),
                    ),
                ),
                element("tbody", *rows),
                class_="calls",
            )
        )
        if len(calls) > len(shown):
            parts.append(element("p", f"… {len(calls) - len(shown)} more calls not shown", class_="cut"))
        if step.get("answer") is not None:
            parts.append(
                element("details", element("summary", "raw answer"), budget.pre(step["answer"], 1000))
            )
    else:
        text = step.get("text")
        if text is None or text == "":
            text = step.get("answer")
        if text is not None and text != "":
            parts.append(element("div", element("span", "text: ", class_="muted"), budget.pre(text)))
        elif not step.get("error"):
            parts.append(element("p", "(empty answer)", class_="muted"))
    return element("li", *parts, data_step=number)


def _turns_html(turns: list[Any], limits: DashboardLimits, budget: _Budget) -> list[Html]:
    sections: list[Html] = []
    steps_left = limits.transcript_steps
    hidden_steps = hidden_turns = 0
    for index, turn in enumerate(turns):
        if not isinstance(turn, dict):
            continue
        steps = _list(turn.get("steps"))
        if steps_left <= 0 or budget.spent or index >= MAX_TURNS:
            hidden_turns += 1
            hidden_steps += len(steps)
            continue
        shown: list[Html] = []
        for number, step in enumerate(steps, start=1):
            if steps_left <= 0 or budget.spent:
                hidden_steps += len(steps) - number + 1
                break
            shown.append(_step_html(number, step, limits, budget))
            steps_left -= 1
        ended = str(turn.get("ended", "?"))
        state = turn.get("state")
        sections.append(
            element(
                "section",
                element(
                    "h3",
                    f"Turn {index + 1} · {len(steps)} step{'' if len(steps) == 1 else 's'} · ended: ",
                    element("span", ended, class_="valid" if ended == "text" else "invalid"),
                ),
                element("ol", *shown, class_="steps") if shown else element("p", "no step", class_="muted"),
                element(
                    "details", element("summary", "environment state after the turn"), budget.pre(state, 1500)
                )
                if state
                else "",
                class_="turn",
                data_turn=index + 1,
            )
        )
    if hidden_steps or hidden_turns:
        reason = (
            "page size limit reached"
            if budget.spent
            else f"the page shows at most {limits.transcript_steps} steps"
        )
        sections.append(
            element(
                "p",
                f"… {hidden_steps} more steps"
                + (f" in {hidden_turns} more turns" if hidden_turns else "")
                + f" not shown ({reason}).",
                class_="cut",
                id="steps-cut",
            )
        )
    return sections


def _transcript_html(record: EpisodeRecord, limits: DashboardLimits, budget: _Budget) -> Html:
    transcript = record.transcript
    parts: list[object] = [element("h2", "What the miner did")]
    if not isinstance(transcript, dict):
        parts.append(element("p", "No transcript was stored for this answer.", class_="empty"))
    elif transcript.get("truncated"):
        text = transcript.get("text", "")
        parts.append(
            element(
                "p",
                "The transcript was over the validator's size cap, so only the start of its JSON was "
                f"stored ({len(str(text)):,} characters):",
                class_="cut",
            )
        )
        parts.append(budget.pre(text))
    elif "agent_step" in transcript:
        step = transcript.get("agent_step")
        answer = step.get("answer") if isinstance(step, dict) else None
        parts.append(
            element(
                "p",
                "One step: the miner's answer to the conversation cut before the predicted call.",
                class_="muted",
            )
        )
        parts.append(
            budget.pre(answer) if answer is not None else element("p", "(no answer)", class_="muted")
        )
    else:
        turns = _list(transcript.get("turns"))
        parts.extend(
            _turns_html(turns, limits, budget) or [element("p", "No turn was played.", class_="empty")]
        )
        if transcript.get("failed"):
            parts.append(
                element(
                    "p",
                    element(
                        "span", "play stopped: ", budget.text(transcript["failed"], 500), class_="invalid"
                    ),
                )
            )
    if budget.cuts:
        texts = "1 text on this page was" if budget.cuts == 1 else f"{budget.cuts} texts on this page were"
        parts.append(element("p", f"{texts} cut to keep it small.", class_="cut"))
    return element("section", *parts, id="transcript")


def render_episode_page(record: EpisodeRecord, limits: DashboardLimits) -> str:
    budget = _Budget(limits.transcript_chars, limits.transcript_budget_chars)
    # The miner's part first, so that the budget goes to it rather than to the episode's text.
    transcript = _transcript_html(record, limits, budget)
    verdict = _verdict_html(record, budget)
    # The episode is the validator's own text: a budget of its own, a quarter of the miner's.
    episode = _episode_html(record, _Budget(limits.transcript_chars, limits.transcript_budget_chars // 4))
    title = f"Episode {record.task_key}, round {record.round_number}"
    where = f" · round {record.round_number} ({record.round_status}) · {category_title(record.category)} · "
    body = element(
        "body",
        element(
            "header",
            element("h1", "Episode transcript"),
            element(
                "p",
                element("a", "← dashboard", href="/"),
                where,
                element("code", record.task_key),
                class_="muted",
            ),
        ),
        element("main", verdict, episode, transcript),
    )
    return html_document(title, body)


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def episode_page_handler(reader: DashboardReader) -> Handler:
    """``GET /episode``: 404 for a malformed parameter, a running round, an unknown episode or miner."""
    gate = asyncio.Semaphore(CONCURRENT_READS)
    not_found = "no finished episode with that round, task and hotkey"

    async def handle(request: web.Request) -> web.StreamResponse:
        query = parse_episode_query(request.query)
        if query is None:
            raise web.HTTPNotFound(text=not_found)
        async with gate:
            try:
                record = await read_episode(reader, query)
            except Exception as exc:
                log.warning("dashboard could not read an episode: %s", exc)
                raise web.HTTPServiceUnavailable(
                    text="the validator's database cannot be read right now"
                ) from None
        if record is None:
            raise web.HTTPNotFound(text=not_found)
        page = render_episode_page(record, reader.limits)
        return web.Response(text=page, content_type="text/html", charset="utf-8")

    return handle
