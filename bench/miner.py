"""Benchmark of the miner's transformers backend: dynamic batching against one request at a time.

    .venv/bin/python bench/miner.py                       # the demo model on CPU
    .venv/bin/python bench/miner.py --model.device cuda --model.dtype bfloat16 --requests 64
    .venv/bin/python bench/miner.py --model.path /models/Qwen2.5-1.5B-Instruct

Three workloads (``--workload``): ``validator`` sends tasks as a validator does (``tasks.generate``:
every request has its own tools, prompts of 300-800 tokens), ``agent`` sends questions against one
fixed set of two tools (an agent's traffic: every prompt begins with the same system prompt and
tools, which the miner's prompt-prefix store reuses), ``episode`` sends the steps of multi-turn
episodes (reference trajectories cut before each answer; an episode's steps in order, one episode
per concurrent caller, so each step's prompt begins with the one before). The prefix store is
emptied before every timed run, so no run reuses what another one prefilled; each row says which
share of the prompt tokens came from it, and for ``episode`` a table gives prompt, prefilled and
reused tokens per step (concurrency 1).

For each concurrency level (1, 4, 8 by default) the same requests run with batching on
(``--model.max_batch``, ``--model.batch_wait_ms``) and off (max_batch 1): requests/s, completion tokens/s,
p50/p95 latency, and the process's peak RSS so far. ``--model.max_new_tokens`` (the miner's own
flag) defaults to the miner's own cap; answers end earlier at EOS. A plain ``model.generate`` on the same
prompts, one at a time, is the baseline for latency at concurrency 1: each request runs through
both back to back, and the median of the paired ratios is reported. Off and on alternate in
rounds, so load from other processes that drifts during the run hits both modes alike.
Decoding is greedy, so batched and unbatched runs produce the same tokens.
The targets (issue 6): batched throughput at concurrency 8 >= 3x unbatched; latency at
concurrency 1 within 10% of plain generate.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import itertools
import resource
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# Run as a script, bench/ comes first on sys.path, and bench/scoring.py would hide the package.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

from subnet.config import add_flag, int_arg  # noqa: E402
from subnet.miner import GenerationRequest, ModelOptions  # noqa: E402
from subnet.miner.base import ModelLoadError  # noqa: E402
from subnet.miner.continuous_batching import DecodeEngine, Row  # noqa: E402
from subnet.miner.transformers_backend import TransformersBackend, build_prompt  # noqa: E402

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


@dataclass(frozen=True)
class StepServed:
    """One request of a run, served alone (concurrency 1): its place in the run, its prompt's
    tokens, the part prefilled (the rest came from the prefix store), answer tokens, latency."""

    step: int
    prompt: int
    prefilled: int
    answer: int
    seconds: float


@dataclass(frozen=True)
class Figures:
    label: str
    concurrency: int
    requests: int
    seconds: float
    tokens: int
    latencies: list[float]
    batches: int
    prompt_tokens: int = 0
    reused_tokens: int = 0  # prompt tokens taken from the prefix store instead of prefilled
    steps: tuple[StepServed, ...] = ()  # at concurrency 1 only

    def row(self) -> str:
        ordered = sorted(self.latencies)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        reused = f"{self.reused_tokens / self.prompt_tokens:.0%}" if self.prompt_tokens else "-"
        return (
            f"{self.label:<16} {self.concurrency:>3} {self.requests / self.seconds:>8.2f} "
            f"{self.tokens / self.seconds:>9.1f} {statistics.median(ordered):>8.3f} {p95:>8.3f} "
            f"{self.batches:>7} {reused:>7} {peak_rss_mib():>9.0f}"
        )


HEADER = (
    f"{'mode':<16} {'c':>3} {'req/s':>8} {'tok/s':>9} {'p50 s':>8} {'p95 s':>8} {'batches':>7} "
    f"{'reused':>7} {'peakMiB':>9}"
)


def peak_rss_mib() -> float:
    # ru_maxrss is KiB on Linux (bytes on macOS); this benchmark targets Linux machines.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def drive(
    backend: TransformersBackend, runs: Sequence[Sequence[GenerationRequest]], concurrency: int, label: str
) -> Figures:
    """Send every run with at most `concurrency` runs in flight, each run's requests in turn (the
    next once the last is answered); time each request."""
    store = backend.engine.prefixes if backend.engine is not None else None
    if store is not None:
        store.clear()
    reused_before = store.reused_tokens if store is not None else 0
    queue = list(reversed(runs))
    latencies: list[float] = []
    steps: list[StepServed] = []
    tokens = prompt_tokens = 0
    batches_before = backend.batches_run

    async def worker() -> None:
        nonlocal tokens, prompt_tokens
        while queue:
            for step, request in enumerate(queue.pop(), 1):
                prefilled_before = store.prefilled_tokens if store is not None else 0
                started = time.perf_counter()
                result = await backend.generate(request)
                latencies.append(time.perf_counter() - started)
                usage = result.usage
                tokens += usage.completion_tokens
                prompt_tokens += usage.prompt_tokens
                if concurrency == 1:  # alone in the engine: the store's counts are this request's
                    prefilled = store.prefilled_tokens - prefilled_before if store else usage.prompt_tokens
                    steps.append(
                        StepServed(
                            step, usage.prompt_tokens, prefilled, usage.completion_tokens, latencies[-1]
                        )
                    )

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    seconds = time.perf_counter() - started
    reused = store.reused_tokens - reused_before if store is not None else 0
    batches = backend.batches_run - batches_before
    return Figures(
        label,
        concurrency,
        len(latencies),
        seconds,
        tokens,
        latencies,
        batches,
        prompt_tokens,
        reused,
        tuple(steps),
    )


def print_steps(figures: Figures) -> None:
    """Prompt, prefilled and reused tokens by a request's place in its run (an episode's step)."""
    print(f"\nprefix reuse by episode step ({figures.label}, concurrency 1; tokens are means per request):")
    print(f"{'step':>4} {'n':>3} {'prompt':>7} {'prefilled':>9} {'reused':>7} {'answer':>7} {'p50 s':>7}")
    for step in sorted({served.step for served in figures.steps}):
        served = [item for item in figures.steps if item.step == step]
        prompt = statistics.mean(item.prompt for item in served)
        prefilled = statistics.mean(item.prefilled for item in served)
        print(
            f"{step:>4} {len(served):>3} {prompt:>7.0f} {prefilled:>9.0f} {prompt - prefilled:>7.0f} "
            f"{statistics.mean(item.answer for item in served):>7.1f} "
            f"{statistics.median(item.seconds for item in served):>7.3f}"
        )


def plain_generate_one(
    backend: TransformersBackend, request: GenerationRequest, max_tokens: int
) -> tuple[float, int]:
    """The baseline: one prompt straight through `model.generate` (same prompt, same reading)."""
    import torch

    assert backend.adapter is not None
    started = time.perf_counter()
    prompt = build_prompt(backend.tokenizer, backend.adapter, backend.options.format, request)
    ids = backend.tokenizer(prompt.text, add_special_tokens=False, return_tensors="pt").to(backend.device)
    with torch.inference_mode():
        output = backend.model.generate(
            **ids,
            max_new_tokens=max_tokens,
            do_sample=False,
            pad_token_id=backend.tokenizer.pad_token_id,
            eos_token_id=backend._eos_ids(),
        )
    text = backend.tokenizer.decode(output[0, ids["input_ids"].shape[1] :], skip_special_tokens=True)
    backend.adapter.read(prompt.prefix + text)
    return time.perf_counter() - started, int(output.shape[1] - ids["input_ids"].shape[1])


async def paired_single(
    backend: TransformersBackend, requests: Sequence[GenerationRequest], max_tokens: int
) -> tuple[Figures, Figures, list[float]]:
    """Concurrency 1, each request through plain generate and then through the batching backend,
    back to back, so load that drifts over the run hits both alike. Returns both and the ratios."""
    if backend.engine is not None and backend.engine.prefixes is not None:
        backend.engine.prefixes.clear()
    plain_latencies: list[float] = []
    served_latencies: list[float] = []
    plain_tokens = served_tokens = 0
    for request in requests:
        seconds, tokens = plain_generate_one(backend, request, max_tokens)
        plain_latencies.append(seconds)
        plain_tokens += tokens
        started = time.perf_counter()
        result = await backend.generate(request)
        served_latencies.append(time.perf_counter() - started)
        served_tokens += result.usage.completion_tokens
    ratios = [served / plain for served, plain in zip(served_latencies, plain_latencies, strict=True)]
    plain = Figures(
        "plain generate", 1, len(requests), sum(plain_latencies), plain_tokens, plain_latencies, len(requests)
    )
    served = Figures(
        "miner, batching",
        1,
        len(requests),
        sum(served_latencies),
        served_tokens,
        served_latencies,
        len(requests),
    )
    return plain, served, ratios


WORKLOADS = {"validator": validator_workload, "agent": workload, "episode": episode_workload}


# -- --profile-steps: what one decoding step costs, and the ceiling it sets ------------------------


@dataclass(frozen=True)
class StepCost:
    """Seconds of one decoding step of ``batch`` rows at ``context`` cached columns."""

    batch: int
    context: int
    engine: float  # DecodeEngine.step: mask, positions, forward, choosing, as the miner runs it
    bare: float  # model(...) alone on a DynamicCache of the same shape, as generate() runs it
    join: float  # one row of this context joining a batch of batch-1 (0 for a batch of one)
    leave: float  # one row leaving a batch of this size


def _synthetic_cache(model: Any, batch: int, context: int) -> Any:
    """A DynamicCache of ``batch`` rows and ``context`` columns of random keys and values: a
    step's cost does not depend on the values, and a real prefill of 8 x 900 tokens takes minutes."""
    import torch
    from transformers import DynamicCache

    config = model.config
    heads = getattr(config, "num_key_value_heads", None) or config.num_attention_heads
    head_dim = getattr(config, "head_dim", None) or config.hidden_size // config.num_attention_heads
    dtype = next(model.parameters()).dtype
    device = next(model.parameters()).device
    generator = torch.Generator().manual_seed(batch * 10_000 + context)
    cache = DynamicCache(config=config)
    for layer_index in range(config.num_hidden_layers):
        keys, values = (
            torch.randn((batch, heads, context, head_dim), generator=generator).to(device, dtype)
            for _ in range(2)
        )
        cache.update(keys, values, layer_index)
    return cache


