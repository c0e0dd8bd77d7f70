"""subnet.config and the miner's backend registry: --model.backend's choices are
subnet.registry.BACKENDS, and each backend's own --model.* settings (its entry's settings) give
their flags' help and the one-line errors for a flag given to the wrong backend."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from subnet import config
from subnet.config import (
    FLAGS,
    ConfigError,
    ModelSettings,
    build_parser,
    flags_markdown,
    model_backends,
    parse_miner_settings,
)
from subnet.registry import BACKENDS, BackendEntry, BackendSettings, missing_setting, owners_of

BASE_URL = ["--model.base_url", "http://127.0.0.1:8000/v1"]


def _help(settings_cls: type = config.MinerSettings) -> str:
    return " ".join(build_parser(settings_cls, "miner").format_help().split())


def test_the_backend_choices_are_the_registry() -> None:
    assert model_backends() == list(BACKENDS)
    choices = "{" + ",".join(BACKENDS) + "}"
    assert f"--model.backend {choices}" in _help()
    assert f"`--model.backend {choices}`" in flags_markdown()
    with pytest.raises(ConfigError, match=f"expected one of {', '.join(BACKENDS)}, got 'vllm'"):
        parse_miner_settings(["--model.backend", "vllm"], env={})


def test_a_backend_added_to_the_registry_is_a_choice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(BACKENDS, "vllm", BackendEntry("vllm_backend:VLLMBackend"))
    assert model_backends() == [*BACKENDS] and "vllm" in model_backends()
    assert parse_miner_settings(["--model.backend", "vllm"], env={}).model.backend == "vllm"
    assert parse_miner_settings([], env={"SUBNET_MODEL_BACKEND": "vllm"}).model.backend == "vllm"
    assert "--model.backend {transformers,openai,vllm}" in _help()
    assert "`--model.backend {transformers,openai,vllm}`" in flags_markdown()
    # With no settings of its own it reads only the shared ones: another backend's settings are
    # ignored (device) or refused (guided, api_key_env) as they are for the registered backends.
    assert parse_miner_settings(["--model.backend", "vllm", "--model.device", "cpu"], env={})
    with pytest.raises(ConfigError, match=r"--model\.guided on is for --model\.backend transformers"):
        parse_miner_settings(["--model.backend", "vllm", "--model.guided", "on"], env={})
    with pytest.raises(ConfigError, match=r"--model\.api_key_env KEY is for --model\.backend openai"):
        parse_miner_settings(["--model.backend", "vllm", "--model.api_key_env", "KEY"], env={})


def test_config_never_loads_a_backend() -> None:
    script = (
        "import sys\n"
        "import subnet.config as c\n"
        "loaded = lambda: sorted(m for m in sys.modules if m.split('.')[0] in {'torch', 'transformers'})\n"
        "assert 'subnet.miner' not in sys.modules and not loaded(), 'at import'\n"
        "c.parse_validator_settings([], env={})\n"
        "assert 'subnet.miner' not in sys.modules, 'validator'\n"
        "c.parse_miner_settings([], env={}); c.flags_markdown()\n"
        "assert 'subnet.miner' not in sys.modules and not loaded(), loaded()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr


def test_backend_settings_are_model_flags() -> None:
    fields = {spec.name for spec in dataclasses.fields(ModelSettings)}
    flags = {flag.attr for flag in FLAGS if flag.section == "model"}
    for name, entry in BACKENDS.items():
        own = entry.settings
        assert set(own.own) <= fields & flags, name
        assert "backend" not in own.own
    with pytest.raises(ValueError, match="not among the backend's own settings: guided"):
        BackendSettings(own=("device",), refused_elsewhere={"guided": "x"})


@pytest.mark.parametrize("flag", [flag for flag in FLAGS if flag.section == "model"], ids=lambda f: f.name)
def test_a_backends_own_flag_says_whose_it_is(flag: config.Flag) -> None:
    owners = owners_of(flag.attr)
    suffix = f"For --model.backend {' or '.join(owners)}."
    row = next(line for line in flags_markdown().splitlines() if line.startswith(f"| `{flag.option}"))
    assert (suffix in row) == bool(owners)
    assert ("backend" in flag.help) == (flag.name == "model.backend")  # only the declaration names it
    if owners:
        assert f"{flag.help} {suffix}" in _help()


def test_each_backends_settings_are_its_own() -> None:
    assert owners_of("device") == ["transformers"] and owners_of("guided") == ["transformers"]
    assert owners_of("base_url") == ["openai"] and owners_of("api_key_env") == ["openai"]
    assert owners_of("path") == [] and owners_of("timeout") == []


WRONG_BACKEND = [
    (["--model.backend", "openai"], missing_setting("openai", "base_url")),
    (
        ["--model.backend", "openai", *BASE_URL, "--model.guided", "forced"],
        "--model.guided forced is for --model.backend transformers ("
        + BACKENDS["transformers"].settings.refused_elsewhere["guided"]
        + "): drop --model.guided or use --model.backend transformers",
    ),
    (
        ["--model.api_key_env", "ENGINE_KEY"],
        "--model.api_key_env ENGINE_KEY is for --model.backend openai (the engine's API key): "
        "drop --model.api_key_env or use --model.backend openai",
    ),
]


@pytest.mark.parametrize(("argv", "message"), WRONG_BACKEND, ids=["missing", "guided", "api_key_env"])
def test_a_flag_given_to_the_wrong_backend_is_one_line(argv: list[str], message: str) -> None:
    with pytest.raises(ConfigError) as error:
        parse_miner_settings(argv, env={})
    assert str(error.value) == message and "\n" not in message


def test_the_missing_base_url_line_is_unchanged() -> None:
    assert missing_setting("openai", "base_url") == (
        "--model.backend openai needs --model.base_url (the engine's http:// URL)"
    )


def test_ignored_settings_stay_ignored() -> None:
    # Only refused_elsewhere settings are errors with another backend; the rest are unused there.
    openai = parse_miner_settings(
        ["--model.backend", "openai", *BASE_URL, "--model.device", "cuda:1", "--model.max_batch", "2"], env={}
    )
    assert (openai.model.device, openai.model.max_batch) == ("cuda:1", 2)
    assert parse_miner_settings(BASE_URL, env={}).model.base_url == BASE_URL[1]
    assert parse_miner_settings(["--model.guided", "grounded"], env={}).model.guided == "grounded"
    assert parse_miner_settings(["--model.backend", "openai", *BASE_URL, "--model.guided", "off"], env={})


def test_the_errors_follow_the_declaration(monkeypatch: pytest.MonkeyPatch) -> None:
    own = BACKENDS["transformers"].settings
    refused = {**own.refused_elsewhere, "trust_remote_code": "its code"}
    monkeypatch.setitem(
        BACKENDS,
        "transformers",
        dataclasses.replace(
            BACKENDS["transformers"], settings=dataclasses.replace(own, refused_elsewhere=refused)
        ),
    )
    argv = ["--model.backend", "openai", *BASE_URL, "--model.trust_remote_code"]
    with pytest.raises(
        ConfigError, match=r"^--model\.trust_remote_code on is for --model\.backend transformers"
    ):
        parse_miner_settings(argv, env={})
    # nothing of its own any more
    monkeypatch.setitem(
        BACKENDS, "openai", dataclasses.replace(BACKENDS["openai"], settings=BackendSettings())
    )
    assert parse_miner_settings(["--model.backend", "openai"], env={}).model.base_url is None
    assert "For --model.backend openai." not in flags_markdown()
