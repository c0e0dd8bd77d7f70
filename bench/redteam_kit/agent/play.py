"""The baselines beside the scripted agent, and playing and scoring any of them in-process as the validator
would.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from scoring import function_of
from scoring.checking import check
from tasks.episodes import Episode, agent_step, variant
from tasks.episodes.checking import check_episode
from tasks.episodes.runner import EpisodeRunner

from .. import load_sibling
from .agent import ScriptedAgent
from .tools import _map_tools, _mutating
from .values import _text, _tool_call


class NeverCallAgent:
    """Answers every step with a bland text: no call ever."""

    async def ask(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        return self.respond(messages, tools)

    def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        return _text("Okay.")


class CannotHelpAgent(NeverCallAgent):
    """Says it cannot help, every step (the abstention that must not pay)."""

    def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        return _text("I'm sorry, I cannot help with that.")


_FILLER = {"string": "x", "integer": 1, "number": 1, "boolean": True, "array": [], "object": {}}


class ReadEveryToolAgent:
    """Calls every offered tool that (as mapped back) changes nothing, once, with placeholder
    arguments, then stops in text: activity without understanding."""

    async def ask(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        return self.respond(messages, tools)

    def respond(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        env, shown = _map_tools(tools)
        mutating = {shown[name].name for name in _mutating(env) if name in shown}
        since_user = 0
        for message in reversed(messages):
            if message.get("role") == "user":
                break
            if message.get("role") == "assistant" and message.get("tool_calls"):
                since_user += 1
        readers = [function_of(tool) for tool in tools if function_of(tool).get("name") not in mutating]
        if since_user >= len(readers):
            return _text("Here is everything I could read.")
        function = readers[since_user]
        parameters = function.get("parameters") or {}
        properties = parameters.get("properties") or {}
        arguments = {
            name: _FILLER.get(str(properties.get(name, {}).get("type")), "x")
            for name in parameters.get("required") or ()
        }
        return _tool_call(str(function.get("name")), arguments, len(messages))


@dataclass
class EpisodeFigures:
    """Valid count, total and score sum per key (category, environment)."""

    rows: dict[tuple[str, str], list[float]] = field(default_factory=dict)
    kinds: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0

    def add(self, category: str, environment: str, valid: bool, score: float) -> None:
        row = self.rows.setdefault((category, environment), [0, 0, 0.0])
        row[0] += int(valid)
        row[1] += 1
        row[2] += score

    def total(self, keep: Callable[[str, str], bool] = lambda c, e: True) -> tuple[float, float, int]:
        """(valid share, mean score, episodes) over the rows ``keep`` accepts."""
        rows = [row for (c, e), row in self.rows.items() if keep(c, e)]
        count = int(sum(row[1] for row in rows))
        if not count:
            return 0.0, 0.0, 0
        return sum(row[0] for row in rows) / count, sum(row[2] for row in rows) / count, count


def _short(category: str) -> str:
    return category.removeprefix("multi_turn_")


async def _play(agent: Any, episodes: Sequence[Episode], variant_seed: str, figures: EpisodeFigures) -> None:
    for episode in episodes:
        shown = variant(episode, variant_seed)
        try:
            if shown.single_step:
                task = agent_step(shown)
                answer = await agent.ask(task.messages, task.tools)
                verdict = check(answer, [function_of(tool) for tool in task.tools], task.expected, "simple")
            else:
                transcript = await EpisodeRunner(shown, agent.ask).play()
                verdict = check_episode(transcript, shown)
            valid, score = verdict.valid, verdict.score
        except Exception:
            valid, score = False, 0.0
        figures.add(_short(shown.category), shown.environment, valid, score)
        kind = getattr(agent, "last_kind", None)
        if kind is not None or isinstance(agent, ScriptedAgent):
            figures.kinds[str(kind)] = figures.kinds.get(str(kind), 0) + 1


def play_agent(agent: Any, episodes: Sequence[Episode], variant_seed: str = "redteam") -> EpisodeFigures:
    """Each episode shown as its variant, played and judged as the validator does."""
    figures = EpisodeFigures()
    started = time.perf_counter()
    asyncio.run(_play(agent, episodes, variant_seed, figures))
    figures.seconds = time.perf_counter() - started
    return figures


CATEGORIES = ("agent_step", "base", "long_context", "miss_func", "miss_param")


def _column(column: str) -> Callable[[str, str], bool]:
    """The rows of one table column: a category or an environment."""
    return lambda category, environment: column in (category, environment)


def episode_table(figures: dict[str, EpisodeFigures]) -> list[str]:
    """A markdown table: per agent, valid % (mean score) per category and environment, and overall."""
    envs = sorted({e for f in figures.values() for (_, e) in f.rows})
    columns = [*CATEGORIES, *envs]
    lines = ["| agent | " + " | ".join(columns) + " | all |", "|" + "---|" * (len(columns) + 2)]
    for name, f in figures.items():
        cells = []
        for column in columns:
            valid, score, count = f.total(_column(column))
            cells.append(f"{100 * valid:.1f}% ({score:.3f})" if count else "-")
        valid, score, count = f.total()
        lines.append(f"| {name} | " + " | ".join(cells) + f" | {100 * valid:.1f}% ({score:.3f}), n={count} |")
    return lines


def baseline_agents() -> dict[str, Any]:
    return {
        "scripted agent (no model)": ScriptedAgent(),
        "never calls": NeverCallAgent(),
        '"I cannot help"': CannotHelpAgent(),
        "read every tool, then stop": ReadEveryToolAgent(),
    }


async def serve(port: int, host: str = "127.0.0.1") -> None:
    """The scripted agent behind ``POST /v1/chat/completions`` (OpenAI's shape), until killed:
    ``python -m subnet.evaluate --endpoint http://127.0.0.1:PORT/v1 --episodes N`` then plays it
    through the validator's own path (``--phrasing.*`` included)."""
    from aiohttp import web

    agent = ScriptedAgent()

    async def chat(request: web.Request) -> web.Response:
        body = await request.json()
        message = agent.respond(list(body.get("messages") or []), list(body.get("tools") or []))
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        choice = {"index": 0, "message": message, "finish_reason": finish}
        model = "scripted-agent"
        return web.json_response(
            {"id": "agent", "object": "chat.completion", "model": model, "choices": [choice]}
        )

    async def models(_request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": "scripted-agent", "object": "model"}]})

    app = web.Application(client_max_size=64 * 2**20)
    app.router.add_post("/v1/chat/completions", chat)
    app.router.add_get("/v1/models", models)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, host, port).start()
    print(f"scripted agent on http://{host}:{port}/v1", flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


def phrase_with_standin(episodes: Sequence[Episode], seed: str) -> list[Episode]:
    """The episodes with every user turn phrased by the stand-in model (bench/phrasing_standin.py)."""
    from subnet.config import PhrasingSettings
    from subnet.phrasing import build_engine
    from subnet.phrasing.session import policy_from
    from tasks.episodes.turn_phrasing import phrase_episodes

    async def run() -> list[Episode]:
        standin = load_sibling("phrasing_standin")
        server = await standin.StandinServer("private").start()
        settings = PhrasingSettings(engine="openai", url=server.url, model="standin")
        engine = build_engine(settings)
        await engine.start()
        try:
            phrased, _ = await phrase_episodes(list(episodes), engine, seed, policy_from(settings))
            return phrased
        finally:
            await engine.close()
            await server.stop()

    return asyncio.run(run())


def _failures(episodes: Sequence[Episode], count: int) -> None:
    agent = ScriptedAgent()
    shown_count = 0
    for episode in episodes:
        figures = EpisodeFigures()
        asyncio.run(_play(agent, [episode], "redteam", figures))
        if figures.total()[0] < 1.0:
            first = episode.turns[0].user[:160]
            print(f"  FAIL {episode.category} {episode.environment} kind={agent.last_kind}: {first!r}")
            shown_count += 1
            if shown_count >= count:
                return


def debug(episode: Episode) -> None:
    """Print one episode's play by the scripted agent (turn texts, calls, verdict)."""
    shown = variant(episode, "redteam")
    agent = ScriptedAgent()
    if shown.single_step:
        task = agent_step(shown)
        print(json.dumps(task.messages, indent=1)[-3000:])
        print("answer", agent.respond(task.messages, task.tools), "expected", task.expected)
        return
    transcript = asyncio.run(EpisodeRunner(shown, agent.ask).play())
    for turn, record in zip(shown.turns, transcript.turns, strict=False):
        print("USER", turn.user, "| PLAN", [(c["name"], c["arguments"]) for c in turn.plan])
        for step in record.steps:
            for c in step.calls:
                print("   CALL", c.env_name, c.env_arguments, str(c.observation)[:300])
            if step.text:
                print("   TEXT", step.text[:200])
    print(check_episode(transcript, shown))