def _median_seconds(action: Callable[[], object], repeats: int, warm_up: int = 2) -> float:
    for _ in range(warm_up):
        action()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


# Tokens each synthetic row may write: room for the timed steps (the engine reserves columns for it).
STEP_BUDGET = 64


def _running_engine(backend: TransformersBackend, batch: int, context: int) -> Any:
    """A DecodeEngine holding ``batch`` rows of ``context`` tokens each, mid-answer (guides off,
    greedy, no EOS), admitted as the engine admits rows whose prompt begins like a stored one:
    all but the last token come from its prefix store, filled with random keys and values (a
    step's cost does not depend on them, and a real prefill of 8 x 900 tokens takes minutes on a
    CPU), so each admission prefills one token."""
    engine = DecodeEngine(
        backend.model,
        eos_ids=[],
        pad_id=int(backend.tokenizer.pad_token_id),
        prefix_tokens=context + 1,
        max_rows=max(batch, 1),
    )
    engine.admit([Row(key="first", prompt=[1, 1], budget=1)])  # its pass allocates the buffers
    assert engine.prefixes is not None
    engine.prefixes.clear()
    stored = _synthetic_cache(backend.model, 1, context)
    engine.prefixes.put([1] * context, [(layer.keys, layer.values) for layer in stored.layers])
    engine.admit([_joiner(index, context) for index in range(batch)])
    return engine


