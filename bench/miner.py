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

The workloads are bench/miner_workloads.py's; ``--profile-steps`` (step costs and the ceiling they
set) is bench/miner_steps.py's.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import resource
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import miner_steps
import miner_workloads as _workloads

from subnet.cli import OneLineParser, user_errors
from subnet.config import add_flag, int_arg
from subnet.miner import GenerationRequest, ModelOptions
from subnet.miner.base import ModelLoadError
from subnet.miner.transformers_backend import TransformersBackend, build_prompt

WORKLOADS = _workloads.WORKLOADS
chains = _workloads.chains
model_options = _workloads.model_options


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
    parser = OneLineParser(description=__doc__.splitlines()[0] if __doc__ else None)
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
    with user_errors(parser.prog):
        return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        if args.profile_steps:
            return miner_steps.run_profile(args)
        return asyncio.run(run(args))
    except ModelLoadError as error:  # a bad --model.path or --model.device: the loader says why, in one line
        print(f"miner bench: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
