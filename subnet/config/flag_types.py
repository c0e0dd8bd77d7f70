"""The values of the neurons' flags: str -> value, raising ValueError with a readable reason.

The common ones (numbers, names, paths, URLs) are the command-line foundation's (subnet.cli),
shared by every command line; the ones here know the subnet's own vocabulary (networks,
databases, devices, backends, hotkeys).
"""

from __future__ import annotations

import ipaddress
import re
from pathlib import Path

from scoring.formats import format_names
from subnet.cli import (
    boolean,
    choice,
    env_name,
    float_in,
    http_url,
    int_in,
    ip_address,
    name,
    path,
    text,
    ws_url,
)
from subnet.db.connection import normalise_url
from subnet.registry import BACKENDS

__all__ = [
    "MODEL_FORMATS",
    "NETWORK_NAMES",
    "NON_NEGATIVE",
    "PORT",
    "PORT_OR_OFF",
    "POSITIVE",
    "POSITIVE_INT",
    "PUBLIC_NETWORKS",
    "boolean",
    "choice",
    "db_url",
    "device",
    "env_name",
    "float_in",
    "host_names",
    "hotkeys",
    "http_url",
    "int_in",
    "ip_address",
    "model_backend",
    "model_backends",
    "name",
    "network",
    "path",
    "paths",
    "text",
    "ws_url",
]

NETWORK_NAMES = ("finney", "test", "local", "dev")
# The networks where any stranger publishes axons: validators there query public addresses only.
PUBLIC_NETWORKS = frozenset({"finney", "test"})
# --model.format: `auto` and every format a miner can be started with (scoring.formats).
MODEL_FORMATS = ("auto", *format_names())

PORT = int_in(1, 65535)
PORT_OR_OFF = int_in(0, 65535)
POSITIVE_INT = int_in(1)
POSITIVE = float_in(0.0, low_open=True)
NON_NEGATIVE = float_in(0.0)


def network(raw: str) -> str:
    value = raw.strip()
    if value in NETWORK_NAMES or re.fullmatch(r"wss?://\S+", value):
        return value
    raise ValueError(f"expected one of {', '.join(NETWORK_NAMES)} or a ws:// / wss:// URL, got {raw!r}")


def db_url(raw: str) -> str:
    value = raw.strip()
    if re.fullmatch(r"[a-z][a-z0-9+]*://\S*", value):
        normalise_url(value)  # an unsupported database (mysql://...) is a flag error, before any chain call
        return value
    raise ValueError(f"expected a SQLAlchemy URL such as postgresql+asyncpg://user@host/db, got {raw!r}")


def device(raw: str) -> str:
    value = raw.strip().lower()
    if re.fullmatch(r"auto|cpu|mps|cuda(:\d+)?", value):
        return value
    raise ValueError(f"expected auto, cpu, mps, cuda or cuda:N, got {raw!r}")


def model_backends() -> list[str]:
    """The ``--model.backend`` choices: the names of `subnet.registry.BACKENDS`, in its order (read
    when a miner's flags are built or parsed)."""
    return list(BACKENDS)


def model_backend(raw: str) -> str:
    return choice(*model_backends())(raw)


def paths(raw: str) -> tuple[Path, ...]:
    found = tuple(Path(part.strip()).expanduser() for part in raw.split(",") if part.strip())
    if not found:
        raise ValueError("expected one or more paths, comma-separated")
    return found


def host_names(raw: str) -> tuple[str, ...]:
    names = tuple(part.strip().lower().strip("[]") for part in raw.split(",") if part.strip())
    bad = [name for name in names if not re.fullmatch(r"[a-z0-9.:_-]+", name)]
    if bad:
        raise ValueError(f"not a host name or address: {bad[0]!r} (give a comma-separated list)")
    return names


def hotkeys(raw: str) -> tuple[str, ...]:
    from bittensor.wallets import is_bittensor_address

    keys = tuple(part.strip() for part in raw.split(",") if part.strip())
    bad = [key for key in keys if not is_bittensor_address(key)]
    if bad:
        raise ValueError(f"not an ss58 hotkey address: {bad[0]!r} (give a comma-separated list)")
    return keys


def ip_addresses(raw: str) -> tuple[str, ...]:
    """Comma-separated IPv4/IPv6 addresses, as written (each checked)."""

    addresses = tuple(part.strip() for part in raw.split(",") if part.strip())
    for address in addresses:
        try:
            ipaddress.ip_address(address)
        except ValueError:
            raise ValueError(f"not an IP address: {address!r} (give a comma-separated list)") from None
    return addresses
