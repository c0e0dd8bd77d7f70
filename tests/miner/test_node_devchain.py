"""The miner end to end on the devchain: registered, its axon served, a signed validator request
answered, an unsigned one refused; start-up mistakes are one line and exit code 2."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from types import ModuleType

import aiohttp
import bittensor as bt
import pytest
from aiohttp import web
from prometheus_client.parser import text_string_to_metric_families

from subnet.chain import ChainClient
from subnet.config import MinerSettings, parse_miner_settings
from subnet.devchain import DevChain
from subnet.metrics import Reading
from subnet.miner.base import GenerationRequest, GenerationResult, ModelOptions
from subnet.miner.node import REFRESHER_STOP_S, MinerNode
from subnet.protocol import ChatCompletionRequest
from subnet.transport import GATE_KEY, ClientTimeouts, MinerClient, MinerTarget
from subnet.wallets import create_dev_wallet, load_wallet

BLOCK_TIME = 0.05
NETUID = 1
ENTRY_POINT = Path(__file__).resolve().parents[2] / "neurons" / "miner.py"


def _entry_point() -> ModuleType:
    """neurons/miner.py as a module (neurons/ is scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("miner_entry_point", ENTRY_POINT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def devchain(tmp_path: Path) -> DevChain:
    chain = DevChain(tmp_path / "dev.sqlite", block_time=BLOCK_TIME)
    create_dev_wallet("owner", "default", tmp_path / "wallets")
    owner = bt.Wallet("owner", "default", path=str(tmp_path / "wallets"))
    chain.create_subnet(
        owner.coldkeypub.ss58_address, owner.hotkeypub.ss58_address, netuid=NETUID, tempo=1_000
    )
    return chain


@pytest.fixture
def miner_argv(tmp_path: Path, devchain: DevChain, tiny_model_dir: Path) -> Callable[..., list[str]]:
    def argv(name: str = "miner", *extra: str) -> list[str]:
        return [
            "--netuid", str(NETUID),
            "--subtensor.network", "dev",
            "--devchain.path", str(devchain.path),
            "--devchain.block_time", str(BLOCK_TIME),
            "--wallet.name", name,
            "--wallet.hotkey", "default",
            "--wallet.path", str(tmp_path / "wallets"),
            "--axon.ip", "127.0.0.1",
            "--axon.port", str(_free_port()),
            "--model.path", str(tiny_model_dir),
            "--model.max_new_tokens", "8",
            "--blacklist.min_stake", "0",
            *extra,
        ]  # fmt: skip

    return argv


async def _registered_client(
    settings: MinerSettings, devchain: DevChain, tmp_path: Path, name: str
) -> ChainClient:
    create_dev_wallet(name, "default", tmp_path / "wallets")
    wallet = load_wallet(settings.wallet, require_coldkey=True)
    devchain.fund(wallet.coldkeypub.ss58_address, 1_000.0)
    client = ChainClient.from_settings(settings, wallet)
    await client.register()  # what `python -m subnet.chain register` does
    return client


async def test_a_registered_miner_serves_signed_requests_and_refuses_unsigned_ones(
    miner_argv: Callable[..., list[str]], devchain: DevChain, tmp_path: Path
) -> None:
    settings = parse_miner_settings(miner_argv("miner"), env={})
    validator_settings = parse_miner_settings(miner_argv("validator"), env={})
    miner_chain = await _registered_client(settings, devchain, tmp_path, "miner")
    validator_chain = await _registered_client(validator_settings, devchain, tmp_path, "validator")
    devchain.add_stake(validator_chain.coldkey, validator_chain.hotkey, NETUID, 100.0)

    node = MinerNode(settings, chain=miner_chain, refresh_s=0.2)
    try:
        serving = await node.start()
        graph = await validator_chain.metagraph()
        me = graph.by_hotkey(miner_chain.hotkey)
        assert me is not None and me.uid == serving.uid
        assert (me.axon_ip, me.axon_port) == ("127.0.0.1", settings.axon.port)

        request = ChatCompletionRequest.model_validate(
            {
                "model": "tiny",
                "messages": [{"role": "user", "content": "weather in paris"}],
                "tools": [
                    {
                        "type": "function",
                        "function": {
                            "name": "get_weather",
                            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}},
                        },
                    }
                ],
                "max_tokens": 6,
            }
        )
        async with MinerClient(validator_chain.wallet) as client:
            result = await client.query(MinerTarget(me.hotkey, me.axon_ip, me.axon_port, me.uid), request)
        assert result.ok, result.error
        assert result.completion is not None
        assert result.completion.usage is not None and 0 < result.completion.usage.completion_tokens <= 6

        async with aiohttp.ClientSession() as session:
            url = f"http://127.0.0.1:{me.axon_port}/v1/chat/completions"
            async with session.post(
                url, data=request.to_body(), headers={"Content-Type": "application/json"}
            ) as r:
                assert r.status == 401
                assert json.loads(await r.read())["error"]["type"] == "missing_auth"

        await asyncio.sleep(0.5)  # the metagraph refresher runs and serving goes on
        async with (
            aiohttp.ClientSession() as session,
            session.get(f"http://127.0.0.1:{me.axon_port}/metrics") as r,
        ):
            shown = {
                sample.name: sample.value
                for family in text_string_to_metric_families(await r.text())
                for sample in family.samples
            }
        assert shown["subnet_miner_directory_age_seconds"] < 0.5  # refreshed every 0.2 s
        assert shown["subnet_miner_batches_total"] >= 1  # the model's figures are shown beside the server's
        assert shown["subnet_miner_connections_evicted_total"] == 0
    finally:
        await node.stop()
        await miner_chain.close()
        await validator_chain.close()


