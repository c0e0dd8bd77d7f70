"""python -m subnet.localnet: a damaged devchain in a state directory names the way out (--reset)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from subnet.localnet.run import main as localnet_main


def test_a_damaged_devchain_says_to_reset_and_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    (state / "localnet.json").write_text(json.dumps({"created": "earlier", "block_time": 0.5, "tempo": 20}))
    (state / "devchain.sqlite").write_bytes(b"half-written, not a database")
    code = localnet_main(
        ["--state.dir", str(state), "--miners", "1", "--rounds", "1", "--dashboard.port", "0"]
    )
    assert code == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "cannot open the devchain" in lines[0] and "--reset" in lines[0]
    assert (state / "devchain.sqlite").read_bytes() == b"half-written, not a database"


def test_an_unreachable_database_stops_the_run_before_any_miner_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    state = tmp_path / "state"
    url = "postgresql+asyncpg://user:secret@127.0.0.1:1/subnet"  # nothing listens on port 1
    code = localnet_main(["--state.dir", str(state), "--miners", "1", "--rounds", "1", "--db.url", url])
    assert code == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines()[-1].startswith("localnet: error: cannot reach the database")
    assert "secret" not in err
    assert not (state / "logs" / "miner1.log").exists()  # it used to load every miner's model first