def _joiner(key: Any, context: int) -> Row:
    return Row(key=key, prompt=[1] * context + [2], budget=STEP_BUDGET)


def measure_step(backend: TransformersBackend, batch: int, context: int, repeats: int) -> StepCost:
    import torch

    engine = _running_engine(backend, batch, context)
    engine_seconds = _median_seconds(engine.step, repeats)

    cache = _synthetic_cache(backend.model, batch, context)
    device = engine.device
    fed = [context]

    def bare() -> None:
        with torch.inference_mode():
            backend.model(
                input_ids=torch.ones((batch, 1), dtype=torch.long, device=device),
                attention_mask=torch.ones((batch, fed[0] + 1), dtype=torch.long, device=device),
                position_ids=torch.full((batch, 1), fed[0], dtype=torch.long, device=device),
                past_key_values=cache,
                use_cache=True,
                logits_to_keep=1,
            )
        fed[0] += 1

    bare_seconds = _median_seconds(bare, repeats)
    join = leave = 0.0
    if batch > 1:
        joins, leaves = [], []
        for _ in range(3):
            engine = _running_engine(backend, batch - 1, context)
            started = time.perf_counter()
            engine.admit([_joiner("joiner", context)])  # its stored prefix copied in, one token fed
            joins.append(time.perf_counter() - started)
            engine.step()
            started = time.perf_counter()
            engine.drop({0})  # the first row leaves: the last one moves into its slot
            leaves.append(time.perf_counter() - started)
        join, leave = statistics.median(joins), statistics.median(leaves)
    return StepCost(batch, context, engine_seconds, bare_seconds, join, leave)


