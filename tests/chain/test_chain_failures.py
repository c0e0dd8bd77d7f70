"""ChainClient against a substrate that fails on purpose: retries, backoff, log-once, error mapping.

``FlakySubstrate`` implements only the parts of the SDK's ``Substrate`` protocol that the
client's reads reach, and raises the SDK's own connection error (``bt.RpcConnectionError``)
for as many calls as a test asks.
"""

from __future__ import annotations

import asyncio
import logging
import random
from pathlib import Path
from typing import Any

import bittensor as bt
import pytest

from subnet.chain import (
    ChainClient,
    ChainError,
    ChainUnavailable,
    NotRegistered,
    RegistrationRejected,
    SubnetNotFound,
    WeightsRejected,
    WeightsTooSoon,
)
from subnet.config import ChainRetrySettings, MinerSettings, SubtensorSettings, WalletSettings, user_errors
from tests.support.cancellation import cancel_after

NETUID = 3
HEAD = 5_000


class FlakySubstrate:
    """A chain of one subnet held in dicts; ``fail_next`` calls raise a connection error."""

    def __init__(self) -> None:
        self.token_symbols: dict[int, str] = {}
        self.fail_next = 0
        self.fail_connects = 0
        self.hang = False
        self.answer: asyncio.Future[None] | None = None  # when set, reads wait for it
        self.waiting = asyncio.Event()  # set by a read that waits for the answer
        self.read_error: BaseException | None = None
        self.storage: dict[tuple[str, str, tuple[Any, ...]], Any] = {}
        self.graph: dict[str, Any] | None = None
        self.next_epoch_start: int | None = HEAD + 40
        self.calls = 0
        self.connects = 0
        self.closes = 0

    def balance(self, rao: int, netuid: int = 0) -> bt.Balance:
        return bt.Balance(rao, netuid)

    async def connect(self) -> None:
        self.connects += 1
        if self.fail_connects:
            self.fail_connects -= 1
            raise bt.RpcConnectionError("connection refused by 127.0.0.1:9944")

    async def close(self) -> None:
        self.closes += 1

    async def _touch(self) -> None:
        self.calls += 1
        if self.hang:
            await asyncio.sleep(3600)
        if self.answer is not None:
            self.waiting.set()
            await self.answer
        if self.fail_next:
            self.fail_next -= 1
            raise bt.RpcConnectionError("websocket closed: no close frame received")
        if self.read_error is not None:
            raise self.read_error

    async def block_number(self) -> int:
        await self._touch()
        return HEAD

    async def block_hash(self, block: int | None = None) -> str:
        await self._touch()
        return f"0x{HEAD if block is None else block:064x}"

    async def block_time(self) -> float:
        return 12.0

    async def query(
        self, module: str, storage_function: str, params: list | None = None, block_hash: str | None = None
    ) -> Any:
        await self._touch()
        return self.storage.get((module, storage_function, tuple(params or [])))

    async def query_map(self, *_args: Any, **_kwargs: Any) -> list[tuple[Any, Any]]:
        return []

    async def runtime_call(self, api: str, method: str, params: list, block_hash: str | None = None) -> Any:
        await self._touch()
        if method == "get_metagraph":
            return self.graph
        if method == "get_next_epoch_start_block":
            return self.next_epoch_start
        raise AssertionError(f"unexpected runtime call {api}.{method}")


class RecordingSleep:
    def __init__(self) -> None:
        self.delays: list[float] = []

    async def __call__(self, delay: float) -> None:
        self.delays.append(delay)


@pytest.fixture(scope="module")
def wallet(tmp_path_factory: pytest.TempPathFactory) -> bt.Wallet:
    root = tmp_path_factory.mktemp("wallets")
    made = bt.Wallet("val", "hot", str(root))
    made.create_new_coldkey(use_password=False, suppress=True)
    made.create_new_hotkey(use_password=False, suppress=True)
    return made


@pytest.fixture
def substrate() -> FlakySubstrate:
    return FlakySubstrate()


