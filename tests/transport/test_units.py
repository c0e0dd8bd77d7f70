"""Unit tests of the transport's parts: wire models, bounded limit structures, the directory."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from subnet.protocol import ChatCompletionRequest, ChatCompletionResponse, ErrorBody
from subnet.transport import (
    CHAT_PATH,
    AuthPolicy,
    DirectoryEntry,
    MetagraphDirectory,
    MinerServer,
    ServerPolicy,
    StaticDirectory,
    build_miner_app,
    peer_key,
)
from subnet.transport.limits import KeyedSlots, KeyedTokenBuckets, ReplayCapacityExceeded, ReplayStore


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_request_round_trip_and_unknown_fields() -> None:
    body = json.dumps(
        {
            "model": "m",
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
            ],
            "tools": [{"type": "function", "function": {"name": "f", "parameters": {"type": "dict"}}}],
            "tool_choice": {"type": "function", "function": {"name": "f"}},
            "stream": False,
            "frequency_penalty": 0.5,
        }
    )
    request = ChatCompletionRequest.model_validate_json(body)
    assert request.messages[1].text() == "ab"
    assert request.tools is not None and request.tools[0].function.parameters == {"type": "dict"}
    assert ChatCompletionRequest.model_validate_json(request.to_body()) == request
    assert b"stream" not in request.to_body()


def test_response_arguments_object_becomes_string_and_content_only_is_fine() -> None:
    document = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "tool_calls": [{"function": {"name": "f", "arguments": {"a": [1, 2]}}}],
                }
            }
        ]
    }
    response = ChatCompletionResponse.model_validate(document)
    assert response.message.tool_calls is not None
    assert json.loads(response.message.tool_calls[0].function.arguments) == {"a": [1, 2]}
    plain = ChatCompletionResponse.model_validate({"choices": [{"message": {"content": "no call needed"}}]})
    assert plain.message.content == "no call needed" and plain.message.tool_calls is None


@pytest.mark.parametrize(
    "document",
    [
        {"choices": []},
        {"choices": [{"message": {"role": "user", "content": "x"}}]},
        {"choices": [{"message": {"tool_calls": [{"function": {"name": ""}}]}}]},
        {"choices": [{"message": {"content": "x" * 64_001}}]},
        {"choices": [{"message": {"tool_calls": [{"function": {"name": "f"}}] * 65}}]},
    ],
)
def test_response_limits(document: dict[str, object]) -> None:
    with pytest.raises(ValidationError):
        ChatCompletionResponse.model_validate(document)


def test_error_body_shape() -> None:
    body = ErrorBody.of("rate_limited", "slow down" + "!" * 5000).to_body()
    parsed = json.loads(body)
    assert set(parsed) == {"error"} and parsed["error"]["type"] == "rate_limited"
    assert len(parsed["error"]["message"]) <= 2000


def test_token_bucket_refills_and_caps() -> None:
    clock = FakeClock()
    buckets = KeyedTokenBuckets(rate=2.0, burst=3.0, max_keys=10, clock=clock)
    assert [buckets.try_take("a") for _ in range(4)] == [True, True, True, False]
    assert not buckets.has_token("a")
    clock.now += 0.5
    assert buckets.try_take("a") and not buckets.try_take("a")
    clock.now += 100
    assert [buckets.try_take("a") for _ in range(4)] == [True, True, True, False]
    assert buckets.has_token("never-seen")


def test_token_buckets_are_bounded() -> None:
    buckets = KeyedTokenBuckets(rate=1.0, burst=1.0, max_keys=3, clock=FakeClock())
    for key in "abcdef":
        buckets.try_take(key)
    assert len(buckets) == 3


def test_keyed_slots() -> None:
    slots = KeyedSlots(per_key=2, max_keys=2)
    assert slots.try_acquire("a") and slots.try_acquire("a") and not slots.try_acquire("a")
    assert slots.try_acquire("b") and not slots.try_acquire("c")
    slots.release("a")
    slots.release("a")
    assert slots.held("a") == 0 and slots.try_acquire("c")


def test_replay_store_expiry_and_capacity() -> None:
    clock = FakeClock()
    store = ReplayStore(retention=10.0, max_per_caller=3, clock=clock)
    assert store.check_and_store("hk", 1) and not store.check_and_store("hk", 1)
    assert store.seen("hk", 1) and not store.seen("other", 1)
    assert store.check_and_store("hk", 2) and store.check_and_store("hk", 3)
    with pytest.raises(ReplayCapacityExceeded):
        store.check_and_store("hk", 4)
    assert store.check_and_store("other", 4)
    clock.now += 10.5
    assert store.check_and_store("hk", 4)
    clock.now += 11
    store.check_and_store("third", 1)  # triggers the sweep of idle hotkeys
    assert len(store) == 1


@pytest.mark.parametrize(
    ("remote", "key"),
    [
        ("203.0.113.9", "203.0.113.9"),
        ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
        ("2001:db8:1:2:ffff::1", "2001:db8:1:2::/64"),
        ("::ffff:198.51.100.7", "198.51.100.7"),
        (None, "unknown"),
    ],
)
def test_peer_key(remote: str | None, key: str) -> None:
    assert peer_key(remote) == key


def test_policy_validation() -> None:
    with pytest.raises(ValueError, match="max_in_flight"):
        ServerPolicy(max_in_flight=0)
    with pytest.raises(ValueError):
        AuthPolicy(min_stake=-1)


class ScanOnly:
    """A snapshot with only `by_hotkey` (not iterable)."""

    def __init__(self, entry: DirectoryEntry) -> None:
        self.entry = entry

    def by_hotkey(self, hotkey: str) -> DirectoryEntry | None:
        return self.entry if hotkey == self.entry.hotkey else None


def test_metagraph_directory() -> None:
    directory = MetagraphDirectory()
    assert directory.lookup("a") is None and directory.age_s is None
    entry = DirectoryEntry(uid=3, hotkey="a", stake=2.0)
    directory.replace(StaticDirectory([entry]))
    assert directory.lookup("a") == entry and directory.lookup("b") is None
    directory.replace([DirectoryEntry(uid=4, hotkey="b")])
    assert directory.lookup("a") is None and directory.lookup("b") is not None
    directory.replace(ScanOnly(entry))
    assert directory.lookup("a") == entry
    assert directory.age_s is not None and directory.age_s >= 0


async def test_directory_replacement_takes_effect_on_a_running_miner(wallets, kit, http) -> None:
    directory = MetagraphDirectory()
    handler = kit.recording_handler()
    app = build_miner_app(
        hotkey_ss58=wallets.hotkey("miner"), directory=directory, policy=ServerPolicy(), handler=handler
    )
    async with MinerServer(app, host="127.0.0.1", port=0) as server:
        url = f"http://127.0.0.1:{server.port}{CHAT_PATH}"

        async def send() -> int:
            body = kit.sample_request().to_body()
            headers = kit.signed_headers(wallets["validator"], body, wallets.hotkey("miner"))
            async with http.post(url, data=body, headers=headers) as response:
                return response.status

        assert await send() == 403
        directory.replace([DirectoryEntry(uid=9, hotkey=wallets.hotkey("validator"), stake=1.0)])
        assert await send() == 200
    assert [caller.uid for _, caller in handler.calls] == [9]
