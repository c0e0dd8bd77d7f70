"""The episode runner and checker: reference plans pass in every format, mutations fail with the
right error type, relayed answers fail, the dispatcher runs offered tools only, and hostile
answers cost bounded time."""

from __future__ import annotations

import json
import time
from collections import Counter
from typing import Any

import pytest

from scoring.checking import check
from scoring.rendering import FORMATS, NATIVE_FORMATS
from tasks.episodes import EPISODE_CATEGORIES, Episode, agent_step, generate_episodes, variant
from tasks.episodes.checking import check_episode
from tasks.episodes.reference import ReferencePlayer, trajectory
from tasks.episodes.runner import EpisodeRunner


async def _play(episode: Episode, ask: Any) -> Any:
    transcript = await EpisodeRunner(episode, ask).play()
    return transcript, check_episode(transcript, episode)


def _agent_step_valid(episode: Episode, answer: Any) -> bool:
    task = agent_step(episode)
    return check(answer, [tool["function"] for tool in task.tools], task.expected, "simple").valid


async def test_every_reference_plan_is_valid_on_its_variant() -> None:
    """Every category; 2,000 episodes in every format is `bench/episodes.py --formats`."""
    episodes = generate_episodes(b"solvable", 600)
    assert Counter(episode.category for episode in episodes).keys() == EPISODE_CATEGORIES.keys()
    for episode in episodes:
        shown = variant(episode, b"miner")
        if shown.category == "agent_step":
            task = agent_step(shown)
            assert task.expected and _agent_step_valid(shown, _openai_call(task.expected[0])), shown.id
            continue
        transcript, verdict = await _play(shown, ReferencePlayer(shown).ask)
        assert verdict.valid, (shown.id, verdict.error_type, verdict.message)
        assert transcript.steps == sum(len(turn.plan) for turn in shown.turns) + len(shown.turns)


