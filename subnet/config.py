"""Command-line configuration of the neurons: flags, environment and defaults -> typed settings.

``main()`` calls :func:`parse_miner_settings` or :func:`parse_validator_settings` once and
passes the resulting frozen object down; nothing here is global or read at import time.

Each settings section is a frozen dataclass whose field defaults are the flags' defaults;
the flags themselves live in one registry (:data:`FLAGS`), so adding a setting is adding a
field and an entry. A value comes from, in order: the command line, the environment
(``BT_*`` for the sections bittensor already names that way, ``SUBNET_*`` for the rest;
the variable is the flag upper-cased with dots turned into underscores, e.g.
``--db.url`` -> ``SUBNET_DB_URL``), then the default.

Every mistake a user can make here (unknown flag, bad value, missing or locked wallet)
raises :class:`ConfigError`, a :class:`UserError` whose message is one line that says
what to do; :func:`user_errors` turns it into that line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import dataclasses
import ipaddress
import os
import re
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from scoring.rendering import NATIVE_FORMATS
from subnet.cli import (
    APP_NAME as APP_NAME,
)
from subnet.cli import (
    USER_ERROR_EXIT_CODE as USER_ERROR_EXIT_CODE,
)
from subnet.cli import (
    OneLineParser,
    UsageError,
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
from subnet.cli import (
    exit_with as exit_with,
)
from subnet.cli import (
    float_arg as float_arg,
)
from subnet.cli import (
    int_arg as int_arg,
)
from subnet.cli import (
    name_arg as name_arg,
)
from subnet.cli import (
    user_errors as user_errors,
)
from subnet.phrasing import ENGINES as PHRASING_ENGINES

if TYPE_CHECKING:
    import bittensor as bt

# Sections whose environment variables follow bittensor's long-standing BT_<SECTION>_<NAME>.
_BITTENSOR_SECTIONS = frozenset({"subtensor", "wallet", "axon", "logging"})
NETWORK_NAMES = ("finney", "test", "local", "dev")
# --model.format: the adapters' formats (subnet.miner.adapters.FORMATS; a test keeps the two the
# same). The native families' names come from the scoring package, which config may import.
MODEL_FORMATS = ("auto", "hermes", "pythonic", "json", "codeact", *NATIVE_FORMATS)
# The networks where any stranger publishes axons: validators there query public addresses only.
PUBLIC_NETWORKS = frozenset({"finney", "test"})
T = TypeVar("T")


# A mistake the user can fix (subnet.cli's UsageError); the chain's, the dashboard's and the
# validator's own errors derive from it under this name.
UserError = UsageError


class ConfigError(UsageError):
    """A bad flag, value, environment variable or wallet."""


def _data_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir(APP_NAME))


def default_devchain_path() -> Path:
    """Where the development chain lives unless ``--devchain.path`` says otherwise."""
    return _data_dir() / "devchain.sqlite"


def default_db_url() -> str:
    """The validator's embedded SQLite database under the user's data directory."""
    return f"sqlite+aiosqlite:///{_data_dir() / 'validator.sqlite'}"


def default_secret_path() -> Path:
    return _data_dir() / "validator.secret"


def default_wallet_path() -> Path:
    return Path("~/.bittensor/wallets").expanduser()


# --- value parsers: str -> value, raising ValueError with a readable reason -------------
# The common ones (numbers, names, paths, URLs) are subnet.cli's, shared by every command line.

_int_in = int_in
_float_in = float_in
_boolean = boolean
_text = text
_name = name
_path = path
_ip = ip_address
_ws_url = ws_url
_http_url = http_url
_env_name = env_name
_choice = choice


def _network(text: str) -> str:
    value = text.strip()
    if value in NETWORK_NAMES or re.fullmatch(r"wss?://\S+", value):
        return value
    raise ValueError(f"expected one of {', '.join(NETWORK_NAMES)} or a ws:// / wss:// URL, got {text!r}")


def _db_url(text: str) -> str:
    value = text.strip()
    if re.fullmatch(r"[a-z][a-z0-9+]*://\S*", value):
        from subnet.db.engine import normalise_url

        normalise_url(value)  # an unsupported database (mysql://...) is a flag error, before any chain call
        return value
    raise ValueError(f"expected a SQLAlchemy URL such as postgresql+asyncpg://user@host/db, got {text!r}")


def _device(text: str) -> str:
    value = text.strip().lower()
    if re.fullmatch(r"auto|cpu|mps|cuda(:\d+)?", value):
        return value
    raise ValueError(f"expected auto, cpu, mps, cuda or cuda:N, got {text!r}")


def model_backends() -> list[str]:
    """The ``--model.backend`` choices: the names of `subnet.miner.backends.BACKENDS`, in its order.

    Read when a miner's flags are built or parsed, never at import: the registry's package builds
    on `ModelSettings` (subnet.miner.base), so importing it with this module would be circular.
    """
    from subnet.miner.backends import BACKENDS

    return list(BACKENDS)


def _model_backend(text: str) -> str:
    return _choice(*model_backends())(text)


def _paths(text: str) -> tuple[Path, ...]:
    paths = tuple(Path(part.strip()).expanduser() for part in text.split(",") if part.strip())
    if not paths:
        raise ValueError("expected one or more paths, comma-separated")
    return paths


def _host_names(text: str) -> tuple[str, ...]:
    names = tuple(part.strip().lower().strip("[]") for part in text.split(",") if part.strip())
    bad = [name for name in names if not re.fullmatch(r"[a-z0-9.:_-]+", name)]
    if bad:
        raise ValueError(f"not a host name or address: {bad[0]!r} (give a comma-separated list)")
    return names


def _hotkeys(text: str) -> tuple[str, ...]:
    from bittensor.wallets import is_bittensor_address

    keys = tuple(part.strip() for part in text.split(",") if part.strip())
    bad = [key for key in keys if not is_bittensor_address(key)]
    if bad:
        raise ValueError(f"not an ss58 hotkey address: {bad[0]!r} (give a comma-separated list)")
    return keys


# --- settings sections ----------------------------------------------------------------------


@dataclass(frozen=True)
class SubtensorSettings:
    """Which chain to talk to."""

    network: str = "dev"
    chain_endpoint: str | None = None

    @property
    def target(self) -> str:
        """What to hand the SDK: the explicit endpoint when given, else the network name."""
        return self.chain_endpoint or self.network

    @property
    def is_dev(self) -> bool:
        return self.chain_endpoint is None and self.network == "dev"


@dataclass(frozen=True)
class DevchainSettings:
    """The SQLite-backed development chain (used only with ``--subtensor.network dev``)."""

    path: Path = field(default_factory=default_devchain_path)
    block_time: float = 1.0


@dataclass(frozen=True)
class WalletSettings:
    """Which keys sign: ``<path>/<name>/coldkey`` and ``<path>/<name>/hotkeys/<hotkey>``."""

    name: str = "default"
    hotkey: str = "default"
    path: Path = field(default_factory=default_wallet_path)


@dataclass(frozen=True)
class AxonSettings:
    """Where the miner listens and what it publishes on chain."""

    ip: str = "0.0.0.0"
    port: int = 8091
    external_ip: str | None = None
    external_port: int | None = None

    @property
    def published_port(self) -> int:
        """The port to publish on chain: ``external_port`` when given, else ``port``."""
        return self.external_port or self.port

    @property
    def published_ip(self) -> str | None:
        """The address to publish on chain; None when only a wildcard bind (0.0.0.0, ::) is known."""
        if self.external_ip is not None:
            return self.external_ip
        return None if ipaddress.ip_address(self.ip).is_unspecified else self.ip


@dataclass(frozen=True)
class LoggingSettings:
    debug: bool = False
    trace: bool = False
    logging_dir: Path | None = None


@dataclass(frozen=True)
class ChainRetrySettings:
    """How the chain client rides out connection failures (bounded exponential backoff)."""

    retries: int = 5
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    timeout: float = 60.0


@dataclass(frozen=True)
class ModelSettings:
    """What the miner serves (issue 6): the settings of every backend, flat. Which ones are a
    backend's own (and what it needs or refuses) is declared with the backend, in
    `subnet.miner.backends.BACKEND_SETTINGS`; the rest every backend reads."""

    backend: str = "transformers"
    path: str | None = None
    format: str = "auto"
    device: str = "auto"
    dtype: str = "auto"
    trust_remote_code: bool = False
    batch_wait_ms: float = 10.0
    max_batch: int = 8
    max_new_tokens: int = 256
    guided: str = "off"
    prefix_cache_tokens: int = 4096
    base_url: str | None = None
    name: str | None = None
    # Seconds the miner gives an answer (the engine's request, the handler's deadline): below
    # the validators' --query.timeout (30 s), so that a validator gets an answer or the miner's
    # refusal before it stops waiting.
    timeout: float = 25.0
    api_key_env: str | None = None  # the environment variable holding the engine's API key


@dataclass(frozen=True)
class BlacklistSettings:
    """Who the miner refuses (issue 5)."""

    min_stake: float = 1000.0
    hotkeys: tuple[str, ...] = ()


@dataclass(frozen=True)
class WhitelistSettings:
    """When non-empty, only these validator hotkeys are served (issue 5)."""

    hotkeys: tuple[str, ...] = ()


@dataclass(frozen=True)
class LimitsSettings:
    """Miner-side request limits (issue 5)."""

    max_body_bytes: int = 1_048_576
    max_in_flight: int = 64
    per_caller_concurrency: int = 8
    per_caller_rate: float = 10.0
    per_caller_burst: int = 20
    head_timeout: float = 5.0
    per_ip_connections: int = 32
    max_connections: int | None = None  # None: the open-file limit less a margin


@dataclass(frozen=True)
class AuthSettings:
    """Freshness window of signed requests (bt.http_auth.verify), in seconds (issue 5)."""

    max_age: float = 10.0
    allowed_skew: float = 2.0


@dataclass(frozen=True)
class DbSettings:
    url: str = field(default_factory=default_db_url)


@dataclass(frozen=True)
class ScoringSettings:
    alpha: float = 0.1
    min_samples: int = 20


@dataclass(frozen=True)
class RoundSettings:
    """``episodes``: multi-turn episodes per miner per round; they weigh half of the round's
    score whatever their number (state.py). ``episode_deadline``: seconds one episode may take."""

    tasks: int = 8
    interval: float = 120.0
    episodes: int = 4
    episode_deadline: float = 120.0


@dataclass(frozen=True)
class QuerySettings:
    timeout: float = 30.0
    # Every task of a 256-miner round at once (8 each); the validator raises its open-file limit to fit.
    concurrency: int = 2048
    # On finney and test, axons on loopback, private and link-local addresses are skipped unless set.
    allow_private_axons: bool = False


@dataclass(frozen=True)
class WeightsSettings:
    """``interval`` in blocks; None means once per epoch (the subnet's tempo).

    ``floor``: a hotkey's moving average must exceed it to earn any weight (the production
    default sits above what a miner that never calls a tool earns; see docs/validator.md).
    """

    interval: int | None = None
    floor: float = 0.4


@dataclass(frozen=True)
class TasksSettings:
    """``sources`` stays a string here (``builtin=0.8,bfcl=0.2``); tasks/ parses it. ``bfcl`` and
    ``xlam`` name the files of those sources (BFCL: question files or data folders, default: the
    installed bfcl-eval package; xLAM: JSON files, required when it has a share)."""

    sources: str = "builtin=1.0"
    bfcl: tuple[Path, ...] = ()
    xlam: tuple[Path, ...] = ()


@dataclass(frozen=True)
class PhrasingSettings:
    """``--phrasing.*``: the model that writes the requests miners read, and the stage's bounds.

    ``templates`` shows the generator's own text (no model): fine for the localnet and tests, and
    refused on finney and test unless ``allow_templates``, because template text is invertible by
    code without a model (see docs/phrasing.md).
    """

    engine: str = "templates"
    url: str | None = None
    model: str | None = None
    api_key_env: str | None = None
    path: str | None = None
    device: str = "auto"
    timeout: float = 60.0
    concurrency: int = 16
    temperature: float = 0.8
    max_tokens: int = 200
    verify: str = "values"
    attempts: int = 3
    replacements: int = 2
    deadline: float = 300.0
    allow_templates: bool = False


@dataclass(frozen=True)
class ValidatorKeySettings:
    secret_path: Path = field(default_factory=default_secret_path)


@dataclass(frozen=True)
class DashboardSettings:
    """Read-only web page; ``port`` 0 turns it off."""

    host: str = "127.0.0.1"
    port: int = 8000
    # Host names the page answers for, beside the loopback names and the bind address.
    allowed_hosts: tuple[str, ...] = ()


@dataclass(frozen=True)
class MetricsSettings:
    """Prometheus endpoint; ``port`` 0 turns it off."""

    port: int = 9100


@dataclass(frozen=True)
class MinerSettings:
    netuid: int = 1
    subtensor: SubtensorSettings = field(default_factory=SubtensorSettings)
    devchain: DevchainSettings = field(default_factory=DevchainSettings)
    wallet: WalletSettings = field(default_factory=WalletSettings)
    axon: AxonSettings = field(default_factory=AxonSettings)
    logging: LoggingSettings = field(default_factory=LoggingSettings)
    chain: ChainRetrySettings = field(default_factory=ChainRetrySettings)
    model: ModelSettings = field(default_factory=ModelSettings)
    blacklist: BlacklistSettings = field(default_factory=BlacklistSettings)
    whitelist: WhitelistSettings = field(default_factory=WhitelistSettings)
    limits: LimitsSettings = field(default_factory=LimitsSettings)
    auth: AuthSettings = field(default_factory=AuthSettings)


@dataclass(frozen=True)
class ValidatorSettings:
    netuid: int = 1
    rounds: int | None = None
    subtensor: SubtensorSettings = field(default_factory=SubtensorSettings)
    devchain: DevchainSettings = field(default_factory=DevchainSettings)
    wallet: WalletSettings = field(default_factory=WalletSettings)
    logging: LoggingSettings = field(default_factory=LoggingSettings)
    chain: ChainRetrySettings = field(default_factory=ChainRetrySettings)
    db: DbSettings = field(default_factory=DbSettings)
    scoring: ScoringSettings = field(default_factory=ScoringSettings)
    round: RoundSettings = field(default_factory=RoundSettings)
    query: QuerySettings = field(default_factory=QuerySettings)
    weights: WeightsSettings = field(default_factory=WeightsSettings)
    tasks: TasksSettings = field(default_factory=TasksSettings)
    phrasing: PhrasingSettings = field(default_factory=PhrasingSettings)
    validator: ValidatorKeySettings = field(default_factory=ValidatorKeySettings)
    dashboard: DashboardSettings = field(default_factory=DashboardSettings)
    metrics: MetricsSettings = field(default_factory=MetricsSettings)


@dataclass(frozen=True)
class RegisterSettings:
    """``python -m subnet.chain register``: register a hotkey on any network, the devchain included."""

    netuid: int = 1
    subtensor: SubtensorSettings = field(default_factory=SubtensorSettings)
    devchain: DevchainSettings = field(default_factory=DevchainSettings)
    wallet: WalletSettings = field(default_factory=WalletSettings)
    logging: LoggingSettings = field(default_factory=LoggingSettings)
    chain: ChainRetrySettings = field(default_factory=ChainRetrySettings)


# --- the flag registry ----------------------------------------------------------------------


@dataclass(frozen=True)
class Flag:
    """One command-line flag: ``--<name>``, where ``name`` is ``section.field`` or a top-level field."""

    name: str
    help: str
    parse: Callable[[str], Any]
    switch: bool = False  # present -> True, no value
    metavar: str | None = None

    @property
    def section(self) -> str | None:
        return self.name.split(".", 1)[0] if "." in self.name else None

    @property
    def attr(self) -> str:
        return self.name.rsplit(".", 1)[-1]

    @property
    def dest(self) -> str:
        return self.name.replace(".", "__")

    @property
    def option(self) -> str:
        return f"--{self.name}"

    @property
    def env(self) -> str:
        prefix = "BT" if self.section in _BITTENSOR_SECTIONS else "SUBNET"
        return f"{prefix}_{self.name.replace('.', '_').upper()}"


_PORT = _int_in(1, 65535)
_PORT_OR_OFF = _int_in(0, 65535)
_POSITIVE_INT = _int_in(1)
_POSITIVE = _float_in(0.0, low_open=True)
_NON_NEGATIVE = _float_in(0.0)

FLAGS: tuple[Flag, ...] = (
    Flag("netuid", "Subnet id on the chosen network.", _int_in(0, 65535), metavar="N"),
    Flag(
        "rounds", "Run this many rounds, then exit (default: run until stopped).", _POSITIVE_INT, metavar="K"
    ),
    # chain
    Flag(
        "subtensor.network",
        "Chain to use: finney, test, local (ws://127.0.0.1:9944), dev (the SQLite devchain) "
        "or a ws:// / wss:// URL.",
        _network,
        metavar="NET",
    ),
    Flag(
        "subtensor.chain_endpoint",
        "Explicit ws:// / wss:// endpoint; overrides --subtensor.network.",
        _ws_url,
        metavar="URL",
    ),
    Flag("devchain.path", "SQLite file of the development chain (dev network only).", _path, metavar="FILE"),
    Flag("devchain.block_time", "Seconds per devchain block (dev network only).", _POSITIVE, metavar="S"),
    Flag(
        "chain.retries", "Retries of a chain call after a connection failure.", _int_in(0, 100), metavar="N"
    ),
    Flag(
        "chain.backoff_base",
        "First retry delay in seconds (doubles each retry, with jitter).",
        _POSITIVE,
        metavar="S",
    ),
    Flag("chain.backoff_max", "Longest retry delay in seconds.", _POSITIVE, metavar="S"),
    Flag(
        "chain.timeout",
        "Seconds one chain call may take before it counts as a failure.",
        _POSITIVE,
        metavar="S",
    ),
    # wallet
    Flag("wallet.name", "Wallet (coldkey) name; the short form is --wallet NAME.", _name, metavar="NAME"),
    Flag("wallet.hotkey", "Hotkey name inside the wallet.", _name, metavar="NAME"),
    Flag("wallet.path", "Directory holding the wallets.", _path, metavar="DIR"),
    # axon
    Flag("axon.ip", "Address the miner's HTTP server binds to.", _ip, metavar="IP"),
    Flag("axon.port", "Port the miner's HTTP server listens on.", _PORT, metavar="PORT"),
    Flag(
        "axon.external_ip",
        "Address published on chain, when it differs from --axon.ip (NAT, 0.0.0.0 bind).",
        _ip,
        metavar="IP",
    ),
    Flag(
        "axon.external_port",
        "Port published on chain, when it differs from --axon.port.",
        _PORT,
        metavar="PORT",
    ),
    # logging
    Flag("logging.debug", "Log at DEBUG level.", _boolean, switch=True),
    Flag("logging.trace", "Log at DEBUG level, the SDK's RPC traffic included.", _boolean, switch=True),
    Flag("logging.logging_dir", "Also write logs to a file in this directory.", _path, metavar="DIR"),
    # miner: model (issue 6)
    # Its choices (and metavar) are subnet.miner.backends.BACKENDS, read when the flag is used.
    Flag("model.backend", "Model backend.", _model_backend),
    Flag(
        "model.path",
        "Local model folder (or a hub id where the machine can reach a hub); 'demo' for SmolLM2.",
        _text,
        metavar="PATH",
    ),
    Flag(
        "model.format",
        "Tool-call output format of the model (auto: the one its chat template shows; docs/miner.md).",
        _choice(*MODEL_FORMATS),
        metavar="FORMAT",
    ),
    Flag("model.device", "auto, cpu, mps, cuda or cuda:N.", _device, metavar="DEV"),
    Flag(
        "model.dtype",
        "Weights dtype (auto: bfloat16 on CUDA, else float32).",
        _choice("auto", "bfloat16", "float16", "float32"),
        metavar="{auto,bfloat16,float16,float32}",
    ),
    Flag(
        "model.trust_remote_code", "Allow the model folder's own Python code to run.", _boolean, switch=True
    ),
    Flag(
        "model.batch_wait_ms",
        "Milliseconds to gather concurrent requests into a batch.",
        _NON_NEGATIVE,
        metavar="MS",
    ),
    Flag("model.max_batch", "Largest batch generated together.", _POSITIVE_INT, metavar="N"),
    Flag("model.max_new_tokens", "Generation length cap.", _POSITIVE_INT, metavar="N"),
    Flag(
        "model.guided",
        "Schema-guided decoding of calls (json, hermes, pythonic formats): on "
        "(the model decides whether to call), forced (always a call, values copied from the request), "
        "grounded (forced, kept only when the request grounds it).",
        _choice("off", "on", "forced", "grounded"),
        metavar="{off,on,forced,grounded}",
    ),
    Flag(
        "model.prefix_cache_tokens",
        "Prompt tokens whose keys and values are kept for reuse by prompts that begin alike (0: off).",
        _int_in(0),
        metavar="N",
    ),
    Flag("model.base_url", "OpenAI-compatible engine URL.", _http_url, metavar="URL"),
    Flag("model.name", "Model name sent to the engine / reported to callers.", _text, metavar="NAME"),
    Flag(
        "model.timeout",
        "Seconds the miner gives one answer (keep it below the validators' --query.timeout).",
        _POSITIVE,
        metavar="S",
    ),
    Flag(
        "model.api_key_env",
        "Environment variable that holds the engine's API key (the key itself is never a flag or a "
        "log line).",
        _env_name,
        metavar="NAME",
    ),
    # miner: auth and limits (issue 5)
    Flag(
        "blacklist.min_stake", "Least stake a validator needs to be served.", _NON_NEGATIVE, metavar="STAKE"
    ),
    Flag("blacklist.hotkeys", "Comma-separated hotkeys never served.", _hotkeys, metavar="SS58,..."),
    Flag(
        "whitelist.hotkeys",
        "Comma-separated hotkeys; when set, only these are served.",
        _hotkeys,
        metavar="SS58,...",
    ),
    Flag("limits.max_body_bytes", "Largest request body accepted.", _POSITIVE_INT, metavar="BYTES"),
    Flag(
        "limits.max_in_flight", "Requests processed at once before answering 503.", _POSITIVE_INT, metavar="N"
    ),
    Flag("limits.per_caller_concurrency", "Requests at once per caller.", _POSITIVE_INT, metavar="N"),
    Flag("limits.per_caller_rate", "Sustained requests per second per caller.", _POSITIVE, metavar="R"),
    Flag("limits.per_caller_burst", "Burst size of the per-caller token bucket.", _POSITIVE_INT, metavar="N"),
    Flag(
        "limits.head_timeout", "Seconds a connection may take to send a request head.", _POSITIVE, metavar="S"
    ),
    Flag(
        "limits.per_ip_connections",
        "Open connections per address that is not a validator's.",
        _POSITIVE_INT,
        metavar="N",
    ),
    Flag(
        "limits.max_connections",
        "Open connections in all (default: the open-file limit less a margin).",
        _POSITIVE_INT,
        metavar="N",
    ),
    Flag("auth.max_age", "Oldest signed request accepted, in seconds.", _POSITIVE, metavar="S"),
    Flag(
        "auth.allowed_skew",
        "Clock skew tolerated for requests from the future, in seconds.",
        _NON_NEGATIVE,
        metavar="S",
    ),
    # validator (issues 7 and 8)
    Flag(
        "db.url",
        "Database URL (SQLite file by default; postgresql+asyncpg://... for PostgreSQL).",
        _db_url,
        metavar="URL",
    ),
    Flag(
        "scoring.alpha",
        "Weight of a new round in each hotkey's moving average.",
        _float_in(0.0, 1.0, low_open=True),
        metavar="A",
    ),
    Flag(
        "scoring.min_samples",
        "Scored answers a hotkey needs before it earns weight.",
        _int_in(0),
        metavar="N",
    ),
    Flag("round.tasks", "Tasks per miner per round.", _POSITIVE_INT, metavar="N"),
    Flag("round.interval", "Seconds between round starts.", _POSITIVE, metavar="S"),
    Flag(
        "round.episodes",
        "Multi-turn episodes per miner per round (0: none); they weigh half of the round's score.",
        _int_in(0, 64),
        metavar="N",
    ),
    Flag("round.episode_deadline", "Seconds one episode may take in all.", _POSITIVE, metavar="S"),
    Flag("query.timeout", "Seconds a miner has to answer one task.", _POSITIVE, metavar="S"),
    Flag(
        "query.concurrency",
        "Miner requests in flight at once (the soft open-file limit is raised to fit).",
        _POSITIVE_INT,
        metavar="N",
    ),
    Flag(
        "query.allow_private_axons",
        "On finney and test, query miners on loopback, private and link-local addresses too.",
        _boolean,
        switch=True,
    ),
    Flag(
        "weights.interval",
        "Blocks between weight submissions (default: once per epoch).",
        _POSITIVE_INT,
        metavar="BLOCKS",
    ),
    Flag(
        "weights.floor",
        "Moving average a hotkey must exceed to earn weight (0 gives weight to any positive score).",
        _float_in(0.0, 1.0),
        metavar="F",
    ),
    Flag("tasks.sources", "Task sources and their shares, e.g. builtin=0.8,bfcl=0.2.", _text, metavar="SPEC"),
    Flag(
        "tasks.bfcl",
        "BFCL question files or data folders, comma-separated (default: the installed bfcl-eval).",
        _paths,
        metavar="PATH,...",
    ),
    Flag(
        "tasks.xlam",
        "xLAM-style JSON files, comma-separated (needed when xlam has a share).",
        _paths,
        metavar="FILE,...",
    ),
    Flag(
        "phrasing.engine",
        "Model writing each round's requests: templates (no model: localnet, tests), openai, transformers.",
        _choice(*PHRASING_ENGINES),
        metavar="NAME",
    ),
    Flag(
        "phrasing.url",
        "OpenAI-compatible endpoint of the phrasing model (engine openai).",
        _http_url,
        metavar="URL",
    ),
    Flag(
        "phrasing.model", "Model name sent to the phrasing endpoint (engine openai).", _text, metavar="NAME"
    ),
    Flag(
        "phrasing.api_key_env",
        "Environment variable holding the phrasing endpoint's API key (engine openai).",
        _env_name,
        metavar="VAR",
    ),
    Flag(
        "phrasing.path",
        "Local model folder of the phrasing model (engine transformers).",
        _text,
        metavar="DIR",
    ),
    Flag(
        "phrasing.device",
        "Device of the phrasing model: auto, cpu, cuda, cuda:N (engine transformers).",
        _device,
        metavar="DEV",
    ),
    Flag("phrasing.timeout", "Seconds one phrasing request may take.", _POSITIVE, metavar="S"),
    Flag("phrasing.concurrency", "Phrasing requests in flight at once.", _POSITIVE_INT, metavar="N"),
    Flag(
        "phrasing.temperature",
        "Sampling temperature of the phrasing model.",
        _float_in(0.0, 2.0),
        metavar="T",
    ),
    Flag("phrasing.max_tokens", "Longest rewording in tokens.", _POSITIVE_INT, metavar="N"),
    Flag(
        "phrasing.verify",
        "values: deterministic checks; solve: those, and the phrasing model must answer its own text right.",
        _choice("values", "solve"),
        metavar="MODE",
    ),
    Flag("phrasing.attempts", "Rewordings tried per task before it is dropped.", _POSITIVE_INT, metavar="N"),
    Flag(
        "phrasing.replacements",
        "New tasks drawn for a dropped one before its slot stays empty.",
        _int_in(0, 16),
        metavar="N",
    ),
    Flag("phrasing.deadline", "Seconds the phrasing of one round may take in all.", _POSITIVE, metavar="S"),
    Flag(
        "phrasing.allow_templates",
        "On finney and test, run with the template text (invertible without a model: not for real rewards).",
        _boolean,
        switch=True,
    ),
    Flag(
        "validator.secret_path",
        "File holding the validator's round-seed secret (created if missing).",
        _path,
        metavar="FILE",
    ),
    Flag("dashboard.host", "Address the dashboard binds to.", _ip, metavar="IP"),
    Flag("dashboard.port", "Dashboard port (0 turns it off).", _PORT_OR_OFF, metavar="PORT"),
    Flag(
        "dashboard.allowed_hosts",
        "Comma-separated Host names the dashboard answers for, beside loopback and its bind address.",
        _host_names,
        metavar="NAME,...",
    ),
    Flag("metrics.port", "Prometheus metrics port (0 turns it off).", _PORT_OR_OFF, metavar="PORT"),
)

_FLAGS_BY_NAME = {flag.name: flag for flag in FLAGS}


def flags_for(settings_cls: type) -> list[Flag]:
    """The flags that build ``settings_cls`` (MinerSettings or ValidatorSettings), in registry order."""
    fields = {f.name for f in dataclasses.fields(settings_cls)}
    return [flag for flag in FLAGS if (flag.section or flag.name) in fields]


# --- parsing --------------------------------------------------------------------------------


def _default_of(settings_cls: type, flag: Flag) -> Any:
    owner = settings_cls if flag.section is None else _resolve_type(settings_cls, flag.section)
    spec = {f.name: f for f in dataclasses.fields(owner)}[flag.attr]
    if spec.default is not dataclasses.MISSING:
        return spec.default
    if spec.default_factory is not dataclasses.MISSING:
        return spec.default_factory()
    raise AssertionError(f"settings field {flag.name} has no default")


def _resolve_type(settings_cls: type, section: str) -> type:
    # Annotations are strings under `from __future__ import annotations`; the section
    # classes are module globals, so the name resolves here.
    spec = {f.name: f for f in dataclasses.fields(settings_cls)}[section]
    annotation = spec.type
    resolved = globals()[annotation] if isinstance(annotation, str) else annotation
    assert isinstance(resolved, type)
    return resolved


def _metavar(flag: Flag) -> str | None:
    if flag.parse is _model_backend:
        return "{" + ",".join(model_backends()) + "}"
    return flag.metavar


def _help(flag: Flag) -> str:
    """The flag's help; a backend's own ``--model.*`` setting (subnet.miner.backends) names it."""
    if flag.section != "model":
        return flag.help
    from subnet.miner.backends import owners_of

    owners = owners_of(flag.attr)
    return f"{flag.help} For --model.backend {' or '.join(owners)}." if owners else flag.help


def _show_default(value: Any) -> str:
    if value is None:
        return "unset"
    if isinstance(value, tuple):
        return ",".join(value) or "none"
    if isinstance(value, bool):
        return "off" if not value else "on"
    return str(value)


def build_parser(settings_cls: type, prog: str) -> argparse.ArgumentParser:
    """The argparse parser for ``settings_cls``; every flag's help shows its default and env var."""
    parser = OneLineParser(
        prog=prog,
        allow_abbrev=False,
        description=f"Flags, environment variables and defaults for {prog}; flags win over the environment.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    groups: dict[str, argparse._ArgumentGroup] = {}
    for flag in flags_for(settings_cls):
        group_name = flag.section or "general"
        group = groups.get(group_name) or parser.add_argument_group(group_name)
        groups[group_name] = group
        default = _describe_default(settings_cls, flag)
        text = f"{_help(flag)} [default: {default}; env {flag.env}]"
        if flag.switch:
            group.add_argument(flag.option, dest=flag.dest, action="store_true", default=None, help=text)
        else:
            group.add_argument(flag.option, dest=flag.dest, metavar=_metavar(flag), default=None, help=text)
        if flag.name == "wallet.name":
            group.add_argument(
                "--wallet",
                dest="wallet_short",
                metavar="NAME",
                default=None,
                help="Short form of --wallet.name NAME (hotkey 'default' unless --wallet.hotkey is given).",
            )
    return parser


def _describe_default(settings_cls: type, flag: Flag) -> str:
    if flag.name == "db.url":
        return "sqlite file validator.sqlite in the user data directory"
    if flag.name in {"devchain.path", "validator.secret_path"}:
        return f"{_default_of(settings_cls, flag).name} in the user data directory"
    if flag.name == "wallet.path":
        return "~/.bittensor/wallets"
    return _show_default(_default_of(settings_cls, flag))


def _parse(settings_cls: type[T], argv: Sequence[str] | None, prog: str, env: dict[str, str] | None) -> T:
    environment = os.environ if env is None else env
    parser = build_parser(settings_cls, prog)
    try:
        namespace = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    except UsageError as error:
        raise ConfigError(str(error)) from None

    values: dict[str, Any] = {}
    for flag in flags_for(settings_cls):
        raw = getattr(namespace, flag.dest)
        if flag.switch and raw:
            values[flag.name] = True
            continue
        if raw is not None:
            values[flag.name] = _convert(flag, raw, f"argument {flag.option}")
        elif environment.get(flag.env, "").strip():  # an empty variable counts as unset
            values[flag.name] = _convert(flag, environment[flag.env], f"environment variable {flag.env}")
        else:
            values[flag.name] = _default_of(settings_cls, flag)

    short_wallet = namespace.wallet_short if hasattr(namespace, "wallet_short") else None
    if short_wallet is not None:
        if namespace.wallet__name is not None:
            raise ConfigError("give the wallet either as --wallet NAME or as --wallet.name NAME, not both")
        values["wallet.name"] = _convert(_FLAGS_BY_NAME["wallet.name"], short_wallet, "argument --wallet")

    return _assemble(settings_cls, values)


def _convert(flag: Flag, raw: str, origin: str) -> Any:
    try:
        return flag.parse(raw)
    except ValueError as error:
        raise ConfigError(f"{origin}: {error}") from None


def _assemble(settings_cls: type[T], values: dict[str, Any]) -> T:
    sections: dict[str, dict[str, Any]] = {}
    top: dict[str, Any] = {}
    for flag_name, value in values.items():
        section, _, attr = flag_name.rpartition(".")
        if section:
            sections.setdefault(section, {})[attr] = value
        else:
            top[flag_name] = value
    for section, kwargs in sections.items():
        top[section] = _resolve_type(settings_cls, section)(**kwargs)
    settings = settings_cls(**top)
    _check(settings)
    return settings


def _check(settings: Any) -> None:
    """Cross-flag rules that no single flag's parser can see."""
    model: ModelSettings | None = getattr(settings, "model", None)
    if model is not None:
        # What a backend needs and what only it may be given: its own settings (subnet.miner.backends).
        from subnet.miner.backends import settings_mistake

        mistake = settings_mistake(model)
        if mistake is not None:
            raise ConfigError(mistake)
    logging_settings: LoggingSettings = settings.logging
    if logging_settings.logging_dir is not None and logging_settings.logging_dir.is_file():
        raise ConfigError(f"--logging.logging_dir {logging_settings.logging_dir} is a file, not a directory")


def parse_miner_settings(
    argv: Sequence[str] | None = None, *, prog: str = "miner", env: dict[str, str] | None = None
) -> MinerSettings:
    """Miner settings from ``argv`` (default: ``sys.argv[1:]``) and ``env`` (default: ``os.environ``)."""
    return _parse(MinerSettings, argv, prog, env)


def parse_validator_settings(
    argv: Sequence[str] | None = None, *, prog: str = "validator", env: dict[str, str] | None = None
) -> ValidatorSettings:
    """Validator settings from ``argv`` (default: ``sys.argv[1:]``) and ``env`` (default: ``os.environ``)."""
    return _parse(ValidatorSettings, argv, prog, env)


def parse_register_settings(
    argv: Sequence[str] | None = None,
    *,
    prog: str = "python -m subnet.chain register",
    env: dict[str, str] | None = None,
) -> RegisterSettings:
    """Settings of the registration command (chain and wallet flags only)."""
    return _parse(RegisterSettings, argv, prog, env)


def flags_markdown() -> str:
    """The flag table of docs/configuration.md, generated from the registry (a test keeps them equal)."""
    users = {
        "miner": {flag.name for flag in flags_for(MinerSettings)},
        "validator": {flag.name for flag in flags_for(ValidatorSettings)},
    }
    rows = ["| Flag | Default | Environment | Used by | Meaning |", "|---|---|---|---|---|"]
    for flag in FLAGS:
        owner = MinerSettings if flag.name in users["miner"] else ValidatorSettings
        used_by = ", ".join(name for name, names in users.items() if flag.name in names)
        value = "" if flag.switch else f" {_metavar(flag) or 'VALUE'}"
        rows.append(
            f"| `{flag.option}{value}` | {_describe_default(owner, flag)} | `{flag.env}` | {used_by} "
            f"| {_help(flag).replace('|', '/')} |"
        )
    return "\n".join(rows) + "\n"


# --- wallets --------------------------------------------------------------------------------


def _wallet_fix(settings: WalletSettings) -> str:
    path_flag = f" --wallet-path {settings.path}" if settings.path != default_wallet_path() else ""
    return (
        f"`python -m subnet.wallets create --name {settings.name} --hotkey {settings.hotkey}` "
        f"(development, unencrypted) or "
        f"`btcli wallet create -w {settings.name} -H {settings.hotkey}{path_flag}`"
    )


def _env_assignment(name: str) -> str:
    """How to set ``name`` from a shell. The SDK derives it from the key's path, which may hold a
    character ('-') that ``export`` refuses; ``env`` takes any name."""
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        return f"`export {name}=<encoded password>`"
    return f"`env '{name}=<encoded password>' python ...`"


def load_wallet(settings: WalletSettings, *, require_coldkey: bool = False) -> bt.Wallet:
    """The wallet named by ``settings``, with its hotkey unlocked for signing.

    Raises :class:`ConfigError` (one line, with the command that fixes it) when the wallet
    or hotkey is missing, or a key that is needed is encrypted and no password is
    available without prompting (``BT_WALLET_PASSWORD``, ``BT_WALLET_PASSWORD_FILE`` or
    the key's ``BT_PW_...`` variable). The coldkey is only needed to pay for things
    (registration): pass ``require_coldkey=True`` there.
    """
    import bittensor as bt
    from bittensor.keyfiles import KeyfileError, WrongPasswordError
    from bittensor.sp_core import get_password_from_environment
    from bittensor.wallets import resolve_wallet_password

    wallet = bt.Wallet(settings.name, settings.hotkey, str(settings.path))
    wallet_dir = Path(settings.path) / settings.name
    if not wallet_dir.is_dir():
        raise ConfigError(
            f"wallet {settings.name!r} not found in {settings.path}; create it with {_wallet_fix(settings)}"
        )
    if not wallet.hotkey_file.exists_on_device():
        raise ConfigError(
            f"hotkey {settings.hotkey!r} not found in wallet {settings.name!r} ({wallet.hotkey_file.path}); "
            f"create it with `btcli wallet new-hotkey -w {settings.name} -H {settings.hotkey}` "
            f"or `python -m subnet.wallets create --name {settings.name} --hotkey {settings.hotkey}`"
        )
    if not wallet.coldkeypub_file.exists_on_device():
        raise ConfigError(
            f"wallet {settings.name!r} has no coldkeypub.txt in {wallet_dir}; restore it with "
            f"`btcli wallet regen-coldkeypub -w {settings.name}` "
            f"or create the wallet with {_wallet_fix(settings)}"
        )
    try:
        if wallet.hotkey_file.is_encrypted():
            password = get_password_from_environment(wallet.hotkey_file.env_var_name())
            if not password:
                raise ConfigError(
                    f"hotkey {settings.hotkey!r} of wallet {settings.name!r} is encrypted and no password is "
                    f"available; set it with {_env_assignment(wallet.hotkey_file.env_var_name())} (the SDK's "
                    "encoded form, as btcli/bittensor write it) or use an unencrypted hotkey"
                )
            wallet.get_hotkey(password)
        else:
            wallet.get_hotkey()
        _ = wallet.coldkeypub
    except WrongPasswordError:
        raise ConfigError(
            f"wrong password for hotkey {settings.hotkey!r} of wallet {settings.name!r} "
            f"(from {wallet.hotkey_file.env_var_name()})"
        ) from None
    except (KeyfileError, OSError, ValueError) as error:
        if "password env var" in str(error):  # the SDK could not decode the BT_PW_... variable
            raise ConfigError(
                f"{wallet.hotkey_file.env_var_name()} does not hold the hotkey's password in the SDK's "
                f"encoded form ({error}); set it as btcli/bittensor write it, or use an unencrypted hotkey"
            ) from None
        raise ConfigError(f"cannot read wallet {settings.name!r}: {error}") from None

    if require_coldkey:
        _unlock_coldkey(wallet, settings, resolve_wallet_password, WrongPasswordError, KeyfileError)
    return wallet


def _unlock_coldkey(
    wallet: bt.Wallet,
    settings: WalletSettings,
    resolve_wallet_password: Callable[..., str | None],
    wrong_password: type[Exception],
    keyfile_error: type[Exception],
) -> None:
    if not wallet.coldkey_file.exists_on_device():
        raise ConfigError(
            f"wallet {settings.name!r} has no coldkey on this machine ({wallet.coldkey_file.path}); "
            f"registering needs it: `btcli wallet regen-coldkey -w {settings.name}`"
        )
    try:
        password = resolve_wallet_password(wallet) if wallet.coldkey_file.is_encrypted() else None
        if wallet.coldkey_file.is_encrypted() and not password:
            raise ConfigError(
                f"coldkey of wallet {settings.name!r} is encrypted and no password is available; "
                "export BT_WALLET_PASSWORD=<password> (or BT_WALLET_PASSWORD_FILE=<file>)"
            )
        wallet.get_coldkey(password)
    except wrong_password:
        raise ConfigError(f"wrong password for the coldkey of wallet {settings.name!r}") from None
    except (keyfile_error, OSError, ValueError) as error:
        raise ConfigError(f"cannot unlock the coldkey of wallet {settings.name!r}: {error}") from None
