"""Command line for the devchain: ``status`` prints the metagraph, ``reset`` starts over.

    python -m subnet.devchain status [--devchain.path P] [--netuid N]
    python -m subnet.devchain reset [--devchain.path P] [--devchain.block_time S]
    python -m subnet.devchain fund ADDRESS TAO [--devchain.path P]

User mistakes (bad flags, an unreadable file) end in one line on stderr and exit code 2
(subnet.cli).
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import sqlite3
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from subnet.cli import OneLineParser, UsageError, float_in, int_arg, run_main
from subnet.config.flags import add_flag
from subnet.devchain.chain import DevChain, default_path
from subnet.devchain.rules import RAO_PER_TAO, U16_MAX, DispatchError
from subnet.devchain.store import StoreError, foreign_tables

# Former spellings, refused in one line naming the neurons' own flag for the same thing.
RENAMED = {"--path": "--devchain.path", "--block-time": "--devchain.block_time"}

# TAO's total supply: a bigger credit cannot be real and overflows the chain's 64-bit balances.
MAX_FUND_TAO = 21_000_000.0


def _tao_amount(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected an amount of TAO, got {text!r}") from None
    if not 0 < value <= MAX_FUND_TAO:  # also refuses nan; inf is above the cap
        raise argparse.ArgumentTypeError(f"expected an amount in (0, {MAX_FUND_TAO:,.0f}] TAO, got {text}")
    return value


def _ss58(text: str) -> str:
    from bittensor.wallets import is_bittensor_address

    if not is_bittensor_address(text):
        raise argparse.ArgumentTypeError(f"expected an ss58 address (5...), got {text!r}")
    return text


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="python -m subnet.devchain", description="Inspect or reset the local devchain."
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)

    def add_path(sub: argparse.ArgumentParser) -> None:
        add_flag(sub, "devchain.path", dest="path", note=f"Default {default_path()}.")

    status = commands.add_parser("status", help="print each subnet's metagraph as a table", renamed=RENAMED)
    add_path(status)
    status.add_argument("--netuid", type=int_arg(0, 65535), default=None, help="only this subnet")
    reset = commands.add_parser(
        "reset", help="delete the devchain file and start a fresh chain", renamed=RENAMED
    )
    add_path(reset)
    add_flag(
        reset,
        "devchain.block_time",
        dest="block_time",
        parse=float_in(0.0, 600.0, low_open=True),
        note="Default 1, at most 600.",
    )
    fund = commands.add_parser("fund", help="credit TAO to an address (development only)", renamed=RENAMED)
    fund.add_argument("address", type=_ss58, help="ss58 address to credit")
    fund.add_argument("tao", type=_tao_amount, help="amount of TAO")
    add_path(fund)
    return parser


def _existing(path: Path | None) -> Path:
    resolved = path or default_path()
    if not resolved.is_file():
        raise UsageError(f"no devchain at {resolved}; run `python -m subnet.devchain reset` to create one")
    return resolved


def _axon(axon: dict[str, Any]) -> str:
    ip = int(axon.get("ip") or 0)
    if not ip:
        return "-"
    address = ipaddress.IPv6Address(ip) if int(axon.get("ip_type") or 4) == 6 else ipaddress.IPv4Address(ip)
    return f"{address}:{axon.get('port')}"


def format_metagraph(graph: dict[str, Any]) -> str:
    header = (
        f"netuid {graph['netuid']}  block {graph['block']}  tempo {graph['tempo']}  "
        f"next epoch in {max(0, graph['tempo'] - graph['blocks_since_last_step'])} blocks  "
        f"uids {graph['num_uids']}/{graph['max_uids']}"
    )
    columns = (
        "uid",
        "hotkey",
        "coldkey",
        "stake τ",
        "vpermit",
        "incentive",
        "dividends",
        "last_update",
        "axon",
    )
    rows = [
        (
            str(uid),
            graph["hotkeys"][uid][:10] + "…",
            graph["coldkeys"][uid][:10] + "…",
            f"{graph['total_stake'][uid] / RAO_PER_TAO:.3f}",
            "yes" if graph["validator_permit"][uid] else "no",
            f"{graph['incentives'][uid] / U16_MAX:.4f}",
            f"{graph['dividends'][uid] / U16_MAX:.4f}",
            str(graph["last_update"][uid]),
            _axon(graph["axons"][uid]),
        )
        for uid in range(graph["num_uids"])
    ]
    widths = [max(len(c), *(len(r[i]) for r in rows)) if rows else len(c) for i, c in enumerate(columns)]
    lines = [header, "  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    return "\n".join(lines)


def _status(args: argparse.Namespace) -> None:
    chain = DevChain(_existing(args.path))
    netuids = chain.netuids() if args.netuid is None else [args.netuid]
    print(f"devchain {chain.path}  block {chain.current_block()}")
    if not netuids:
        print("no subnets yet")
    for netuid in netuids:
        graph = chain.metagraph(netuid)
        if graph is None:
            raise UsageError(f"netuid {netuid} does not exist on this devchain")
        print()
        print(format_metagraph(graph))


SQLITE_HEADER = b"SQLite format 3\x00"


def _not_a_devchain(path: Path) -> str | None:
    """Why ``path`` must not be deleted by ``reset`` (someone else's file), or None.

    A devchain file (even a damaged one whose header survived) may go; a non-SQLite file, or
    an SQLite database holding other tables, is left alone.
    """
    if not path.exists():
        return None
    if not path.is_file():
        return f"{path} is not a file"
    with path.open("rb") as handle:
        head = handle.read(len(SQLITE_HEADER))
    if head and head != SQLITE_HEADER:
        return f"{path} is not an SQLite file, so not a devchain"
    try:
        connection = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    except sqlite3.DatabaseError:
        return None
    try:
        tables = foreign_tables(connection)
    except sqlite3.DatabaseError:  # a damaged devchain: starting over is what reset is for
        return None
    finally:
        connection.close()
    return f"{path} holds other tables ({', '.join(tables[:5])}), not a devchain" if tables else None


def _reset(args: argparse.Namespace) -> None:
    path: Path = args.path or default_path()
    refusal = _not_a_devchain(path)
    if refusal is not None:
        raise UsageError(f"{refusal}; reset deletes only a devchain file, so it was left as it is")
    for suffix in ("", "-wal", "-shm"):
        with contextlib.suppress(FileNotFoundError):
            Path(f"{path}{suffix}").unlink()
    chain = DevChain(path, block_time=args.block_time)
    print(f"fresh devchain at {path} (block time {chain.clock().block_time} s, dev accounts funded)")


def _fund(args: argparse.Namespace) -> None:
    chain = DevChain(_existing(args.path))
    free = chain.fund(args.address, args.tao)
    print(f"{args.address} now holds {free / RAO_PER_TAO:.9f} TAO")


COMMANDS: dict[str, Callable[[argparse.Namespace], None]] = {
    "status": _status,
    "reset": _reset,
    "fund": _fund,
}


def main(argv: Sequence[str] | None = None) -> int:
    def run() -> None:
        args = build_parser().parse_args(argv)
        COMMANDS[args.command](args)

    return run_main("devchain", run, errors=(StoreError, DispatchError, ValueError, OverflowError, OSError))


if __name__ == "__main__":
    sys.exit(main())
