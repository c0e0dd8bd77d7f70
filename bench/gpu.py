"""The miner's transformers backend on a GPU: random weights of real shapes, one table of figures.

    bench/gpu.sh                                       # on the GPU machine: every shape, < 8 minutes
    .venv/bin/python bench/gpu.py --shapes 135m --device cpu --quick   # the same code path on a CPU

No pretrained weights are needed: each model is built in memory from its shape (layers, widths,
heads; the vocabulary is the tokenizer's), with random weights, in bfloat16 on the device. A
decoding step's speed does not depend on the weights' values. Random weights seldom write EOS, so
unguided answers run to their budget (``--tokens``) and every request writes the same number of
tokens; guided answers (``--model.guided forced``) end where the grammar closes the call.

For each shape, in order:
- ``step``: one decoding step of a running batch (1 and 8 rows, 500 tokens of context each), the
  engine's step against a plain ``model(...)`` call on a ``DynamicCache`` (what a step cost
  before the engine captured its steps);
- ``generate``: plain ``model.generate`` one request at a time (the latency baseline);
- ``served``: requests through the backend's queue and batcher as the miner serves them, at
  concurrency 1, 8, 16 and 32 (validator tasks: each with its own tools), and episode steps at
  concurrency 8; unguided and guided at concurrency 8; with ``--eager`` also the same engine with
  its steps uncaptured (``--model.cuda_graphs off``), the step path before this change.

Every timed figure is warm: its workload ran once untimed just before (graph capture, kernel
selection, allocator growth, grammar compilation), and the ``warm`` column says so; the first,
cold pass of a shape's first served run is reported too, marked ``cold``.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from subnet.cli import OneLineParser, user_errors
from subnet.miner.base import GenerationRequest, ModelOptions
from subnet.miner.continuous_batching import DecodeEngine, Row
from subnet.miner.transformers_backend import TransformersBackend


@dataclass(frozen=True)
class Shape:
    """A decoder's shape (Llama architecture); the vocabulary is the tokenizer's."""

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    intermediate: int
    tie_embeddings: bool


# SmolLM2-135M and -1.7B as published; the 8B is Llama-3.1-8B's shape (its 128k vocabulary
# replaced by the demo tokenizer's 49k: about 0.6 GB less to read a step).
SHAPES = {
    "135m": Shape("135m", 30, 576, 9, 3, 1536, True),
    "1.7b": Shape("1.7b", 24, 2048, 32, 32, 8192, True),
    "8b": Shape("8b", 32, 4096, 32, 8, 14336, False),
}


def build_model(shape: Shape, vocabulary: int, device: str, dtype: str) -> Any:
    import torch
    from transformers import AutoModelForCausalLM, LlamaConfig

    config = LlamaConfig(
        vocab_size=vocabulary,
        hidden_size=shape.hidden,
        intermediate_size=shape.intermediate,
        num_hidden_layers=shape.layers,
        num_attention_heads=shape.heads,
        num_key_value_heads=shape.kv_heads,
        max_position_embeddings=8192,
        tie_word_embeddings=shape.tie_embeddings,
        bos_token_id=1,
        eos_token_id=2,
        pad_token_id=2,
    )
    torch.manual_seed(0)
    with torch.device(device):
        model = AutoModelForCausalLM.from_config(config, dtype=getattr(torch, dtype))
    return model.eval()


class InMemoryBackend(TransformersBackend):
    """The transformers backend serving a model built in memory (no folder to load)."""

    def __init__(self, options: ModelOptions, model: Any, tokenizer: Any) -> None:
        super().__init__(options)
        self._given = (model, tokenizer)

    def _load(self) -> None:
        model, tokenizer = self._given
        self.device = str(next(model.parameters()).device)
        self.dtype = str(next(model.parameters()).dtype).removeprefix("torch.")
        self.model_dir = "(in memory)"
        self.adopt(model, tokenizer)


@dataclass
class Figure:
    shape: str
    workload: str
    mode: str
    concurrency: int
    requests: int
    tokens: int
    seconds: float
    latencies: list[float]
    warm: bool = True
    note: str = ""

    @property
    def tokens_per_second(self) -> float:
        return self.tokens / self.seconds if self.seconds else 0.0

    def row(self) -> str:
        p50 = statistics.median(self.latencies) if self.latencies else 0.0
        return (
            f"{self.shape:>5} {self.workload:<9} {self.mode:<15} {self.concurrency:>4} {self.requests:>4} "
            f"{self.tokens:>6} {self.tokens_per_second:>9.1f} {p50 * 1000:>9.1f} "
            f"{'warm' if self.warm else 'cold':>5}  {self.note}"
        )


HEADER = (
    f"{'shape':>5} {'workload':<9} {'mode':<15} {'conc':>4} {'reqs':>4} {'tokens':>6} "
    f"{'tokens/s':>9} {'p50 ms':>9} {'':>5}  note"
)


def validator_requests(count: int, tokens: int) -> list[list[GenerationRequest]]:
    """Tasks as a validator sends them (each its own tools), one request a caller's run."""
    import tasks

    return [
        [GenerationRequest(messages=task.messages, tools=task.tools, max_tokens=tokens)]
        for task in tasks.generate(b"bench-gpu", count)
    ]


