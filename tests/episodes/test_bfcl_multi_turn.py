"""BFCL v4's multi-turn entries as episodes (tasks.episodes.bfcl): every ground truth passes our
checker, dispatch only reaches documented functions, nothing is evaluated, and our state
comparison agrees with BFCL's state checker.

Needs ``bfcl-eval`` (installed with --no-deps by scripts/setup.sh); skipped with the reason when
it is missing, except the tests of what a missing package or folder says.
"""

from __future__ import annotations

import asyncio
import builtins
import importlib.util
import json
import math
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tasks.episodes import Episode, environment_class
from tasks.episodes import bfcl as bfcl_module
from tasks.episodes.bfcl import (
    ADDED_FUNCTIONS_MESSAGE,
    BFCL_MULTI_TURN_CATEGORIES,
    EXCLUDED,
    BfclEnvironment,
    load_bfcl_multi_turn,
)
from tasks.episodes.checking import check_episode
from tasks.episodes.runner import EpisodeRunner
from tasks.errors import SourceFileError

_MISSING = "bfcl-eval is not installed (scripts/setup.sh installs bfcl-eval==2026.3.23 --no-deps)"
needs_bfcl = pytest.mark.skipif(importlib.util.find_spec("bfcl_eval") is None, reason=_MISSING)
ENTRIES_PER_CATEGORY = 200


@pytest.fixture(scope="module")
def episodes() -> tuple[Episode, ...]:
    if importlib.util.find_spec("bfcl_eval") is None:
        pytest.skip(_MISSING)
    return load_bfcl_multi_turn()


def reference_ask(episode: Episode) -> Any:
    """Answers each step with the turn's next reference calls as OpenAI ``tool_calls`` (a few per
    step when the plan is longer than the step cap allows one by one), then a text answer, which
    ends the turn."""

    async def ask(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
        turn = sum(1 for message in messages if message.get("role") == "user") - 1
        done = 0
        for message in reversed(messages):
            if message.get("role") == "user":
                break
            done += len(message.get("tool_calls") or [])
        plan = episode.turns[turn].plan
        if done >= len(plan):
            return {"role": "assistant", "content": "Done."}
        per_step = max(1, math.ceil(len(plan) / (episode.step_cap - 1)))
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"ref_{turn}_{done + offset}",
                    "type": "function",
                    "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
                }
                for offset, call in enumerate(plan[done : done + per_step])
            ],
        }

    return ask


def play(episode: Episode) -> Any:
    transcript = asyncio.run(EpisodeRunner(episode, reference_ask(episode)).play())
    return check_episode(transcript, episode)


def test_every_ground_truth_passes_our_checker(episodes: tuple[Episode, ...]) -> None:
    passed: Counter[str] = Counter()
    failures = []
    for episode in episodes:
        verdict = play(episode)
        if verdict.valid:
            passed[episode.category] += 1
        else:
            failures.append(f"{episode.id}: {verdict.error_type} {verdict.message}")
    assert failures == []
    excluded = Counter(entry.rsplit("_", 1)[0] for entry in EXCLUDED)
    assert passed == {
        category: ENTRIES_PER_CATEGORY - excluded[category] for category in BFCL_MULTI_TURN_CATEGORIES
    }


@needs_bfcl
def test_excluded_entries_fail_for_the_reason_given(monkeypatch: pytest.MonkeyPatch) -> None:
    assert EXCLUDED and all(len(reason) > 40 for reason in EXCLUDED.values())
    monkeypatch.setattr(bfcl_module, "EXCLUDED", {})
    loaded = {episode.id: episode for episode in load_bfcl_multi_turn(categories=("multi_turn_base",))}
    episode = loaded["multi_turn_base_173"]
    verdict = play(episode)
    assert not verdict.valid and verdict.error_type == "multi_turn:state_mismatch"
    (ticket_tool,) = episode.make_environment().openai_tools(["close_ticket"])
    assert ticket_tool["function"]["parameters"]["properties"]["ticket_id"]["type"] == "integer"
    assert episode.turns[3].plan == [{"name": "close_ticket", "arguments": {"ticket_id": "ticket_001"}}]


