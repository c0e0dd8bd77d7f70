"""A request may carry an auth header twice; the gate must never read one copy where the SDK reads
the other. The attack this closes: an unregistered forger sends the validator's hotkey first and
its own last, signed with its own key. The signature verified (the SDK reads the last copy) while
the permit, stake, rate and concurrency checks ran for the validator (the gate read the first),
so anyone got free inference and could spend the validator's rate budget."""

from __future__ import annotations

import asyncio
import json
import random

import bittensor as bt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from subnet.transport import CHAT_PATH, ServerPolicy

AUTH_HEADERS = (
    bt.http_auth.HEADER_VERSION,
    bt.http_auth.HEADER_HOTKEY,
    bt.http_auth.HEADER_RECEIVER,
    bt.http_auth.HEADER_NONCE,
    bt.http_auth.HEADER_SIGNATURE,
)


async def _send_raw(port: int, fields: list[tuple[str, str]], body: bytes) -> tuple[int, dict]:
    """POST with exactly these header lines, in this order and case (no client merges them)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        head = f"POST {CHAT_PATH} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
        head += "Content-Type: application/json\r\n"
        head += "".join(f"{name}: {value}\r\n" for name, value in fields)
        head += f"Content-Length: {len(body)}\r\n\r\n"
        writer.write(head.encode("latin-1") + body)
        raw = await asyncio.wait_for(reader.read(), timeout=10)
    finally:
        writer.close()
    status = int(raw.split(b" ", 2)[1])
    payload = raw.split(b"\r\n\r\n", 1)[1]
    return status, json.loads(payload) if payload else {}


def _auth_fields(wallet: bt.Wallet, body: bytes, receiver: str) -> list[tuple[str, str]]:
    headers = bt.http_auth.sign(
        wallet.hotkey, method="POST", path=CHAT_PATH, body=body, receiver_ss58=receiver
    )
    return list(headers.items())


def _the_attack(wallets, body: bytes, receiver: str, *, forger_first: bool, case=str) -> list:
    """The forger's own signed set, with the validator's hotkey added before or after its own."""
    fields = _auth_fields(wallets["forger"], body, receiver)
    decoy = (case(bt.http_auth.HEADER_HOTKEY), wallets.hotkey("validator"))
    at = next(i for i, (name, _) in enumerate(fields) if name == bt.http_auth.HEADER_HOTKEY)
    fields.insert(at + 1 if forger_first else at, decoy)
    return fields


@pytest.mark.parametrize("forger_first", [False, True], ids=["validator-first", "forger-first"])
@pytest.mark.parametrize("case", [str, str.lower, str.upper], ids=["same-case", "lower", "upper"])
async def test_a_forger_cannot_borrow_the_validators_identity(
    start_miner, ctx_body, wallets, forger_first, case
) -> None:
    miner = await start_miner()
    fields = _the_attack(wallets, ctx_body, miner.hotkey, forger_first=forger_first, case=case)
    status, answer = await _send_raw(miner.port, fields, ctx_body)
    assert status == 400, answer
    assert answer["error"]["type"] == "duplicate_auth_header"
    assert miner.handler.calls == []


@pytest.mark.parametrize("header", [*AUTH_HEADERS, bt.http_auth.HEADER_CRYPTO, "X-Bittensor-Anything"])
@pytest.mark.parametrize("order", ["same-value", "other-first", "other-last"])
@pytest.mark.parametrize("case", [str, str.lower, str.swapcase], ids=["same-case", "lower", "swapped"])
async def test_every_repeated_auth_header_is_refused(
    start_miner, ctx_body, wallets, header, order, case
) -> None:
    miner = await start_miner()
    fields = _auth_fields(wallets["validator"], ctx_body, miner.hotkey)
    present = dict(fields)
    own = present.get(header, "sr25519")
    other = {
        bt.http_auth.HEADER_HOTKEY: wallets.hotkey("validator_b"),
        bt.http_auth.HEADER_RECEIVER: wallets.hotkey("other_miner"),
        bt.http_auth.HEADER_NONCE: str(int(present[bt.http_auth.HEADER_NONCE]) + 1),
        bt.http_auth.HEADER_SIGNATURE: "0x" + "00" * 64,
        bt.http_auth.HEADER_VERSION: "2",
    }.get(header, "ed25519")
    if header not in present:
        fields.append((header, own))
    extra = (case(header), own if order == "same-value" else other)
    at = next(i for i, (name, _) in enumerate(fields) if name == header)
    fields.insert(at if order == "other-first" else at + 1, extra)
    status, answer = await _send_raw(miner.port, fields, ctx_body)
    assert status == 400, answer
    assert answer["error"]["type"] == "duplicate_auth_header"
    assert miner.handler.calls == []


async def test_refused_splits_spend_nobodys_budget(start_miner, ctx_body, wallets) -> None:
    """Forty split requests claiming the validator, then the validator's own: all of its burst
    is still there, and nothing reached the model before it."""
    miner = await start_miner(
        ServerPolicy(per_caller_rate=0.001, per_caller_burst=3, per_caller_max_in_flight=1)
    )
    for index in range(40):
        fields = _the_attack(wallets, ctx_body, miner.hotkey, forger_first=index % 2 == 0)
        status, _ = await _send_raw(miner.port, fields, ctx_body)
        assert status == 400
    assert miner.handler.calls == []
    for _ in range(3):
        status, answer = await _send_raw(
            miner.port, _auth_fields(wallets["validator"], ctx_body, miner.hotkey), ctx_body
        )
        assert status == 200, answer
    assert [caller.hotkey for _, caller in miner.handler.calls] == [wallets.hotkey("validator")] * 3


# Three signers: two registered validators and an unregistered forger. Each example signs a fresh
# set for each, then sends any multiset of their header lines (repeats, omissions, case variants,
# any order). Whatever reaches the handler must be served as the key whose signature it carried.
SIGNERS = ("validator", "validator_b", "forger")
_line = st.tuples(
    st.sampled_from(SIGNERS), st.sampled_from(AUTH_HEADERS), st.sampled_from([str, str.lower, str.upper])
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(_line, min_size=3, max_size=9), order_seed=st.integers(0, 2**16))
async def test_whatever_is_served_is_served_as_its_signer(
    start_miner, ctx_body, wallets, lines, order_seed
) -> None:
    miner = await start_miner(ServerPolicy(per_caller_rate=1e6, per_caller_burst=1e6))
    signed = {role: dict(_auth_fields(wallets[role], ctx_body, miner.hotkey)) for role in SIGNERS}
    # Half the examples start from one signer's complete set, so that some are served at all.
    base = SIGNERS[order_seed % 3]
    fields = list(signed[base].items()) if order_seed % 2 else []
    fields += [(case(name), signed[role][name]) for role, name, case in lines]
    random.Random(order_seed).shuffle(fields)
    status, answer = await _send_raw(miner.port, fields, ctx_body)

    names = [name.lower() for name, _ in fields]
    if len(names) != len(set(names)):
        assert (status, answer["error"]["type"]) == (400, "duplicate_auth_header")
    if status != 200:
        assert miner.handler.calls == []
        return
    ((_, caller),) = miner.handler.calls
    signature = dict((name.lower(), value) for name, value in fields)[bt.http_auth.HEADER_SIGNATURE.lower()]
    (signer,) = [role for role in SIGNERS if signed[role][bt.http_auth.HEADER_SIGNATURE] == signature]
    assert caller.hotkey == wallets.hotkey(signer)
    assert signer != "forger"


@pytest.fixture
def ctx_body(kit) -> bytes:
    return kit.sample_request().to_body()
