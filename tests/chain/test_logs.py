"""subnet.logs: levels and the log file (in a subprocess, since it configures the root logger)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

SCRIPT = """
import logging, sys
from pathlib import Path
from subnet.config import LoggingSettings
from subnet.logs import configure_logging
debug = sys.argv[2] == "debug"
path = configure_logging(LoggingSettings(debug=debug, logging_dir=Path(sys.argv[1])), process_name="miner")
logging.getLogger("subnet.test").debug("a debug line")
logging.getLogger("subnet.test").info("an info line")
logging.getLogger("bittensor.transport").info("sdk chatter")
print(path)
"""


def _run(tmp_path: Path, mode: str) -> tuple[str, str]:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(tmp_path / mode), mode],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    log_file = Path(done.stdout.strip())
    assert log_file == tmp_path / mode / "miner.log"
    return done.stderr, log_file.read_text(encoding="utf-8")


def test_info_by_default_with_a_log_file(tmp_path: Path) -> None:
    stderr, written = _run(tmp_path, "info")
    for text in (stderr, written):
        assert "an info line" in text
        assert "a debug line" not in text
        assert "sdk chatter" not in text


def test_debug(tmp_path: Path) -> None:
    stderr, written = _run(tmp_path, "debug")
    assert "a debug line" in stderr and "a debug line" in written
    assert "sdk chatter" not in stderr
