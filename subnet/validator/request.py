"""The one chat-completion request a validator sends a miner for a task or an episode step.

The conversation so far, the tools offered (`tool_choice` "auto" when there are any), a
temperature of 0 and the answer cap. The round, the episode player and `python -m
subnet.evaluate` all build their requests here, so what a miner is asked cannot differ between
them; evaluate then puts in its run's model and temperature.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from subnet.protocol import ChatCompletionRequest


def build_request(
    messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]], max_tokens: int | None
) -> ChatCompletionRequest:
    """The request for `messages` offering `tools`, its answer capped at `max_tokens` tokens."""
    return ChatCompletionRequest.model_validate(
        {
            "messages": messages,
            "tools": tools or None,
            "tool_choice": "auto" if tools else None,
            "temperature": 0.0,
            "max_tokens": max_tokens,
        }
    )
