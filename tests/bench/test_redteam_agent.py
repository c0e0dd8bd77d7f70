"""bench/redteam_agent.py: the scripted episode agent answers every step in form and never raises,
whatever the episodes or tools; the figures themselves are the bench's to print, not a test's."""

from __future__ import annotations

import json
from collections.abc import Callable
from types import ModuleType
from typing import Any

import pytest

from scoring import function_of
from tasks.episodes import agent_step, generate_episodes, variant


@pytest.fixture(scope="module")
def agent_module(agent_kit: Any) -> Any:
    return agent_kit


def _named(answer: dict[str, Any]) -> list[str]:
    return [call["function"]["name"] for call in answer.get("tool_calls") or []]


def test_every_answer_is_a_message_naming_only_offered_tools(agent_module: Any) -> None:
    agent = agent_module.ScriptedAgent()
    for episode in generate_episodes(b"agent-form", 30):
        shown = variant(episode, b"agent")
        if shown.category != "agent_step":
            continue
        task = agent_step(shown)
        answer = agent.respond(task.messages, task.tools)
        assert answer["role"] == "assistant"
        offered = {function_of(tool)["name"] for tool in task.tools}
        assert set(_named(answer)) <= offered
        for call in answer.get("tool_calls") or []:
            assert isinstance(json.loads(call["function"]["arguments"]), dict)


def test_plays_and_scores_episodes_in_process(agent_module: Any) -> None:
    episodes = generate_episodes(b"agent-play", 12)
    figures = agent_module.play_agent(agent_module.ScriptedAgent(), episodes)
    valid, score, count = figures.total()
    assert count == 12 and 0.0 <= score <= 1.0 and 0.0 <= valid <= 1.0
    assert "| agent |" in agent_module.episode_table({"scripted": figures})[0]


@pytest.mark.parametrize(
    "tools",
    [
        [],
        [
            {
                "type": "function",
                "function": {"name": "mystery", "description": "Does a thing.", "parameters": {}},
            }
        ],
        [{"not": "a tool"}],
    ],
)
def test_unknown_tools_and_odd_conversations_end_in_text(agent_module: Any, tools: list[Any]) -> None:
    agent = agent_module.ScriptedAgent()
    for messages in (
        [],
        [{"role": "user", "content": 'Pay Maria Lopez 12.50 from my checking account, reference "Thanks!".'}],
        [
            {"role": "assistant", "tool_calls": [{"id": "x"}]},
            {"role": "tool", "tool_call_id": "x", "content": "{"},
        ],
        [{"role": "user", "content": None}],
    ):
        answer = agent.respond(messages, tools)
        assert answer["role"] == "assistant" and not answer.get("tool_calls")
        assert isinstance(answer["content"], str)


@pytest.mark.parametrize(
    ("request_text", "tools", "said"),
    [
        # check_lock, with the status tool it reads first held back (miss_func)
        ("Is the back door locked? Lock it if not.", ["lock_door", "set_light"], "LACK_TEXT"),
        # warmer_and_dimmer, the step left out (miss_param)
        ("Turn the thermostat up a bit.", ["get_status", "set_thermostat", "set_light"], "ASK_TEXT"),
    ],
)
def test_a_missing_tool_is_said_and_a_missing_value_asked_for(
    agent_module: Any, request_text: str, tools: list[str], said: str
) -> None:
    from tasks.episodes import environment_class

    offered = environment_class("home").openai_tools(tools)
    messages: list[dict[str, Any]] = [{"role": "user", "content": request_text}]
    answer = agent_module.ScriptedAgent().respond(messages, offered)
    assert answer["content"] == getattr(agent_module, said) and not answer.get("tool_calls")


def test_baselines_answer_in_form(agent_module: Any) -> None:
    episode = variant(
        next(e for e in generate_episodes(b"agent-base", 10) if e.category != "agent_step"), b"x"
    )
    messages = [{"role": "user", "content": episode.turns[0].user}]
    for name, agent in agent_module.baseline_agents().items():
        answer = agent.respond(messages, episode.offered(0))
        assert answer["role"] == "assistant", name
        offered = {function_of(tool)["name"] for tool in episode.offered(0)}
        assert set(_named(answer)) <= offered, name


