"""The localnet with a miner in front of a real engine: llama-cpp-python's OpenAI-compatible server
(scripts/llama_server.py, weight repacking off: its server segfaults on AMX CPUs otherwise)
serving the demo GGUF, SmolLM2-135M. Slow, and it needs that server: it reuses the environment
scripts/llama_server_setup.sh builds (or $SUBNET_LLAMA_PYTHON), and builds it itself (4-25
minutes) only with SUBNET_BUILD_LLAMA=1; otherwise it is skipped, saying so."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SETUP = REPO / "scripts" / "llama_server_setup.sh"


def _llama_python() -> Path | None:
    given = os.environ.get("SUBNET_LLAMA_PYTHON")
    if given:
        return Path(given)
    built = REPO / ".cache" / "llama-server" / "bin" / "python"
    probe = [str(built), "-c", "import llama_cpp.server"]
    if built.is_file() and subprocess.run(probe, capture_output=True, check=False).returncode == 0:
        return built
    if os.environ.get("SUBNET_BUILD_LLAMA") == "1":
        out = subprocess.run([str(SETUP)], capture_output=True, text=True, check=True, timeout=1800)
        return REPO / out.stdout.strip().splitlines()[-1]
    return None


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    python = _llama_python()
    if python is None:
        pytest.skip(
            "no llama-cpp-python server: run scripts/llama_server_setup.sh once (4-25 minutes), "
            "or set SUBNET_BUILD_LLAMA=1 or SUBNET_LLAMA_PYTHON"
        )
    from subnet.miner.demo import demo_gguf_path

    port = _free_port()
    command = [
        str(python), str(REPO / "scripts" / "llama_server.py"), "--model", str(demo_gguf_path()),
        "--model_alias", "smollm2-135m", "--chat_format", "chatml-function-calling",
        "--host", "127.0.0.1", "--port", str(port),
    ]  # fmt: skip
    server = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            assert server.poll() is None, "the llama.cpp server exited at start"
            time.sleep(0.5)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        server.terminate()
        server.wait(timeout=30)


def test_a_miner_in_front_of_llama_cpp_is_scored_and_weighted(llama_server: str, tmp_path: Path) -> None:
    command = [
        sys.executable, "-m", "subnet.localnet", "--state.dir", str(tmp_path / "state"),
        "--dashboard.port", "0", "--miners", "0", "--model.base_url", llama_server, "--rounds", "2",
    ]  # fmt: skip
    result = subprocess.run(command, cwd=REPO, capture_output=True, text=True, timeout=900)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output
    assert f"engine 1: {llama_server} serves smollm2-135m" in output
    assert "round 2 scored" in output and "weights set at block" in output
    row = next(line for line in output.split("leaderboard (netuid", 1)[1].splitlines() if " engine1 " in line)
    cells = row.split()
    assert f"smollm2-135m @ {llama_server}" in row
    assert float(cells[-2]) == pytest.approx(1.0) and float(cells[-1]) > 0, output  # weight and incentive


async def test_an_episode_step_on_chatml_function_calling_is_an_engine_error(llama_server: str) -> None:
    """One episode step (earlier calls and their observations as assistant and tool messages)
    forwarded by the miner's openai backend: llama-cpp-python's chatml-function-calling format
    cannot render tool messages (HTTP 500 "'dict object' has no attribute 'content'"), and the
    miner names that for what it is (a template error, 502 engine_error), not an outage."""
    from subnet.miner import GenerationRequest, ModelOptions
    from subnet.miner.base import EngineFailed
    from subnet.miner.openai_backend import OpenAIBackend
    from tasks.episodes import generate_episodes
    from tasks.episodes.reference import trajectory

    episode = generate_episodes(b"real-engine-episode", 1)[0]
    messages = trajectory(episode)["messages"]
    cut = max(index for index, message in enumerate(messages) if message["role"] == "tool") + 1
    turn = sum(1 for message in messages[:cut] if message["role"] == "user") - 1
    step = GenerationRequest(messages=messages[:cut], tools=episode.offered(turn), max_tokens=48)
    assert any(message.get("tool_calls") for message in step.messages)
    backend = OpenAIBackend(
        ModelOptions(backend="openai", base_url=llama_server, name="smollm2-135m", timeout=120.0)
    )
    await backend.start()
    try:
        with pytest.raises(EngineFailed, match="chat template could not render the messages"):
            await backend.generate(step)
    finally:
        await backend.close()