def measure_prefill(backend: TransformersBackend, length: int, repeats: int = 2) -> float:
    """Seconds to prefill one prompt of ``length`` tokens through the engine (no prefix reuse)."""
    import random

    engine = DecodeEngine(
        backend.model, eos_ids=[], pad_id=int(backend.tokenizer.pad_token_id), prefix_tokens=0
    )
    rng = random.Random(length)
    vocabulary = int(backend.model.config.vocab_size)

    def prefill() -> None:
        engine.admit([Row(key=0, prompt=[rng.randrange(3, vocabulary) for _ in range(length)], budget=2)])
        engine.reset()

    return _median_seconds(prefill, repeats, warm_up=1)


class StepModel:
    """Step and prefill costs interpolated from the measured ones (linear in rows and context)."""

    def __init__(self, costs: Sequence[StepCost], prefill: dict[int, float]) -> None:
        self.costs = {(cost.batch, cost.context): cost.engine for cost in costs}
        self.batches = sorted({cost.batch for cost in costs})
        self.contexts = sorted({cost.context for cost in costs})
        self.prefill_points = sorted(prefill.items())

    def step(self, batch: int, context: float) -> float:
        return _interpolate(
            [(b, self._at_batch(b, context)) for b in self.batches], float(min(batch, self.batches[-1]))
        )

    def _at_batch(self, batch: int, context: float) -> float:
        return _interpolate([(c, self.costs[(batch, c)]) for c in self.contexts], context)

    def prefill(self, tokens: int) -> float:
        return _interpolate([(float(n), seconds) for n, seconds in self.prefill_points], float(tokens))


def _interpolate(points: Sequence[tuple[float, float]], x: float) -> float:
    """Piecewise linear through ``points`` (sorted by x), extended linearly past both ends."""
    if len(points) == 1:
        return points[0][1]
    segments = list(itertools.pairwise(points))
    (x0, y0), (x1, y1) = next((pair for pair in segments if x <= pair[1][0]), segments[-1])
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


@dataclass(frozen=True)
class Served:
    """One workload request as the engine served it: prompt, prefilled part, answer, prefill time."""

    prompt: int
    prefilled: int
    answer: int
    prefill_seconds: float


def serve_workload(
    backend: TransformersBackend, requests: Sequence[GenerationRequest], wave: int
) -> list[Served]:
    """Run the requests through the engine ``wave`` at a time (greedy, the prefix store emptied
    before each wave as the timed runs empty it) for their answer lengths and prefill times."""
    engine = backend.engine
    assert engine is not None
    served: list[Served] = []
    for first in range(0, len(requests), wave):
        if engine.prefixes is not None:
            engine.prefixes.clear()
        rows: list[tuple[Row, int, float]] = []
        for request in requests[first : first + wave]:
            _, token_ids, budget = backend._prepare(request)
            row = Row(key=len(rows), prompt=token_ids, budget=budget)
            prefilled_before = engine.prefixes.prefilled_tokens if engine.prefixes is not None else 0
            started = time.perf_counter()
            engine.admit([row])
            seconds = time.perf_counter() - started
            prefilled = (
                engine.prefixes.prefilled_tokens - prefilled_before
                if engine.prefixes is not None
                else len(token_ids)
            )
            rows.append((row, prefilled, seconds))
        while engine.active:
            engine.step()
        served += [Served(len(row.prompt), prefilled, len(row.generated), s) for row, prefilled, s in rows]
    return served


def unbatched_seconds(model: StepModel, served: Sequence[Served]) -> float:
    return sum(
        item.prefill_seconds + (item.answer - 1) * model.step(1, item.prompt + item.answer / 2)
        for item in served
    )


