"""subnet.config: every flag parses, --help lists them, every mistake is one line and exit 2."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import bittensor as bt
import pytest
from bittensor.sp_core import save_password_to_environment

from subnet import config
from subnet.config import (
    FLAGS,
    FLAGS_BY_NAME,
    ConfigError,
    MinerSettings,
    ValidatorSettings,
    WalletSettings,
    flags_for,
    parse_miner_settings,
    parse_validator_settings,
    user_errors,
)
from subnet.wallets import load_wallet

HOTKEY_A = "5GrwvaEF5zXb26Fz9rcQpDWS57CtERHpNehXCPcNoHGKutQY"  # //Alice
HOTKEY_B = "5FHneW46xGXgs5mUiveU4sbTyGBzmstUspZC92UhjJM694ty"  # //Bob

# One valid command-line value per flag and the settings value it must become.
SAMPLES: dict[str, tuple[str | None, Any]] = {
    "netuid": ("7", 7),
    "rounds": ("3", 3),
    "subtensor.network": ("wss://example.org:443", "wss://example.org:443"),
    "subtensor.chain_endpoint": ("ws://127.0.0.1:9946", "ws://127.0.0.1:9946"),
    "devchain.path": ("/tmp/dev.sqlite", Path("/tmp/dev.sqlite")),
    "devchain.block_time": ("0.25", 0.25),
    "chain.retries": ("2", 2),
    "chain.backoff_base": ("0.1", 0.1),
    "chain.backoff_max": ("4", 4.0),
    "chain.timeout": ("9.5", 9.5),
    "wallet.name": ("cold", "cold"),
    "wallet.hotkey": ("hot", "hot"),
    "wallet.path": ("/tmp/wallets", Path("/tmp/wallets")),
    "axon.ip": ("127.0.0.1", "127.0.0.1"),
    "axon.port": ("9000", 9000),
    "axon.external_ip": ("::1", "::1"),
    "axon.external_port": ("9443", 9443),
    "logging.debug": (None, True),
    "logging.trace": (None, True),
    "logging.logging_dir": ("/tmp/logs", Path("/tmp/logs")),
    "model.backend": ("openai", "openai"),
    "model.path": ("demo", "demo"),
    "model.format": ("pythonic", "pythonic"),
    "model.device": ("cuda:1", "cuda:1"),
    "model.dtype": ("bfloat16", "bfloat16"),
    "model.trust_remote_code": (None, True),
    "model.batch_wait_ms": ("25", 25.0),
    "model.max_batch": ("16", 16),
    "model.max_new_tokens": ("512", 512),
    "model.guided": ("off", "off"),  # guided modes are for the transformers backend; the rest is openai
    "model.prefix_cache_tokens": ("0", 0),
    "model.cuda_graphs": ("off", "off"),
    "model.prefill_chunk": ("128", 128),
    "model.base_url": ("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1"),
    "model.name": ("qwen", "qwen"),
    "model.timeout": ("12", 12.0),
    "model.api_key_env": ("ENGINE_KEY", "ENGINE_KEY"),
    "blacklist.min_stake": ("0", 0.0),
    "blacklist.hotkeys": (f"{HOTKEY_A}, {HOTKEY_B}", (HOTKEY_A, HOTKEY_B)),
    "whitelist.hotkeys": (HOTKEY_B, (HOTKEY_B,)),
    "limits.max_body_bytes": ("2048", 2048),
    "limits.max_in_flight": ("3", 3),
    "limits.per_caller_concurrency": ("2", 2),
    "limits.per_caller_rate": ("0.5", 0.5),
    "limits.per_caller_burst": ("4", 4),
    "limits.head_timeout": ("2.5", 2.5),
    "query.allow_private_axons": (None, True),
    "limits.per_ip_connections": ("8", 8),
    "limits.max_connections": ("500", 500),
    "limits.validator_addresses": ("203.0.113.7, 2001:db8::1", ("203.0.113.7", "2001:db8::1")),
    "auth.max_age": ("20", 20.0),
    "auth.allowed_skew": ("0", 0.0),
    "db.url": ("postgresql+asyncpg://u@127.0.0.1/db", "postgresql+asyncpg://u@127.0.0.1/db"),
    "scoring.alpha": ("0.25", 0.25),
    "scoring.min_samples": ("5", 5),
    "round.tasks": ("4", 4),
    "round.interval": ("30", 30.0),
    "query.timeout": ("5", 5.0),
    "query.concurrency": ("32", 32),
    "weights.interval": ("360", 360),
    "weights.floor": ("0.25", 0.25),
    "tasks.sources": ("builtin=0.8,bfcl=0.2", "builtin=0.8,bfcl=0.2"),
    "tasks.bfcl": ("/data/bfcl,/data/q.json", (Path("/data/bfcl"), Path("/data/q.json"))),
    "tasks.xlam": ("/data/xlam.json", (Path("/data/xlam.json"),)),
    "round.episodes": ("2", 2),
    "round.episode_deadline": ("90", 90.0),
    "round.sandbox_workers": ("2", 2),
    "phrasing.engine": ("openai", "openai"),
    "phrasing.url": ("http://127.0.0.1:8001/v1", "http://127.0.0.1:8001/v1"),
    "phrasing.model": ("qwen-7b", "qwen-7b"),
    "phrasing.api_key_env": ("PHRASER_KEY", "PHRASER_KEY"),
    "phrasing.path": ("/models/phraser", "/models/phraser"),
    "phrasing.device": ("cuda:1", "cuda:1"),
    "phrasing.timeout": ("20", 20.0),
    "phrasing.concurrency": ("32", 32),
    "phrasing.temperature": ("0.6", 0.6),
    "phrasing.max_tokens": ("160", 160),
    "phrasing.verify": ("solve", "solve"),
    "phrasing.attempts": ("4", 4),
    "phrasing.replacements": ("1", 1),
    "phrasing.deadline": ("90", 90.0),
    "phrasing.allow_templates": (None, True),
    "validator.secret_path": ("/tmp/secret", Path("/tmp/secret")),
    "dashboard.host": ("0.0.0.0", "0.0.0.0"),
    "dashboard.port": ("0", 0),
    "dashboard.allowed_hosts": ("Validator.Example.org, 10.0.0.5", ("validator.example.org", "10.0.0.5")),
    "metrics.port": ("9200", 9200),
}

PARSERS: dict[type, Any] = {MinerSettings: parse_miner_settings, ValidatorSettings: parse_validator_settings}


def _get(settings: Any, name: str) -> Any:
    into = FLAGS_BY_NAME[name].into if name in FLAGS_BY_NAME else None
    *parts, last = name.split(".")
    for part in parts:
        settings = getattr(settings, part)
    return getattr(settings, into)[last] if into is not None else getattr(settings, last)


def test_samples_cover_every_flag() -> None:
    assert set(SAMPLES) == {flag.name for flag in FLAGS}


@pytest.mark.parametrize("settings_cls", [MinerSettings, ValidatorSettings], ids=["miner", "validator"])
def test_every_flag_parses(settings_cls: type) -> None:
    argv: list[str] = []
    for flag in flags_for(settings_cls):
        raw, _ = SAMPLES[flag.name]
        argv += [flag.option] if raw is None else [flag.option, raw]
    if settings_cls is MinerSettings:
        argv += ["--model.backend", "openai"]
    settings = PARSERS[settings_cls](argv, env={})
    for flag in flags_for(settings_cls):
        assert _get(settings, flag.name) == SAMPLES[flag.name][1], flag.name


@pytest.mark.parametrize("settings_cls", [MinerSettings, ValidatorSettings], ids=["miner", "validator"])
def test_defaults_without_flags(settings_cls: type) -> None:
    settings = PARSERS[settings_cls]([], env={})
    assert settings.subtensor.network == "dev"
    assert settings.subtensor.target == "dev"
    assert settings.wallet == WalletSettings()
    assert settings.netuid == 1
    assert settings.logging.debug is False


def test_miner_and_validator_sections() -> None:
    miner_flags = {flag.name for flag in flags_for(MinerSettings)}
    validator_flags = {flag.name for flag in flags_for(ValidatorSettings)}
    assert "model.path" in miner_flags and "model.path" not in validator_flags
    assert "axon.port" in miner_flags and "axon.port" not in validator_flags
    assert "db.url" in validator_flags and "db.url" not in miner_flags
    assert "rounds" in validator_flags
    assert {"netuid", "wallet.name", "subtensor.network", "logging.debug"} <= miner_flags & validator_flags


@pytest.mark.parametrize("settings_cls", [MinerSettings, ValidatorSettings], ids=["miner", "validator"])
def test_help_lists_every_flag(settings_cls: type, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        PARSERS[settings_cls](["--help"], env={})
    assert exit_info.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for flag in flags_for(settings_cls):
        assert flag.option in text, flag.option
        assert flag.env in text, flag.env
    assert "--wallet NAME" in text


def test_short_wallet_form() -> None:
    settings = parse_miner_settings(["--wallet", "mine"], env={})
    assert (settings.wallet.name, settings.wallet.hotkey) == ("mine", "default")
    settings = parse_miner_settings(["--wallet", "mine", "--wallet.hotkey", "h2"], env={})
    assert (settings.wallet.name, settings.wallet.hotkey) == ("mine", "h2")
    with pytest.raises(ConfigError, match="not both"):
        parse_miner_settings(["--wallet", "a", "--wallet.name", "b"], env={})


def test_environment_then_flags() -> None:
    env = {"SUBNET_DB_URL": "postgresql+asyncpg://env/db", "BT_WALLET_NAME": "fromenv", "SUBNET_NETUID": "12"}
    settings = parse_validator_settings([], env=env)
    assert settings.db.url == "postgresql+asyncpg://env/db"
    assert settings.wallet.name == "fromenv"
    assert settings.netuid == 12
    settings = parse_validator_settings(["--netuid", "3", "--wallet.name", "flag"], env=env)
    assert (settings.netuid, settings.wallet.name) == (3, "flag")
    assert parse_validator_settings([], env={"BT_LOGGING_DEBUG": "yes"}).logging.debug is True
    assert parse_validator_settings([], env={"BT_LOGGING_DEBUG": "0"}).logging.debug is False
    with pytest.raises(ConfigError, match="environment variable SUBNET_NETUID"):
        parse_validator_settings([], env={"SUBNET_NETUID": "twelve"})


def test_empty_variables_count_as_unset() -> None:
    settings = parse_miner_settings([], env={"BT_WALLET_NAME": "", "BT_AXON_PORT": " "})
    assert (settings.wallet.name, settings.axon.port) == ("default", 8091)


def test_published_axon_address() -> None:
    assert parse_miner_settings([], env={}).axon.published_ip is None
    axon = parse_miner_settings(["--axon.ip", "10.1.2.3", "--axon.port", "9000"], env={}).axon
    assert axon.published_ip == "10.1.2.3"  # the port published is the one bound (MinerNode.start)
    axon = parse_miner_settings(
        ["--axon.external_ip", "203.0.113.9", "--axon.external_port", "443"], env={}
    ).axon
    assert (axon.published_ip, axon.external_port) == ("203.0.113.9", 443)


def test_chain_endpoint_overrides_network() -> None:
    settings = parse_miner_settings(
        ["--subtensor.network", "local", "--subtensor.chain_endpoint", "ws://10.0.0.2:9944"], env={}
    )
    assert settings.subtensor.target == "ws://10.0.0.2:9944"
    assert not settings.subtensor.is_dev
    assert parse_miner_settings([], env={}).subtensor.is_dev


BAD_ARGUMENTS = [
    (["--netuid", "-1"], "--netuid"),
    (["--netuid", "one"], "--netuid"),
    (["--netuid"], "expected one argument"),
    (["--subtensor.network", "mainnet"], "--subtensor.network"),
    (["--subtensor.chain_endpoint", "http://x"], "ws://"),
    (["--axon.port", "70000"], "--axon.port"),
    (["--axon.ip", "localhost"], "IPv4 or IPv6"),
    (["--model.backend", "vllm"], "transformers, openai"),
    (["--model.format", "xml"], "--model.format"),
    (["--model.dtype", "int8"], "--model.dtype"),
    (["--model.device", "tpu"], "--model.device"),
    (["--model.backend", "openai"], "--model.base_url"),
    (["--model.base_url", "ftp://x"], "http://"),
    (["--model.max_batch", "0"], "--model.max_batch"),
    (["--limits.per_caller_rate", "nan"], "finite"),
    (["--blacklist.hotkeys", "not-a-key"], "ss58"),
    (["--wallet.name", "a/b"], "without '/'"),
    (["--wallet.hotkey", ""], "empty"),
    (["--chain.backoff_base", "0"], "greater than 0"),
    (["--unknown.flag", "1"], "unrecognized arguments: --unknown.flag"),
    (["--wal", "x"], "unrecognized arguments"),  # no prefix guessing
    (["--db.url", "x"], "unrecognized arguments"),  # a validator flag on the miner
]


@pytest.mark.parametrize(("argv", "needle"), BAD_ARGUMENTS)
def test_bad_arguments_are_one_line_exit_2(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_info, user_errors("miner"):
        parse_miner_settings(argv, env={})
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("miner: error: ")
    assert needle in lines[0]


def test_validator_bad_values() -> None:
    bad = (
        ["--scoring.alpha", "0"],
        ["--scoring.alpha", "1.5"],
        ["--dashboard.port", "-1"],
        ["--rounds", "0"],
    )
    for argv in bad:
        with pytest.raises(ConfigError):
            parse_validator_settings(argv, env={})
    with pytest.raises(ConfigError, match=r"unrecognized arguments: --model\.path"):
        parse_validator_settings(["--model.path", "x"], env={})


def test_command_line_exit_code_in_a_subprocess(tmp_path: Path) -> None:
    script = (
        "import sys\n"
        "from subnet.config import parse_miner_settings, user_errors\n"
        "with user_errors('miner'):\n"
        "    parse_miner_settings(sys.argv[1:])\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script, "--axon.port", "http"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "miner: error: argument --axon.port: expected a whole number, got 'http'"
    ]


# --- wallets --------------------------------------------------------------------------------


@pytest.fixture
def no_password_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("BT_PW_") or name in {"BT_WALLET_PASSWORD", "BT_WALLET_PASSWORD_FILE"}:
            monkeypatch.delenv(name)


def _make_wallet(
    root: Path, name: str = "w", hotkey: str = "h", coldkey_password: str | None = None
) -> WalletSettings:
    wallet = bt.Wallet(name, hotkey, str(root))
    wallet.create_new_coldkey(
        use_password=coldkey_password is not None, coldkey_password=coldkey_password, suppress=True
    )
    wallet.create_new_hotkey(use_password=False, suppress=True)
    return WalletSettings(name=name, hotkey=hotkey, path=root)


@pytest.mark.usefixtures("no_password_env")
def test_load_wallet_ok(tmp_path: Path) -> None:
    settings = _make_wallet(tmp_path)
    wallet = load_wallet(settings, require_coldkey=True)
    assert wallet.hotkey.ss58_address.startswith("5")
    assert wallet.coldkeypub.ss58_address == wallet.coldkey.ss58_address


@pytest.mark.usefixtures("no_password_env")
def test_missing_wallet_and_hotkey(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info, user_errors("validator"):
        load_wallet(WalletSettings(name="ghost", hotkey="h", path=tmp_path))
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    assert "wallet 'ghost' not found" in lines[0]
    assert "python -m subnet.wallets create --wallet.name ghost --wallet.hotkey h --wallet.path" in lines[0]
    assert "btcli wallet create -w ghost -H h" in lines[0]

    _make_wallet(tmp_path, name="real", hotkey="h")
    with pytest.raises(
        ConfigError, match=r"hotkey 'other' not found.*btcli wallet new-hotkey -w real -H other"
    ):
        load_wallet(WalletSettings(name="real", hotkey="other", path=tmp_path))


LOCK_PASSWORD = "s3cret-pass"


@pytest.fixture(scope="module")
def locked_wallets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two wallets under one root: 'coldlocked' (encrypted coldkey) and 'hotlocked' (encrypted hotkey).

    Encrypting a key costs seconds of key derivation, so it is done once: the hotkey of
    'hotlocked' is a copy of the encrypted coldkey file (with the matching public file).
    """
    root = tmp_path_factory.mktemp("locked")
    cold = bt.Wallet("coldlocked", "h", str(root))
    cold.create_new_coldkey(coldkey_password=LOCK_PASSWORD, suppress=True)
    cold.create_new_hotkey(use_password=False, suppress=True)
    hot = bt.Wallet("hotlocked", "h", str(root))
    hot.create_new_coldkey(use_password=False, suppress=True)
    Path(hot.hotkey_file.path).parent.mkdir(parents=True, exist_ok=True)
    Path(hot.hotkey_file.path).write_bytes(Path(cold.coldkey_file.path).read_bytes())
    Path(hot.hotkeypub_file.path).write_bytes(Path(cold.coldkeypub_file.path).read_bytes())
    return root


