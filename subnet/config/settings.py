"""The neurons' settings: one frozen dataclass per section, whose defaults are the flags' defaults.

``main()`` builds one of the top-level objects (:class:`MinerSettings`, :class:`ValidatorSettings`,
:class:`RegisterSettings`) from the flags (subnet.config.flags) and passes it down.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path

import platformdirs

from subnet.cli import APP_NAME


def _data_dir() -> Path:

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


def default_dev_wallet_path() -> Path:
    """Where the local tools (the bootstrap, ``python -m subnet.wallets create``) keep development
    wallets unless ``--wallet.path`` says otherwise: beside the devchain, not in the home folder's
    ~/.bittensor, since their keys are unencrypted."""
    return _data_dir() / "wallets"


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


class GuidedMode(StrEnum):
    """``--model.guided``: off; on (calls kept well-formed, the model decides whether to call);
    forced (every answer a call, values copied from the request); grounded (forced, and the
    call kept only where the request grounds it)."""

    OFF = "off"
    ON = "on"
    FORCED = "forced"
    GROUNDED = "grounded"

    @property
    def guides(self) -> bool:
        return self is not GuidedMode.OFF

    @property
    def copies_values(self) -> bool:
        return self in (GuidedMode.FORCED, GuidedMode.GROUNDED)


@dataclass(frozen=True)
class ModelSettings:
    """What the miner serves: the settings of every backend, flat. Which ones are a
    backend's own (and what it needs or refuses) is declared with the backend, in
    `subnet.registry.BACKENDS`; the rest every backend reads."""

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
    # auto: decoding steps captured as CUDA graphs where the model runs on a CUDA GPU
    cuda_graphs: str = "auto"
    prefill_chunk: int = 512
    base_url: str | None = None
    name: str | None = None
    # Seconds the miner gives an answer (the engine's request, the handler's deadline): below
    # the validators' --query.timeout (30 s), so that a validator gets an answer or the miner's
    # refusal before it stops waiting.
    timeout: float = 25.0
    api_key_env: str | None = None  # the environment variable holding the engine's API key


@dataclass(frozen=True)
class BlacklistSettings:
    """Who the miner refuses."""

    min_stake: float = 1000.0
    hotkeys: tuple[str, ...] = ()


@dataclass(frozen=True)
class WhitelistSettings:
    """When non-empty, only these validator hotkeys are served."""

    hotkeys: tuple[str, ...] = ()


@dataclass(frozen=True)
class RoundSettings:
    """``episodes``: multi-turn episodes per miner per round; they weigh half of the round's
    score whatever their number (state.py). ``episode_deadline``: seconds one episode may take.
    ``sandbox_workers``: worker processes running episodes' tool calls (0: one per core, at most 4;
    subnet.validator.sandbox)."""

    tasks: int = 8
    interval: float = 120.0
    episodes: int = 4
    episode_deadline: float = 120.0
    sandbox_workers: int = 0


# The most steps one builtin episode takes: turns (3 at most: a scenario's two, plus the asking
# turn of miss_param / miss_func) x the largest per-turn step cap of tasks.episodes' categories
# (10, long context). A test keeps both in step with the generator. Episodes of the BFCL
# multi-turn source can take more (their cap grows with their plans).
EPISODE_MAX_TURNS = 8  # composed scenarios: up to four parts, each a turn and a correction
EPISODE_MAX_STEP_CAP = 10


def round_requests(tasks: int, episodes: int) -> int:
    """The most requests one validator sends one miner in one round: its tasks, then each
    episode's steps (every turn up to its step cap)."""
    return tasks + episodes * EPISODE_MAX_TURNS * EPISODE_MAX_STEP_CAP


# With the round's defaults: 8 + 4 x 8 x 10 = 328.
ROUND_REQUESTS = round_requests(RoundSettings.tasks, RoundSettings.episodes)


@dataclass(frozen=True)
class LimitsSettings:
    """Miner-side request limits; the per-caller ones are derived from a validator's round.

    ``per_caller_concurrency``: the validator's client keeps ``--round.tasks`` queries in flight
    per miner (its tasks at once, its episodes' steps sharing the same slots), so the miner takes
    as many. ``per_caller_rate``/``_burst``: the token bucket of authenticated callers WITHOUT a
    validator permit (served only where permits are not required, a development chain): one
    round's requests at once, a round's worth per round interval. A permit holder has no
    per-second limit: its requests are bounded by its rounds and its concurrency, so an honest
    miner never answers it 429 whatever its engine's speed (docs/miner.md, "Limits").
    """

    max_body_bytes: int = 1_048_576
    max_in_flight: int = 64
    per_caller_concurrency: int = RoundSettings.tasks
    per_caller_rate: float = round(ROUND_REQUESTS / RoundSettings.interval, 3)
    per_caller_burst: int = ROUND_REQUESTS
    head_timeout: float = 5.0
    per_ip_connections: int = 32
    max_connections: int | None = None  # None: the open-file limit less a margin
    # Validators' source addresses whose connections use the reserved share from the first one
    # (validators publish no axon; a validator's own axon, when it publishes one, counts too).
    validator_addresses: tuple[str, ...] = ()


@dataclass(frozen=True)
class AuthSettings:
    """Freshness window of signed requests (bt.http_auth.verify), in seconds."""

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
    """``sources`` stays a string here (``builtin=0.8,bfcl=0.2``); tasks/ parses it. ``paths``
    holds the files of each file flag of the task-source registry (``tasks.sources.PATH_FLAGS``:
    ``--tasks.bfcl`` question files or data folders, default the installed bfcl-eval; ``--tasks.xlam``
    JSON files, required when it has a share), as ``tasks.sources.load_sources(shares, paths=...)`` takes
    them: flag name -> files. A source with a new flag needs no field here."""

    sources: str = "builtin=1.0"
    paths: Mapping[str, tuple[Path, ...]] = field(default_factory=dict)


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
