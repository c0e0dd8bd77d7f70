"""Benchmark of the miner's transformers backend: dynamic batching against one request at a time.

    .venv/bin/python bench/miner.py                       # the demo model on CPU
    .venv/bin/python bench/miner.py --device cuda --dtype bfloat16 --requests 64
    .venv/bin/python bench/miner.py --model-path /models/Qwen2.5-1.5B-Instruct

Two workloads (``--workload``): ``validator`` sends tasks as a validator does (``tasks.generate``:
every request has its own tools, prompts of 300-800 tokens), ``agent`` sends questions against one
fixed set of two tools (an agent's traffic: every prompt begins with the same system prompt and
tools, which the miner's prompt-prefix store reuses). The prefix store is emptied before every
timed run, so no run reuses what another one prefilled.

For each concurrency level (1, 4, 8 by default) the same requests run with batching on
(``--max-batch``, ``--batch-wait-ms``) and off (max_batch 1): requests/s, completion tokens/s,
p50/p95 latency, and the process's peak RSS so far. ``--max-new-tokens`` defaults to the miner's
own cap (``--model.max_new_tokens``); answers end earlier at EOS. A plain ``model.generate`` on the same
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
import resource
import statistics
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# Run as a script, bench/ comes first on sys.path, and bench/scoring.py would hide the package.
sys.path[:] = [entry for entry in sys.path if Path(entry or ".").resolve() != Path(__file__).resolve().parent]

from subnet.miner import GenerationRequest, ModelOptions  # noqa: E402
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
class Figures:
    label: str
    concurrency: int
    requests: int
    seconds: float
    tokens: int
    latencies: list[float]
    batches: int

    def row(self) -> str:
        ordered = sorted(self.latencies)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        return (
            f"{self.label:<16} {self.concurrency:>3} {self.requests / self.seconds:>8.2f} "
            f"{self.tokens / self.seconds:>9.1f} {statistics.median(ordered):>8.3f} {p95:>8.3f} "
            f"{self.batches:>7} {peak_rss_mib():>9.0f}"
        )


HEADER = (
    f"{'mode':<16} {'c':>3} {'req/s':>8} {'tok/s':>9} {'p50 s':>8} {'p95 s':>8} {'batches':>7} {'peakMiB':>9}"
)


def peak_rss_mib() -> float:
    # ru_maxrss is KiB on Linux (bytes on macOS); this benchmark targets Linux machines.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def drive(
    backend: TransformersBackend, requests: Sequence[GenerationRequest], concurrency: int, label: str
) -> Figures:
    """Send every request with at most `concurrency` in flight; time each one."""
    if backend.engine is not None and backend.engine.prefixes is not None:
        backend.engine.prefixes.clear()
    queue = list(reversed(requests))
    latencies: list[float] = []
    tokens = 0
    batches_before = backend.batches_run

    async def worker() -> None:
        nonlocal tokens
        while queue:
            request = queue.pop()
            started = time.perf_counter()
            result = await backend.generate(request)
            latencies.append(time.perf_counter() - started)
            tokens += result.usage.completion_tokens

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    seconds = time.perf_counter() - started
    return Figures(
        label, concurrency, len(requests), seconds, tokens, latencies, backend.batches_run - batches_before
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


WORKLOADS = {"validator": validator_workload, "agent": workload}


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
    )


async def run(args: argparse.Namespace) -> int:
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    options = ModelOptions(
        path=args.model_path,
        device=args.device,
        dtype=args.dtype,
        max_new_tokens=args.max_new_tokens,
        max_batch=args.max_batch,
        batch_wait_ms=args.batch_wait_ms,
        prefix_cache_tokens=args.prefix_cache_tokens,
    )
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
    lengths = sorted(len(backend._prepare(request)[1]) for request in requests)
    print(
        f"workload {args.workload}: prompts of {lengths[0]}-{lengths[-1]} tokens "
        f"(median {statistics.median(lengths):.0f}); continuous batching "
        f"{'on' if backend.engine is not None else 'off (generate)'}, prefix store "
        f"{options.prefix_cache_tokens} tokens"
    )
    modes = {"batching off": 1, "batching on": args.max_batch}
    results: dict[tuple[str, int], Figures] = {}
    try:
        await drive(backend, requests[: min(4, len(requests))], 4, "warm-up")
        print(HEADER)
        ratios: list[float] = []
        if not args.no_baseline:
            plain, served, ratios = await paired_single(backend, requests, args.max_new_tokens)
            print(plain.row())
            print(served.row(), flush=True)
        per_round = max(1, len(requests) // args.rounds)
        for concurrency in args.concurrency:
            parts: dict[str, list[Figures]] = {label: [] for label in modes}
            for round_index in range(args.rounds):
                chunk = requests[round_index * per_round : (round_index + 1) * per_round]
                order = list(modes) if round_index % 2 == 0 else list(reversed(modes))
                for label in order:
                    backend.options = dataclasses.replace(options, max_batch=modes[label])
                    parts[label].append(await drive(backend, chunk, concurrency, label))
            for label in modes:
                results[(label, concurrency)] = merge(parts[label])
                print(results[(label, concurrency)].row(), flush=True)
    finally:
        await backend.close()

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
    return [int(part) for part in text.split(",") if part]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--model-path", default="demo", help="model folder, or 'demo' (SmolLM2-135M)")
    parser.add_argument("--device", default="cpu", help="cpu, cuda, cuda:N or auto")
    parser.add_argument("--dtype", default="auto", choices=["auto", "float32", "bfloat16", "float16"])
    parser.add_argument("--requests", type=int, default=16, help="requests per level")
    parser.add_argument("--workload", choices=sorted(WORKLOADS), default="validator")
    parser.add_argument("--max-new-tokens", type=int, default=ModelOptions().max_new_tokens)
    parser.add_argument("--prefix-cache-tokens", type=int, default=ModelOptions().prefix_cache_tokens)
    parser.add_argument("--max-batch", type=int, default=8)
    parser.add_argument("--batch-wait-ms", type=float, default=10.0)
    parser.add_argument("--concurrency", type=_levels, default=[1, 4, 8], help="e.g. 1,4,8")
    parser.add_argument("--rounds", type=int, default=2, help="alternating off/on rounds per level")
    parser.add_argument("--no-baseline", action="store_true", help="skip the plain-generate pairing")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