def test_an_unregistered_miner_says_how_to_register_and_exits_2(
    miner_argv: Callable[..., list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    create_dev_wallet("stranger", "default", tmp_path / "wallets")
    with pytest.raises(SystemExit) as exited:
        _entry_point().main(miner_argv("stranger"))
    assert exited.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert err.startswith("miner: error: hotkey ") and "is not registered on netuid 1" in err
    assert "register --netuid 1" in err


def test_a_bad_model_path_is_one_line_and_exit_2(
    miner_argv: Callable[..., list[str]],
    devchain: DevChain,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    settings = parse_miner_settings(miner_argv("miner"), env={})
    asyncio.run(_register_and_close(settings, devchain, tmp_path))
    with pytest.raises(SystemExit) as exited:
        _entry_point().main(miner_argv("miner", "--model.path", str(tmp_path / "no-such-model")))
    assert exited.value.code == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("miner: error: model path ")


async def _register_and_close(settings: MinerSettings, devchain: DevChain, tmp_path: Path) -> None:
    client = await _registered_client(settings, devchain, tmp_path, "miner")
    await client.close()


def test_the_miner_process_logs_what_it_serves_and_stops_on_sigterm(
    miner_argv: Callable[..., list[str]], devchain: DevChain, tmp_path: Path
) -> None:
    argv = miner_argv("miner")
    settings = parse_miner_settings(argv, env={})
    asyncio.run(_register_and_close(settings, devchain, tmp_path))
    process = subprocess.Popen(
        [sys.executable, str(ENTRY_POINT), *argv],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    try:
        assert process.stderr is not None
        lines = []
        for line in process.stderr:
            lines.append(line)
            if "serving " in line or process.poll() is not None:
                break
        serving = lines[-1]
        assert f"for netuid {NETUID} as uid" in serving, "".join(lines)
        assert "transformers, cpu float32, format hermes" in serving
        assert f"axon 127.0.0.1:{settings.axon.port} published" in serving
        process.send_signal(signal.SIGTERM)
        _, rest = process.communicate(timeout=60)
        assert process.returncode == 0, rest
        assert "stopped" in rest
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


async def test_a_miner_in_front_of_an_engine_passes_its_tool_calls_to_the_validator(
    miner_argv: Callable[..., list[str]],
    devchain: DevChain,
    tmp_path: Path,
    serve_engine: Callable[..., Awaitable[str]],
) -> None:
    async def engine_chat(request: web.Request) -> web.Response:
        sent = await request.json()
        call = {
            "id": "call_9",
            "type": "function",
            "function": {"name": sent["tools"][0]["function"]["name"], "arguments": '{"city": "Paris"}'},
        }
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return web.json_response(
            {"choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}]}
        )

    base_url = await serve_engine(engine_chat)  # tests/miner/conftest.py

    settings = parse_miner_settings(
        miner_argv(
            "miner", "--model.backend", "openai", "--model.base_url", base_url, "--model.name", "engine-model"
        ),
        env={},
    )
    validator_settings = parse_miner_settings(miner_argv("validator"), env={})
    miner_chain = await _registered_client(settings, devchain, tmp_path, "miner")
    validator_chain = await _registered_client(validator_settings, devchain, tmp_path, "validator")
    devchain.add_stake(validator_chain.coldkey, validator_chain.hotkey, NETUID, 100.0)
    node = MinerNode(settings, chain=miner_chain)
    try:
        serving = await node.start()
        request = ChatCompletionRequest.model_validate(
            {
                "messages": [{"role": "user", "content": "Weather in Paris?"}],
                "tools": [
                    {
                        "type": "function",
                        "function": {"name": "get_weather", "parameters": {"type": "object"}},
                    }
                ],
                "tool_choice": "auto",
            }
        )
        me = (await validator_chain.metagraph()).by_hotkey(miner_chain.hotkey)  # where it published itself
        assert me is not None and me.uid == serving.uid
        target = MinerTarget(miner_chain.hotkey, me.axon_ip, me.axon_port, me.uid)
        async with MinerClient(validator_chain.wallet) as client:
            result = await client.query(target, request)
        assert result.ok, result.error
        assert result.completion is not None and result.completion.model == "engine-model"
        tool_calls = result.completion.message.tool_calls
        assert tool_calls is not None and tool_calls[0].function.name == "get_weather"
        assert json.loads(tool_calls[0].function.arguments) == {"city": "Paris"}
    finally:
        await node.stop()
        await miner_chain.close()
        await validator_chain.close()


class _SlowModel:
    """A model under load: no answer comes, and closing it would wait for its running generations
    for a minute (what the demo model on a busy CPU did: 77 s from SIGTERM to stopped)."""

    def __init__(self, options: ModelOptions) -> None:
        self.options = options
        self.closed = False

    async def start(self) -> None:
        return None

    async def generate(self, request: GenerationRequest) -> GenerationResult:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    async def close(self) -> None:
        await asyncio.sleep(60)
        self.closed = True

    def describe(self) -> str:
        return "a slow model"

    def readings(self) -> list[Reading]:
        return []


async def test_a_stop_under_load_takes_the_drain_and_the_model_close_deadlines_and_no_more(
    miner_argv: Callable[..., list[str]], devchain: DevChain, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    settings = parse_miner_settings(miner_argv("miner"), env={})
    validator_settings = parse_miner_settings(miner_argv("validator"), env={})
    miner_chain = await _registered_client(settings, devchain, tmp_path, "miner")
    validator_chain = await _registered_client(validator_settings, devchain, tmp_path, "validator")
    devchain.add_stake(validator_chain.coldkey, validator_chain.hotkey, NETUID, 100.0)
    model = _SlowModel(ModelOptions.from_settings(settings.model))
    node = MinerNode(settings, chain=miner_chain, backend=model, drain_s=1.0, model_close_s=1.0)
    try:
        await node.start()
        assert node.server is not None
        gate = node.server.app[GATE_KEY]
        me = (await validator_chain.metagraph()).by_hotkey(miner_chain.hotkey)
        assert me is not None
        request = ChatCompletionRequest.model_validate(
            {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 4}
        )
        async with MinerClient(validator_chain.wallet, timeouts=ClientTimeouts(total_s=60.0)) as client:
            asked = asyncio.ensure_future(
                client.query(MinerTarget(me.hotkey, me.axon_ip, me.axon_port, me.uid), request)
            )
            for _ in range(400):
                if gate.active:
                    break
                await asyncio.sleep(0.025)
            assert gate.active == 1
            started = time.monotonic()
            with caplog.at_level(logging.INFO, logger="miner"):
                await node.stop()
            took = time.monotonic() - started
            result = await asyncio.wait_for(asked, 10.0)
        # The drain (1 s), the transport's cancellation of what still runs (1 s), the model's
        # close (1 s): a hard budget well under the minute the model alone would have taken.
        assert took < 6.0, took
        assert not result.ok and not model.closed
        assert "were cut off" in caplog.text and "1 requests in flight" in caplog.text
    finally:
        await node.stop()
        await miner_chain.close()
        await validator_chain.close()


class _IdleModel(_SlowModel):
    """A model nobody asks anything; it closes at once."""

    async def close(self) -> None:
        self.closed = True


@pytest.mark.parametrize("held_s", [0.5, 3.0])  # the read ends within the stop's wait, or after it
async def test_a_stop_ends_the_refresher_even_when_a_chain_call_swallows_its_cancellation(
    miner_argv: Callable[..., list[str]],
    devchain: DevChain,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    held_s: float,
) -> None:
    """Python 3.11's asyncio.wait_for (the SDK uses it too) can return a call's answer instead of
    raising the cancellation that arrived with it. The refresher then ran on, and the stop that
    waited for it never ended (a test run hung so). Here a refresh read swallows it and answers
    ``held_s`` later; a refresher still running after REFRESHER_STOP_S is left, with a warning."""
    settings = parse_miner_settings(miner_argv("miner"), env={})
    chain = await _registered_client(settings, devchain, tmp_path, "miner")
    read_graph = chain.metagraph
    reads = 0
    refreshing, swallowed = asyncio.Event(), asyncio.Event()

    async def swallowing_metagraph() -> object:
        nonlocal reads
        graph = await read_graph()
        reads += 1
        if reads > 1:  # the first read is the start's
            refreshing.set()
        try:
            await asyncio.sleep(3600 if reads > 1 else 0)  # a refresh read answers when cancelled
        except asyncio.CancelledError:
            if swallowed.is_set():
                raise
            swallowed.set()  # once, as the bug does: the loop around the read did the rest
            await asyncio.sleep(held_s)
        return graph

    monkeypatch.setattr(chain, "metagraph", swallowing_metagraph)
    model = _IdleModel(ModelOptions.from_settings(settings.model))
    node = MinerNode(settings, chain=chain, backend=model, refresh_s=0.01)
    try:
        await node.start()
        await refreshing.wait()
        started = time.monotonic()
        with caplog.at_level(logging.WARNING, logger="miner"):
            stopping = asyncio.ensure_future(node.stop())
            await asyncio.wait({stopping}, timeout=20)
        assert stopping.done(), "the stop is still waiting for the metagraph refresher"
        await stopping
        assert time.monotonic() - started < REFRESHER_STOP_S + 3
        assert swallowed.is_set() and node.server is None and model.closed
        assert ("refresher was still running" in caplog.text) == (held_s > REFRESHER_STOP_S)
        reads_at_stop = reads
        await asyncio.sleep(0.3)
        assert reads == reads_at_stop  # the refresher has ended: no read after the stop
    finally:
        await chain.close()


async def test_a_refresher_that_died_on_an_error_is_reported_at_stop(
    miner_argv: Callable[..., list[str]],
    devchain: DevChain,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """An error that is not the chain's (those keep the last snapshot) ends the refresher; the stop
    says so rather than leaving it to a "never retrieved" line at exit."""
    settings = parse_miner_settings(miner_argv("miner"), env={})
    chain = await _registered_client(settings, devchain, tmp_path, "miner")
    read_graph = chain.metagraph
    failed = asyncio.Event()

    async def failing_metagraph() -> object:
        if node.serving is None:  # the start's read
            return await read_graph()
        failed.set()
        raise RuntimeError("decoding went wrong")

    monkeypatch.setattr(chain, "metagraph", failing_metagraph)
    node = MinerNode(
        settings, chain=chain, backend=_IdleModel(ModelOptions.from_settings(settings.model)), refresh_s=0.01
    )
    try:
        await node.start()
        await failed.wait()
        with caplog.at_level(logging.WARNING, logger="miner"):
            await node.stop()
        assert "refresher had stopped on an error: decoding went wrong" in caplog.text
    finally:
        await node.stop()
        await chain.close()
