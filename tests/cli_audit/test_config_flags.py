"""Flags the neurons check before touching the chain."""

from __future__ import annotations

import pytest

from subnet.config import ConfigError, parse_validator_settings


@pytest.mark.parametrize(
    ("argv", "env", "origin"),
    [
        (["--db.url", "mysql://user@host/db"], {}, "argument --db.url"),
        ([], {"SUBNET_DB_URL": "oracle://host/db"}, "environment variable SUBNET_DB_URL"),
    ],
)
def test_an_unsupported_database_is_a_flag_error(argv: list[str], env: dict[str, str], origin: str) -> None:
    # It used to pass the flags and surface only after the registration check on the chain.
    with pytest.raises(ConfigError, match=f"{origin}: unsupported database"):
        parse_validator_settings(argv, env=env)


def test_supported_database_urls_still_pass() -> None:
    for url in ("sqlite:////tmp/v.sqlite", "postgresql://u@h/db", "postgresql+asyncpg://u:p@h:5432/db"):
        assert parse_validator_settings(["--db.url", url], env={}).db.url == url