def episode_requests(count: int, tokens: int) -> list[list[GenerationRequest]]:
    """Episodes' steps, one episode a caller's run (each step's prompt extends the one before)."""
    from tasks.episodes import generate_episodes
    from tasks.episodes.reference import trajectory

    runs: list[list[GenerationRequest]] = []
    for episode in generate_episodes(b"bench-gpu-episodes", count):
        messages = trajectory(episode)["messages"]
        run = []
        for cut, message in enumerate(messages):
            if message["role"] == "assistant":
                turn = sum(1 for earlier in messages[:cut] if earlier["role"] == "user") - 1
                run.append(
                    GenerationRequest(messages=messages[:cut], tools=episode.offered(turn), max_tokens=tokens)
                )
        runs.append(run)
    return runs


async def drive(
    backend: TransformersBackend, runs: Sequence[Sequence[GenerationRequest]], concurrency: int
) -> tuple[int, float, list[float]]:
    """Every run, at most ``concurrency`` in flight, each run's requests in turn: completion
    tokens, seconds, latencies."""
    queue = list(reversed(runs))
    latencies: list[float] = []
    tokens = 0

    async def caller() -> None:
        nonlocal tokens
        while queue:
            for request in queue.pop():
                started = time.perf_counter()
                result = await backend.generate(request)
                latencies.append(time.perf_counter() - started)
                tokens += result.usage.completion_tokens

    started = time.perf_counter()
    await asyncio.gather(*(caller() for _ in range(concurrency)))
    return tokens, time.perf_counter() - started, latencies


def timed_steps(engine: DecodeEngine) -> list[tuple[int, float]]:
    """Record (decoding rows, seconds) of each engine step that only decoded (no prefill in it)."""
    record: list[tuple[int, float]] = []
    real_step = engine.step

    def step() -> list[Row]:
        prefilling = any(row.generated == [] for row in engine.rows)
        rows = engine.active
        started = time.perf_counter()
        finished = real_step()
        if rows and not prefilling:
            record.append((rows, time.perf_counter() - started))
        return finished

    engine.step = step  # type: ignore[method-assign]
    return record


def step_note(record: Sequence[tuple[int, float]]) -> str:
    """The median step at the batch size most steps ran with."""
    if not record:
        return ""
    counts: dict[int, int] = {}
    for rows, _ in record:
        counts[rows] = counts.get(rows, 0) + 1
    rows = max(counts, key=lambda size: (counts[size], size))
    seconds = statistics.median(took for size, took in record if size == rows)
    return f"; step {seconds * 1000:.2f} ms at {rows} rows"


