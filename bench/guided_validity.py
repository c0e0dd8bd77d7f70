"""Guided calls in every guided format: how many are schema-valid, and what guiding costs.

    .venv/bin/python bench/guided_validity.py                       # every guided format, 500 tasks
    .venv/bin/python bench/guided_validity.py --formats glm,qwen3_coder --n 100 --show 3

For each format the tests' tiny random Llama (its own choices are noise: only the guide makes its
answers calls) answers ``--n`` generated tasks with ``tool_choice: required`` through the real
transformers backend (``--model.guided on``, the format's adapter), and every call is checked
against the offered tool's schema (the episode runner's check) and with the BFCL checker. The
table gives per format the tasks served (prompts longer than the model's positions are refused;
the tiny model's 600-token vocabulary spells a prompt long: at its default 2,048 positions about
two thirds of a draw are served, so ``--n 740`` serves about 500; ``--positions`` raises it, at a
steep cost in time on a CPU), the calls, the schema-valid share, and the tokens per second guided
and unguided (the same requests with ``--model.guided off``).
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import tasks
from subnet.cli import OneLineParser, int_arg, user_errors
from subnet.miner import GenerationRequest, ModelOptions, build_backend
from subnet.miner.adapters import ADAPTERS
from subnet.miner.base import BadModelRequest
from subnet.miner.guided import guided_format_names
from subnet.miner.transformers_backend import TransformersBackend
from tasks.episodes.arguments import schema_error

# Tokens an answer may take: a family's markup spelled by the tiny model's 600-token vocabulary
# takes many (a GLM call with six required arguments needs over 96 for its tags alone, a DSML call
# with five over 256).
MAX_TOKENS = 320


async def _answers(model: Path, format_name: str, guided: str, requests: list[GenerationRequest]) -> Any:
    budget = max(request.max_tokens or MAX_TOKENS for request in requests)
    backend = build_backend(
        ModelOptions(path=str(model), guided=guided, max_new_tokens=budget, batch_wait_ms=20, max_batch=16)
    )
    assert isinstance(backend, TransformersBackend)
    await backend.start()
    backend.adapter = ADAPTERS[format_name]
    try:
        started = time.perf_counter()
        answers = await asyncio.gather(
            *(backend.generate(request) for request in requests), return_exceptions=True
        )
        return answers, time.perf_counter() - started
    finally:
        await backend.close()


def _invalid(task: Any, result: Any) -> list[str]:
    """Why each call of an answer is not schema-valid ([] when every one is; no call is one)."""
    functions = {tool["function"]["name"]: tool["function"] for tool in task.tools}
    if not result.tool_calls:
        return ["no call"]
    reasons = []
    for tool_call in result.tool_calls:
        name = tool_call["function"]["name"]
        if name not in functions:
            reasons.append(f"unknown tool {name}")
            continue
        error = schema_error(json.loads(tool_call["function"]["arguments"]), functions[name]["parameters"])
        if error is not None:
            reasons.append(error)
    return reasons


def _tokens(answers: Sequence[Any]) -> int:
    return sum(answer.usage.completion_tokens for answer in answers if not isinstance(answer, BaseException))


async def measure(
    model: Path, format_name: str, n: int, show: int, unguided: bool, max_tokens: int = MAX_TOKENS
) -> dict[str, Any]:
    chosen = tasks.generate("guided-validity", n)
    requests = [
        GenerationRequest(
            messages=task.messages, tools=task.tools, tool_choice="required", max_tokens=max_tokens
        )
        for task in chosen
    ]
    answers, seconds = await _answers(model, format_name, "on", requests)
    served = [
        (task, answer)
        for task, answer in zip(chosen, answers, strict=True)
        if not isinstance(answer, BadModelRequest)
    ]
    crashed = [answer for _, answer in served if isinstance(answer, BaseException)]
    calls = valid = 0
    shown = 0
    for task, answer in served:
        if isinstance(answer, BaseException):
            continue
        reasons = _invalid(task, answer)
        count = max(1, len(answer.tool_calls or ()))
        calls += count
        valid += count - len(reasons)
        if reasons and shown < show:
            shown += 1
            print(f"  {format_name}: {reasons[0]}: {answer.raw_text!r}", file=sys.stderr)
    row = {
        "format": format_name,
        "served": len(served),
        "crashed": len(crashed),
        "calls": calls,
        "valid": valid / calls if calls else 0.0,
        "guided_tok_s": _tokens(answers) / seconds,
    }
    if unguided:
        plain, plain_seconds = await _answers(model, format_name, "off", requests)
        row["unguided_tok_s"] = _tokens(plain) / plain_seconds
    return row


def main(argv: Sequence[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.split("\n")[0])
    parser.add_argument("--formats", default="", help="comma-separated (default: every guided format)")
    parser.add_argument("--n", type=int, default=500, help="tasks per format")
    parser.add_argument("--show", type=int, default=0, help="print this many invalid answers per format")
    parser.add_argument("--no-unguided", action="store_true", help="skip the unguided speed run")
    parser.add_argument(
        "--positions", type=int, default=2048, help="the tiny model's longest sequence (default 2048)"
    )
    parser.add_argument("--model", default="", help="a model folder (default: the tests' tiny model)")
    parser.add_argument(
        "--max-tokens",
        type=int_arg(16, 4096),
        default=MAX_TOKENS,
        help=f"tokens an answer may take (default {MAX_TOKENS}: the tiny vocabulary spells markup long; "
        "a real tokenizer needs fewer, and unguided prose runs to the budget)",
    )
    with user_errors(parser.prog):
        args = parser.parse_args(argv)
        formats = [name for name in args.formats.split(",") if name] or sorted(guided_format_names())
        unknown = sorted(set(formats) - set(guided_format_names()))
        if unknown:
            parser.error(f"not guided: {', '.join(unknown)} (guided: {', '.join(guided_format_names())})")
    with tempfile.TemporaryDirectory() as scratch:
        if args.model:
            model = Path(args.model)
        else:
            sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "miner"))
            from conftest import build_tiny_model  # the tests' tiny model

            model = build_tiny_model(Path(scratch) / "tiny", positions=args.positions)
        header = ("format", "served", "calls", "valid", "guided tok/s", "unguided tok/s")
        print(f"{header[0]:<18} {header[1]:>6} {header[2]:>6} {header[3]:>7} {header[4]:>13} {header[5]:>15}")
        for name in formats:
            row = asyncio.run(measure(model, name, args.n, args.show, not args.no_unguided, args.max_tokens))
            plain = f"{row['unguided_tok_s']:.0f}" if "unguided_tok_s" in row else "-"
            print(
                f"{name:<18} {row['served']:>6} {row['calls']:>6} {row['valid']:>7.1%} "
                f"{row['guided_tok_s']:>13.0f} {plain:>15}"
                + (f"  ({row['crashed']} crashed)" if row["crashed"] else ""),
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
