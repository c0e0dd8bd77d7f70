"""Nothing one miner's episode raises ends the round (issue 26): a call that makes a tool raise
(OverflowError, as a 401-digit amount did) fails that miner's episode alone, status
``tool_error``; the round completes and every other miner scores exactly as without it, whether
the tools run in the sandbox (the validator's way) or in this process."""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import AsyncIterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from subnet.chain import ChainClient
from subnet.config import RoundSettings
from subnet.protocol import ChatCompletionRequest, ChatCompletionResponse
from subnet.validator.episodes import TOOL_ERROR, EpisodeLimits, EpisodePlayer
from subnet.validator.node import Validator, ValidatorOptions
from subnet.validator.sandbox import Sandbox, SandboxLimits
from subnet.wallets import load_wallet
from tasks.episodes import Episode, generate_episodes, variant
from tasks.episodes.arguments import schema_error
from tasks.episodes.environment import Environment
from tasks.episodes.reference import ReferencePlayer
from tasks.episodes.runner import run_call
from tests.support import simulation
from tests.support.processes import sandbox_workers
from tests.support.results import record_results, stored_round
from tests.support.simulation import (
    MinerContext,
    SimulatedSubnet,
    start_simulated_subnet,
    stop_simulated_miners,
)

ROOT = Path(__file__).resolve().parents[2]
BREAKER = "tests.validator.sandbox_breaker"
MARKER = "BREAK\u00b2"  # sandbox_breaker.MARKER
HUGE = 10**400


def _breaking_call(shown: Episode, turn: int) -> dict[str, Any] | None:
    """A reference call of ``turn`` with one string or number argument replaced by the value that
    makes the patched dispatch raise, chosen so that the call reaches dispatch: it passes the
    offered schema (an enum keeps its value, no required argument goes) and the environment's
    safety check, on the state the reference plan leaves before the turn, judges it and lets it
    run. (With every argument replaced at once, about half of the calls never reached dispatch: a
    schema refused an enum or a dropped flag, a safety check could not judge a 401-digit amount.
    117 of 160 episodes broke, 155 now. A round's seed follows the chain's block hash, so the
    episodes a run draws vary, and one run in about twenty drew four that did not break.)"""
    if turn >= len(shown.turns):
        return None
    environment = shown.make_environment()
    for earlier in shown.turns[:turn]:
        for call in earlier.plan:
            run_call(environment, call["name"], call["arguments"])
    offered = {tool["function"]["name"]: tool["function"] for tool in shown.offered(turn)}
    for call in shown.turns[turn].plan:
        for key, value in call["arguments"].items():
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                continue
            arguments = {**call["arguments"], key: MARKER if isinstance(value, str) else HUGE}
            name, shown_arguments = shown.shown_call(call["name"], arguments)
            function = offered.get(name)
            if function is None or schema_error(shown_arguments, function.get("parameters") or {}):
                continue
            mapped = shown.to_environment(name, shown_arguments, turn)
            if mapped is None or not any(value in (MARKER, HUGE) for value in mapped[1].values()):
                continue
            try:
                if environment.forbidden(*mapped) is not None:
                    continue
            except Exception:  # the safety check cannot judge it: refused, never run
                continue
            return {
                "id": "b0",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(shown_arguments)},
            }
    return None


def _patch_dispatch_here(monkeypatch: pytest.MonkeyPatch) -> None:
    """What sandbox_breaker does in a worker, done in this process."""
    dispatch = Environment.dispatch

    def breaking(self: Environment, name: str, arguments: dict[str, Any]) -> Any:
        if any(value in (MARKER, HUGE) for value in arguments.values()):
            raise OverflowError("int too large to convert to float")
        return dispatch(self, name, arguments)

    monkeypatch.setattr(Environment, "dispatch", breaking)


class _Querier:
    """Miners answering from the reference plan; the ``breaker`` sends a breaking call first."""

    def __init__(self, shown: dict[tuple[str, str], Episode]) -> None:
        self.shown = shown

    async def query(self, target: Any, request: ChatCompletionRequest) -> Any:
        messages = [message.model_dump(mode="json", exclude_none=True) for message in request.messages]
        tools = [tool.model_dump(mode="json", exclude_none=True) for tool in request.tools or ()]
        users = [m for m in messages if m["role"] == "user"]
        episode = next(
            e
            for (hotkey, _), e in self.shown.items()
            if hotkey == target.hotkey and e.turns[0].user == users[0]["content"]
        )
        answer: Any = None
        if target.hotkey == "breaker" and messages[-1]["role"] == "user":  # a turn's first step
            call = _breaking_call(episode, len(users) - 1)
            if call is not None:
                answer = {"role": "assistant", "content": None, "tool_calls": [call]}
        if answer is None:
            answer = await ReferencePlayer(episode).ask(messages, tools)
        await asyncio.sleep(0)
        message = SimpleNamespace(model_dump=lambda **_: answer)
        return SimpleNamespace(
            ok=True, completion=SimpleNamespace(message=message), latency_s=0.0, status="ok", error=None
        )