@pytest.fixture
def sleep() -> RecordingSleep:
    return RecordingSleep()


RETRY = ChainRetrySettings(retries=3, backoff_base=0.5, backoff_max=1.5, timeout=5.0)


def _settings(retry: ChainRetrySettings = RETRY) -> MinerSettings:
    return MinerSettings(
        netuid=NETUID,
        subtensor=SubtensorSettings(network="test"),
        wallet=WalletSettings(name="val", hotkey="hot", path=Path("/unused")),
        chain=retry,
    )


@pytest.fixture
def chain(substrate: FlakySubstrate, wallet: bt.Wallet, sleep: RecordingSleep) -> ChainClient:
    return ChainClient.from_settings(
        _settings(), wallet, substrate=substrate, sleep=sleep, rng=random.Random(1234)
    )


def _outage_lines(caplog: pytest.LogCaptureFixture) -> tuple[list[str], list[str]]:
    messages = [
        r.getMessage() for r in caplog.records if r.name == "subnet.chain" and r.levelno >= logging.WARNING
    ]
    down = [m for m in messages if "unreachable" in m]
    back = [m for m in messages if "reachable again" in m]
    return down, back


async def test_retries_through_a_short_outage_and_logs_it_once(
    chain: ChainClient, substrate: FlakySubstrate, sleep: RecordingSleep, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="subnet.chain")
    substrate.fail_next = 2
    assert await chain.block() == HEAD
    assert len(sleep.delays) == 2
    down, back = _outage_lines(caplog)
    assert len(down) == 1 and "test" in down[0] and "RpcConnectionError" in down[0]
    assert len(back) == 1 and "2 failed tries" in back[0]  # the outage is over
    # Each failure dropped the connection; the next try opened a fresh one.
    assert substrate.connects == 3


async def test_gives_up_after_the_configured_retries_and_keeps_one_outage(
    chain: ChainClient, substrate: FlakySubstrate, sleep: RecordingSleep, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="subnet.chain")
    substrate.fail_next = 1_000
    with pytest.raises(ChainUnavailable) as raised:
        await chain.block()
    message = str(raised.value)
    assert "unreachable" in message and "after 4 tries" in message and "--subtensor.network" in message
    assert len(sleep.delays) == 3  # no sleep after the last try
    with pytest.raises(ChainUnavailable):
        await chain.metagraph()
    down, back = _outage_lines(caplog)
    assert len(down) == 1, "one line per outage, not per try or per call"
    assert back == []  # still down
    substrate.fail_next = 0
    assert await chain.block() == HEAD
    down, back = _outage_lines(caplog)
    assert len(down) == 1 and len(back) == 1 and "8 failed tries" in back[0]


async def test_backoff_doubles_with_jitter_and_is_capped(
    chain: ChainClient, substrate: FlakySubstrate
) -> None:
    substrate.fail_next = 1_000
    chain.retry = ChainRetrySettings(retries=6, backoff_base=0.5, backoff_max=3.0, timeout=5.0)
    delays: list[float] = []

    async def record(delay: float) -> None:
        delays.append(delay)

    chain._sleep = record
    with pytest.raises(ChainUnavailable):
        await chain.block()
    ceilings = [0.5, 1.0, 2.0, 3.0, 3.0, 3.0]
    assert len(delays) == len(ceilings)
    for delay, ceiling in zip(delays, ceilings, strict=True):
        assert ceiling / 2 <= delay <= ceiling
    assert len(set(delays)) == len(delays), "jitter: no two waits alike"


async def test_connection_refused_at_connect_is_retried(
    chain: ChainClient, substrate: FlakySubstrate, sleep: RecordingSleep
) -> None:
    substrate.fail_connects = 2
    assert await chain.block() == HEAD
    assert substrate.connects == 3
    assert len(sleep.delays) == 2


