"""Round seeds and rotation: unpredictable seeds, per-miner seeds, and no repeats across rounds."""

from __future__ import annotations

import hashlib
import hmac
import re
import struct

import pytest

from tasks import derive_miner_seed, derive_round_seed, generate

SECRET = b"validator-secret"
BLOCK = "0x" + "ab" * 32


def _normalised(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split())


def test_round_seed_is_an_hmac_of_an_unambiguous_encoding() -> None:
    message = (
        b"toolcall-subnet/tasks/round/v1"
        + struct.pack(">H", 7)
        + struct.pack(">I", 32)
        + bytes.fromhex("ab" * 32)
        + struct.pack(">Q", 3)
    )
    assert derive_round_seed(SECRET, 7, BLOCK, 3) == hmac.new(SECRET, message, hashlib.sha256).digest()


def test_round_seed_depends_on_every_input_and_normalises_the_hash() -> None:
    base = derive_round_seed(SECRET, 7, BLOCK, 3)
    assert derive_round_seed(SECRET, 7, BLOCK.upper().replace("0X", "0x"), 3) == base
    assert derive_round_seed(SECRET, 7, BLOCK[2:], 3) == base
    others = {
        derive_round_seed(b"other-secret", 7, BLOCK, 3),
        derive_round_seed(SECRET, 8, BLOCK, 3),
        derive_round_seed(SECRET, 7, "0x" + "ac" * 32, 3),
        derive_round_seed(SECRET, 7, BLOCK, 4),
        # Field boundaries cannot be shifted: (netuid 1, round 23) differs from (netuid 12, round 3).
        derive_round_seed(SECRET, 1, BLOCK, 23),
        derive_round_seed(SECRET, 12, BLOCK, 3),
    }
    assert base not in others and len(others) == 6
    assert len(base) == 32


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((b"", 1, BLOCK, 0), "secret"),
        ((SECRET, -1, BLOCK, 0), "netuid"),
        ((SECRET, 1, "not-hex", 0), "hex"),
        ((SECRET, 1, "", 0), "empty"),
        ((SECRET, 1, BLOCK, -5), "round"),
    ],
)
def test_round_seed_rejects_bad_inputs(args: tuple, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        derive_round_seed(*args)


def test_miner_seeds_differ_per_hotkey_and_round() -> None:
    round_seed = derive_round_seed(SECRET, 7, BLOCK, 3)
    seeds = {derive_miner_seed(round_seed, f"5Hotkey{i}") for i in range(50)}
    assert len(seeds) == 50
    assert derive_miner_seed(round_seed, "5A") == derive_miner_seed(round_seed, "5A")
    assert derive_miner_seed(derive_round_seed(SECRET, 7, BLOCK, 4), "5A") != derive_miner_seed(
        round_seed, "5A"
    )


def test_exact_repeats_across_100_rounds_of_64_are_below_a_tenth_of_a_percent() -> None:
    seen: set[tuple[str, tuple[str, ...]]] = set()
    texts: set[str] = set()
    repeats = text_repeats = total = 0
    for round_number in range(100):
        round_seed = derive_round_seed(SECRET, 7, BLOCK, round_number)
        for task in generate(round_seed, 64):
            key = (_normalised(task.request), tuple(task.tool_names))
            repeats += key in seen
            seen.add(key)
            text = _normalised(task.request)
            text_repeats += text in texts
            texts.add(text)
            total += 1
    assert total == 6400
    assert repeats / total < 0.001
    # Even the request text alone (ignoring the shuffled tool names) rarely repeats.
    assert text_repeats / total < 0.005
