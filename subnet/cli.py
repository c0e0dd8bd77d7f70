"""What every command line of the project stands on: one error, one parser, one way out.

A mistake a user can make on a command line (bad flag, bad value, missing file) raises
:class:`UsageError`, whose message is one line that says what to do. :class:`OneLineParser`
is argparse raising it instead of printing its usage and exiting, and the value parsers here
(``int_arg``, ``float_arg``, ...) say what was expected rather than argparse's "invalid value".
A command's ``main()`` ends through :func:`run_main` (or :func:`user_errors` when it exits
instead of returning), which prints ``PROG: error: MESSAGE`` on stderr and exits with 2.

Only the standard library is imported, so that every command line (scoring's and tasks'
included: they are entry points, above the libraries they drive) can stand on this module
without pulling in the subnet's runtime.
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import re
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar

__all__ = [
    "USER_ERROR_EXIT_CODE",
    "OneLineParser",
    "UsageError",
    "argparse_type",
    "boolean",
    "choice",
    "env_name",
    "exit_with",
    "float_arg",
    "float_in",
    "http_url",
    "int_arg",
    "int_in",
    "ip_address",
    "name",
    "name_arg",
    "one_line",
    "path",
    "refuse_renamed",
    "run_main",
    "text",
    "user_errors",
    "ws_url",
]

APP_NAME = "toolcall-subnet"
USER_ERROR_EXIT_CODE = 2
T = TypeVar("T")


class UsageError(Exception):
    """A mistake the user can fix; its message is one line that says how.

    A command's ``main()`` shows it through :func:`run_main` or :func:`user_errors`: the line on
    stderr and exit code 2, never a traceback.
    """


class OneLineParser(argparse.ArgumentParser):
    """argparse that raises :class:`UsageError` (one line) instead of printing usage and exiting.

    ``renamed`` maps a flag's former spelling to its name now (``{"--state-dir": "--state.dir"}``):
    the old spelling is refused in one line that names the new one, rather than argparse's
    "unrecognized arguments" (or, worse, a prefix match onto another flag).
    """

    def __init__(self, *args: Any, renamed: Mapping[str, str] | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.renamed = dict(renamed or {})

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        given = list(sys.argv[1:] if args is None else args)
        refuse_renamed(given, self.renamed)
        return super().parse_known_args(given, namespace)

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see --help)")


def refuse_renamed(argv: Sequence[str], renamed: Mapping[str, str]) -> None:
    """Raise :class:`UsageError` naming the new spelling when ``argv`` uses a former one."""
    for arg in argv:
        if arg == "--":
            break
        option = arg.split("=", 1)[0]
        if option in renamed:
            raise UsageError(f"{option} is now {renamed[option]} (see --help)")


def one_line(error: BaseException) -> str:
    """The error's message on one line (its type's name when it has none)."""
    return " ".join(str(error).split()) or type(error).__name__


def exit_with(error: BaseException, prog: str | None = None) -> NoReturn:
    """Print ``error`` as a single ``prog: error: ...`` line and exit with code 2."""
    label = prog or Path(sys.argv[0]).name or APP_NAME
    print(f"{label}: error: {one_line(error)}", file=sys.stderr)
    raise SystemExit(USER_ERROR_EXIT_CODE)


@contextlib.contextmanager
def user_errors(prog: str | None = None) -> Iterator[None]:
    """Turn a :class:`UsageError` raised inside the block into one line on stderr and exit 2."""
    try:
        yield
    except UsageError as error:
        exit_with(error, prog)


def run_main(
    prog: str, body: Callable[[], int | None], *, errors: tuple[type[BaseException], ...] = ()
) -> int:
    """Run a command's ``body``; a :class:`UsageError` (or one of ``errors``, the one-line errors of
    the libraries it drives) becomes ``prog: error: MESSAGE`` on stderr and exit status 2."""
    caught: tuple[type[BaseException], ...] = (UsageError, *errors)
    try:
        status = body()
    except caught as error:
        print(f"{prog}: error: {one_line(error)}", file=sys.stderr)
        return USER_ERROR_EXIT_CODE
    return 0 if status is None else status


# --- value parsers: str -> value, raising ValueError with a readable reason -------------------


def int_in(low: int, high: int | None = None) -> Callable[[str], int]:
    """A whole number in ``low..high`` (no upper bound when ``high`` is None)."""

    def parse(raw: str) -> int:
        try:
            value = int(raw.strip())
        except ValueError:
            raise ValueError(f"expected a whole number, got {raw!r}") from None
        if value < low or (high is not None and value > high):
            upper = f"..{high}" if high is not None else " or more"
            raise ValueError(f"expected {low}{upper}, got {value}")
        return value

    return parse


def float_in(low: float, high: float | None = None, *, low_open: bool = False) -> Callable[[str], float]:
    """A finite number at least ``low`` (above it with ``low_open``) and at most ``high``."""

    def parse(raw: str) -> float:
        try:
            value = float(raw.strip())
        except ValueError:
            raise ValueError(f"expected a number, got {raw!r}") from None
        if value != value or value in (float("inf"), float("-inf")):
            raise ValueError(f"expected a finite number, got {raw!r}")
        too_low = value <= low if low_open else value < low
        if too_low or (high is not None and value > high):
            bound = f"greater than {low:g}" if low_open else f"at least {low:g}"
            if high is not None:
                bound += f" and at most {high:g}"
            raise ValueError(f"expected a number {bound}, got {value:g}")
        return value

    return parse


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off", ""})


def boolean(raw: str) -> bool:
    lowered = raw.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ValueError(f"expected true/false (1/0, yes/no, on/off), got {raw!r}")


def text(raw: str) -> str:
    """Any text that is not blank, stripped."""
    value = raw.strip()
    if not value:
        raise ValueError("must not be empty")
    return value


def name(raw: str) -> str:
    """A plain name (a wallet's, a hotkey's): never a path."""
    value = text(raw)
    if "/" in value or value in {".", ".."}:
        raise ValueError(f"expected a plain name without '/', got {raw!r}")
    return value


def path(raw: str) -> Path:
    return Path(text(raw)).expanduser()


def ip_address(raw: str) -> str:
    try:
        return str(ipaddress.ip_address(raw.strip()))
    except ValueError:
        raise ValueError(f"expected an IPv4 or IPv6 address, got {raw!r}") from None


def ws_url(raw: str) -> str:
    value = raw.strip()
    if re.fullmatch(r"wss?://\S+", value):
        return value
    raise ValueError(f"expected a ws:// or wss:// URL, got {raw!r}")


def http_url(raw: str) -> str:
    """An http(s) URL with a host, without its trailing slashes."""
    value = raw.strip().rstrip("/")
    if re.fullmatch(r"https?://[^\s/]+(/\S*)?", value):
        return value
    raise ValueError(f"expected an http:// or https:// URL, got {raw!r}")


def env_name(raw: str) -> str:
    """The name of an environment variable (the place a secret is read from, never the secret)."""
    value = raw.strip()
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]{0,127}", value):
        return value
    raise ValueError(f"expected the name of an environment variable (letters, digits, _), got {raw!r}")


def choice(*choices: str) -> Callable[[str], str]:
    """One of ``choices`` (case-insensitive)."""

    def parse(raw: str) -> str:
        value = raw.strip().lower()
        if value in choices:
            return value
        raise ValueError(f"expected one of {', '.join(choices)}, got {raw!r}")

    return parse


# --- the same, as argparse ``type=`` ----------------------------------------------------------


def argparse_type(parse: Callable[[str], T]) -> Callable[[str], T]:
    """``parse`` as an argparse ``type=``: its reason, not argparse's "invalid parse value"."""

    def convert(raw: str) -> T:
        try:
            return parse(raw)
        except ValueError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return convert


def int_arg(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse ``type=`` for a whole number in ``low..high``."""
    return argparse_type(int_in(low, high))


def float_arg(low: float, high: float | None = None, *, low_open: bool = False) -> Callable[[str], float]:
    """An argparse ``type=`` for a finite number at least ``low`` (above it with ``low_open``)."""
    return argparse_type(float_in(low, high, low_open=low_open))


# An argparse ``type=`` for a wallet or hotkey name: one name, never a path.
name_arg = argparse_type(name)
