"""Command-line configuration of the neurons: flags, environment and defaults -> typed settings.

``main()`` calls :func:`parse_miner_settings` or :func:`parse_validator_settings` once and
passes the resulting frozen object down; nothing here is global or read at import time.

The parts, each its own module:

- :mod:`subnet.config.errors`: :class:`ConfigError`, the one error of a bad flag, value,
  environment variable or wallet (a ``subnet.cli.UsageError``: one line, exit code 2).
- :mod:`subnet.config.flag_types`: what each flag's text may be (str -> value, or a ValueError
  saying why not); the common parsers are the command-line foundation's (:mod:`subnet.cli`).
- :mod:`subnet.config.settings`: one frozen dataclass per section, whose defaults are the
  flags' defaults.
- :mod:`subnet.config.flags`: the registry (:data:`FLAGS`), so adding a setting is adding a
  field and an entry; the parsers built from it; :func:`add_flag` for other command lines.

Everything is re-exported here, so ``from subnet.config import X`` works for every name. Wallets
open through :func:`subnet.wallets.load_wallet`, which sits above the configuration (it reads
:class:`WalletSettings`), so it is not re-exported: the configuration never imports it back.
"""

from __future__ import annotations

from subnet.cli import (
    APP_NAME,
    USER_ERROR_EXIT_CODE,
    exit_with,
    float_arg,
    int_arg,
    name_arg,
    user_errors,
)
from subnet.config.errors import ConfigError, UserError
from subnet.config.flag_types import MODEL_FORMATS, NETWORK_NAMES, PUBLIC_NETWORKS, model_backends
from subnet.config.flags import (
    FLAGS,
    FLAGS_BY_NAME,
    Flag,
    add_flag,
    build_parser,
    flags_for,
    flags_markdown,
    parse_miner_settings,
    parse_register_settings,
    parse_validator_settings,
)
from subnet.config.settings import (
    AuthSettings,
    AxonSettings,
    BlacklistSettings,
    ChainRetrySettings,
    DashboardSettings,
    DbSettings,
    DevchainSettings,
    LimitsSettings,
    LoggingSettings,
    MetricsSettings,
    MinerSettings,
    ModelSettings,
    PhrasingSettings,
    QuerySettings,
    RegisterSettings,
    RoundSettings,
    ScoringSettings,
    SubtensorSettings,
    TasksSettings,
    ValidatorKeySettings,
    ValidatorSettings,
    WalletSettings,
    WeightsSettings,
    WhitelistSettings,
    default_db_url,
    default_devchain_path,
    default_secret_path,
    default_wallet_path,
)

__all__ = [
    "APP_NAME",
    "FLAGS",
    "FLAGS_BY_NAME",
    "MODEL_FORMATS",
    "NETWORK_NAMES",
    "PUBLIC_NETWORKS",
    "USER_ERROR_EXIT_CODE",
    "AuthSettings",
    "AxonSettings",
    "BlacklistSettings",
    "ChainRetrySettings",
    "ConfigError",
    "DashboardSettings",
    "DbSettings",
    "DevchainSettings",
    "Flag",
    "LimitsSettings",
    "LoggingSettings",
    "MetricsSettings",
    "MinerSettings",
    "ModelSettings",
    "PhrasingSettings",
    "QuerySettings",
    "RegisterSettings",
    "RoundSettings",
    "ScoringSettings",
    "SubtensorSettings",
    "TasksSettings",
    "UserError",
    "ValidatorKeySettings",
    "ValidatorSettings",
    "WalletSettings",
    "WeightsSettings",
    "WhitelistSettings",
    "add_flag",
    "build_parser",
    "default_db_url",
    "default_devchain_path",
    "default_secret_path",
    "default_wallet_path",
    "exit_with",
    "flags_for",
    "flags_markdown",
    "float_arg",
    "int_arg",
    "model_backends",
    "name_arg",
    "parse_miner_settings",
    "parse_register_settings",
    "parse_validator_settings",
    "user_errors",
]