async def served(
    shape: str,
    backend: TransformersBackend,
    workload: str,
    mode: str,
    runs: Sequence[Sequence[GenerationRequest]],
    concurrency: int,
    *,
    report_cold: bool = False,
) -> list[Figure]:
    """The workload once untimed (warm-up), then timed."""
    figures = []
    if backend.engine is not None and backend.engine.prefixes is not None:
        backend.engine.prefixes.clear()
    tokens, seconds, latencies = await drive(backend, runs, concurrency)
    if report_cold:
        figures.append(
            Figure(shape, workload, mode, concurrency, len(latencies), tokens, seconds, latencies, False)
        )
    if backend.engine is not None and backend.engine.prefixes is not None:
        backend.engine.prefixes.clear()
    engine = backend.engine
    record = timed_steps(engine) if engine is not None else []
    tokens, seconds, latencies = await drive(backend, runs, concurrency)
    note = ""
    if engine is not None:
        note = (
            f"graphs {'on' if engine.graphs else 'off'}, {len(engine._captured)} captured{step_note(record)}"
        )
        del engine.step  # the engine's own again
    figures.append(
        Figure(shape, workload, mode, concurrency, len(latencies), tokens, seconds, latencies, note=note)
    )
    return figures


def synchronize(device: str) -> None:
    import torch

    if device.startswith("cuda"):
        torch.cuda.synchronize()


def median_seconds(action: Callable[[], object], device: str, repeats: int, warm_up: int = 3) -> float:
    for _ in range(warm_up):
        action()
    synchronize(device)
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        synchronize(device)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def step_figures(shape: str, model: Any, device: str, rows: int, context: int, repeats: int) -> list[Figure]:
    """One decoding step of ``rows`` rows at ``context`` tokens: the engine's (captured on a GPU)
    and a plain forward pass on a DynamicCache."""
    import random

    import torch
    from transformers import DynamicCache

    vocabulary = int(model.config.vocab_size)
    rng = random.Random(rows * 1000 + context)
    figures = []
    for graphs in (True, False):
        engine = DecodeEngine(
            model, eos_ids=[], pad_id=0, prefix_tokens=0, max_rows=max(rows, 8), graphs=graphs
        )
        engine.admit(
            [
                Row(key=index, prompt=[rng.randrange(3, vocabulary) for _ in range(context)], budget=128)
                for index in range(rows)
            ]
        )
        seconds = median_seconds(engine.step, device, repeats)
        label = "engine graphs" if engine.graphs else "engine eager"
        figures.append(
            Figure(shape, "step", label, rows, repeats, rows, seconds, [seconds], note=f"context {context}")
        )
        engine.reset()
        del engine
    cache = DynamicCache(config=model.config)
    prompt = torch.tensor(
        [[rng.randrange(3, vocabulary) for _ in range(context)] for _ in range(rows)], device=device
    )
    with torch.inference_mode():
        model(input_ids=prompt, past_key_values=cache, use_cache=True, logits_to_keep=1)
    fed = [context]

    def plain() -> None:
        with torch.inference_mode():
            model(
                input_ids=torch.ones((rows, 1), dtype=torch.long, device=device),
                position_ids=torch.full((rows, 1), fed[0], dtype=torch.long, device=device),
                past_key_values=cache,
                use_cache=True,
                logits_to_keep=1,
            )
        fed[0] += 1

    seconds = median_seconds(plain, device, repeats)
    figures.append(
        Figure(
            shape, "step", "plain forward", rows, repeats, rows, seconds, [seconds], note=f"context {context}"
        )
    )
    return figures


def play_joining(
    model: Any, prompts: list[list[int]], budgets: list[int], *, captured: bool
) -> tuple[list[list[int]], DecodeEngine]:
    """Each row's tokens (greedy) when rows join two at a time at steps 0, 3 and 5 and leave at
    their budgets; ``captured`` False runs the same bucketed steps eagerly."""
    engine = DecodeEngine(model, eos_ids=[], pad_id=0, prefix_tokens=0, max_rows=4, graphs=True)
    engine.graphs = engine.graphs and captured
    rows = [Row(key=i, prompt=p, budget=b) for i, (p, b) in enumerate(zip(prompts, budgets, strict=True))]
    arrivals = {0: rows[:2], 3: rows[2:4], 5: rows[4:]}
    for step in range(200):
        if step in arrivals:
            engine.admit(arrivals[step])
        engine.step()
        if not engine.active and step > max(arrivals):
            break
    return [row.generated for row in rows], engine


