"""Command line: ``python -m scoring check ...`` judges one output; ``python -m scoring demo`` shows
the scorer on built-in samples.

    python -m scoring check --functions F.json --answer A.json --category simple --output '[f(a=1)]'
    echo '<tool_call>{"name": "f", "arguments": {"a": 1}}</tool_call>' | \\
        python -m scoring check --functions F.json --answer A.json --category simple --output - --json

Exit status: 0 valid, 1 invalid, 2 bad arguments or files (one line on stderr, no traceback).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from scoring.checking import CATEGORY_RULES, check
from scoring.demo import run_demo
from scoring.model import COMPONENTS, Call, Verdict
from subnet.cli import USER_ERROR_EXIT_CODE, OneLineParser, UsageError, run_main

EXIT_VALID, EXIT_INVALID, EXIT_USAGE = 0, 1, USER_ERROR_EXIT_CODE


def _load_json(path: str, what: str) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise UsageError(f"cannot read {what} file {path!r}: {error.strerror or error}") from None
    except (ValueError, UnicodeDecodeError) as error:
        raise UsageError(f"{what} file {path!r} is not valid JSON: {error}") from None


def _functions(data: Any) -> Any:
    """A list of schemas, or a BFCL question entry / OpenAI request holding them."""
    if isinstance(data, dict):
        for key in ("function", "functions", "tools"):
            if key in data:
                return data[key]
    return data


def _answer(data: Any) -> Any:
    """A BFCL possible-answer list, or a BFCL possible-answer entry (``{"id", "ground_truth"}``)."""
    if isinstance(data, dict) and "ground_truth" in data:
        return data["ground_truth"]
    return data


def _show_call(call: Call) -> str:
    arguments = ", ".join(f"{name}={value!r}" for name, value in call.arguments.items())
    return f"{call.name}({arguments})"


def format_verdict(verdict: Verdict) -> str:
    """Human-readable verdict: status line, the reason, components and the decoded calls."""
    status = "VALID" if verdict.valid else f"INVALID  {verdict.error_type}"
    lines = [f"{status}  score {verdict.score:.3f}"]
    if verdict.message:
        lines.append(f"  why: {verdict.message}")
    lines.append(
        "  components: " + "  ".join(f"{name} {verdict.components[name]:.2f}" for name in COMPONENTS)
    )
    if verdict.calls:
        lines.append("  calls: " + "; ".join(_show_call(call) for call in verdict.calls))
    return "\n".join(lines)


def _parser() -> OneLineParser:
    parser = OneLineParser(prog="python -m scoring", description="Decode and check tool calls, BFCL style.")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)
    checker = commands.add_parser("check", help="judge one model output against one task")
    checker.add_argument("--functions", required=True, help="JSON file: function schemas (BFCL or OpenAI)")
    checker.add_argument("--answer", help="JSON file: BFCL possible answer (not needed for irrelevance)")
    checker.add_argument("--category", required=True, choices=sorted(CATEGORY_RULES), metavar="CATEGORY")
    checker.add_argument("--output", required=True, help="the model's output text, or - to read stdin")
    checker.add_argument("--json", action="store_true", help="print the verdict as JSON")
    commands.add_parser("demo", help="show verdicts on built-in sample outputs")
    return parser


def _run_check(args: argparse.Namespace) -> int:
    functions = _functions(_load_json(args.functions, "functions"))
    answer = _answer(_load_json(args.answer, "answer")) if args.answer else []
    try:
        output = sys.stdin.read() if args.output == "-" else args.output
    except UnicodeDecodeError as error:
        raise UsageError(f"standard input is not UTF-8 text: {error}") from None
    try:
        verdict = check(output, functions, answer, args.category)
    except ValueError as error:
        raise UsageError(str(error)) from None
    print(json.dumps(verdict.to_dict(), ensure_ascii=False) if args.json else format_verdict(verdict))
    return EXIT_VALID if verdict.valid else EXIT_INVALID


def main(argv: list[str] | None = None) -> int:
    def run() -> int:
        args = _parser().parse_args(argv)
        if args.command == "demo":
            run_demo(format_verdict)
            return EXIT_VALID
        return _run_check(args)

    return run_main("scoring", run)