async def _play(hotkeys: tuple[str, ...], sandbox: Sandbox | None) -> dict[str, list[dict[str, Any]]]:
    episodes = [e for e in generate_episodes("isolation", 24) if e.category != "agent_step"][:6]
    shown = {(hotkey, e.id): variant(e, f"seed-{hotkey}") for hotkey in hotkeys for e in episodes}
    rows: dict[str, list[dict[str, Any]]] = {hotkey: [] for hotkey in hotkeys}
    player = EpisodePlayer(
        _Querier(shown),
        EpisodeLimits(deadline_s=30.0),
        lambda row: rows[row.hotkey].append(row.columns()),
        sandbox=sandbox,
    )
    await asyncio.gather(
        *(
            player.play_miner(
                1,
                {e.id: 1 for e in episodes},
                SimpleNamespace(hotkey=hotkey, uid=index),
                cast(Any, SimpleNamespace(hotkey=hotkey)),  # the fake querier reads only the hotkey
                [(e, shown[(hotkey, e.id)]) for e in episodes],
            )
            for index, hotkey in enumerate(hotkeys)
        )
    )
    for hotkey_rows in rows.values():
        for row in hotkey_rows:
            row.pop("latency_s")
            for turn in row["transcript"].get("turns", ()):
                for step in turn["steps"]:
                    step["latency_s"] = 0.0
    return rows


@pytest.mark.parametrize("where", ["sandbox", "in_process"])
async def test_a_tool_that_raises_fails_only_its_miner(where: str, monkeypatch: pytest.MonkeyPatch) -> None:
    sandbox: Sandbox | None = None
    if where == "sandbox":
        monkeypatch.syspath_prepend(str(ROOT))
        sandbox = Sandbox(SandboxLimits(workers=2), preload=(BREAKER,))
    else:
        _patch_dispatch_here(monkeypatch)
    try:
        alone = await _play(("honest",), sandbox)
        together = await _play(("honest", "breaker", "other"), sandbox)
    finally:
        if sandbox is not None:
            await sandbox.close()
    assert together["honest"] == alone["honest"]
    assert all(row["valid"] and row["score"] == 1.0 for row in together["honest"] + together["other"])
    broken = [row for row in together["breaker"] if row["status"] == TOOL_ERROR]
    assert broken, [row["status"] for row in together["breaker"]]
    for row in broken:
        assert "OverflowError" in row["error"] and row["score"] < 1.0 and not row["valid"]


#: The breaking calls ``_breaker`` sent (so a round without a tool error says whether any was sent).
BREAKS: list[dict[str, Any]] = []


async def _breaker(request: ChatCompletionRequest, ctx: MinerContext) -> ChatCompletionResponse:
    """Right on single calls; in an episode, at a turn's first step, a call that makes its tool raise."""
    found = ctx.key.episode_for(request, ctx.hotkey)
    if found is not None and request.messages[-1].role == "user":
        turn = sum(1 for message in request.messages if message.role == "user") - 1
        call = _breaking_call(found[1], turn)
        if call is not None:
            BREAKS.append(call)
            return simulation._response(simulation._tool_call_message([call]))
    return await simulation._answer(request, ctx, 1.0)


@pytest.fixture
async def breaker_subnet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[SimulatedSubnet]:
    monkeypatch.setitem(simulation.PERSONALITIES, "breaker", _breaker)
    subnet = await start_simulated_subnet(tmp_path, ("right", "breaker"), query_timeout=2.0)
    subnet.settings = dataclasses.replace(
        subnet.settings, round=RoundSettings(tasks=2, interval=1.0, episodes=4, episode_deadline=20.0)
    )
    try:
        yield subnet
    finally:
        await stop_simulated_miners(list(subnet.miners.values()))
        await subnet.devchain.close()


async def test_a_round_with_a_miner_breaking_its_tools_completes(
    breaker_subnet: SimulatedSubnet, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(ROOT))
    sandbox = Sandbox(SandboxLimits(workers=2), preload=(BREAKER,))
    wallet = load_wallet(breaker_subnet.settings.wallet)
    validator = Validator(
        breaker_subnet.settings,
        wallet=wallet,
        chain=ChainClient.from_settings(breaker_subnet.settings, wallet),
        options=ValidatorOptions(
            observer=breaker_subnet.key.observe, install_signal_handlers=False, sandbox=sandbox
        ),
    )
    results = record_results(validator)
    BREAKS.clear()
    await validator.run(rounds=1)
    assert len(results.reports) == 1
    report = results.reports[0]
    assert report.n_responses == 2 * (2 + 4)
    assert BREAKS, "the breaker found no episode to break"
    stored = await stored_round(breaker_subnet.settings.db.url, report.round_id)
    right = stored.summaries[breaker_subnet.miners["right"].hotkey]
    assert right.mean_score == 1.0 and right.episode_total == 4
    assert stored.statuses[TOOL_ERROR] >= 1, (stored.statuses, f"{len(BREAKS)} breaking calls sent")
    assert sandbox_workers() == []  # the validator's shutdown closed the sandbox
