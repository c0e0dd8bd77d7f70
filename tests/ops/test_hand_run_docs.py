"""docs/miner.md's hand-run pair (the miner quick start and the validator by hand) fit each other
by the localnet's one rule: the miner's --model.timeout is miner_timeout_below the validator's
--query.timeout, and one round's answers are enough to earn weight."""

from __future__ import annotations

import re
from pathlib import Path

from subnet.localnet.settings import miner_timeout_below

DOC = Path(__file__).resolve().parents[2] / "docs" / "miner.md"


def _flag(command: str, flag: str) -> float:
    match = re.search(rf"{re.escape(flag)} (\S+)", command)
    assert match, f"{flag} missing from {command!r}"
    return float(match.group(1))


def _command(starts: str) -> str:
    """The first shell command in docs/miner.md that starts with ``starts`` (continuations joined)."""
    lines = DOC.read_text().replace("\\\n", " ").splitlines()
    return next(line for line in lines if line.startswith(starts))


def test_the_hand_run_pair_fits_by_the_localnets_rule() -> None:
    validator = _command("python neurons/validator.py --wallet.name validator")
    miner = _command("python neurons/miner.py --wallet.name miner1")
    assert _flag(miner, "--model.timeout") == miner_timeout_below(_flag(validator, "--query.timeout"))
    assert "--model.guided" in miner
    assert _flag(validator, "--scoring.min_samples") <= _flag(validator, "--round.tasks")
    assert _flag(validator, "--weights.floor") == 0.0
