"""subnet.chain is a package split along its seams; its face stays what callers import."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest

import subnet.chain
from subnet.chain import client, errors, types
from subnet.chain.__main__ import main

# Every name imported from subnet.chain by the neurons, tests and bench before the split.
PUBLIC = {
    "ChainClient": client,
    "DEVCHAIN_LABEL": client,
    "TRANSIENT_ERRORS": client,
    "ChainError": errors,
    "ChainUnavailable": errors,
    "ChainRejected": errors,
    "NotRegistered": errors,
    "RegistrationRejected": errors,
    "ServeRejected": errors,
    "SubnetNotFound": errors,
    "WeightsRejected": errors,
    "WeightsTooSoon": errors,
    "Metagraph": types,
    "Neuron": types,
    "WeightsResult": types,
}


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_the_package_exports_each_name_from_its_seam(name: str) -> None:
    assert name in subnet.chain.__all__
    assert getattr(subnet.chain, name) is getattr(PUBLIC[name], name)


def test_the_client_logs_under_the_package_name() -> None:
    # Operators filter the outage lines on "subnet.chain", as they did before the split.
    assert client.logger is logging.getLogger("subnet.chain")


def test_main_without_a_command_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main([])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "python -m subnet.chain register" in err


def test_python_dash_m_subnet_chain_runs_the_register_command() -> None:
    done = subprocess.run(
        [sys.executable, "-W", "error::RuntimeWarning", "-m", "subnet.chain", "register", "--help"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "--netuid" in done.stdout and "--wallet.name" in done.stdout
