"""The localnet's flags, parsed into one frozen settings object.

Defaults are chosen so that ``--miners 3 --rounds 2`` finishes in a few minutes on a small CPU
machine: a short block time and tempo (an epoch every few seconds), few tasks and two multi-turn
episodes per round, and a short generation cap for the demo model.

The demo miners differ in how they answer, so their scores differ for real reasons: by default
miner 1 writes JSON calls decoded as a call and kept only where the request grounds them
(``--model.guided grounded``), miner 2 writes Hermes ``<tool_call>`` tags unguided (the demo
model then nearly always answers in prose), and miner 3 writes Hermes tags decoded as a call
for every request (``--model.guided forced``). ``--model.format`` and ``--model.guided`` given
comma-separated lists change them, handed to the miners in turn.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from scoring.formats import format_names
from subnet.cli import (
    APP_NAME,
    OneLineParser,
    UsageError,
    float_arg,
    float_in,
    int_arg,
    int_in,
)
from subnet.config.flags import add_flag

__all__ = ["LocalnetSettings", "UsageError", "build_parser", "parse_settings"]

PROG = "python -m subnet.localnet"
DEFAULT_FORMATS = ("json", "hermes", "hermes")
GUIDED_MODES = ("off", "on", "forced", "grounded")  # the miner's --model.guided values
DEFAULT_GUIDED = ("grounded", "off", "forced")
MAX_MINERS = 16
# Former spellings, refused in one line that names the flag now (one name per concept: the
# neurons' dotted registry names wherever a localnet flag means the same thing).
RENAMED = {
    "--miner-endpoint": "--model.base_url",
    "--miner-endpoint-model": "--model.name",
    "--state-dir": "--state.dir",
    "--tasks": "--round.tasks",
    "--episodes": "--round.episodes",
    "--formats": "--model.format",
    "--guided": "--model.guided",
    "--start-timeout": "--miner.start_timeout",
    "--block-time": "--devchain.block_time",
    "--query-timeout": "--query.timeout",
}


def default_state_dir() -> Path:
    """``localnet/`` under the user's data directory (beside the neurons' own defaults)."""

    return Path(platformdirs.user_data_dir(APP_NAME, appauthor=False)) / "localnet"


def miner_timeout_below(query_timeout: float) -> float:
    """--model.timeout for miners queried with ``query_timeout``: 10 s less (a fifth less when
    short), so that a slow answer is the miner's own refusal (504 handler_timeout, sent 2 s after
    its model timeout) that the validator still reads, not the validator's timeout. The one rule
    for every local set-up: the localnet, docs/miner.md's hand-run pair and docker-compose.yml."""
    return round(query_timeout - min(10.0, query_timeout * 0.2), 3)


@dataclass(frozen=True)
class LocalnetSettings:
    miners: int = 3
    rounds: int = 2
    state_dir: Path | None = None  # None: default_state_dir()
    reset: bool = False
    block_time: float = 0.5
    tempo: int = 20
    tasks: int = 6  # one task of every category of the default mix
    episodes: int = 2  # multi-turn episodes per miner per round (the validator's --round.episodes)
    formats: tuple[str, ...] = DEFAULT_FORMATS
    guided: tuple[str, ...] = DEFAULT_GUIDED
    max_new_tokens: int = 48
    query_timeout: float = 300.0
    db_url: str | None = None  # None: a SQLite file in the state directory
    dashboard_port: int | None = None  # None: a free port; 0: off
    start_timeout: float = 300.0
    grace: float = 15.0
    # One openai-backend miner per URL, in front of the user's own engine (beside the demo miners,
    # or instead of them with --miners 0); the served model's name by position, else /v1/models.
    endpoints: tuple[str, ...] = ()
    endpoint_models: tuple[str, ...] = ()
    api_key_env: str | None = None

    @property
    def miner_timeout(self) -> float:
        return miner_timeout_below(self.query_timeout)

    @property
    def state_path(self) -> Path:
        return (self.state_dir or default_state_dir()).expanduser().resolve()

    def format_of(self, index: int) -> str:
        """The output format of miner ``index`` (0-based): the list, round robin."""
        return self.formats[index % len(self.formats)]

    def guided_of(self, index: int) -> str:
        """Miner ``index``'s (0-based) --model.guided mode: the list, round robin."""
        return self.guided[index % len(self.guided)]


def miner_formats() -> tuple[str, ...]:
    """The output formats a miner can be started with (the format registry); `auto` would give
    every demo miner the same one, so it is left out."""

    return format_names()