async def test_a_hanging_chain_times_out(substrate: FlakySubstrate, wallet: bt.Wallet) -> None:
    substrate.hang = True
    retry = ChainRetrySettings(retries=1, backoff_base=0.01, backoff_max=0.01, timeout=0.05)
    chain = ChainClient.from_settings(_settings(retry), wallet, substrate=substrate, sleep=RecordingSleep())
    with pytest.raises(ChainUnavailable, match=r"TimeoutError|timed out"):
        await chain.block()


async def test_a_call_cancelled_just_as_its_answer_arrives_ends_cancelled(
    chain: ChainClient, substrate: FlakySubstrate
) -> None:
    """A cancellation must never be swallowed: the miner's stop cancels its metagraph refresher
    and waits for it. Python 3.11's asyncio.wait_for returns the answer instead of raising when the
    cancellation lands in the steps after the call it wraps finished; the refresher then ran on
    and a stop waited for ever (seen once in ten loaded test runs)."""
    loop = asyncio.get_running_loop()
    for steps in range(8):  # every step between the answer and the caller's resumption
        substrate.answer = loop.create_future()
        substrate.waiting.clear()
        task = asyncio.ensure_future(chain.block())
        await substrate.waiting.wait()
        substrate.answer.set_result(None)
        assert await cancel_after(task, steps) in (None, HEAD)


async def test_chain_side_errors_are_typed_and_not_retried(
    chain: ChainClient, substrate: FlakySubstrate, sleep: RecordingSleep
) -> None:
    substrate.read_error = bt.ChainError("Subnet does not exist.", "SubnetNotExists")
    with pytest.raises(SubnetNotFound, match=r"SubnetNotExists|does not exist"):
        await chain.tempo()
    assert sleep.delays == []
    substrate.read_error = bt.ChainError("state decoding failed")
    with pytest.raises(ChainError, match="tempo failed: state decoding failed"):
        await chain.tempo()


async def test_reads(chain: ChainClient, substrate: FlakySubstrate, wallet: bt.Wallet) -> None:
    substrate.storage[("SubtensorModule", "Tempo", (NETUID,))] = 360
    assert await chain.tempo() == 360
    assert await chain.blocks_until_next_epoch() == 40
    assert await chain.block_hash(12) == f"0x{12:064x}"
    assert await chain.block_hash() == f"0x{HEAD:064x}"
    assert await chain.own_uid() is None
    substrate.storage[("SubtensorModule", "Uids", (NETUID, wallet.hotkeypub.ss58_address))] = 4
    assert await chain.own_uid() == 4
    assert await chain.ensure_registered() == 4


async def test_missing_subnet(chain: ChainClient) -> None:
    with pytest.raises(SubnetNotFound, match=f"subnet {NETUID} does not exist"):
        await chain.metagraph()
    with pytest.raises(SubnetNotFound):
        await chain.tempo()


async def test_metagraph_mapping(chain: ChainClient, substrate: FlakySubstrate) -> None:
    substrate.graph = {
        "block": HEAD,
        "tempo": 99,
        "last_step": HEAD - 10,
        "blocks_since_last_step": 10,
        "owner_hotkey": "5Owner",
        "owner_coldkey": "5OwnerCold",
        "network_registered_at": 1,
        "hotkeys": ["5HotA", "5HotB"],
        "coldkeys": ["5ColdA", "5ColdB"],
        "axons": [{"ip": int.from_bytes(bytes([10, 0, 0, 7]), "big"), "port": 8091, "ip_type": 4}, {"ip": 0}],
        "validator_permit": [True, False],
        "last_update": [HEAD - 3, 0],
        "incentives": [0, 65535],
        "total_stake": [2_500 * 10**9, 0],
    }
    graph = await chain.metagraph()
    assert (graph.netuid, graph.block, graph.tempo, len(graph)) == (NETUID, HEAD, 99, 2)
    first, second = graph.neurons
    assert (first.uid, first.hotkey, first.coldkey) == (0, "5HotA", "5ColdA")
    assert (first.axon_ip, first.axon_port, first.is_serving) == ("10.0.0.7", 8091, True)
    assert first.stake == 2500.0 and first.validator_permit and first.last_update == HEAD - 3
    assert (second.axon_ip, second.axon_port, second.is_serving) == ("", 0, False)
    assert second.incentive == 1.0 and second.stake == 0.0
    assert graph.by_hotkey("5HotB") is second and graph.by_hotkey("nobody") is None
    assert [neuron.uid for neuron in graph] == [0, 1] and [n for n in graph if n.validator_permit] == [first]


