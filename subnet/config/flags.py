"""The neurons' flags: one registry (:data:`FLAGS`) -> argparse, environment and typed settings.

A value comes from, in order: the command line, the environment (``BT_*`` for the sections
bittensor already names that way, ``SUBNET_*`` for the rest; the variable is the flag
upper-cased with dots turned into underscores, e.g. ``--db.url`` -> ``SUBNET_DB_URL``), then
the settings field's default. Other command lines that take one of these flags declare it with
:func:`add_flag`, so its help and validation are the registry's.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from scoring.formats import guided_formats
from subnet.cli import OneLineParser, UsageError, argparse_type
from subnet.config import settings as settings_module
from subnet.config.errors import ConfigError
from subnet.config.flag_types import (
    MODEL_FORMATS,
    NON_NEGATIVE,
    PORT,
    PORT_OR_OFF,
    POSITIVE,
    POSITIVE_INT,
    boolean,
    choice,
    db_url,
    device,
    env_name,
    float_in,
    host_names,
    hotkeys,
    http_url,
    int_in,
    ip_address,
    ip_addresses,
    model_backend,
    model_backends,
    name,
    network,
    path,
    paths,
    text,
    ws_url,
)
from subnet.config.settings import (
    GuidedMode,
    LoggingSettings,
    MinerSettings,
    ModelSettings,
    RegisterSettings,
    ValidatorSettings,
)
from subnet.registry import ENGINES, engines_help, owners_of, settings_mistake
from tasks.sources import PATH_FLAGS

T = TypeVar("T")

# Sections whose environment variables follow bittensor's long-standing BT_<SECTION>_<NAME>.
_BITTENSOR_SECTIONS = frozenset({"subtensor", "wallet", "axon", "logging"})


@dataclass(frozen=True)
class Flag:
    """One command-line flag: ``--<name>``, where ``name`` is ``section.field`` or a top-level field."""

    name: str
    help: str
    parse: Callable[[str], Any]
    switch: bool = False  # present -> True, no value
    metavar: str | None = None
    #: A mapping field of the section that holds this flag's value under its ``attr`` (the task
    #: sources' file flags: ``--tasks.bfcl`` -> ``TasksSettings.paths["bfcl"]``): flags that come
    #: from a registry, one settings field for all of them. Such a flag names no files by default.
    into: str | None = None

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


FLAGS: tuple[Flag, ...] = (
    Flag("netuid", "Subnet id on the chosen network.", int_in(0, 65535), metavar="N"),
    Flag(
        "rounds", "Run this many rounds, then exit (default: run until stopped).", POSITIVE_INT, metavar="K"
    ),
    # chain
    Flag(
        "subtensor.network",
        "Chain to use: finney, test, local (ws://127.0.0.1:9944), dev (the SQLite devchain) "
        "or a ws:// / wss:// URL.",
        network,
        metavar="NET",
    ),
    Flag(
        "subtensor.chain_endpoint",
        "Explicit ws:// / wss:// endpoint; overrides --subtensor.network.",
        ws_url,
        metavar="URL",
    ),
    Flag("devchain.path", "SQLite file of the development chain (dev network only).", path, metavar="FILE"),
    Flag("devchain.block_time", "Seconds per devchain block (dev network only).", POSITIVE, metavar="S"),
    Flag("chain.retries", "Retries of a chain call after a connection failure.", int_in(0, 100), metavar="N"),
    Flag(
        "chain.backoff_base",
        "First retry delay in seconds (doubles each retry, with jitter).",
        POSITIVE,
        metavar="S",
    ),
    Flag("chain.backoff_max", "Longest retry delay in seconds.", POSITIVE, metavar="S"),
    Flag(
        "chain.timeout",
        "Seconds one chain call may take before it counts as a failure.",
        POSITIVE,
        metavar="S",
    ),
    # wallet
    Flag("wallet.name", "Wallet (coldkey) name; the short form is --wallet NAME.", name, metavar="NAME"),
    Flag("wallet.hotkey", "Hotkey name inside the wallet.", name, metavar="NAME"),
    Flag("wallet.path", "Directory holding the wallets.", path, metavar="DIR"),
    # axon
    Flag("axon.ip", "Address the miner's HTTP server binds to.", ip_address, metavar="IP"),
    Flag("axon.port", "Port the miner's HTTP server listens on.", PORT, metavar="PORT"),
    Flag(
        "axon.external_ip",
        "Address published on chain, when it differs from --axon.ip (NAT, 0.0.0.0 bind).",
        ip_address,
        metavar="IP",
    ),
    Flag(
        "axon.external_port",
        "Port published on chain, when it differs from --axon.port.",
        PORT,
        metavar="PORT",
    ),
    # logging
    Flag("logging.debug", "Log at DEBUG level.", boolean, switch=True),
    Flag("logging.trace", "Log at DEBUG level, the SDK's RPC traffic included.", boolean, switch=True),
    Flag("logging.logging_dir", "Also write logs to a file in this directory.", path, metavar="DIR"),
    # miner: model
    # Its choices (and metavar) are subnet.registry.BACKENDS, read when the flag is used.
    Flag("model.backend", "Model backend.", model_backend),
    Flag(
        "model.path",
        "Local model folder (or a hub id where the machine can reach a hub); 'demo' for SmolLM2.",
        text,
        metavar="PATH",
    ),
    Flag(
        "model.format",
        "Tool-call output format of the model (auto: the one its chat template shows; docs/miner.md).",
        choice(*MODEL_FORMATS),
        metavar="FORMAT",
    ),
    Flag("model.device", "auto, cpu, mps, cuda or cuda:N.", device, metavar="DEV"),
    Flag(
        "model.dtype",
        "Weights dtype (auto: bfloat16 on CUDA, else float32).",
        choice("auto", "bfloat16", "float16", "float32"),
        metavar="{auto,bfloat16,float16,float32}",
    ),
    Flag("model.trust_remote_code", "Allow the model folder's own Python code to run.", boolean, switch=True),
    Flag(
        "model.batch_wait_ms",
        "Milliseconds to gather concurrent requests into a batch.",
        NON_NEGATIVE,
        metavar="MS",
    ),
    Flag("model.max_batch", "Largest batch generated together.", POSITIVE_INT, metavar="N"),
    Flag("model.max_new_tokens", "Generation length cap.", POSITIVE_INT, metavar="N"),
    Flag(
        "model.guided",
        f"Schema-guided decoding of calls ({', '.join(guided_formats())} formats): on "
        "(the model decides whether to call), forced (always a call, values copied from the request), "
        "grounded (forced, kept only when the request grounds it).",
        choice(*GuidedMode),
        metavar="{" + ",".join(GuidedMode) + "}",
    ),
    Flag(
        "model.prefix_cache_tokens",
        "Prompt tokens whose keys and values are kept for reuse by prompts that begin alike (0: off).",
        int_in(0),
        metavar="N",
    ),
    Flag(
        "model.cuda_graphs",
        "Capture decoding steps as CUDA graphs (auto: on a CUDA device; off: run every step eagerly).",
        choice("auto", "on", "off"),
        metavar="{auto,on,off}",
    ),
    Flag(
        "model.prefill_chunk",
        "Prompt tokens prefilled per decoding step while other requests are decoding.",
        POSITIVE_INT,
        metavar="N",
    ),
    Flag("model.base_url", "OpenAI-compatible engine URL.", http_url, metavar="URL"),
    Flag("model.name", "Model name sent to the engine / reported to callers.", text, metavar="NAME"),
    Flag(
        "model.timeout",
        "Seconds the miner gives one answer (keep it below the validators' --query.timeout).",
        POSITIVE,
        metavar="S",
    ),
    Flag(
        "model.api_key_env",
        "Environment variable that holds the engine's API key (the key itself is never a flag or a "
        "log line).",
        env_name,
        metavar="NAME",
    ),
    # miner: auth and limits
    Flag("blacklist.min_stake", "Least stake a validator needs to be served.", NON_NEGATIVE, metavar="STAKE"),
    Flag("blacklist.hotkeys", "Comma-separated hotkeys never served.", hotkeys, metavar="SS58,..."),
    Flag(
        "whitelist.hotkeys",
        "Comma-separated hotkeys; when set, only these are served.",
        hotkeys,
        metavar="SS58,...",
    ),
    Flag("limits.max_body_bytes", "Largest request body accepted.", POSITIVE_INT, metavar="BYTES"),
    Flag(
        "limits.max_in_flight", "Requests processed at once before answering 503.", POSITIVE_INT, metavar="N"
    ),
    Flag(
        "limits.per_caller_concurrency",
        "Requests at once per caller (default: a validator's --round.tasks, what it keeps in flight).",
        POSITIVE_INT,
        metavar="N",
    ),
    Flag(
        "limits.per_caller_rate",
        "Sustained requests per second per caller without a validator permit (permit holders are "
        "bounded by their rounds and concurrency, never per second).",
        POSITIVE,
        metavar="R",
    ),
    Flag(
        "limits.per_caller_burst",
        "Burst of that per-second bucket (default: the most requests a validator's round sends).",
        POSITIVE_INT,
        metavar="N",
    ),
    Flag(
        "limits.head_timeout", "Seconds a connection may take to send a request head.", POSITIVE, metavar="S"
    ),
    Flag(
        "limits.per_ip_connections",
        "Open connections per address that is not a validator's.",
        POSITIVE_INT,
        metavar="N",
    ),
    Flag(
        "limits.max_connections",
        "Open connections in all (default: the open-file limit less a margin).",
        POSITIVE_INT,
        metavar="N",
    ),
    Flag(
        "limits.validator_addresses",
        "Comma-separated source addresses of validators to keep connections for before they "
        "have signed a request here (see docs/miner.md, Limits).",
        ip_addresses,
        metavar="IP,...",
    ),
    Flag("auth.max_age", "Oldest signed request accepted, in seconds.", POSITIVE, metavar="S"),
    Flag(
        "auth.allowed_skew",
        "Clock skew tolerated for requests from the future, in seconds.",
        NON_NEGATIVE,
        metavar="S",
    ),
    # validator
    Flag(
        "db.url",
        "Database URL (SQLite file by default; postgresql+asyncpg://... for PostgreSQL).",
        db_url,
        metavar="URL",
    ),
    Flag(
        "scoring.alpha",
        "Weight of a new round in each hotkey's moving average.",
        float_in(0.0, 1.0, low_open=True),
        metavar="A",
    ),
    Flag(
        "scoring.min_samples",
        "Scored answers a hotkey needs before it earns weight.",
        int_in(0),
        metavar="N",
    ),
    Flag("round.tasks", "Tasks per miner per round.", POSITIVE_INT, metavar="N"),
    Flag("round.interval", "Seconds between round starts.", POSITIVE, metavar="S"),
    Flag(
        "round.episodes",
        "Multi-turn episodes per miner per round (0: none); they weigh half of the round's score.",
        int_in(0, 64),
        metavar="N",
    ),
    Flag("round.episode_deadline", "Seconds one episode may take in all.", POSITIVE, metavar="S"),
    Flag(
        "round.sandbox_workers",
        "Processes that run episodes' tool calls, each within 2 s and 1 GiB (0: one per core, up to 4).",
        int_in(0, 64),
        metavar="N",
    ),
    Flag("query.timeout", "Seconds a miner has to answer one task.", POSITIVE, metavar="S"),
    Flag(
        "query.concurrency",
        "Miner requests in flight at once (the soft open-file limit is raised to fit).",
        POSITIVE_INT,
        metavar="N",
    ),
    Flag(
        "query.allow_private_axons",
        "On finney and test, query miners on loopback, private and link-local addresses too.",
        boolean,
        switch=True,
    ),
    Flag(
        "weights.interval",
        "Blocks between weight submissions (default: once per epoch).",
        POSITIVE_INT,
        metavar="BLOCKS",
    ),
    Flag(
        "weights.floor",
        "Moving average a hotkey must exceed to earn weight (0 gives weight to any positive score).",
        float_in(0.0, 1.0),
        metavar="F",
    ),
    Flag("tasks.sources", "Task sources and their shares, e.g. builtin=0.8,bfcl=0.2.", text, metavar="SPEC"),
    # One per file flag of the task-source registry (--tasks.bfcl, --tasks.xlam), held in
    # TasksSettings.paths: a new source's flag needs no field of its own.
    *(
        Flag(
            f"tasks.{flag}",
            f"{kind.files}, comma-separated ({kind.without_files}).",
            paths,
            metavar=kind.metavar,
            into="paths",
        )
        for flag, kind in PATH_FLAGS.items()
    ),
    Flag(
        "phrasing.engine",
        f"Model writing each round's requests: {engines_help()}.",
        choice(*ENGINES),
        metavar="NAME",
    ),
    Flag(
        "phrasing.url",
        "OpenAI-compatible endpoint of the phrasing model (engine openai).",
        http_url,
        metavar="URL",
    ),
    Flag("phrasing.model", "Model name sent to the phrasing endpoint (engine openai).", text, metavar="NAME"),
    Flag(
        "phrasing.api_key_env",
        "Environment variable holding the phrasing endpoint's API key (engine openai).",
        env_name,
        metavar="VAR",
    ),
    Flag(
        "phrasing.path",
        "Local model folder of the phrasing model (engine transformers).",
        text,
        metavar="DIR",
    ),
    Flag(
        "phrasing.device",
        "Device of the phrasing model: auto, cpu, cuda, cuda:N (engine transformers).",
        device,
        metavar="DEV",
    ),
    Flag("phrasing.timeout", "Seconds one phrasing request may take.", POSITIVE, metavar="S"),
    Flag("phrasing.concurrency", "Phrasing requests in flight at once.", POSITIVE_INT, metavar="N"),
    Flag(
        "phrasing.temperature",
        "Sampling temperature of the phrasing model.",
        float_in(0.0, 2.0),
        metavar="T",
    ),
    Flag("phrasing.max_tokens", "Longest rewording in tokens.", POSITIVE_INT, metavar="N"),
    Flag(
        "phrasing.verify",
        "values: deterministic checks; solve: those, and the phrasing model must answer its own text right.",
        choice("values", "solve"),
        metavar="MODE",
    ),
    Flag("phrasing.attempts", "Rewordings tried per task before it is dropped.", POSITIVE_INT, metavar="N"),
    Flag(
        "phrasing.replacements",
        "New tasks drawn for a dropped one before its slot stays empty.",
        int_in(0, 16),
        metavar="N",
    ),
    Flag("phrasing.deadline", "Seconds the phrasing of one round may take in all.", POSITIVE, metavar="S"),
    Flag(
        "phrasing.allow_templates",
        "On finney and test, run with the template text (invertible without a model: not for real rewards).",
        boolean,
        switch=True,
    ),
    Flag(
        "validator.secret_path",
        "File holding the validator's round-seed secret (created if missing).",
        path,
        metavar="FILE",
    ),
    Flag("dashboard.host", "Address the dashboard binds to.", ip_address, metavar="IP"),
    Flag("dashboard.port", "Dashboard port (0 turns it off).", PORT_OR_OFF, metavar="PORT"),
    Flag(
        "dashboard.allowed_hosts",
        "Comma-separated Host names the dashboard answers for, beside loopback and its bind address.",
        host_names,
        metavar="NAME,...",
    ),
    Flag("metrics.port", "Prometheus metrics port (0 turns it off).", PORT_OR_OFF, metavar="PORT"),
)

FLAGS_BY_NAME = {flag.name: flag for flag in FLAGS}


def flags_for(settings_cls: type) -> list[Flag]:
    """The flags that build ``settings_cls`` (MinerSettings or ValidatorSettings), in registry order."""
    fields = {f.name for f in dataclasses.fields(settings_cls)}
    return [flag for flag in FLAGS if (flag.section or flag.name) in fields]


# --- parsing --------------------------------------------------------------------------------


def _default_of(settings_cls: type, flag: Flag) -> Any:
    if flag.into is not None:
        return ()
    owner = settings_cls if flag.section is None else _resolve_type(settings_cls, flag.section)
    spec = {f.name: f for f in dataclasses.fields(owner)}[flag.attr]
    if spec.default is not dataclasses.MISSING:
        return spec.default
    if spec.default_factory is not dataclasses.MISSING:
        return spec.default_factory()
    raise AssertionError(f"settings field {flag.name} has no default")


def _resolve_type(settings_cls: type, section: str) -> type:
    # Annotations are strings under `from __future__ import annotations`; the section
    # classes are subnet.config.settings' globals, so the name resolves there.
    spec = {f.name: f for f in dataclasses.fields(settings_cls)}[section]
    annotation = spec.type
    resolved = getattr(settings_module, annotation) if isinstance(annotation, str) else annotation
    assert isinstance(resolved, type)
    return resolved


def _metavar(flag: Flag) -> str | None:
    if flag.parse is model_backend:
        return "{" + ",".join(model_backends()) + "}"
    return flag.metavar


def _help(flag: Flag) -> str:
    """The flag's help; a backend's own ``--model.*`` setting (subnet.registry) names it."""
    if flag.section != "model":
        return flag.help
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
        shown = f"{_help(flag)} [default: {default}; env {flag.env}]"
        if flag.switch:
            group.add_argument(flag.option, dest=flag.dest, action="store_true", default=None, help=shown)
        else:
            group.add_argument(flag.option, dest=flag.dest, metavar=_metavar(flag), default=None, help=shown)
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
        values["wallet.name"] = _convert(FLAGS_BY_NAME["wallet.name"], short_wallet, "argument --wallet")

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
        into = FLAGS_BY_NAME[flag_name].into if flag_name in FLAGS_BY_NAME else None
        if into is not None:
            sections.setdefault(section, {}).setdefault(into, {})[attr] = value
        elif section:
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
        # What a backend needs and what only it may be given: its own settings (subnet.registry).
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
        used_by = ", ".join(user for user, names in users.items() if flag.name in names)
        value = "" if flag.switch else f" {_metavar(flag) or 'VALUE'}"
        rows.append(
            f"| `{flag.option}{value}` | {_describe_default(owner, flag)} | `{flag.env}` | {used_by} "
            f"| {_help(flag).replace('|', '/')} |"
        )
    return "\n".join(rows) + "\n"


def add_flag(
    parser: argparse.ArgumentParser | argparse._ArgumentGroup,
    flag_name: str,
    *,
    dest: str | None = None,
    default: Any = None,
    parse: Callable[[str], Any] | None = None,
    note: str = "",
    append: bool = False,
    required: bool = False,
    metavar: str | None = None,
) -> argparse.Action:
    """Declare the registry's ``--flag_name`` on another command line (its help, metavar and value
    parser), so that a flag is spelt, explained and checked the same way wherever it is taken.

    ``parse`` narrows the registry's check where the command needs it (``metavar`` then says what
    it takes); ``note`` adds what the flag means there (its default, its use); ``append`` lets the
    flag be given once per item (a list, ``default`` its start).
    """
    flag = FLAGS_BY_NAME[flag_name]
    shown = " ".join(part for part in (_help(flag), note) if part)
    if flag.switch:
        return parser.add_argument(
            flag.option, dest=dest or flag.dest, action="store_true", default=bool(default), help=shown
        )
    return parser.add_argument(
        flag.option,
        dest=dest or flag.dest,
        type=argparse_type(parse or flag.parse),
        metavar=metavar or _metavar(flag),
        default=default,
        help=shown,
        required=required,
        **({"action": "append"} if append else {}),
    )
