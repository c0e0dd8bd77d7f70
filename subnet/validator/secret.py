"""The validator's secret: the HMAC key behind every round seed, in a 0600 file made on first start.

Miners cannot predict a round's tasks because the seed mixes this secret with
the block hash; the database stores only a commitment to each seed.
"""

from __future__ import annotations

import hashlib
import logging
import os
import secrets
import stat
from pathlib import Path

log = logging.getLogger(__name__)

SECRET_BYTES = 32


class SecretFileError(RuntimeError):
    """The secret file exists but cannot be used (unreadable, empty, a directory)."""


def load_or_create_secret(path: Path) -> bytes:
    path = path.expanduser()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return _read_secret(path)
    except OSError as exc:
        raise SecretFileError(f"cannot create the validator secret at {path}: {exc.strerror}") from exc
    secret = secrets.token_bytes(SECRET_BYTES)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(secret.hex().encode() + b"\n")
        handle.flush()
        os.fsync(handle.fileno())
    log.info("created the validator secret at %s (mode 0600); keep it, it seeds every round", path)
    return secret


def _read_secret(path: Path) -> bytes:
    try:
        mode = path.stat().st_mode
        text = path.read_text().strip()
    except OSError as exc:
        raise SecretFileError(f"cannot read the validator secret at {path}: {exc.strerror}") from exc
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        log.warning("validator secret %s is readable by others (mode %o); run chmod 600", path, mode & 0o777)
    try:
        secret = bytes.fromhex(text)
    except ValueError as exc:
        raise SecretFileError(
            f"validator secret at {path} is not hex; move it away to make a new one"
        ) from exc
    if len(secret) < 16:
        raise SecretFileError(f"validator secret at {path} is too short; move it away to make a new one")
    return secret


def seed_commitment(seed: bytes) -> str:
    """What the database keeps instead of the seed: its SHA-256."""
    return hashlib.sha256(seed).hexdigest()