def full_batch_seconds(model: StepModel, served: Sequence[Served], batch: int) -> float:
    """Every step carries ``batch`` rows (an endless stream of requests): the best batching can do."""
    return sum(
        item.prefill_seconds + (item.answer - 1) * model.step(batch, item.prompt + item.answer / 2) / batch
        for item in served
    )


def scheduled_seconds(model: StepModel, served: Sequence[Served], concurrency: int, chunk: int) -> float:
    """The benchmark's own schedule: chunks of ``chunk`` requests, at most ``concurrency`` in the
    batch; a request joins when one leaves (prefill, then a step for all), the batch as wide as
    its longest row."""
    total = 0.0
    for first in range(0, len(served), chunk):
        waiting = list(served[first : first + chunk])
        active: list[list[int]] = []  # [context so far, tokens still to write]
        while waiting or active:
            while waiting and len(active) < concurrency:
                item = waiting.pop(0)
                total += item.prefill_seconds
                if item.answer > 1:
                    active.append([item.prompt + 1, item.answer - 1])
            if not active:
                continue
            total += model.step(len(active), max(context for context, _ in active))
            for state in active:
                state[0] += 1
                state[1] -= 1
            active = [state for state in active if state[1] > 0]
    return total


def profile_step(backend: TransformersBackend, batch: int, context: int, steps: int) -> None:
    """torch.profiler (CPU) over ``steps`` engine steps: the operators that take the time."""
    from torch.profiler import ProfilerActivity, profile

    engine = _running_engine(backend, batch, context)
    for _ in range(2):
        engine.step()
    with profile(activities=[ProfilerActivity.CPU]) as profiler:
        started = time.perf_counter()
        for _ in range(steps):
            engine.step()
        wall = (time.perf_counter() - started) / steps
    averages = profiler.key_averages()
    total_self = sum(event.self_cpu_time_total for event in averages) / 1e6 / steps
    print(
        f"\nprofile of one engine step, batch {batch}, context {context} "
        f"({steps} steps; {wall * 1000:.1f} ms a step under the profiler, "
        f"{total_self * 1000:.1f} ms of it inside operators, the rest Python and dispatch):"
    )
    print(f"{'operator':<52} {'ms/step':>8} {'share':>6} {'calls/step':>10}")
    for event in sorted(averages, key=lambda event: event.self_cpu_time_total, reverse=True)[:12]:
        seconds = event.self_cpu_time_total / 1e6 / steps
        print(
            f"{event.key[:52]:<52} {seconds * 1000:>8.2f} {seconds / wall:>6.1%} {event.count / steps:>10.0f}"
        )


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


