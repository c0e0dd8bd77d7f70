"""The miner's gate on uvloop's event loop (the validator's loop where installed, and any operator's
choice): uvloop's transports are no ``asyncio.Transport`` subclass, and an isinstance check there
once refused every connection."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from subnet.protocol import ChatCompletionResponse
from subnet.transport import CHAT_PATH

uvloop = pytest.importorskip("uvloop", reason="uvloop is not installed on this platform")


# pytest-asyncio's one way to pick the loop per module today (its deprecation names a hook that
# would apply to the whole suite).
pytestmark = pytest.mark.filterwarnings('ignore:Overriding the "event_loop_policy" fixture')


@pytest.fixture
def event_loop_policy() -> asyncio.AbstractEventLoopPolicy:
    return uvloop.EventLoopPolicy()


async def test_an_honest_signed_request_is_served_on_uvloop(start_miner, http, kit, wallets) -> None:
    assert isinstance(asyncio.get_running_loop(), uvloop.Loop)
    miner = await start_miner()
    body = kit.sample_request().to_body()
    headers = kit.signed_headers(wallets["validator"], body, wallets.hotkey("miner"))
    async with http.post(
        miner.url + CHAT_PATH, data=body, headers=headers, timeout=aiohttp.ClientTimeout(total=10)
    ) as response:
        status, raw = response.status, await response.read()
    assert status == 200, raw
    completion = ChatCompletionResponse.model_validate_json(raw)
    assert completion.message.tool_calls is not None
    assert len(miner.handler.calls) == 1