def test_episodes_carry_bfcl_fields(episodes: tuple[Episode, ...]) -> None:
    assert not {episode.id for episode in episodes} & set(EXCLUDED)
    first = next(episode for episode in episodes if episode.id == "multi_turn_base_0")
    assert (first.category, first.environment, first.source, first.size, first.step_cap) == (
        "multi_turn_base",
        "bfcl",
        "bfcl",
        1,
        10,
    )
    assert first.config is not None and first.config["involved_classes"] == [
        "TwitterAPI",
        "GorillaFileSystem",
    ]
    assert first.config["excluded_functions"] == ["cp"] and first.config["long_context"] is False
    assert first.turns[0].plan == [
        {"name": "cd", "arguments": {"folder": "document"}},
        {"name": "mkdir", "arguments": {"dir_name": "temp"}},
        {"name": "mv", "arguments": {"source": "final_report.pdf", "destination": "temp"}},
    ]
    assert "document" in first.turns[0].needed
    assert len(bytes.fromhex(first.env_seed)) == 32
    long_context = next(episode for episode in episodes if episode.category == "multi_turn_long_context")
    assert long_context.config is not None and long_context.config["long_context"] is True


def test_positional_ground_truth_values_are_named_from_the_signature(episodes: tuple[Episode, ...]) -> None:
    calls = [call for episode in episodes for turn in episode.turns for call in turn.plan]
    zipcodes = [call for call in calls if call["name"] == "get_zipcode_based_on_city"]
    assert zipcodes and all(set(call["arguments"]) == {"city"} for call in zipcodes)


def test_held_back_functions_arrive_in_their_turn(episodes: tuple[Episode, ...]) -> None:
    entry = next(episode for episode in episodes if episode.id == "multi_turn_miss_func_0")
    assert ["sort" in turn.tools for turn in entry.turns] == [False, False, False, True, True]
    assert entry.turns[3].user == ADDED_FUNCTIONS_MESSAGE
    assert entry.turns[2].plan == [] and entry.turns[3].plan[0]["name"] == "sort"
    assert "cp" in entry.turns[0].tools  # excluded_function does not shrink the tools, as in BFCL
    for episode in episodes:
        for turn in episode.turns:
            assert {call["name"] for call in turn.plan} <= set(turn.tools), episode.id