def _formats(text: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    known = miner_formats()
    unknown = [name for name in names if name not in known]
    if not names or unknown:
        raise ValueError(f"unknown format {', '.join(unknown) or '(none)'}; choose from {','.join(known)}")
    return names


def _guided_modes(text: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    unknown = [name for name in names if name not in GUIDED_MODES]
    if not names or unknown:
        raise ValueError(f"expected {'/'.join(GUIDED_MODES)} values, got {', '.join(unknown) or '(none)'}")
    return names


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog=PROG,
        renamed=RENAMED,
        description=(
            "Run the whole subnet on this machine: development wallets, the devchain, one validator "
            "and N miners (the demo model) on loopback, then a leaderboard."
        ),
    )
    add = parser.add_argument
    add(
        "--miners",
        type=int_arg(0, MAX_MINERS),
        default=3,
        help="demo-model miners to run (default 3; 0 with --model.base_url runs only those)",
    )
    add_flag(
        parser,
        "model.base_url",
        dest="endpoints",
        append=True,
        default=[],
        note="Here: run an openai-backend miner in front of the engine at URL (repeatable; see "
        "docs/miner.md, 'Serve your own model').",
    )
    add_flag(
        parser,
        "model.name",
        dest="endpoint_models",
        append=True,
        default=[],
        note="Here: of the n-th --model.base_url (repeatable; default: the engine's /v1/models).",
    )
    add_flag(parser, "model.api_key_env", dest="api_key_env", note="Passed to the endpoint miners.")
    add("--rounds", type=int_arg(1), default=2, help="validator rounds to run (default 2)")
    add(
        "--state.dir",
        dest="state_dir",
        metavar="DIR",
        type=Path,
        default=None,
        help="wallets, devchain, database and logs (default: localnet/ in the user data directory)",
    )
    add("--reset", action="store_true", help="delete the state directory's contents and start over")
    add_flag(
        parser,
        "devchain.block_time",
        dest="block_time",
        default=0.5,
        parse=float_in(0.0, 60.0, low_open=True),
        note="Fixed when the chain is created (default 0.5, at most 60).",
    )
    add("--tempo", type=int_arg(2, 1000), default=20, help="blocks per epoch (default 20)")
    add_flag(
        parser,
        "round.tasks",
        dest="tasks",
        default=6,
        parse=int_in(1, 64),
        note="Default 6: one of each category; at most 64.",
    )
    add_flag(
        parser,
        "round.episodes",
        dest="episodes",
        default=2,
        parse=int_in(0, 16),
        note="Played step by step against simulated tools (default 2; at most 16).",
    )
    add_flag(
        parser,
        "model.format",
        dest="formats",
        default=DEFAULT_FORMATS,
        parse=_formats,
        metavar="F1,F2,...",
        note="Here: comma-separated, given to the miners in turn (default json,hermes,hermes).",
    )
    add_flag(
        parser,
        "model.guided",
        dest="guided",
        default=DEFAULT_GUIDED,
        parse=_guided_modes,
        metavar="M1,M2,...",
        note="Here: comma-separated, per miner in turn (default grounded,off,forced).",
    )
    add_flag(
        parser,
        "model.max_new_tokens",
        dest="max_new_tokens",
        default=48,
        parse=int_in(16, 4096),
        note="Of the demo model (default 48).",
    )
    add_flag(
        parser,
        "query.timeout",
        dest="query_timeout",
        default=300.0,
        parse=float_in(0.0, 3600.0, low_open=True),
        note="Default 300 (a shared CPU is slow); the miners get --model.timeout below it.",
    )
    add_flag(parser, "db.url", dest="db_url", note="Default: a SQLite file in the state directory.")
    add_flag(parser, "dashboard.port", dest="dashboard_port", note="Default: a free port.")
    add(
        "--miner.start_timeout",
        dest="start_timeout",
        metavar="S",
        type=float_arg(0.0, 3600.0, low_open=True),
        default=300.0,
        help="seconds a miner may take to load its model and come up (default 300)",
    )
    add(
        "--grace",
        type=float_arg(0.0, 600.0, low_open=True),
        default=15.0,
        help="seconds children get to stop after SIGTERM before they are killed (default 15)",
    )
    return parser


def parse_settings(argv: Sequence[str] | None = None) -> LocalnetSettings:
    try:
        args = build_parser().parse_args(argv)
    except argparse.ArgumentTypeError as exc:  # raised by a type= parser outside argparse's own handling
        raise UsageError(str(exc)) from None
    if args.miners + len(args.endpoints) < 1:
        raise UsageError("nothing to score: --miners 0 needs at least one --model.base_url URL (see --help)")
    if args.miners + len(args.endpoints) > MAX_MINERS:
        raise UsageError(f"at most {MAX_MINERS} miners in all, demo and endpoint ones (see --help)")
    if len(args.endpoint_models) > len(args.endpoints):
        raise UsageError("more --model.name names than --model.base_url URLs (see --help)")
    return LocalnetSettings(
        endpoints=tuple(args.endpoints),
        endpoint_models=tuple(args.endpoint_models),
        api_key_env=args.api_key_env,
        miners=args.miners,
        rounds=args.rounds,
        state_dir=args.state_dir,
        reset=args.reset,
        block_time=args.block_time,
        tempo=args.tempo,
        tasks=args.tasks,
        episodes=args.episodes,
        formats=args.formats,
        guided=args.guided,
        max_new_tokens=args.max_new_tokens,
        query_timeout=args.query_timeout,
        db_url=args.db_url,
        dashboard_port=args.dashboard_port,
        start_timeout=args.start_timeout,
        grace=args.grace,
    )