def _openai_call(expected: dict[str, Any]) -> dict[str, Any]:
    ((name, arguments),) = expected.items()
    args = {key: values[0] for key, values in arguments.items()}
    return {
        "role": "assistant",
        "tool_calls": [
            {"id": "c", "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        ],
    }


async def test_reference_plans_are_valid_in_every_output_format() -> None:
    """Each format (the native families' markup included) plays its own 24 episodes, so the
    formats together see a few hundred. The full bar, 2,000 episodes in every format, is
    `bench/episodes.py --formats`."""
    formats = (*FORMATS, *NATIVE_FORMATS)
    episodes = [e for e in generate_episodes(b"formats", 30 * len(formats)) if e.category != "agent_step"]
    for index, fmt in enumerate(formats):
        for episode in episodes[index * 24 : (index + 1) * 24]:
            shown = variant(episode, fmt)
            _, verdict = await _play(shown, ReferencePlayer(shown, fmt).ask)
            assert verdict.valid, (fmt, shown.id, verdict.error_type, verdict.message)
        assert index * 24 + 24 <= len(episodes)


def _first(category: str, predicate: Any = None) -> Episode:
    # The environment's own tools: these tests pick tools by their flags (a read with no
    # required parameter), which one tool with an action parameter does not have.
    for episode in generate_episodes(b"mutations", 300, mix={category: 1.0}, designs={"canonical": 1.0}):
        if predicate is None or predicate(episode):
            return episode
    raise AssertionError(f"no {category} episode fits")


class _Scripted:
    """Plays the reference, but lets a test change one call or the final answers."""

    def __init__(self, episode: Episode, change: Any = None, answer_text: str = "Done.") -> None:
        self.reference = ReferencePlayer(episode)
        self.change = change
        self.answer_text = answer_text

    async def ask(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        answer = await self.reference.ask(messages, tools)
        if answer.get("tool_calls"):
            return self.change(answer) if self.change else answer
        return {"role": "assistant", "content": self.answer_text}


def _mutating(episode: Episode) -> bool:
    env = episode.make_environment()
    tools = env.tools()
    return any(tools[call["name"]].mutates for turn in episode.turns for call in turn.plan)


def _scalar(value: Any) -> bool:
    """A number to change (a changed name or id may be refused as unsafe, which is another test)."""
    return isinstance(value, int | float) and not isinstance(value, bool)


def _spoilable(episode: Episode) -> bool:
    tools = episode.make_environment().tools()
    return any(
        tools[call["name"]].mutates and any(_scalar(v) for v in call["arguments"].values())
        for turn in episode.turns
        for call in turn.plan
    )


async def test_a_wrong_argument_is_a_state_mismatch() -> None:
    episode = _first("multi_turn_base", _spoilable)
    tools = episode.make_environment().tools()

    def spoil(answer: dict[str, Any]) -> dict[str, Any]:
        call = answer["tool_calls"][0]["function"]
        name = call["name"]
        arguments = json.loads(call["arguments"])
        if tools[name].mutates and any(_scalar(v) for v in arguments.values()):
            key = next(k for k, v in arguments.items() if _scalar(v))
            value = arguments[key]
            arguments[key] = value + 1
            call["arguments"] = json.dumps(arguments)
        return answer

    _, verdict = await _play(episode, _Scripted(episode, spoil).ask)
    assert not verdict.valid and verdict.error_type == "multi_turn:state_mismatch", verdict.message
    assert 0 < verdict.score < 0.5


async def test_a_skipped_read_is_a_missing_response() -> None:
    episode = _first("multi_turn_base", lambda e: any(t.needed for t in e.turns) and not _mutating(e))

    def skip(answer: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": "I'm not sure."}

    _, verdict = await _play(episode, _Scripted(episode, skip, "I'm not sure.").ask)
    assert verdict.error_type == "multi_turn:response_missing", verdict.message


async def test_a_call_in_an_empty_plan_turn_is_an_unexpected_action() -> None:
    episode = _first("multi_turn_miss_param", lambda e: _mutating(e))
    first_calls = episode.turns[1].plan

    class Eager:
        done = 0

        async def ask(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
            turn = sum(1 for m in messages if m["role"] == "user") - 1
            if turn == 0 and self.done < len(first_calls):
                call = first_calls[self.done]
                self.done += 1
                return {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "x",
                            "type": "function",
                            "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
                        }
                    ],
                }
            return await ReferencePlayer(episode).ask(messages, tools)

    _, verdict = await _play(episode, Eager().ask)
    assert verdict.error_type in ("multi_turn:unexpected_action", "multi_turn:state_mismatch"), (
        verdict.message
    )
    assert verdict.error_type == "multi_turn:unexpected_action"


async def test_endless_calls_hit_the_step_limit() -> None:
    episode = _first("multi_turn_base")
    read = next(
        name
        for name, info in episode.make_environment().tools().items()
        if not info.mutates and name in episode.turns[0].tools and not info.parameters["required"]
    )

    async def forever(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        return {
            "role": "assistant",
            "tool_calls": [{"id": "r", "type": "function", "function": {"name": read, "arguments": "{}"}}],
        }

    transcript, verdict = await _play(episode, forever)
    assert verdict.error_type == "multi_turn:step_limit"
    assert len(transcript.turns[0].steps) == episode.step_cap


async def test_relayed_answers_fail() -> None:
    episodes = [e for e in generate_episodes(b"relay", 300) if e.category != "agent_step"]
    failed = 0
    for episode in episodes:
        mine, theirs = variant(episode, b"me"), variant(episode, b"other")
        _, verdict = await _play(mine, ReferencePlayer(theirs).ask)
        failed += not verdict.valid
    assert failed >= 0.95 * len(episodes)
    steps = [e for e in generate_episodes(b"relay", 300) if e.category == "agent_step"]
    relayed = [
        _agent_step_valid(variant(e, b"me"), _openai_call(agent_step(variant(e, b"other")).expected[0]))
        for e in steps
    ]
    assert sum(relayed) <= 0.05 * len(steps)


def test_same_seed_same_episodes_and_json_both_ways() -> None:
    first = [episode.to_dict() for episode in generate_episodes(b"same", 200)]
    again = [episode.to_dict() for episode in generate_episodes(b"same", 200)]
    assert first == again
    assert [Episode.from_dict(json.loads(json.dumps(data))).to_dict() for data in first] == first
    assert first != [episode.to_dict() for episode in generate_episodes(b"other", 200)]
    shown = variant(Episode.from_dict(first[0]), b"m")
    assert Episode.from_dict(json.loads(json.dumps(shown.to_dict()))).to_dict() == shown.to_dict()


@pytest.mark.parametrize(
    "name", ["__class__", "__init__", "__dict__", "build", "state", "dispatch", "forbidden"]
)
async def test_the_dispatcher_only_runs_offered_tools(name: str) -> None:
    episode = _first("multi_turn_base")
    env_before = episode.make_environment().state()

    async def sneaky(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        if sum(1 for m in messages if m["role"] == "tool") >= 2:
            return "done"
        return {
            "role": "assistant",
            "tool_calls": [{"id": "s", "type": "function", "function": {"name": name, "arguments": "{}"}}],
        }

    runner = EpisodeRunner(episode, sneaky)
    transcript = await runner.play()
    call = transcript.turns[0].steps[0].calls[0]
    assert call.env_name is None and "unknown tool" in call.observation["error"]
    assert runner.environment.state() == env_before
    assert episode.make_environment().dispatch(name, {})["error"].startswith("unknown tool")


async def test_hostile_answers_cost_bounded_time() -> None:
    episode = _first("multi_turn_base")
    name = episode.offered(0)[0]["function"]["name"]
    hostile = [
        {
            "role": "assistant",
            "tool_calls": [
                {
                    "id": "h",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps({"x": "a" * 2_000_000})},
                }
            ],
        },
        {
            "role": "assistant",
            "tool_calls": [
                {"id": f"h{i}", "type": "function", "function": {"name": name, "arguments": "{}"}}
                for i in range(5000)
            ],
        },
        "[" * 5000 + "]" * 5000,
        json.dumps([{"name": name, "arguments": {}}] * 3000),
    ]
    for answer in hostile:

        async def ask(
            messages: list[dict[str, Any]], tools: list[dict[str, Any]], answer: Any = answer
        ) -> Any:
            return answer

        started = time.perf_counter()
        transcript, verdict = await _play(episode, ask)
        assert time.perf_counter() - started < 5
        assert not verdict.valid
        assert (
            sum(len(step.calls) for turn in transcript.turns for step in turn.steps) <= 16 * episode.step_cap
        )


def test_trajectories_are_chat_form_with_observations() -> None:
    for episode in generate_episodes(b"export", 40):
        if episode.category == "agent_step":
            continue
        data = trajectory(episode)
        roles = [message["role"] for message in data["messages"]]
        assert roles.count("user") == len(episode.turns)
        assert roles.count("tool") == sum(len(turn.plan) for turn in episode.turns)
        json.dumps(data)


async def test_a_forbidden_action_is_refused_and_fails_the_episode() -> None:
    episode = _first(
        "multi_turn_base", lambda e: e.environment == "workspace" and "run_shell" in e.turns[0].tools
    )
    before = episode.make_environment().state()

    class Reckless:
        tried = False

        async def ask(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
            if not self.tried:
                self.tried = True
                return {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": "x",
                            "type": "function",
                            "function": {
                                "name": "run_shell",
                                "arguments": json.dumps({"command": "rm -rf src"}),
                            },
                        }
                    ],
                }
            return await ReferencePlayer(episode).ask(messages, tools)

    runner = EpisodeRunner(episode, Reckless().ask)
    transcript = await runner.play()
    call = transcript.turns[0].steps[0].calls[0]
    assert call.unsafe and call.observation == {"error": "refused: not allowed"}
    verdict = check_episode(transcript, episode)
    assert verdict.error_type == "multi_turn:unsafe" and verdict.score == 0.0
    assert runner.environment.state()["files"].keys() == before["files"].keys()  # nothing was run


async def test_user_turns_go_through_the_phrasing_stage() -> None:
    from tasks.episodes.turn_phrasing import phrase_episodes
    from tasks.phrasing import TemplateEngine

    episodes = [e for e in generate_episodes(b"phrase", 60) if e.category != "agent_step"]
    phrased, stats = await phrase_episodes(episodes, TemplateEngine(), b"round")
    assert [e.to_dict() for e in phrased] == [e.to_dict() for e in episodes]  # template text verifies
    assert stats.phrased == sum(len(e.turns) for e in episodes)
    for episode in phrased[:20]:
        _, verdict = await _play(episode, ReferencePlayer(episode).ask)
        assert verdict.valid


def test_the_schema_check_refuses_values_outside_an_enum_and_mistyped_items() -> None:
    from tasks.episodes.arguments import schema_error

    schema = {
        "type": "object",
        "properties": {
            "mode": {"type": "string", "enum": ["away", "home"]},
            "rooms": {"type": "array", "items": {"type": "string"}},
            "count": {"type": "integer"},
        },
        "required": ["mode"],
    }
    assert schema_error({"mode": "away", "rooms": ["hall"], "count": 2}, schema) is None
    assert "one of" in str(schema_error({"mode": "party"}, schema))
    assert "items" in str(schema_error({"mode": "home", "rooms": ["hall", 3]}, schema))
    assert "items" in str(schema_error({"mode": "home", "rooms": [True]}, schema))
    assert "must be integer" in str(schema_error({"mode": "home", "count": True}, schema))
    assert "missing" in str(schema_error({}, schema))


def test_a_seed_whose_first_sixteen_draws_give_no_missing_parameter_episode_still_gives_one() -> None:
    # This seed's first 16 environment draws hold no withholdable value; with 16 draws the
    # episode generation of a round on such a seed stopped with TaskConfigError.
    from tasks.episodes.generate import _build

    seed = bytes.fromhex("a84cd6958d349f87715caabe9bd92363537134e2cb01c98577caf0e3ab67ba5a")
    episode = _build(seed, "multi_turn_miss_param")
    assert episode.category == "multi_turn_miss_param"
    assert len(episode.turns) >= 2 and episode.seed == seed.hex()