async def test_not_registered_is_one_line_with_the_command(
    chain: ChainClient, substrate: FlakySubstrate, capsys: pytest.CaptureFixture[str]
) -> None:
    substrate.storage[("SubtensorModule", "NetworksAdded", (NETUID,))] = True
    with pytest.raises(SystemExit) as exit_info, user_errors("miner"):
        await chain.ensure_registered()
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    assert "is not registered on netuid 3 (test)" in lines[0]
    assert "`btcli subnets register --netuid 3 -w val -H hot -n test`" in lines[0]


async def test_a_netuid_that_names_no_subnet_says_so_instead_of_asking_to_register(
    chain: ChainClient, substrate: FlakySubstrate, capsys: pytest.CaptureFixture[str]
) -> None:
    substrate.storage[("SubtensorModule", "NetworksAdded", (NETUID,))] = False  # the chain's default
    with pytest.raises(SystemExit) as exit_info, user_errors("validator"):
        await chain.ensure_registered()
    assert exit_info.value.code == 2
    lines = capsys.readouterr().err.splitlines()
    assert len(lines) == 1
    assert f"subnet {NETUID} does not exist on test" in lines[0] and "check --netuid" in lines[0]
    assert "register" not in lines[0]


def _registered(substrate: FlakySubstrate, wallet: bt.Wallet, *, rate_limit: int, last_update: int) -> None:
    substrate.storage[("SubtensorModule", "Uids", (NETUID, wallet.hotkeypub.ss58_address))] = 0
    substrate.storage[("SubtensorModule", "WeightsSetRateLimit", (NETUID,))] = rate_limit
    substrate.storage[("SubtensorModule", "LastUpdate", (NETUID,))] = [last_update]


async def test_weights_too_soon_is_refused_before_signing(
    chain: ChainClient, substrate: FlakySubstrate, wallet: bt.Wallet
) -> None:
    _registered(substrate, wallet, rate_limit=100, last_update=HEAD - 10)
    with pytest.raises(WeightsTooSoon) as raised:
        await chain.set_weights({1: 0.5, 2: 0.5}, version_key=1)
    assert raised.value.blocks_left == 90
    assert "too soon" in str(raised.value) and "90 blocks left" in str(raised.value)
    # FlakySubstrate has no compose/submit: reaching them would have failed differently.


async def test_zero_weights_are_refused(chain: ChainClient) -> None:
    with pytest.raises(WeightsRejected, match="no positive weights"):
        await chain.set_weights({1: 0.0}, version_key=0)


class _Executed:
    """Stands in for bt.Client.execute: returns or raises what the SDK would."""

    def __init__(self, outcome: bt.ExtrinsicResult | BaseException) -> None:
        self.outcome = outcome
        self.intents: list[Any] = []

    async def __call__(self, intent: Any, wallet: Any, **_kwargs: Any) -> bt.ExtrinsicResult:
        self.intents.append(intent)
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        return self.outcome


async def _patch_execute(chain: ChainClient, outcome: bt.ExtrinsicResult | BaseException) -> _Executed:
    await chain.block()  # opens the connection
    executed = _Executed(outcome)
    assert chain._client is not None
    chain._client.execute = executed  # type: ignore[method-assign]
    return executed


