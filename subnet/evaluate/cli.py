"""The command line of ``python -m subnet.evaluate``: flags -> :class:`EvaluateSettings`, and ``main``."""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from subnet.cli import (
    OneLineParser,
    argparse_type,
    env_name,
    float_arg,
    int_arg,
    name_arg,
    run_main,
    user_errors,
)
from subnet.evaluate.episodes import render_episodes, run_episodes
from subnet.evaluate.report import RENDERERS, StderrProgress, signing_hint, summarise
from subnet.evaluate.run import TaskResult, build_tasks, run_evaluation
from subnet.evaluate.settings import PROG, EvaluateError, EvaluateSettings, chat_completions_url
from subnet.phrasing import PhrasingSetupError, add_phrasing_arguments, phrasing_settings
from subnet.protocol import MAX_MAX_TOKENS
from tasks import CATEGORIES
from tasks.sources import PATH_FLAGS

# Flag values: a whole number of at least 1, seconds or a rate above 0, a temperature in 0..2.
_positive_int = int_arg(1)
_positive_float = float_arg(0.0, low_open=True)
_temperature = float_arg(0.0, 2.0)

# Former spellings, refused in one line naming the flag now: the validator's and miner's names
# for the same things (an API key only ever through an environment variable).
RENAMED = {
    "--n": "--tasks.count",
    "--timeout": "--query.timeout",
    "--concurrency": "--query.concurrency",
    "--api-key": "--model.api_key_env VAR (the name of an environment variable holding the key)",
    "--model": "--model.name",
    "--miner-hotkey": "--miner.hotkey",
    "--sources": "--tasks.sources",
}