def test_tools_are_openai_schemas(episodes: tuple[Episode, ...]) -> None:
    environment = episodes[0].make_environment()
    assert environment_class("bfcl") is BfclEnvironment
    types: set[str] = set()

    def collect(schema: Any) -> None:
        if isinstance(schema, dict):
            if isinstance(schema.get("type"), str):
                types.add(schema["type"])
            for value in schema.values():
                collect(value)
        elif isinstance(schema, list):
            for value in schema:
                collect(value)

    every = {
        tool["function"]["name"]: tool
        for episode in episodes[:: len(episodes) // 40]
        for tool in episode.make_environment().openai_tools()
    }
    collect([tool["function"]["parameters"] for tool in every.values()])
    assert types <= {"object", "string", "number", "integer", "boolean", "array"}
    assert all(tool["function"]["parameters"]["type"] == "object" for tool in every.values())
    assert set(environment.tools()) == {tool["function"]["name"] for tool in environment.openai_tools()}


@needs_bfcl
@pytest.mark.parametrize(
    "name", ["__class__", "__init__", "__dict__", "_load_scenario", "_find_ticket", "root", "eval", "ls"]
)
def test_dispatch_refuses_undocumented_names(name: str) -> None:
    environment = BfclEnvironment.from_config(
        {"involved_classes": ["TicketAPI", "MathAPI"], "initial_config": {}, "long_context": False}
    )
    before = environment.state()
    assert environment.dispatch(name, {}) == {"error": f"unknown tool {name!r}"}
    assert environment.state() == before
    assert not any(tool.startswith("_") for tool in environment.tools())


@needs_bfcl
def test_failures_of_bfcl_code_are_observations(monkeypatch: pytest.MonkeyPatch) -> None:
    environment = BfclEnvironment.from_config({"involved_classes": ["MathAPI"], "initial_config": {}})
    assert environment.dispatch("mean", {"numbers": [1, 2, 3]}) == {"result": 2.0}
    assert "bad arguments for mean" in environment.dispatch("mean", {"values": [1]})["error"]

    def broken(**_: Any) -> None:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(environment._apis()["MathAPI"], "mean", broken)
    assert environment.dispatch("mean", {"numbers": [1]}) == {"error": "ZeroDivisionError: boom"}


@needs_bfcl
def test_math_stays_bounded_and_leaves_global_precision_alone() -> None:
    import decimal

    import mpmath

    environment = BfclEnvironment.from_config({"involved_classes": ["MathAPI"], "initial_config": {}})
    prec, dps = decimal.getcontext().prec, mpmath.mp.dps
    assert environment.dispatch("square_root", {"number": 2, "precision": 3}) == {"result": "1.41"}
    assert environment.dispatch("logarithm", {"value": 8, "base": 2, "precision": 40}) == {"result": "3.0"}
    assert (decimal.getcontext().prec, mpmath.mp.dps) == (prec, dps)
    costly: list[tuple[str, dict[str, Any]]] = [
        ("logarithm", {"value": 8, "base": 2, "precision": 10**9}),
        ("square_root", {"number": 2, "precision": 1e9}),
        ("power", {"base": 10, "exponent": 10**9}),
        ("multiply", {"a": 10**4000, "b": 10**4000}),  # a product JSON will not write
    ]
    for name, arguments in costly:
        assert "error" in environment.dispatch(name, arguments), name


def test_nothing_is_evaluated(episodes: tuple[Episode, ...], monkeypatch: pytest.MonkeyPatch) -> None:
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils

    def refuse(*_: Any, **__: Any) -> None:
        raise AssertionError("evaluated")

    monkeypatch.setattr(builtins, "eval", refuse)
    monkeypatch.setattr(builtins, "exec", refuse)
    monkeypatch.setattr(multi_turn_utils, "execute_multi_turn_func_call", refuse)
    for episode in episodes[::20]:
        assert play(episode).valid, episode.id


def test_state_is_what_bfcl_state_checker_compares(episodes: tuple[Episode, ...]) -> None:
    """Our state after each turn, with and without the turn's last call, is equal exactly when
    BFCL's ``_compare_instances`` finds the instances equal (public attributes only)."""
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import _compare_instances

    agreement: Counter[tuple[bool, bool]] = Counter()
    for episode in episodes[::5]:
        for cut, turn in enumerate(episode.turns):
            full, short = episode.make_environment(), episode.make_environment()
            for earlier in episode.turns[:cut]:
                for call in earlier.plan:
                    full.dispatch(call["name"], call["arguments"])
                    short.dispatch(call["name"], call["arguments"])
            for index, call in enumerate(turn.plan):
                full.dispatch(call["name"], call["arguments"])
                if index < len(turn.plan) - 1:
                    short.dispatch(call["name"], call["arguments"])
            ours, theirs = full.state(), short.state()
            assert (ours == theirs) == (full.fingerprint() == short.fingerprint())
            for name, instance in full._apis().items():
                agreement[
                    (ours[name] == theirs[name], _compare_instances(short._apis()[name], instance)[0])
                ] += 1
    assert set(agreement) == {(True, True), (False, False)}
    state = episodes[0].make_environment().state()
    json.dumps(state)
    assert not any(key.startswith("_") for attributes in state.values() for key in attributes)


def test_episodes_survive_a_json_round_trip(episodes: tuple[Episode, ...]) -> None:
    for episode in episodes[::50]:
        again = Episode.from_dict(json.loads(json.dumps(episode.to_dict())))
        assert again == episode and play(again).valid


def test_a_missing_data_folder_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SourceFileError) as missing:
        load_bfcl_multi_turn(tmp_path / "nowhere")
    assert (
        str(missing.value)
        == f"{tmp_path / 'nowhere'}: no such data folder (expected bfcl_eval/data's layout)"
    )
    with pytest.raises(SourceFileError) as no_file:
        load_bfcl_multi_turn(tmp_path)
    assert str(no_file.value).startswith(str(tmp_path / "BFCL_v4_multi_turn_base.json"))
    assert "\n" not in str(no_file.value) and "file not found" in str(no_file.value)


def test_a_missing_package_says_what_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *rest: None if name == "bfcl_eval" else find_spec(name, *rest),
    )
    with pytest.raises(SourceFileError, match=r"^bfcl-eval: package not installed: pip install --no-deps"):
        load_bfcl_multi_turn()
