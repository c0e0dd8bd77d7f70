"""The miner benchmarks' workloads (bench/miner.py, bench/miner_steps.py): what a validator, an
agent and an episode's steps send a miner, and the model settings from the benchmark's flags."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from subnet.miner import GenerationRequest, ModelOptions

CITIES = ["Paris", "Tokyo", "Berlin", "Lima", "Oslo", "Cairo", "Perth", "Quito", "Seoul", "Accra", "Hanoi"]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "description": "Get the current weather for a city.",
            "parameters": {
                "type": "object",
                "properties": {
                    "city": {"type": "string", "description": "City name"},
                    "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
                },
                "required": ["city"],
            },
        },
    },
    {
        "type": "function",
        "function": {
            "name": "get_stock_price",
            "description": "Get the latest price of a stock.",
            "parameters": {
                "type": "object",
                "properties": {"symbol": {"type": "string", "description": "Ticker symbol"}},
                "required": ["symbol"],
            },
        },
    },
]


def validator_workload(count: int, max_tokens: int) -> list[GenerationRequest]:
    """Tasks as a validator sends them: each with its own tools and question (fixed seed)."""
    import tasks

    return [
        GenerationRequest(messages=task.messages, tools=task.tools, max_tokens=max_tokens)
        for task in tasks.generate(b"bench-miner", count)
    ]


def episode_workload(count: int, max_tokens: int) -> list[GenerationRequest]:
    """The steps of multi-turn episodes as a validator plays them with one miner: each reference
    trajectory cut before each of its answers, with that turn's tools, the steps of an episode in
    order (fixed seed). The last episode may be cut short to make ``count``."""
    from tasks.episodes import generate_episodes
    from tasks.episodes.reference import trajectory

    requests: list[GenerationRequest] = []
    for episode in generate_episodes(b"bench-miner-episodes", count):
        messages = trajectory(episode)["messages"]
        for cut, message in enumerate(messages):
            if message["role"] == "assistant":
                turn = sum(1 for earlier in messages[:cut] if earlier["role"] == "user") - 1
                tools = episode.offered(turn)
                requests.append(
                    GenerationRequest(messages=messages[:cut], tools=tools, max_tokens=max_tokens)
                )
        if len(requests) >= count:
            break
    return requests[:count]


def chains(requests: Sequence[GenerationRequest]) -> list[list[GenerationRequest]]:
    """The requests in runs that one caller sends in turn: a request whose history extends the
    one before it (the next step of an episode) joins its run; any other starts a run of its own."""
    runs: list[list[GenerationRequest]] = []
    for request in requests:
        previous = runs[-1][-1].messages if runs else None
        if previous is not None and request.messages[: len(previous)] == previous:
            runs[-1].append(request)
        else:
            runs.append([request])
    return runs


def workload(count: int, max_tokens: int) -> list[GenerationRequest]:
    """Distinct tool-calling requests against one set of tools (different cities and phrasing,
    so prompt lengths vary)."""
    phrasings = [
        "What's the weather in {city}?",
        "How warm is it in {city} right now, in celsius?",
        "I am flying to {city} tomorrow; tell me what the weather is like there so I can pack.",
        "Weather report for {city}, please.",
    ]
    return [
        GenerationRequest(
            messages=[
                {
                    "role": "user",
                    "content": phrasings[i % len(phrasings)].format(city=CITIES[i % len(CITIES)]),
                }
            ],
            tools=TOOLS,
            max_tokens=max_tokens,
        )
        for i in range(count)
    ]


WORKLOADS = {"validator": validator_workload, "agent": workload, "episode": episode_workload}


def model_options(args: argparse.Namespace) -> ModelOptions:
    """The miner's model settings from the benchmark's flags (the same for every mode)."""
    return ModelOptions(
        path=args.model_path,
        device=args.device,
        dtype=args.dtype,
        max_new_tokens=args.max_new_tokens,
        max_batch=args.max_batch,
        batch_wait_ms=args.batch_wait_ms,
        prefix_cache_tokens=args.prefix_cache_tokens,
    )