def build_parser(categories: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The command line; `categories` (when known) are the choices of --category."""
    parser = OneLineParser(
        prog=PROG,
        renamed=RENAMED,
        description=(
            "Run a fresh, rotating tool-calling task set against an OpenAI-compatible endpoint "
            "and print BFCL-style accuracy per category, error types and latency."
        ),
    )
    parser.add_argument(
        "--endpoint",
        required=True,
        metavar="URL",
        help="server root, .../v1, or the full .../v1/chat/completions URL "
        "(plain HTTP; signed with --wallet.name)",
    )
    parser.add_argument(
        "--tasks.count",
        dest="n",
        type=_positive_int,
        default=None,  # 200; None tells that it was not given (it means nothing with --episodes)
        metavar="N",
        help="number of tasks (default 200)",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        metavar="S",
        help="task-set seed (default: a random one, printed so the run can be repeated)",
    )
    parser.add_argument(
        "--category",
        action="append",
        default=[],
        metavar="C",
        choices=list(categories) or None,
        help="only this task category (repeatable"
        + (f"; one of {', '.join(categories)}" if categories else "")
        + "); default: the validator's mix",
    )
    parser.add_argument(
        "--tasks.sources",
        dest="sources",
        default=None,
        metavar="SPEC",
        help="task sources and shares, as the validator's flag (e.g. builtin=0.8,bfcl=0.2); default builtin",
    )
    for flag, kind in PATH_FLAGS.items():
        parser.add_argument(
            f"--tasks.{flag}",
            dest=f"paths_{flag}",
            action="append",
            default=[],
            metavar=kind.metavar.removesuffix(",..."),
            help=f"{kind.files} (repeatable; {kind.without_files})"
            if kind.without_files
            else f"{kind.files} (repeatable)",
        )
    parser.add_argument(
        "--query.concurrency",
        dest="concurrency",
        type=_positive_int,
        default=8,
        metavar="K",
        help="requests in flight at once (default 8)",
    )
    parser.add_argument(
        "--rate",
        type=_positive_float,
        default=None,
        metavar="R",
        help="start at most this many requests per second (a miner limits each caller; default: no limit)",
    )
    parser.add_argument(
        "--query.timeout",
        dest="timeout",
        type=_positive_float,
        default=60.0,
        metavar="S",
        help="seconds per request (default 60)",
    )
    parser.add_argument(
        "--model.api_key_env",
        dest="api_key_env",
        type=argparse_type(env_name),
        default=None,
        metavar="VAR",
        help="environment variable holding the endpoint's API key, sent as 'Authorization: Bearer' "
        "(the key itself is never a flag or a log line)",
    )
    parser.add_argument(
        "--model.name",
        dest="model",
        default=None,
        metavar="NAME",
        help="model name to request (default: the first one the endpoint lists at /v1/models)",
    )
    parser.add_argument(
        "--model.max_new_tokens",
        dest="max_new_tokens",
        type=int_arg(1, MAX_MAX_TOKENS),
        default=512,
        metavar="N",
        help="tokens per answer at most (the request's max_tokens; default 512)",
    )
    parser.add_argument(
        "--temperature",
        type=_temperature,
        default=0.0,
        metavar="X",
        help="sampling temperature (default 0: greedy)",
    )
    parser.add_argument(
        "--format",
        dest="output_format",
        choices=sorted(RENDERERS),
        default="table",
        help="report format on stdout (default table)",
    )
    parser.add_argument("--json", action="store_true", help="same as --format json")
    parser.add_argument(
        "--episodes",
        type=_positive_int,
        default=None,
        metavar="N",
        help="play N multi-turn episodes on simulated tools instead of single-turn tasks",
    )
    add_phrasing_arguments(parser)
    signing = parser.add_argument_group(
        "signing (for a running miner, which only serves registered validators)",
        "With --wallet.name, every request is signed with that wallet's hotkey (bt.http_auth) "
        "for the miner's hotkey, read from the miner's /health unless --miner.hotkey is given.",
    )
    signing.add_argument(
        "--wallet.name",
        dest="wallet_name",
        type=name_arg,
        default=None,
        metavar="NAME",
        help="wallet that signs",
    )
    signing.add_argument(
        "--wallet.hotkey",
        dest="wallet_hotkey",
        type=name_arg,
        default="default",
        metavar="NAME",
        help="its hotkey",
    )
    signing.add_argument(
        "--wallet.path",
        dest="wallet_path",
        type=Path,
        default=None,
        metavar="DIR",
        help="wallets directory (default: $BT_WALLET_PATH, as for the neurons, else ~/.bittensor/wallets)",
    )
    signing.add_argument(
        "--miner.hotkey", dest="miner_hotkey", default=None, metavar="SS58", help="the miner's hotkey (ss58)"
    )
    return parser


def parse_settings(argv: Sequence[str] | None, categories: Sequence[str] = ()) -> EvaluateSettings:
    """Flags -> settings. Exits with code 2 and one line on a bad flag or URL."""
    with user_errors(PROG):
        return _settings(build_parser(categories).parse_args(argv))


def _settings(args: argparse.Namespace) -> EvaluateSettings:
    endpoint = chat_completions_url(args.endpoint)
    if args.miner_hotkey is not None and args.wallet_name is None:
        raise EvaluateError("--miner.hotkey only matters with --wallet.name (the wallet that signs)")
    if args.category and args.episodes:
        raise EvaluateError("--category picks single-turn tasks; with --episodes it has no effect: drop one")
    if args.n is not None and args.episodes:
        raise EvaluateError(
            "--tasks.count counts single-turn tasks; with --episodes it means nothing: drop one"
        )
    if args.output_format == "markdown" and args.episodes:
        raise EvaluateError("--format markdown is for single-turn tasks; episodes print as table or json")
    api_key = None
    if args.api_key_env is not None:
        api_key = os.environ.get(args.api_key_env, "").strip()
        if not api_key:
            raise EvaluateError(
                f"--model.api_key_env {args.api_key_env}: the environment variable {args.api_key_env} "
                "is not set or empty"
            )
    try:
        phrasing = phrasing_settings(args)
    except PhrasingSetupError as exc:
        raise EvaluateError(str(exc)) from None
    return EvaluateSettings(
        endpoint=endpoint,
        n=args.n if args.n is not None else 200,
        seed=args.seed if args.seed is not None else secrets.randbelow(2**31),
        categories=tuple(dict.fromkeys(args.category)),
        sources=args.sources,
        paths={
            flag: tuple(getattr(args, f"paths_{flag}"))
            for flag in PATH_FLAGS
            if getattr(args, f"paths_{flag}")
        },
        concurrency=args.concurrency,
        rate=args.rate,
        timeout_s=args.timeout,
        api_key=api_key,
        api_key_env=args.api_key_env,
        model=args.model,
        max_new_tokens=args.max_new_tokens,
        temperature=args.temperature,
        output_format="json" if args.json else args.output_format,
        wallet_name=args.wallet_name,
        wallet_hotkey=args.wallet_hotkey,
        wallet_path=args.wallet_path,
        receiver_hotkey=args.miner_hotkey,
        phrasing=phrasing,
        episodes=args.episodes,
    )


def _main_episodes(settings: EvaluateSettings) -> int:
    assert settings.episodes is not None
    print(
        f"evaluate: seed {settings.seed}, {settings.episodes} episodes at {settings.endpoint}",
        file=sys.stderr,
    )
    try:
        model, results = asyncio.run(run_episodes(settings, settings.episodes))
    except KeyboardInterrupt:
        print("\nevaluate: interrupted", file=sys.stderr)
        return 130
    print(render_episodes(model, results, as_json=settings.output_format == "json"))
    return 0


def _main_tasks(settings: EvaluateSettings) -> int:
    used_model: list[str] = []
    finished: list[TaskResult] = []
    started = time.perf_counter()

    def announce(model: str) -> None:
        used_model.append(model)
        print(
            f"evaluate: seed {settings.seed}, {settings.n} tasks, model {model or '(endpoint default)'} "
            f"at {settings.endpoint}",
            file=sys.stderr,
        )

    try:
        task_list = build_tasks(settings)
        model, results, wall_s = asyncio.run(
            run_evaluation(settings, task_list, StderrProgress(), on_start=announce, finished=finished)
        )
    except KeyboardInterrupt:
        # A slow model can take many minutes: Ctrl-C still reports the tasks that finished.
        print(f"\nevaluate: interrupted after {len(finished)}/{settings.n} tasks", file=sys.stderr)
        if not finished:
            return 130
        partial = summarise(
            settings, used_model[0] if used_model else "", finished, time.perf_counter() - started
        )
        print(RENDERERS[settings.output_format](partial))
        return 130
    print(RENDERERS[settings.output_format](summarise(settings, model, results, wall_s)))
    hint = signing_hint(results, signed=settings.wallet_name is not None)
    if hint is not None:
        print(f"evaluate: {hint}", file=sys.stderr)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    settings = parse_settings(argv, tuple(CATEGORIES))
    # A user's mistake found while running (endpoint down, unusable wallet) is one line, exit 2.
    return run_main(
        "evaluate", lambda: _main_episodes(settings) if settings.episodes else _main_tasks(settings)
    )
