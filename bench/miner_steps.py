"""The step costs behind ``bench/miner.py --profile-steps``: what one decoding step costs by batch
and context, prefill per token, and the throughput ceiling those costs allow each workload.

Run it as ``bench/miner.py --profile-steps`` (the flags are that benchmark's).
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import miner_workloads as _workloads

from subnet.miner import GenerationRequest
from subnet.miner.continuous_batching import DecodeEngine, Row
from subnet.miner.transformers_backend import TransformersBackend

WORKLOADS = _workloads.WORKLOADS
model_options = _workloads.model_options


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
