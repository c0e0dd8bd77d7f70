"""The validator secret file: created once with 0600, read back unchanged, bad files refused."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from subnet.validator.secret import SecretFileError, load_or_create_secret, seed_commitment


def test_created_once_with_owner_only_permissions(tmp_path: Path) -> None:
    path = tmp_path / "keys" / "validator.secret"
    first = load_or_create_secret(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_or_create_secret(path) == first
    assert len(first) == 32


def test_bad_secret_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "validator.secret"
    path.write_text("not hex at all")
    with pytest.raises(SecretFileError, match="not hex"):
        load_or_create_secret(path)


def test_commitment_hides_the_seed() -> None:
    assert seed_commitment(b"seed") != b"seed".hex()
    assert len(seed_commitment(b"seed")) == 64