@pytest.mark.usefixtures("no_password_env")
def test_locked_coldkey(locked_wallets: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    settings = WalletSettings(name="coldlocked", hotkey="h", path=locked_wallets)
    # The hotkey alone is enough for serving and weights: no password needed.
    assert load_wallet(settings).hotkey.ss58_address
    with pytest.raises(ConfigError, match=r"coldkey of wallet 'coldlocked' is encrypted.*BT_WALLET_PASSWORD"):
        load_wallet(settings, require_coldkey=True)
    monkeypatch.setenv("BT_WALLET_PASSWORD", LOCK_PASSWORD)
    assert load_wallet(settings, require_coldkey=True).coldkey.ss58_address


@pytest.mark.usefixtures("no_password_env")
def test_locked_hotkey(locked_wallets: Path) -> None:
    settings = WalletSettings(name="hotlocked", hotkey="h", path=locked_wallets)
    wallet = bt.Wallet("hotlocked", "h", str(locked_wallets))
    env_name = wallet.hotkey_file.env_var_name()
    with pytest.raises(ConfigError, match=f"hotkey 'h' of wallet 'hotlocked' is encrypted.*{env_name}"):
        load_wallet(settings)
    # The SDK keeps BT_PW_* values encoded and sets them below Python's os.environ.
    save_password_to_environment(env_name, LOCK_PASSWORD)
    try:
        assert load_wallet(settings).hotkey.ss58_address == wallet.hotkeypub.ss58_address
    finally:
        os.unsetenv(env_name)


def test_default_paths_are_not_created_at_import() -> None:
    # Building defaults only computes paths; nothing is written.
    assert config.default_devchain_path().name == "devchain.sqlite"
    assert config.default_db_url().startswith("sqlite+aiosqlite:///")


def test_docs_table_is_current() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "configuration.md").read_text(encoding="utf-8")
    begin = text.index("-->", text.index("<!-- flags:begin")) + len("-->\n")
    end = text.index("<!-- flags:end -->")
    assert text[begin:end] == config.flags_markdown(), (
        "regenerate the table with subnet.config.flags_markdown()"
    )
    for flag in FLAGS:
        assert f"`{flag.option}" in text and flag.env in text


@pytest.mark.parametrize("mode", ["on", "forced", "grounded"])
def test_guided_decoding_with_an_engine_is_refused_in_one_line(mode: str) -> None:
    argv = [
        "--model.backend",
        "openai",
        "--model.base_url",
        "http://127.0.0.1:8000/v1",
        "--model.guided",
        mode,
    ]
    with pytest.raises(ConfigError) as error:
        PARSERS[MinerSettings](argv, env={})
    assert "\n" not in str(error.value) and "--model.guided" in str(error.value)


def test_the_miner_gives_up_before_the_validator_stops_waiting() -> None:
    from subnet.miner.node import server_policy

    miner = PARSERS[MinerSettings]([], env={})
    validator = PARSERS[ValidatorSettings]([], env={})
    assert server_policy(miner).handler_timeout_s < validator.query.timeout
    assert miner.model.timeout < validator.query.timeout