async def test_sdk_weight_rejections_are_mapped(
    chain: ChainClient, substrate: FlakySubstrate, wallet: bt.Wallet
) -> None:
    _registered(substrate, wallet, rate_limit=0, last_update=0)
    no_permit = bt.ChainError("The neuron has no validator permit.", "NeuronNoValidatorPermit")
    executed = await _patch_execute(
        chain, bt.ExtrinsicResult(success=False, message="failed", error=no_permit)
    )
    with pytest.raises(WeightsRejected, match="validator permit") as raised:
        await chain.set_weights({0: 1.0}, version_key=7)
    assert raised.value.name == "NeuronNoValidatorPermit"
    intent = executed.intents[0]
    assert isinstance(intent, bt.SetWeights) and intent.version_key == 7 and intent.netuid == NETUID

    # The SDK's own rate-limit preflight, raised as an exception, still becomes WeightsTooSoon.
    preflight = bt.ChainError(
        "Weights on netuid 3 were last set 3 blocks ago; the rate limit is 40 blocks. "
        "Retry in ~37 blocks (~444s).",
        code=bt.ErrorCode.RATE_LIMITED,
    )
    await _patch_execute(chain, preflight)
    with pytest.raises(WeightsTooSoon) as too_soon:
        await chain.set_weights({0: 1.0}, version_key=7)
    assert too_soon.value.blocks_left == 37

    # A chain-side "too fast" without a count: the client works the count out from the reads.
    substrate.storage[("SubtensorModule", "WeightsSetRateLimit", (NETUID,))] = 50
    substrate.storage[("SubtensorModule", "LastUpdate", (NETUID,))] = [HEAD]
    too_fast = bt.ChainError("Setting weights too fast.", "SettingWeightsTooFast")
    await _patch_execute(chain, bt.ExtrinsicResult(success=False, message="x", error=too_fast))
    real_wait = chain.weights_wait
    calls = 0

    async def first_read_says_ready(uid: int) -> tuple[int, int | None, int]:
        nonlocal calls
        calls += 1
        return (50, 1_000, 0) if calls == 1 else await real_wait(uid)

    chain.weights_wait = first_read_says_ready  # type: ignore[method-assign]
    with pytest.raises(WeightsTooSoon) as counted:
        await chain.set_weights({0: 1.0}, version_key=7)
    assert counted.value.blocks_left == 50


async def test_weights_result_reports_the_path(
    chain: ChainClient, substrate: FlakySubstrate, wallet: bt.Wallet
) -> None:
    _registered(substrate, wallet, rate_limit=0, last_update=0)
    await _patch_execute(chain, bt.ExtrinsicResult(success=True, message="Success", extrinsic_id="5000-0001"))
    result = await chain.set_weights({2: 3.0, 1: 1.0}, version_key=2)
    assert (result.path, result.uids, result.weights, result.block) == ("direct", (1, 2), (1.0, 3.0), HEAD)
    assert result.extrinsic_id == "5000-0001" and result.reveal_round is None
    await _patch_execute(
        chain, bt.ExtrinsicResult(success=True, message="Success", data={"reveal_round": 123456})
    )
    result = await chain.set_weights({1: 1.0}, version_key=2)
    assert (result.path, result.reveal_round) == ("commit_reveal", 123456)


async def test_serve_axon_skips_an_unchanged_endpoint(
    chain: ChainClient, substrate: FlakySubstrate, wallet: bt.Wallet
) -> None:
    hotkey = wallet.hotkeypub.ss58_address
    substrate.storage[("SubtensorModule", "Uids", (NETUID, hotkey))] = 0
    substrate.storage[("SubtensorModule", "Axons", (NETUID, hotkey))] = {
        "ip": int.from_bytes(bytes([192, 0, 2, 1]), "big"),
        "port": 8091,
        "ip_type": 4,
    }
    executed = await _patch_execute(chain, bt.ExtrinsicResult(success=True, message="Success"))
    assert await chain.serve_axon("192.0.2.1", 8091) is False
    assert executed.intents == []
    assert await chain.serve_axon("192.0.2.1", 9000) is True
    (intent,) = executed.intents
    assert isinstance(intent, bt.ServeAxon) and (intent.ip, intent.port, intent.netuid) == (
        "192.0.2.1",
        9000,
        NETUID,
    )
    with pytest.raises(ChainError, match=r"--axon\.external_ip"):
        await chain.serve_axon("0.0.0.0", 9000)
    rate_limited = bt.ChainError("Serving too fast.", "ServingRateLimitExceeded")
    await _patch_execute(chain, bt.ExtrinsicResult(success=False, message="x", error=rate_limited))
    with pytest.raises(ChainError, match="serve_axon failed"):
        await chain.serve_axon("192.0.2.1", 9001)


