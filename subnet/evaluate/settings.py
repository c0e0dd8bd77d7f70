"""What one evaluation run needs (built from the command line), and where it sends its requests."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from subnet.cli import UsageError
from subnet.transport.server import CHAT_PATH

PROG = "python -m subnet.evaluate"


class EvaluateError(UsageError):
    """A mistake the user can fix (bad URL, endpoint down): one line, exit code 2."""


@dataclass(frozen=True)
class EvaluateSettings:
    """Everything one evaluation run needs, built from the command line."""

    endpoint: str  # the chat-completions URL, normalised
    n: int = 200
    seed: int = 0
    categories: tuple[str, ...] = ()  # empty: the generator's default mix
    sources: str | None = None  # --tasks.sources, as the validator's (builtin=0.8,bfcl=0.2); None: builtin
    # --tasks.FLAG for each file flag of the task-source registry (tasks.PATH_FLAGS: bfcl, xlam):
    # the files it named, by flag.
    paths: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    concurrency: int = 8
    rate: float | None = None  # requests started per second at most; None: no pacing
    timeout_s: float = 60.0
    api_key: str | None = None  # read from the environment variable api_key_env, never a flag
    api_key_env: str | None = None
    model: str | None = None  # None: ask the endpoint's /v1/models, else send ""
    max_new_tokens: int = 512
    temperature: float = 0.0
    output_format: str = "table"
    # Signing, for a running miner (which serves registered validators only): the wallet whose
    # hotkey signs each request with bt.http_auth, and the miner's hotkey the signature is
    # bound to (None: asked from the miner's open /health).
    wallet_name: str | None = None
    wallet_hotkey: str = "default"
    wallet_path: Path | None = None
    receiver_hotkey: str | None = None
    # --phrasing.*: the requests rewritten as a validator's phrasing engine would (None: template text).
    phrasing: Any = None
    # --episodes N: play N multi-turn episodes instead of single-turn tasks (subnet.evaluate.episodes).
    episodes: int | None = None


def chat_completions_url(endpoint: str) -> str:
    """The chat-completions URL for what a user typed: a server root, `.../v1`, or the full URL.

    Raises EvaluateError for anything that is not an http(s) URL with a host.
    """
    parts = urlsplit(endpoint.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise EvaluateError(
            f"--endpoint {endpoint!r} is not an http(s) URL; "
            "give e.g. http://127.0.0.1:8000/v1 or http://host:port/v1/chat/completions"
        )
    try:
        parts.port  # noqa: B018 - parsing the port is the validation
    except ValueError as exc:
        raise EvaluateError(f"--endpoint {endpoint!r} has a bad port: {exc}") from None
    path = parts.path.rstrip("/")
    if path.endswith("/chat/completions"):
        pass
    elif path.endswith("/v1"):
        path += "/chat/completions"
    else:
        path += CHAT_PATH
    return urlunsplit((parts.scheme, parts.netloc, path, parts.query, ""))


def models_url(chat_url: str) -> str:
    """`/v1/models` next to the chat-completions URL (where OpenAI-compatible engines list models)."""
    parts = urlsplit(chat_url)
    base = parts.path[: -len("/chat/completions")]
    return urlunsplit((parts.scheme, parts.netloc, base + "/models", "", ""))


def health_url(chat_url: str) -> str:
    """The miner's open `/health` (it names the miner's hotkey) on the same server."""
    parts = urlsplit(chat_url)
    return urlunsplit((parts.scheme, parts.netloc, "/health", "", ""))


def miner_address(chat_url: str) -> tuple[str, int]:
    """(host, port) of a miner's endpoint, which signing needs: a miner serves plain HTTP at
    `/v1/chat/completions` and the signature covers that path.

    Raises EvaluateError for any other URL.
    """
    parts = urlsplit(chat_url)
    if parts.scheme != "http" or parts.path != CHAT_PATH or parts.query or not parts.hostname:
        raise EvaluateError(
            f"--endpoint {chat_url!r}: a signed run (--wallet.name) talks to a miner, which serves "
            f"http://host:port{CHAT_PATH}; give the miner's http://host:port"
        )
    return parts.hostname, parts.port or 80