def test_integrity_reports_the_episode_red_team(
    load_bench: Callable[[str], ModuleType], capsys: pytest.CaptureFixture[str]
) -> None:
    load_bench("integrity").episode_section(6, "integrity-episodes")
    out = capsys.readouterr().out
    assert "Episodes, template turns (6 episodes" in out and "Episodes, turns phrased by the stand-in" in out
    for agent in (
        "scripted agent (no model)",
        "never calls",
        '"I cannot help"',
        "read every tool, then stop",
    ):
        assert out.count(f"| {agent} |") == 2


def _bank_functions() -> list[dict[str, Any]]:
    from tasks.episodes import environment_class

    return [function_of(tool) for tool in environment_class("bank").openai_tools()]


def test_tools_with_extra_optional_filters_map_back(agent_module: Any) -> None:
    functions = _bank_functions()
    listing = next(f for f in functions if f["name"] == "list_transactions")
    extra = {"type": "string", "description": "Only rows whose text holds this."}
    searched = dict(listing, name="search_rows", description=listing["description"] + " Filters: contains.")
    searched["parameters"] = dict(
        listing["parameters"], properties={**listing["parameters"]["properties"], "contains": extra}
    )
    env, shown = agent_module._map_tools([{"type": "function", "function": searched}])
    assert env == "bank" and shown["list_transactions"].name == "search_rows"


def test_one_tool_with_an_action_enum_maps_every_action(agent_module: Any) -> None:
    functions = _bank_functions()
    first: dict[str, str] = {}
    takers: dict[str, list[str]] = {}
    for function in functions:
        for key, prop in function["parameters"]["properties"].items():
            first.setdefault(key, prop["description"])
            takers.setdefault(key, []).append(function["name"])
    properties: dict[str, Any] = {
        "do": {"type": "string", "description": "What to do.", "enum": [f["name"] for f in functions]}
    }
    for key, names in takers.items():
        properties[f"p_{key}"] = {"type": "string", "description": f"{first[key]} (for {', '.join(names)})"}
    service = {
        "name": "bank_service",
        "description": "Every action.",
        "parameters": {"properties": properties},
    }
    env, shown = agent_module._map_tools([{"type": "function", "function": service}])
    assert env == "bank" and shown["pay"].fixed == {"do": "pay"}
    assert shown["pay"].params["payee"] == "p_payee" and shown["list_accounts"].params == {}


def _drive(generator: Any, answers: list[Any]) -> tuple[list[Any], Any]:
    """Run a script generator, answering its requests in turn; (its requests, its result)."""
    asked = [next(generator)]
    try:
        for answer in answers:
            asked.append(generator.send(answer))
    except StopIteration as done:
        return asked, done.value
    raise AssertionError(f"still asking after {len(answers)} answers: {asked[-1]}")


def test_a_paged_listing_is_read_until_the_target_shows(agent_module: Any) -> None:
    def wanted(seen: dict[str, Any]) -> bool:
        return any(event["id"] == "ev2" for event in seen["events"])

    asked, seen = _drive(
        agent_module._call("list_events", until=wanted, date="2026-05-01"),
        [True, {"events": [{"id": "ev1"}], "page": 1, "pages": 3}, {"events": [{"id": "ev2"}], "page": 2}],
    )
    assert [a.extras for a in asked if isinstance(a, agent_module._Call)] == [{"page": 1}, {"page": 2}]
    assert seen["events"] == [{"id": "ev1"}, {"id": "ev2"}]


def test_summaries_are_read_in_full_until_the_target_shows(agent_module: Any) -> None:
    def stocked(seen: dict[str, Any]) -> bool:
        return any(product.get("stock") for product in seen["results"])

    asked, seen = _drive(
        agent_module._call("search_products", until=stocked, query="kettle"),
        [True, {"results": [{"sku": "S1"}, {"sku": "S2"}]}, True, {"stock": 0}, {"stock": 4}],
    )
    details = [a for a in asked if isinstance(a, agent_module._Call) and a.tool.startswith("detail:")]
    assert [d.arguments for d in details] == [{"sku": "S1"}, {"sku": "S2"}]
    assert seen["results"] == [{"sku": "S1", "stock": 0}, {"sku": "S2", "stock": 4}]
