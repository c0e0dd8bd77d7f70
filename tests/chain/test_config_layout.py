"""subnet.config is split along its seams (errors, values, settings, flags) and keeps its face."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import subnet.config
import subnet.wallets

# Every name another module, benchmark or test imports from subnet.config.
IMPORTED = [
    "ChainRetrySettings",
    "ConfigError",
    "DashboardSettings",
    "DbSettings",
    "DevchainSettings",
    "FLAGS",
    "Flag",
    "LoggingSettings",
    "MODEL_FORMATS",
    "MetricsSettings",
    "MinerSettings",
    "ModelSettings",
    "PUBLIC_NETWORKS",
    "PhrasingSettings",
    "QuerySettings",
    "RoundSettings",
    "ScoringSettings",
    "SubtensorSettings",
    "TasksSettings",
    "UserError",
    "ValidatorKeySettings",
    "ValidatorSettings",
    "WalletSettings",
    "WeightsSettings",
    "build_parser",
    "default_db_url",
    "default_devchain_path",
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
PACKAGE = Path(subnet.config.__file__).parent


def test_every_name_imported_from_subnet_config_is_still_there() -> None:
    missing = [name for name in IMPORTED if not hasattr(subnet.config, name)]
    assert missing == []
    assert set(IMPORTED) <= set(subnet.config.__all__)


def test_wallets_sit_above_the_configuration() -> None:
    """subnet.wallets imports the configuration's settings at its top, so the configuration must
    not import it back: a package that re-exported it would fail to import whenever the wallets
    are imported first (its __init__ runs before any of its modules)."""
    assert not hasattr(subnet.config, "load_wallet")
    assert subnet.wallets.WalletSettings is subnet.config.WalletSettings
    first = subprocess.run(
        [sys.executable, "-c", "import subnet.wallets"], capture_output=True, text=True, timeout=120
    )
    assert first.returncode == 0, first.stderr[-2000:]


def test_each_part_is_one_idea_of_bounded_size() -> None:
    sizes = {file.name: len(file.read_text(encoding="utf-8").splitlines()) for file in PACKAGE.glob("*.py")}
    assert set(sizes) == {"__init__.py", "errors.py", "flag_types.py", "settings.py", "flags.py"}
    assert max(sizes.values()) <= 700, sizes


def test_comments_cite_no_issue_numbers() -> None:
    for file in PACKAGE.glob("*.py"):
        assert not re.search(r"\bissues? \d", file.read_text(encoding="utf-8")), file.name


def test_the_task_file_flags_come_from_the_source_registry() -> None:
    import dataclasses

    from tasks.sources import PATH_FLAGS

    fields = {field.name for field in dataclasses.fields(subnet.config.TasksSettings)}
    assert fields == {"sources", "paths"}  # every file flag's files in one mapping
    flags = {flag.name for flag in subnet.config.FLAGS if flag.section == "tasks"}
    assert flags == {"tasks.sources", *(f"tasks.{name}" for name in PATH_FLAGS)}
    settings = subnet.config.parse_validator_settings(["--tasks.xlam", "/data/x.json"], env={})
    assert settings.tasks.paths == {"bfcl": (), "xlam": (Path("/data/x.json"),)}


def test_the_guided_flag_offers_exactly_the_guided_modes() -> None:
    from scoring.formats import guided_formats
    from subnet.config import FLAGS_BY_NAME
    from subnet.miner.guided import GuidedMode

    assert f"({', '.join(guided_formats())} formats)" in FLAGS_BY_NAME["model.guided"].help
    parse = FLAGS_BY_NAME["model.guided"].parse
    assert [parse(mode.value) for mode in GuidedMode] == [mode.value for mode in GuidedMode]
    with pytest.raises(ValueError, match="expected one of off, on, forced, grounded"):
        parse("sometimes")
