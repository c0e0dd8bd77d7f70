"""Benchmark of the miner's transformers backend: dynamic batching against one request at a time.

    .venv/bin/python bench/miner.py                       # the demo model on CPU
    .venv/bin/python bench/miner.py --device cuda --dtype bfloat16 --requests 64
    .venv/bin/python bench/miner.py --model-path /models/Qwen2.5-1.5B-Instruct

For each concurrency level (1, 4, 8 by default) the same requests run with batching on
(``--max-batch``, ``--batch-wait-ms``) and off (max_batch 1): requests/s, completion tokens/s,
p50/p95 latency, and the process's peak RSS so far. A plain ``model.generate`` on the same
prompts, one at a time, is the baseline for latency at concurrency 1. Decoding is greedy, so
batched and unbatched runs produce the same tokens and their throughputs compare like for like.
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


def workload(count: int, max_tokens: int) -> list[GenerationRequest]:
    """Distinct tool-calling requests (different cities and phrasing, so prompt lengths vary)."""
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


def plain_generate(
    backend: TransformersBackend, requests: Sequence[GenerationRequest], max_tokens: int
) -> Figures:
    """The baseline: the same prompts through `model.generate` directly, one at a time."""
    import torch

    assert backend.adapter is not None
    latencies: list[float] = []
    tokens = 0
    started_all = time.perf_counter()
    for request in requests:
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
        latencies.append(time.perf_counter() - started)
        tokens += int(output.shape[1] - ids["input_ids"].shape[1])
    return Figures(
        "plain generate",
        1,
        len(requests),
        time.perf_counter() - started_all,
        tokens,
        latencies,
        len(requests),
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
    )
    backend = TransformersBackend(options)
    load_started = time.perf_counter()
    await backend.start()
    print(f"model: {backend.describe()}, loaded in {time.perf_counter() - load_started:.1f} s")
    print(
        f"requests per level: {args.requests}, max_tokens {args.max_new_tokens}, "
        f"batching on: max_batch {args.max_batch}, batch_wait_ms {args.batch_wait_ms:g}"
    )
    requests = workload(args.requests, args.max_new_tokens)
    try:
        await drive(backend, requests[: min(4, len(requests))], 4, "warm-up")
        print(HEADER)
        baseline = plain_generate(backend, requests, args.max_new_tokens)
        print(baseline.row())
        results: dict[tuple[str, int], Figures] = {}
        for concurrency in args.concurrency:
            for label, max_batch in (("batching off", 1), ("batching on", args.max_batch)):
                backend.options = dataclasses.replace(options, max_batch=max_batch)
                figures = await drive(backend, requests, concurrency, label)
                results[(label, concurrency)] = figures
                print(figures.row(), flush=True)
    finally:
        await backend.close()

    top = max(args.concurrency)
    on, off = results[("batching on", top)], results[("batching off", top)]
    speedup = (on.requests / on.seconds) / (off.requests / off.seconds)
    print(f"\nbatched/unbatched throughput at concurrency {top}: {speedup:.2f}x (target >= 3x)")
    if 1 in args.concurrency:
        single = results[("batching on", 1)]
        overhead = statistics.median(single.latencies) / statistics.median(baseline.latencies) - 1
        print(f"latency at concurrency 1 vs plain generate (p50): {overhead * 100:+.1f}% (target within 10%)")
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
    parser.add_argument("--max-new-tokens", type=int, default=32)
    parser.add_argument("--max-batch", type=int, default=8)
    parser.add_argument("--batch-wait-ms", type=float, default=10.0)
    parser.add_argument("--concurrency", type=_levels, default=[1, 4, 8], help="e.g. 1,4,8")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0: torch's default)")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    return asyncio.run(run(args))


if __name__ == "__main__":
    sys.exit(main())
