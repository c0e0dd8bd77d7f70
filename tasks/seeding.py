"""Seeds: the validator's round seed, per-miner seeds, and per-task random generators.

Only hashlib / hmac and explicitly seeded ``random.Random`` are used, so the same seed gives the
same tasks on any machine, whatever PYTHONHASHSEED is.
"""

from __future__ import annotations

import hashlib
import hmac
import struct
from collections.abc import Callable
from random import Random

__all__ = [
    "derive_miner_seed",
    "derive_round_seed",
    "reseed",
    "rng_from",
    "seed_bytes",
    "sub_seed",
    "sub_seeder",
]

_ROUND_DOMAIN = b"toolcall-subnet/tasks/round/v1"
_MINER_DOMAIN = b"toolcall-subnet/tasks/miner/v1"


def seed_bytes(seed: bytes | str | int) -> bytes:
    """Canonical bytes of a seed: bytes as given, str as UTF-8, int as its decimal text.

    So ``generate(42)`` and ``generate("42")`` (the command line's form) agree.
    """
    if isinstance(seed, bytes):
        return seed
    if isinstance(seed, bool):
        raise TypeError("a seed must be bytes, str or int, not bool")
    if isinstance(seed, int):
        return str(seed).encode()
    if isinstance(seed, str):
        return seed.encode("utf-8")
    raise TypeError(f"a seed must be bytes, str or int, not {type(seed).__name__}")


def sub_seed(parent: bytes, label: bytes, index: int = 0) -> bytes:
    """A child seed: SHA-256 of a length-prefixed (parent, label, index) encoding."""
    digest = hashlib.sha256()
    digest.update(struct.pack(">I", len(parent)))
    digest.update(parent)
    digest.update(struct.pack(">I", len(label)))
    digest.update(label)
    digest.update(struct.pack(">Q", index))
    return digest.digest()


def sub_seeder(parent: bytes, label: bytes) -> Callable[[int], bytes]:
    """``index -> sub_seed(parent, label, index)``, hashing the shared (parent, label) part once."""
    prefix = hashlib.sha256()
    prefix.update(struct.pack(">I", len(parent)))
    prefix.update(parent)
    prefix.update(struct.pack(">I", len(label)))
    prefix.update(label)
    pack_index = struct.Struct(">Q").pack

    def child(index: int) -> bytes:
        digest = prefix.copy()
        digest.update(pack_index(index))
        return digest.digest()

    return child


def rng_from(seed: bytes) -> Random:
    """A Random seeded from the first 16 bytes of ``seed`` as an integer (portable)."""
    return Random(int.from_bytes(seed[:16], "big"))


def reseed(rng: Random, seed: bytes) -> Random:
    """``rng`` seeded exactly as ``rng_from(seed)`` seeds a new Random (same draws), returned.

    Reusing one Random per batch is cheaper: constructing one seeds it twice, first from
    os.urandom and then from the given seed, and seeding is the costly part.
    """
    rng.seed(int.from_bytes(seed[:16], "big"))
    return rng


def _normalise_block_hash(block_hash: str) -> bytes:
    text = block_hash.strip().lower()
    if text.startswith("0x"):
        text = text[2:]
    if not text:
        raise ValueError("block hash is empty")
    try:
        return bytes.fromhex(text)
    except ValueError as error:
        raise ValueError(f"block hash is not hex: {block_hash!r}") from error


def derive_round_seed(secret: bytes, netuid: int, block_hash: str, round_number: int) -> bytes:
    """HMAC-SHA256(secret, netuid | block hash | round number), each field fixed-width or length-prefixed.

    Miners cannot predict it without the validator's secret; the validator can recompute it.
    The block hash may carry a ``0x`` prefix and any letter case.
    """
    if not secret:
        raise ValueError("the round secret must not be empty")
    if not 0 <= netuid < 2**16:
        raise ValueError(f"netuid out of range: {netuid}")
    if round_number < 0:
        raise ValueError(f"round number must not be negative: {round_number}")
    block = _normalise_block_hash(block_hash)
    message = (
        _ROUND_DOMAIN
        + struct.pack(">H", netuid)
        + struct.pack(">I", len(block))
        + block
        + struct.pack(">Q", round_number)
    )
    return hmac.new(secret, message, hashlib.sha256).digest()


def derive_miner_seed(round_seed: bytes, hotkey: str) -> bytes:
    """HMAC-SHA256(round seed, hotkey): the seed of one miner's variants in one round."""
    return hmac.new(round_seed, _MINER_DOMAIN + hotkey.encode("utf-8"), hashlib.sha256).digest()
