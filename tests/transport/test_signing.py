"""The client's request signer produces exactly what `bt.http_auth.sign` produces, and the
SDK's `verify` (what every miner runs) accepts it, binds it to the receiver and refuses replays."""

from __future__ import annotations

import time

import bittensor as bt
import pytest

from subnet.devchain import dev_keypair
from subnet.transport import CHAT_PATH
from subnet.transport.client import RequestSigner

BODY = b'{"messages":[{"role":"user","content":"hello"}]}'


def _without_nonce_and_signature(headers: dict[str, str]) -> dict[str, str]:
    return {
        name: value
        for name, value in headers.items()
        if name not in (bt.http_auth.HEADER_NONCE, bt.http_auth.HEADER_SIGNATURE)
    }


def test_headers_match_the_sdk_signer() -> None:
    validator = dev_keypair("//SignerTest/validator")
    miner = dev_keypair("//SignerTest/miner").ss58_address
    ours = RequestSigner(validator).sign(method="POST", path=CHAT_PATH, body=BODY, receiver_ss58=miner)
    sdk = bt.http_auth.sign(validator, method="POST", path=CHAT_PATH, body=BODY, receiver_ss58=miner)
    assert set(ours) == set(sdk)
    assert _without_nonce_and_signature(ours) == _without_nonce_and_signature(sdk)
    assert abs(int(ours[bt.http_auth.HEADER_NONCE]) - time.time_ns()) < 5e9


def test_sdk_verify_accepts_ours_once_and_only_for_its_receiver() -> None:
    validator = dev_keypair("//SignerTest/validator")
    miner = dev_keypair("//SignerTest/miner").ss58_address
    other = dev_keypair("//SignerTest/other").ss58_address
    signer = RequestSigner(validator)
    headers = signer.sign(method="POST", path=CHAT_PATH, body=BODY, receiver_ss58=miner)
    store = bt.http_auth.InMemoryNonceStore()

    caller = bt.http_auth.verify(
        headers, BODY, method="POST", path=CHAT_PATH, self_hotkey_ss58=miner, nonce_store=store
    )
    assert caller.hotkey_ss58 == validator.ss58_address
    with pytest.raises(bt.http_auth.ReplayedRequest):
        bt.http_auth.verify(
            headers, BODY, method="POST", path=CHAT_PATH, self_hotkey_ss58=miner, nonce_store=store
        )
    with pytest.raises(bt.http_auth.WrongReceiver):
        bt.http_auth.verify(headers, BODY, method="POST", path=CHAT_PATH, self_hotkey_ss58=other)
    with pytest.raises(bt.http_auth.BadSignature):
        bt.http_auth.verify(
            headers, BODY + b" ", method="POST", path=CHAT_PATH, self_hotkey_ss58=miner, nonce_store=store
        )


def test_every_request_gets_a_fresh_nonce() -> None:
    signer = RequestSigner(dev_keypair("//SignerTest/validator"))
    miner = dev_keypair("//SignerTest/miner").ss58_address
    nonces = {
        signer.sign(method="POST", path=CHAT_PATH, body=BODY, receiver_ss58=miner)[bt.http_auth.HEADER_NONCE]
        for _ in range(50)
    }
    assert len(nonces) == 50