async def test_register_maps_insufficient_balance(
    chain: ChainClient, substrate: FlakySubstrate, wallet: bt.Wallet
) -> None:
    poor = bt.ChainError("Not enough balance to register.", "NotEnoughBalanceToStake")
    executed = await _patch_execute(chain, bt.ExtrinsicResult(success=False, message="x", error=poor))
    with pytest.raises(RegistrationRejected, match=r"register failed.*fund the coldkey"):
        await chain.register()
    assert isinstance(executed.intents[0], bt.BurnedRegister)
    # Already registered: no second payment.
    substrate.storage[("SubtensorModule", "Uids", (NETUID, wallet.hotkeypub.ss58_address))] = 9
    executed.intents.clear()
    assert await chain.register() == 9
    assert executed.intents == []


async def test_not_registered_from_the_sdk_gets_our_command(
    chain: ChainClient, substrate: FlakySubstrate, wallet: bt.Wallet
) -> None:
    substrate.storage[("SubtensorModule", "Uids", (NETUID, wallet.hotkeypub.ss58_address))] = 0
    gone = bt.ChainError("Hotkey not registered.", "HotKeyNotRegisteredInSubNet")
    await _patch_execute(chain, bt.ExtrinsicResult(success=False, message="x", error=gone))
    with pytest.raises(NotRegistered, match="btcli subnets register --netuid 3"):
        await chain.serve_axon("192.0.2.1", 8091)


async def test_async_with_connects_and_closes(substrate: FlakySubstrate, wallet: bt.Wallet) -> None:
    chain = ChainClient.from_settings(_settings(), wallet, substrate=substrate, sleep=RecordingSleep())
    assert substrate.connects == 0, "from_settings does no I/O"
    async with chain as opened:
        assert opened is chain
        assert substrate.connects == 1
    assert substrate.closes == 1


async def test_the_real_websocket_substrate_refused_on_loopback(wallet: bt.Wallet) -> None:
    """No substrate injected: the SDK's RpcSubstrate meets a closed loopback port."""
    import socket

    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = MinerSettings(
        netuid=NETUID,
        subtensor=SubtensorSettings(network=f"ws://127.0.0.1:{port}"),
        chain=ChainRetrySettings(retries=1, backoff_base=0.01, backoff_max=0.01, timeout=10.0),
    )
    chain = ChainClient.from_settings(settings, wallet, sleep=RecordingSleep())
    with pytest.raises(ChainUnavailable, match=rf"ws://127\.0\.0\.1:{port} unreachable.*after 2 tries"):
        await chain.block()


async def test_only_network_oserrors_count_as_an_outage(
    chain: ChainClient, substrate: FlakySubstrate, sleep: RecordingSleep
) -> None:
    import errno
    import socket

    substrate.read_error = OSError(errno.ENETUNREACH, "Network is unreachable")
    with pytest.raises(ChainUnavailable, match="Network is unreachable"):
        await chain.block()
    substrate.read_error = socket.gaierror(-2, "Name or service not known")
    with pytest.raises(ChainUnavailable):
        await chain.block()
    retried = len(sleep.delays)
    substrate.read_error = FileNotFoundError(errno.ENOENT, "No such file", "/wallets/x/hotkeys/h")
    with pytest.raises(FileNotFoundError):
        await chain.block()
    assert len(sleep.delays) == retried, "a missing file is not retried as if the chain were down"
