"""Guided decoding's cost: tokens per second guided and unguided, batch 1 and 8, before and after.

    .venv/bin/python bench/guided_speed.py                      # tiny and demo models, HEAD vs --before
    .venv/bin/python bench/guided_speed.py --models tiny --before 2e85ffe --threads 1

"After" is this checkout. "Before" is another revision (``--before``, default the commit before
guided decoding moved to xgrammar), checked out with ``git worktree`` into a temporary folder;
each implementation runs in its own process (same interpreter, same virtualenv, same machine),
one after the other, so both figures come from one run. Guided answers end at their call while
unguided ones often run to the budget, so tokens per second also moves with the answers'
lengths (each prompt's prefill is shared by fewer tokens): the guide's own time per guided token
(every call of the ``GuidedCalls`` processor, timed) is the direct cost. Every configuration serves the same
``--requests`` requests (generated tasks, ``tool_choice: required``, greedy, ``--max-tokens``)
through the transformers backend, either all at once with ``max_batch`` 8 or one at a time
(batch 1), after one warm-up request; tokens per second is completion tokens over wall time.
Models: ``tiny`` (the tests' 2-layer random Llama, built into a temporary folder) and ``demo``
(SmolLM2-135M, ``--model.path demo``).
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from subnet.cli import OneLineParser, user_errors

ROOT = Path(__file__).resolve().parent.parent
BEFORE = "2e85ffe"  # the last commit with the hand-written automaton (then subnet/miner/guided.py)


async def _measure(model: str, guided: str, batch: int, requests: int, max_tokens: int) -> dict[str, Any]:
    import tasks
    from subnet.miner import GenerationRequest, ModelOptions
    from subnet.miner.guided import GuidedCalls
    from subnet.miner.transformers_backend import TransformersBackend

    # the guide's own time: every call of the processor (both implementations name it GuidedCalls)
    spent = [0.0]
    plain = GuidedCalls.__call__

    def timed(self: Any, *args: Any) -> Any:
        started = time.perf_counter()
        try:
            return plain(self, *args)
        finally:
            spent[0] += time.perf_counter() - started

    GuidedCalls.__call__ = timed  # type: ignore[method-assign,assignment]

    backend = TransformersBackend(
        ModelOptions(path=model, guided=guided, max_batch=batch, batch_wait_ms=50, max_new_tokens=max_tokens)
    )
    await backend.start()
    try:
        drawn = tasks.generate("guided-speed", requests + 1, mix={"simple": 0.5, "multiple": 0.5})
        asked = [
            GenerationRequest(
                messages=task.messages, tools=task.tools, tool_choice="required", max_tokens=max_tokens
            )
            for task in drawn
        ]
        await backend.generate(asked[0])  # warm-up
        spent[0] = 0.0
        started = time.perf_counter()
        if batch == 1:
            results = [await backend.generate(request) for request in asked[1:]]
        else:
            results = list(await asyncio.gather(*(backend.generate(request) for request in asked[1:])))
        elapsed = time.perf_counter() - started
    finally:
        await backend.close()
        GuidedCalls.__call__ = plain  # type: ignore[method-assign]
    tokens = sum(result.usage.completion_tokens for result in results)
    calls = sum(1 for result in results if result.tool_calls)
    return {"tokens": tokens, "seconds": elapsed, "calls": calls, "answers": len(results), "guide": spent[0]}


def child(argv: Sequence[str]) -> int:
    """One implementation: every configuration, one JSON line each on stdout."""
    options = json.loads(argv[0])
    # import this tree's code, not the editable install's (its finder runs before sys.path)
    sys.meta_path[:] = [finder for finder in sys.meta_path if "__editable__" not in repr(finder)]
    sys.path.insert(0, options["tree"])
    import torch

    import subnet

    assert Path(subnet.__file__).is_relative_to(options["tree"]), subnet.__file__
    torch.set_num_threads(options["threads"])
    for model_name, model in options["models"].items():
        for batch in options["batches"]:
            for guided in ("off", "on"):
                figures = asyncio.run(
                    _measure(model, guided, batch, options["requests"], options["max_tokens"])
                )
                print(
                    json.dumps({"model": model_name, "batch": batch, "guided": guided, **figures}), flush=True
                )
    return 0


def _worktree(revision: str, folder: Path) -> Path:
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(folder), revision],
        check=True,
        capture_output=True,
    )
    return folder


def _run(tree: Path, options: dict[str, Any]) -> list[dict[str, Any]]:
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(
        [
            sys.executable,
            str(Path(__file__).resolve()),
            "--child",
            json.dumps({**options, "tree": str(tree)}),
        ],
        cwd=tree,
        env=environment,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-3000:])
        raise SystemExit(f"guided_speed: the run in {tree} failed")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def main(argv: Sequence[str] | None = None) -> int:
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == ["--child"]:
        return child(arguments[1:])
    from subnet.config import add_flag

    parser = OneLineParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--before", default=BEFORE, help="the revision to compare with (git)")
    parser.add_argument("--models", default="tiny,demo", help="tiny, demo or both")
    parser.add_argument("--requests", type=int, default=8)
    add_flag(parser, "model.max_new_tokens", dest="max_tokens", default=48, note="Default here: 48.")
    parser.add_argument("--threads", type=int, default=1, help="torch threads")
    with user_errors(parser.prog):
        parsed = parser.parse_args(arguments)
    wanted = [name.strip() for name in parsed.models.split(",") if name.strip()]
    with tempfile.TemporaryDirectory(prefix="guided-speed-") as scratch:
        models: dict[str, str] = {}
        if "tiny" in wanted:
            sys.path.insert(0, str(ROOT / "tests" / "miner"))
            from conftest import build_tiny_model  # the tests' tiny model

            models["tiny"] = str(build_tiny_model(Path(scratch) / "tiny"))
        if "demo" in wanted:
            models["demo"] = "demo"
        options = {
            "models": models,
            "batches": [1, 8],
            "requests": parsed.requests,
            "max_tokens": parsed.max_tokens,
            "threads": parsed.threads,
        }
        before = _worktree(parsed.before, Path(scratch) / "before")
        try:
            figures = {"before": _run(before, options), "after": _run(ROOT, options)}
        finally:
            subprocess.run(
                ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(before)], capture_output=True
            )
    print(
        f"guided decoding speed: {parsed.requests} requests, tool_choice required, greedy, "
        f"max_tokens {parsed.max_tokens}, {parsed.threads} torch thread(s); before = {parsed.before}"
    )
    print(
        "| model | batch | implementation | unguided tok/s | guided tok/s | guided / unguided "
        "| tokens per answer (unguided, guided) | guide ms per guided token | calls |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in models:
        for batch in options["batches"]:
            for label, rows in figures.items():
                row = {
                    line["guided"]: line for line in rows if line["model"] == name and line["batch"] == batch
                }
                off, on = row["off"], row["on"]
                free = off["tokens"] / off["seconds"]
                guided = on["tokens"] / on["seconds"]
                implementation = "automaton (before)" if label == "before" else "xgrammar (after)"
                per_answer = f"{off['tokens'] / off['answers']:.0f}, {on['tokens'] / on['answers']:.0f}"
                guide_ms = 1000 * on["guide"] / max(on["tokens"], 1)
                print(
                    f"| {name} | {batch} | {implementation} | {free:.1f} | {guided:.1f} | "
                    f"{guided / free:.2f} | {per_answer} | {guide_ms:.2f} | {on['calls']}/{on['answers']} |"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
