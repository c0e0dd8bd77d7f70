"""The reference agent: plays an episode's reference plan, for tests, benchmarks and training data.

``ReferencePlayer(episode).ask`` answers each step with the next reference call of the turn (as
the episode's surface names it), as OpenAI ``tool_calls`` or, given ``fmt``, as text in one of
``scoring.rendering.FORMATS``; once the turn's plan is done it answers in text.
``trajectory(episode)`` is the whole reference conversation in chat form, observations included
(``tasks export --episodes``).
"""

from __future__ import annotations

import json
from typing import Any

from scoring import Call
from scoring.rendering import render
from scoring.schema import function_of
from tasks.episodes.model import Episode

__all__ = ["ReferencePlayer", "trajectory"]

#: What the reference agent says when a turn's plan is empty, by category.
_EMPTY_PLAN_REPLIES = {
    "multi_turn_miss_param": "I can do that, but I need one detail from you first: which one exactly?",
    "multi_turn_miss_func": "I don't have a tool that can do that right now, so I haven't changed anything.",
}


def _done_text(episode: Episode, turn: int) -> str:
    if not episode.turns[turn].plan:
        return _EMPTY_PLAN_REPLIES.get(episode.category, "I can't do that with the tools I have.")
    needed = episode.turns[turn].needed
    return "Done." + (" " + ", ".join(str(value) for value in needed) if needed else "")


class ReferencePlayer:
    """An ``ask`` that plays the reference plan (one call per step)."""

    def __init__(self, episode: Episode, fmt: str | None = None) -> None:
        self.episode = episode
        self.fmt = fmt

    async def ask(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> Any:
        turn = sum(1 for message in messages if message.get("role") == "user") - 1
        since_user = 0
        for message in reversed(messages):
            if message.get("role") == "user":
                break
            if message.get("role") == "assistant" and message.get("tool_calls"):
                since_user += 1
        plan = self.episode.turns[turn].plan
        if since_user >= len(plan):
            return {"role": "assistant", "content": _done_text(self.episode, turn)}
        call = plan[since_user]
        name, arguments = self.episode.shown_call(call["name"], call["arguments"])
        if self.fmt is not None:
            return render([Call(name, arguments)], self.fmt)
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"ref_{turn}_{since_user}",
                    "type": "function",
                    "function": {"name": name, "arguments": json.dumps(arguments)},
                }
            ],
        }


def trajectory(episode: Episode) -> dict[str, Any]:
    """The reference conversation in chat form: every turn's calls, observations and answer."""
    env = episode.make_environment()
    messages: list[dict[str, Any]] = []
    tools: dict[str, dict[str, Any]] = {}
    index = 0
    for turn_index, turn in enumerate(episode.turns):
        env.begin_turn()
        for tool in episode.offered(turn_index):
            tools.setdefault(function_of(tool)["name"], tool)
        messages.append({"role": "user", "content": turn.user})
        for call in turn.plan:
            name, arguments = episode.shown_call(call["name"], call["arguments"])
            call_id = f"call_{index}"
            index += 1
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)},
                        }
                    ],
                }
            )
            observation = env.dispatch(call["name"], call["arguments"])
            messages.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(observation)})
        messages.append({"role": "assistant", "content": _done_text(episode, turn_index)})
    return {
        "messages": messages,
        "tools": list(tools.values()),
        "category": episode.category,
        "id": episode.id,
    }
