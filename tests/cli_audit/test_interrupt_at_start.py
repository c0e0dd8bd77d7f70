"""Ctrl-C while a neuron is still loading its libraries ends without a traceback.

The signal must land among the neuron's imports, whatever the machine's load: the neuron runs
under a small launcher whose import hook holds the import of ``subnet.cli`` (the first of the
neuron's own imports) until the signal comes, and says on stdout when it is there. No sleep
guesses when the imports are under way.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Runs the neuron script as `python neurons/X.py` would, with the import of subnet.cli held.
LAUNCHER = """
import runpy, signal, sys, time

# What a Ctrl-C in a terminal meets: SIGINT at Python's default and not blocked. A child inherits an
# ignored SIGINT and a blocked one from the test worker (a loaded run once saw both neurons sleep
# through the signal), so say what was inherited, then set the terminal's state.
inherited = (signal.getsignal(signal.SIGINT), sorted(signal.pthread_sigmask(signal.SIG_BLOCK, [])))
print(f"inherited SIGINT handler {inherited[0]!r}, blocked {inherited[1]}", flush=True)
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})

class HoldSubnetCli:
    def find_spec(self, name, path=None, target=None):
        if name == "subnet.cli":
            print("importing", flush=True)
            time.sleep(120)  # the SIGINT lands here, inside the neuron's import block
        return None

sys.meta_path.insert(0, HoldSubnetCli())
script = sys.argv[1]
sys.argv = sys.argv[1:]
runpy.run_path(script, run_name="__main__")
"""


@pytest.mark.parametrize("neuron", ["miner", "validator"])
def test_sigint_during_start_up_is_not_a_traceback(
    tmp_path: Path, isolated_env: dict[str, str], neuron: str
) -> None:
    script = str(ROOT / "neurons" / f"{neuron}.py")
    process = subprocess.Popen(
        [sys.executable, "-c", LAUNCHER, script, "--wallet.path", str(tmp_path / "none")],
        env=isolated_env,
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    inherited = process.stdout.readline().strip()
    assert process.stdout.readline() == "importing\n"  # the neuron is inside its imports now
    process.send_signal(signal.SIGINT)
    try:
        _, err = process.communicate(timeout=120)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        pytest.fail(f"the {neuron} slept through SIGINT; the launcher {inherited}")
    assert "Traceback" not in err, err
    assert process.returncode == 130, err
    assert err.strip() == f"{neuron}: interrupted while starting"