def same_tokens_check(model: Any, device: str) -> str:
    """Whether captured steps write what the same steps run eagerly write (greedy, rows joining
    and leaving at different steps): the captured path must change the speed only."""
    import random

    vocabulary = int(model.config.vocab_size)
    rng = random.Random(5)
    prompts = [[rng.randrange(3, vocabulary) for _ in range(rng.randrange(20, 300))] for _ in range(6)]
    budgets = [24, 7, 30, 12, 3, 18]
    captured, engine = play_joining(model, prompts, budgets, captured=True)
    eager, _ = play_joining(model, prompts, budgets, captured=False)
    replayed = f"{engine.replayed} of {engine.steps} steps replayed, {len(engine._captured)} graphs"
    same = captured == eager
    return f"captured steps write the same tokens as eager ones: {'yes' if same else 'NO'} ({replayed})"


def generate_figure(
    shape: str, backend: TransformersBackend, runs: Sequence[Sequence[GenerationRequest]], tokens: int
) -> Figure:
    """Plain ``model.generate`` on the same prompts, one at a time (after one warm-up)."""
    import torch

    from subnet.miner.prompt import build_prompt

    assert backend.adapter is not None
    requests = [run[0] for run in runs]
    latencies = []
    written = 0
    for index, request in enumerate([requests[0], *requests]):
        prompt = build_prompt(backend.tokenizer, backend.adapter, backend.options.format, request)
        ids = backend.tokenizer(prompt.text, add_special_tokens=False, return_tensors="pt").to(backend.device)
        started = time.perf_counter()
        with torch.inference_mode():
            output = backend.model.generate(
                **ids,
                max_new_tokens=tokens,
                min_new_tokens=tokens,
                do_sample=False,
                pad_token_id=backend.tokenizer.pad_token_id,
            )
        synchronize(backend.device)
        if index:  # the first is the warm-up
            latencies.append(time.perf_counter() - started)
            written += int(output.shape[1] - ids["input_ids"].shape[1])
    return Figure(shape, "validator", "plain generate", 1, len(latencies), written, sum(latencies), latencies)


async def bench_shape(
    args: argparse.Namespace, shape: Shape, tokenizer: Any, print_now: Callable[[Figure], None]
) -> None:
    started = time.perf_counter()
    model = build_model(shape, len(tokenizer), args.device, args.dtype)
    synchronize(args.device)
    print(
        f"# {shape.name}: built in {time.perf_counter() - started:.1f} s "
        f"({sum(p.numel() for p in model.parameters()) / 1e9:.2f} B parameters)",
        flush=True,
    )
    if args.device.startswith("cuda"):
        print(f"# {shape.name}: {same_tokens_check(model, args.device)}", flush=True)
    for rows in args.step_rows:
        for figure in step_figures(shape.name, model, args.device, rows, args.context, args.repeats):
            print_now(figure)
    scale = args.requests
    validator = validator_requests(max(args.concurrency) * scale, args.tokens)
    episodes = episode_requests(8 * scale, args.tokens)
    base = ModelOptions(
        path="(in memory)", max_batch=max(args.concurrency), max_new_tokens=args.tokens, batch_wait_ms=2.0
    )
    modes = [("graphs", dataclasses.replace(base, cuda_graphs="auto"))]
    if args.guided:
        # The guide's closing window is its last 64 tokens (the expensive path: candidates
        # checked one by one); a budget of 64 would keep every step in it. Guided answers end
        # where the call closes, so the larger budget does not lengthen them.
        guided = dataclasses.replace(
            base, cuda_graphs="auto", guided="forced", max_new_tokens=max(args.tokens, 256)
        )
        modes.append(("graphs guided", guided))
    if shape.name in args.eager:
        modes.append(("eager", dataclasses.replace(base, cuda_graphs="off")))
    for label, options in modes:
        backend = InMemoryBackend(options, model, tokenizer)
        await backend.start()
        try:
            if label == "graphs":
                print_now(generate_figure(shape.name, backend, validator[: max(2, scale)], args.tokens))
            levels = (
                args.concurrency
                if label == "graphs"
                else [level for level in args.concurrency if level in (1, 8)]
            )
            budget = options.max_new_tokens
            asked = [
                [dataclasses.replace(request, max_tokens=budget) for request in run] for run in validator
            ]
            for index, level in enumerate(levels):
                runs = asked[: level * scale] if level > 1 else asked[: max(2, scale)]
                for figure in await served(
                    shape.name,
                    backend,
                    "validator",
                    label,
                    runs,
                    level,
                    report_cold=index == 0 and label == "graphs",
                ):
                    print_now(figure)
            if label != "eager":
                steps = [
                    [dataclasses.replace(request, max_tokens=budget) for request in run] for run in episodes
                ]
                for figure in await served(shape.name, backend, "episode", label, steps, 8):
                    print_now(figure)
        finally:
            await backend.close()
            backend.engine = None  # its buffers and captured steps go before the next mode's
    del model
    if args.device.startswith("cuda"):
        import torch

        torch.cuda.empty_cache()


