"""The simulated miners' answer key hands each miner its own variant of an episode."""

from __future__ import annotations

from scoring.schema import function_of
from subnet.protocol import ChatCompletionRequest
from tasks.episodes.generate import generate_episodes, variant
from tests.support.simulation import AnswerKey


def test_a_miner_gets_its_own_variant_when_another_draws_the_same_tool_names() -> None:
    # Found by search (seed "seed2", episode 3): the variants for "miner2" and "miner4" offer a
    # first turn with the same tool name and user words but other parameter names.
    episode = generate_episodes("seed2", 4)[3]
    mine, other = variant(episode, "miner2"), variant(episode, "miner4")
    first_tools = [function_of(tool) for tool in mine.offered(0)]
    assert [tool["name"] for tool in first_tools] == [function_of(tool)["name"] for tool in other.offered(0)]
    assert first_tools != [function_of(tool) for tool in other.offered(0)]
    key = AnswerKey()
    key.observe("hk-mine", episode, mine, None)
    key.observe("hk-other", episode, other, None)  # observed later: newest first found it before
    request = ChatCompletionRequest.model_validate(
        {
            "model": "m",
            "messages": [{"role": "user", "content": mine.turns[0].user}],
            "tools": mine.offered(0),
        }
    )
    assert key.episode_for(request, "hk-mine") == ("hk-mine", mine)
    assert key.episode_for(request, "hk-other") == ("hk-other", other)
    # a miner with no variant of its own (a relay looking around) still finds one
    assert key.episode_for(request, "hk-nobody") is not None
