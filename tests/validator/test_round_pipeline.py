"""The round pipeline's scheduling, with fakes around it: requests first, answers scored after;
the long-lived heap frozen for the round (the collector keeps running) and thawed after; the event
loop the validator asks for."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from subnet.config import QuerySettings, SubtensorSettings, ValidatorSettings
from subnet.protocol import AssistantMessage, ChatCompletionRequest, ChatCompletionResponse, Choice
from subnet.transport import MinerTarget, QueryResult, QueryStatus
from subnet.validator.judge import Judgement
from subnet.validator.node import event_loop_factory, public_axons_only, raise_open_file_limit
from subnet.validator.rounds import (
    ChainView,
    RoundParams,
    RoundRunner,
    is_public_address,
    long_lived_objects_frozen,
    queryable_miners,
)
from subnet.validator.store import Store
from subnet.validator.task_source import TaskLike
from tests.support.results import stored_round

N_MINERS = 4
N_TASKS = 3


@dataclass(frozen=True)
class FakeTask:
    id: str
    category: str = "simple"
    scoring_category: str = "simple"
    source: str = "fake"
    generator_version: str = "fake-1"
    messages: list[dict[str, Any]] = field(default_factory=lambda: [{"role": "user", "content": "hi"}])
    tools: list[dict[str, Any]] = field(default_factory=list)
    expected: list[Any] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id}


class FakeTasks:
    def round_seed(self, secret: bytes, netuid: int, block_hash: str, round_number: int) -> bytes:
        return bytes(32)

    def miner_seed(self, round_seed: bytes, hotkey: str) -> bytes:
        return hotkey.encode()

    def generate(self, seed: bytes, n: int) -> Sequence[TaskLike]:
        return [FakeTask(f"task-{index}") for index in range(n)]

    def variant(self, task: TaskLike, seed: bytes) -> TaskLike:
        return task

    def episodes(self, seed: bytes, n: int) -> Sequence[Any]:
        return []

    def redraw(self, task: TaskLike, seed: bytes) -> TaskLike:
        return task


@dataclass
class Timeline:
    events: list[str] = field(default_factory=list)


class InstantQuerier:
    """Answers every query at the next turn of the loop, recording when each was asked."""

    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline

    async def query(
        self,
        target: MinerTarget,
        request: ChatCompletionRequest,
        *,
        parse_after: asyncio.Event | None = None,
    ) -> QueryResult:
        self.timeline.events.append("query")
        await asyncio.sleep(0)
        completion = ChatCompletionResponse(
            id="x", model="m", choices=[Choice(message=AssistantMessage(content="no call"))]
        )
        return QueryResult(status=QueryStatus.OK, latency_s=0.001, completion=completion, http_status=200)


class RecordingJudge:
    def __init__(self, timeline: Timeline) -> None:
        self.timeline = timeline

    def judge(self, message: AssistantMessage, task: TaskLike) -> Judgement:
        self.timeline.events.append("judge")
        return Judgement(valid=True, error_type=None, score=1.0)


@dataclass(frozen=True)
class FakeNeuron:
    uid: int
    hotkey: str
    axon_ip: str = "127.0.0.1"
    axon_port: int = 9000
    validator_permit: bool = False
    is_serving: bool = True


async def test_every_request_goes_out_before_any_answer_is_scored(sqlite_engine: AsyncEngine) -> None:
    timeline = Timeline()
    runner = RoundRunner(
        store=Store(sqlite_engine),
        querier=InstantQuerier(timeline),
        task_source=FakeTasks(),
        judge=RecordingJudge(timeline),
        secret=b"s" * 32,
        params=RoundParams(netuid=1, n_tasks=N_TASKS, alpha=0.5),
    )
    neurons = tuple(FakeNeuron(uid=uid, hotkey=f"hk-{uid}", axon_port=9000 + uid) for uid in range(N_MINERS))
    view = ChainView(block=10, block_hash="0x" + "ab" * 32, neurons=neurons, own_hotkey="validator")

    report = await runner.run(view)

    total = N_MINERS * N_TASKS
    stored = await stored_round(sqlite_engine, report.round_id)
    assert report.n_responses == total and stored.statuses == {"ok": total}
    # The querier answers at once, so without the ordering the first miners' answers would be
    # scored while later miners were still being asked.
    assert timeline.events == ["query"] * total + ["judge"] * total
    assert {hotkey: summary.total for hotkey, summary in stored.summaries.items()} == {
        neuron.hotkey: N_TASKS for neuron in neurons
    }


@pytest.mark.parametrize("enabled_before", [True, False])
def test_long_lived_objects_are_frozen_for_the_round_and_the_collector_keeps_its_state(
    enabled_before: bool,
) -> None:
    was_enabled = gc.isenabled()
    (gc.enable if enabled_before else gc.disable)()
    try:
        with long_lived_objects_frozen():
            # the round's own garbage (and the dashboard's, on the same loop) is still collected
            assert gc.isenabled() is enabled_before
            assert gc.get_freeze_count() > 0
        assert gc.isenabled() is enabled_before
        assert gc.get_freeze_count() == 0
        with pytest.raises(RuntimeError), long_lived_objects_frozen():
            raise RuntimeError("a failed round")
        assert gc.isenabled() is enabled_before
        assert gc.get_freeze_count() == 0
    finally:
        (gc.enable if was_enabled else gc.disable)()


def test_event_loop_factory_gives_a_working_loop() -> None:
    factory = event_loop_factory()
    if factory is None:
        pytest.skip("uvloop is not installed: the validator runs on asyncio's default loop")
    import uvloop

    with asyncio.Runner(loop_factory=factory) as runner:
        assert runner.run(asyncio.sleep(0, result=42)) == 42
        assert isinstance(runner.get_loop(), uvloop.Loop)


def test_open_file_limit_is_raised_for_the_queries_in_flight(caplog: pytest.LogCaptureFixture) -> None:
    resource = pytest.importorskip("resource")
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    low = 512
    if hard != resource.RLIM_INFINITY and hard < 2 * low:
        pytest.skip(f"hard open-file limit {hard} leaves no room to test")
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (low, hard))
        assert raise_open_file_limit(2 * low) == 2 * low
        assert resource.getrlimit(resource.RLIMIT_NOFILE) == (2 * low, hard)
        assert raise_open_file_limit(100) == 2 * low  # never lowered
        if hard != resource.RLIM_INFINITY:
            with caplog.at_level("WARNING"):
                assert raise_open_file_limit(hard + 1) == hard
            assert "ulimit -n" in caplog.text
    finally:
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))


@pytest.mark.parametrize(
    ("ip", "public"),
    [
        ("8.8.8.8", True),
        ("2001:4860:4860::8888", True),
        ("::ffff:8.8.8.8", True),
        ("127.0.0.1", False),
        ("127.9.9.9", False),
        ("::1", False),
        ("10.1.2.3", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("169.254.169.254", False),  # link-local: a cloud's metadata service
        ("fe80::1", False),
        ("fd00::1", False),
        ("::ffff:127.0.0.1", False),
        ("100.64.0.1", False),  # carrier-grade NAT
        ("224.0.0.1", False),
        ("not-an-ip", False),
    ],
)
def test_public_addresses(ip: str, public: bool) -> None:
    assert is_public_address(ip) is public


def test_private_axons_are_skipped_only_when_asked() -> None:
    neurons = tuple(
        FakeNeuron(uid=uid, hotkey=f"m{uid}", axon_ip=ip, axon_port=8091)
        for uid, ip in enumerate(["8.8.8.8", "127.0.0.1", "10.0.0.7", "169.254.169.254", "1.1.1.1"])
    )
    view = ChainView(block=1, block_hash="0x01", neurons=neurons, own_hotkey="validator")
    assert [n.uid for n in queryable_miners(view)] == [0, 1, 2, 3, 4]
    assert [n.uid for n in queryable_miners(view, public_only=True)] == [0, 4]


@pytest.mark.parametrize(
    ("network", "allow", "public_only"),
    [
        ("finney", False, True),
        ("test", False, True),
        ("finney", True, False),
        ("dev", False, False),
        ("local", False, False),
        ("ws://127.0.0.1:9944", False, False),
    ],
)
def test_public_axons_only_on_the_public_networks(network: str, allow: bool, public_only: bool) -> None:
    settings = ValidatorSettings(
        subtensor=SubtensorSettings(network=network), query=QuerySettings(allow_private_axons=allow)
    )
    assert public_axons_only(settings) is public_only