def _levels(text: str) -> list[int]:
    try:
        values = [int(part) for part in text.split(",") if part]
    except ValueError:
        values = []
    if not values or min(values) < 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a list of positive integers such as 1,8,16")
    return values


def _shapes(text: str) -> list[Shape]:
    names = [part for part in text.split(",") if part]
    unknown = [name for name in names if name not in SHAPES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown shape {', '.join(unknown) or text!r}; choose from {', '.join(SHAPES)}"
        )
    return [SHAPES[name] for name in names]


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = OneLineParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--shapes", type=_shapes, default=_shapes("135m,1.7b,8b"), help="e.g. 135m,1.7b,8b")
    parser.add_argument("--tokenizer", default="demo", help="tokenizer folder ('demo': the demo model's)")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--dtype", default="bfloat16", choices=["bfloat16", "float16", "float32"])
    parser.add_argument("--tokens", type=int, default=64, help="tokens per answer (the budget)")
    parser.add_argument("--concurrency", type=_levels, default=[1, 8, 16, 32])
    parser.add_argument("--requests", type=int, default=2, help="requests per caller at each level")
    parser.add_argument("--step-rows", type=_levels, default=[1, 8])
    parser.add_argument("--context", type=int, default=500, help="context of the step figures")
    parser.add_argument("--repeats", type=int, default=20, help="timed steps per step figure")
    parser.add_argument("--no-guided", dest="guided", action="store_false", help="skip the guided runs")
    parser.add_argument(
        "--eager",
        type=lambda text: [shape.name for shape in _shapes(text)],
        default=[],
        metavar="SHAPES",
        help="shapes also served with their steps uncaptured (--model.cuda_graphs off), e.g. 1.7b",
    )
    parser.add_argument("--quick", action="store_true", help="a CPU try-out: small counts")
    with user_errors(parser.prog):
        args = parser.parse_args(argv)
    if args.quick:
        args.tokens, args.concurrency, args.requests, args.step_rows, args.repeats = 8, [1, 4], 1, [1], 3
        args.eager = args.eager or [shape.name for shape in args.shapes]
    return args


def load_tokenizer(where: str) -> Any:
    from transformers import AutoTokenizer

    if where == "demo":
        from subnet.miner.demo import ensure_demo_model

        where = str(ensure_demo_model())
    return AutoTokenizer.from_pretrained(where)


async def run(args: argparse.Namespace) -> int:
    tokenizer = load_tokenizer(args.tokenizer)
    figures: list[Figure] = []

    def print_now(figure: Figure) -> None:
        figures.append(figure)
        print(figure.row(), flush=True)

    started = time.perf_counter()
    print(HEADER, flush=True)
    for shape in args.shapes:
        try:
            await bench_shape(args, shape, tokenizer, print_now)
        except Exception as error:  # one shape's failure (out of memory, say) must not lose the others
            print(f"# {shape.name}: failed: {type(error).__name__}: {error}", flush=True)
    print(
        f"\n# all figures ({time.perf_counter() - started:.0f} s; step rows: tokens/s is rows per step time):"
    )
    print(HEADER)
    for figure in figures:
        print(figure.row())
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return asyncio.run(run(parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