def run_profile(args: argparse.Namespace) -> int:
    import torch

    if args.threads:
        torch.set_num_threads(args.threads)
    backend = TransformersBackend(model_options(args))
    backend._load()  # the generation thread's loader, called here: no server is needed
    if backend.engine is None:
        print("this model cannot join a running batch (generate() serves it): nothing to profile")
        return 2
    print(f"model: {backend.describe()}, torch threads {torch.get_num_threads()}")
    batches = [b for b in (1, 2, 4, 8) if b <= args.max_batch] or [1]
    if args.max_batch not in batches:
        batches.append(args.max_batch)
    print(
        f"\none decoding step, median of {args.profile_repeats} steps, then the median over "
        f"{args.profile_rounds} rounds taken in turn (load from other processes drifts): engine = "
        "DecodeEngine.step as the miner runs it, bare = model(...) alone on a DynamicCache (as "
        "generate() runs it); join/leave: one row's"
    )
    cells = [(batch, context) for context in args.profile_contexts for batch in batches]
    rounds = [
        [measure_step(backend, batch, context, args.profile_repeats) for batch, context in cells]
        for _ in range(args.profile_rounds)
    ]
    costs = [
        StepCost(
            batch,
            context,
            *(
                statistics.median(getattr(measured[index], name) for measured in rounds)
                for name in ("engine", "bare", "join", "leave")
            ),
        )
        for index, (batch, context) in enumerate(cells)
    ]
    print(
        f"{'batch':>5} {'context':>7} {'engine ms':>9} {'bare ms':>8} {'ms/row':>7} {'x batch 1':>9} "
        f"{'join ms':>8} {'leave ms':>8}"
    )
    for cost in costs:
        single = next(c for c in costs if c.context == cost.context and c.batch == 1).engine
        print(
            f"{cost.batch:>5} {cost.context:>7} {cost.engine * 1000:>9.1f} {cost.bare * 1000:>8.1f} "
            f"{cost.engine / cost.batch * 1000:>7.1f} {cost.engine / single:>9.2f} "
            f"{cost.join * 1000:>8.1f} {cost.leave * 1000:>8.1f}",
            flush=True,
        )
    prefill: dict[int, float] = {}
    print(f"\n{'prefill':>7} {'ms':>8} {'ms/token':>9}")
    for length in sorted({16, 64, *args.profile_contexts}):
        prefill[length] = measure_prefill(backend, length)
        print(
            f"{length:>7} {prefill[length] * 1000:>8.0f} {prefill[length] / length * 1000:>9.2f}", flush=True
        )
    profile_step(backend, max(batches), min(args.profile_contexts), args.profile_repeats)

    model = StepModel(costs, prefill)
    top = max(args.concurrency)
    chunk = max(1, args.requests // args.rounds)
    print(
        f"\nceiling of batched/unbatched throughput from these costs (one core does everything, so "
        f"requests/s is work/time; {args.requests} requests, max_tokens {args.max_new_tokens}):"
    )
    print(
        f"{'workload':<10} {'prompt':>7} {'prefilled':>9} {'answer':>7} {'prefill':>7} "
        f"{'off req/s':>9} {f'c={top} req/s':>10} {f'c={top} x':>7} {'full x':>7} {'decode x':>8}"
    )
    for name, make in sorted(WORKLOADS.items()):
        served = serve_workload(backend, make(args.requests, args.max_new_tokens), chunk)
        alone = unbatched_seconds(model, served)
        scheduled = scheduled_seconds(model, served, top, chunk)
        full = full_batch_seconds(model, served, max(batches))
        prefilling = sum(item.prefill_seconds for item in served)
        print(
            f"{name:<10} {statistics.mean(s.prompt for s in served):>7.0f} "
            f"{statistics.mean(s.prefilled for s in served):>9.0f} "
            f"{statistics.mean(s.answer for s in served):>7.1f} {prefilling / alone:>7.0%} "
            f"{len(served) / alone:>9.3f} {len(served) / scheduled:>10.3f} {alone / scheduled:>6.2f}x "
            f"{alone / full:>6.2f}x {(alone - prefilling) / (full - prefilling):>7.2f}x",
            flush=True,
        )
    print(
        "prompt, prefilled, answer: mean tokens per request; prefill: the share of unbatched time spent "
        "prefilling (batching cannot share it);\noff req/s: one request at a time; "
        f"c={top}: the benchmark's schedule (chunks of {chunk} requests, at most {top} rows, each leaving "
        "at its own length, the batch as wide as its longest row);\nfull: every step carries "
        f"{max(batches)} rows (an endless stream); decode: the same for the decoding steps alone"
    )
    return 0


def merge(parts: list[Figures]) -> Figures:
    first = parts[0]
    return Figures(
        first.label,
        first.concurrency,
        sum(part.requests for part in parts),
        sum(part.seconds for part in parts),
        sum(part.tokens for part in parts),
        [latency for part in parts for latency in part.latencies],
        sum(part.batches for part in parts),
        sum(part.prompt_tokens for part in parts),
        sum(part.reused_tokens for part in parts),
        tuple(step for part in parts for step in part.steps),
    )


async def run(args: argparse.Namespace) -> int:
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    options = model_options(args)
    backend = TransformersBackend(options)
    load_started = time.perf_counter()
    await backend.start()
    print(f"model: {backend.describe()}, loaded in {time.perf_counter() - load_started:.1f} s")
    print(
        f"requests per level and mode: {args.requests} in {args.rounds} alternating rounds, "
        f"max_tokens {args.max_new_tokens}, batching on: max_batch {args.max_batch}, "
        f"batch_wait_ms {args.batch_wait_ms:g}"
    )
    requests = WORKLOADS[args.workload](args.requests, args.max_new_tokens)
    runs = chains(requests)
    lengths = sorted(len(backend._prepare(request)[1]) for request in requests)
    print(
        f"workload {args.workload}: prompts of {lengths[0]}-{lengths[-1]} tokens "
        f"(median {statistics.median(lengths):.0f}), {len(runs)} runs of requests sent in turn; "
        "continuous batching "
        f"{'on' if backend.engine is not None else 'off (generate)'}, prefix store "
        f"{options.prefix_cache_tokens} tokens"
    )
    modes = {"batching off": 1, "batching on": args.max_batch}
    results: dict[tuple[str, int], Figures] = {}
    try:
        await drive(backend, [[request] for request in requests[:4]], 4, "warm-up")
        print(HEADER)
        ratios: list[float] = []
        if not args.no_baseline:
            plain, served, ratios = await paired_single(backend, requests, args.max_new_tokens)
            print(plain.row())
            print(served.row(), flush=True)
        per_round = max(1, len(runs) // args.rounds)
        for concurrency in args.concurrency:
            parts: dict[str, list[Figures]] = {label: [] for label in modes}
            for round_index in range(args.rounds):
                chunk = runs[round_index * per_round : (round_index + 1) * per_round]
                order = list(modes) if round_index % 2 == 0 else list(reversed(modes))
                for label in order:
                    backend.options = dataclasses.replace(options, max_batch=modes[label])
                    parts[label].append(await drive(backend, chunk, concurrency, label))
            for label in modes:
                results[(label, concurrency)] = merge(parts[label])
                print(results[(label, concurrency)].row(), flush=True)
    finally:
        await backend.close()

    alone = results.get(("batching on", 1))
    if alone is not None and any(len(run) > 1 for run in runs):
        print_steps(alone)
    top = max(args.concurrency)
    on, off = results[("batching on", top)], results[("batching off", top)]
    speedup = (on.requests / on.seconds) / (off.requests / off.seconds)
    print(f"\nbatched/unbatched throughput at concurrency {top}: {speedup:.2f}x (target >= 3x)")
    if ratios:
        overhead = statistics.median(ratios) - 1
        print(
            f"latency at concurrency 1, miner (batching on) vs plain generate, median of paired ratios: "
            f"{overhead * 100:+.1f}% (target within 10%)"
        )
    print(f"peak RSS: {peak_rss_mib():.0f} MiB")
    return 0


def _levels(text: str) -> list[int]:
    try:
        levels = [int(part) for part in text.split(",") if part]
    except ValueError:
        levels = []
    if not levels or min(levels) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of positive integers such as 1,4,8")
    return levels


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a positive integer")
    return value


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    # The miner's own --model.* flags (subnet.config's registry): the same spelling, help and checks.
    add_flag(parser, "model.path", dest="model_path", default="demo", note="Default: demo (SmolLM2-135M).")
    add_flag(parser, "model.device", dest="device", default="cpu", note="Default here: cpu.")
    add_flag(parser, "model.dtype", dest="dtype", default="auto")
    parser.add_argument("--requests", type=_positive, default=16, help="requests per level")
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="validator")
    add_flag(parser, "model.max_new_tokens", dest="max_new_tokens", default=ModelOptions().max_new_tokens)
    add_flag(
        parser,
        "model.prefix_cache_tokens",
        dest="prefix_cache_tokens",
        default=ModelOptions().prefix_cache_tokens,
    )
    add_flag(parser, "model.max_batch", dest="max_batch", default=8)
    add_flag(parser, "model.batch_wait_ms", dest="batch_wait_ms", default=10.0)
    parser.add_argument("--concurrency", type=_levels, default=[1, 4, 8], help="e.g. 1,4,8")
    parser.add_argument("--rounds", type=_positive, default=2, help="alternating off/on rounds per level")
    parser.add_argument("--no-baseline", action="store_true", help="skip the plain-generate pairing")
    parser.add_argument(
        "--threads", type=int_arg(0), default=0, help="torch CPU threads (0: torch's default)"
    )
    parser.add_argument(
        "--profile-steps",
        action="store_true",
        help="instead of serving: time one decoding step by batch and context, prefill per token, "
        "profile the largest batch's step, and print the throughput ceiling these costs allow",
    )
    parser.add_argument("--profile-contexts", type=_levels, default=[300, 900], help="e.g. 300,900")
    parser.add_argument("--profile-repeats", type=_positive, default=5, help="timed steps per measurement")
    parser.add_argument(
        "--profile-rounds", type=_positive, default=3, help="rounds of the step table, taken in turn"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.profile_steps:
            return run_profile(args)
        return asyncio.run(run(args))
    except ModelLoadError as error:  # a bad --model.path or --model.device: the loader says why, in one line
        print(f"miner bench: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
