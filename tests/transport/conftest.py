"""Fixtures for the transport tests: real wallets in a temp dir, a real miner server on loopback."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp
import bittensor as bt
import pytest

from subnet.protocol import (
    AssistantMessage,
    ChatCompletionRequest,
    ChatCompletionResponse,
    Choice,
    FunctionCall,
    Message,
    ToolCall,
    Usage,
)
from subnet.transport import (
    CHAT_PATH,
    CallerIdentity,
    DirectoryEntry,
    MetagraphDirectory,
    MinerServer,
    ServerPolicy,
    StaticDirectory,
    build_miner_app,
)

WALLET_ROLES = ("miner", "other_miner", "validator", "validator_b", "forger", "no_permit", "poor", "banned")


@dataclass(frozen=True)
class Wallets:
    """One unencrypted wallet per role, created with bittensor's Wallet API."""

    by_role: dict[str, bt.Wallet]

    def __getitem__(self, role: str) -> bt.Wallet:
        return self.by_role[role]

    def hotkey(self, role: str) -> str:
        return str(self.by_role[role].hotkey.ss58_address)


@pytest.fixture(scope="session")
def wallets(tmp_path_factory: pytest.TempPathFactory) -> Wallets:
    root: Path = tmp_path_factory.mktemp("wallets")
    by_role: dict[str, bt.Wallet] = {}
    for role in WALLET_ROLES:
        wallet = bt.Wallet(name=role, hotkey="default", path=str(root))
        wallet.create_new_coldkey(use_password=False, suppress=True)
        wallet.create_new_hotkey(use_password=False, suppress=True)
        by_role[role] = wallet
    return Wallets(by_role)


@pytest.fixture(scope="session")
def metagraph(wallets: Wallets) -> StaticDirectory:
    """The subnet as the miner sees it. The forger and other_miner are not registered callers."""
    return StaticDirectory(
        [
            DirectoryEntry(uid=0, hotkey=wallets.hotkey("miner"), stake=0.0, validator_permit=False),
            DirectoryEntry(uid=1, hotkey=wallets.hotkey("validator"), stake=5_000.0, validator_permit=True),
            DirectoryEntry(uid=2, hotkey=wallets.hotkey("validator_b"), stake=5_000.0, validator_permit=True),
            DirectoryEntry(uid=3, hotkey=wallets.hotkey("no_permit"), stake=5_000.0, validator_permit=False),
            DirectoryEntry(uid=4, hotkey=wallets.hotkey("poor"), stake=1.0, validator_permit=True),
            DirectoryEntry(uid=5, hotkey=wallets.hotkey("banned"), stake=5_000.0, validator_permit=True),
        ]
    )


def sample_request(**overrides: object) -> ChatCompletionRequest:
    payload: dict[str, object] = {
        "model": "toolcaller",
        "messages": [Message(role="user", content="What is the weather in Paris?")],
        "tools": [
            {
                "type": "function",
                "function": {
                    "name": "get_weather",
                    "description": "Current weather for a city",
                    "parameters": {
                        "type": "object",
                        "properties": {"city": {"type": "string"}},
                        "required": ["city"],
                    },
                },
            }
        ],
        "max_tokens": 64,
        "temperature": 0.0,
    }
    payload.update(overrides)
    return ChatCompletionRequest.model_validate(payload)


def sample_response() -> ChatCompletionResponse:
    call = ToolCall(id="call_0", function=FunctionCall(name="get_weather", arguments='{"city": "Paris"}'))
    return ChatCompletionResponse(
        id="chatcmpl-test",
        created=1_700_000_000,
        model="toolcaller",
        choices=[Choice(message=AssistantMessage(tool_calls=[call]), finish_reason="tool_calls")],
        usage=Usage(prompt_tokens=10, completion_tokens=5, total_tokens=15),
    )


@dataclass
class RecordingHandler:
    """The miner's model stand-in: records every call that got through the gate."""

    delay_s: float = 0.0
    calls: list[tuple[ChatCompletionRequest, CallerIdentity]] = field(default_factory=list)

    async def __call__(
        self, request: ChatCompletionRequest, caller: CallerIdentity
    ) -> ChatCompletionResponse:
        self.calls.append((request, caller))
        if self.delay_s:
            await asyncio.sleep(self.delay_s)
        return sample_response()


@dataclass
class RunningMiner:
    server: MinerServer
    handler: RecordingHandler
    hotkey: str

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.port}"

    @property
    def port(self) -> int:
        return self.server.port


StartMiner = Callable[..., Awaitable[RunningMiner]]


@pytest.fixture
async def start_miner(wallets: Wallets, metagraph: StaticDirectory) -> AsyncIterator[StartMiner]:
    started: list[MinerServer] = []

    async def start(
        policy: ServerPolicy | None = None, handler: RecordingHandler | None = None
    ) -> RunningMiner:
        handler = handler or RecordingHandler()
        hotkey = wallets.hotkey("miner")
        app = build_miner_app(
            hotkey_ss58=hotkey,
            directory=MetagraphDirectory(metagraph),
            policy=policy or ServerPolicy(),
            handler=handler,
        )
        server = MinerServer(app, host="127.0.0.1", port=0)
        await server.start()
        started.append(server)
        return RunningMiner(server=server, handler=handler, hotkey=hotkey)

    yield start
    for server in started:
        await server.stop(drain_timeout=1.0)


@pytest.fixture
async def http() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as session:
        yield session


def signed_headers(
    wallet: bt.Wallet,
    body: bytes,
    receiver: str,
    *,
    nonce_ns: int | None = None,
    path: str = CHAT_PATH,
) -> dict[str, str]:
    headers = bt.http_auth.sign(
        wallet.hotkey, method="POST", path=path, body=body, receiver_ss58=receiver, nonce_ns=nonce_ns
    )
    headers["Content-Type"] = "application/json"
    return headers


def now_ns() -> int:
    return time.time_ns()


@dataclass(frozen=True)
class Kit:
    """Helpers for the test modules (importlib mode: tests cannot import conftest directly)."""

    sample_request: Callable[..., ChatCompletionRequest] = sample_request
    sample_response: Callable[[], ChatCompletionResponse] = sample_response
    signed_headers: Callable[..., dict[str, str]] = signed_headers
    recording_handler: type[RecordingHandler] = RecordingHandler


@pytest.fixture(scope="session")
def kit() -> Kit:
    return Kit()
