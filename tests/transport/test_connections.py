"""Connections the miner accepts: a deadline for the request head, caps per source address and
in total below the open-file limit, and a share of the total kept for validators' addresses."""

from __future__ import annotations

import asyncio
import logging
import time

import aiohttp
import pytest

from subnet.transport import (
    CHAT_PATH,
    GATE_KEY,
    DirectoryEntry,
    MetagraphDirectory,
    MinerServer,
    ServerPolicy,
    StaticDirectory,
    build_miner_app,
)
from subnet.transport.connections import (
    FILE_MARGIN,
    ConnectionAdmission,
    accept_backlog,
    connection_capacity,
    warn_if_file_limit_is_low,
)

ATTACKERS = ("127.0.0.11", "127.0.0.12", "127.0.0.13")
VALIDATOR_ADDRESS = "127.0.0.2"


# --- the rules ---------------------------------------------------------------------------------


def test_an_address_holds_at_most_its_share() -> None:
    admission = ConnectionAdmission(capacity=100, per_peer=3, reserved=10)
    tickets = [admission.admit("a") for _ in range(4)]
    assert [ticket is not None for ticket in tickets] == [True, True, True, False]
    assert admission.admit("b")
    assert tickets[0] is not None
    admission.release(tickets[0])
    admission.release(tickets[0])  # counted once, whoever calls it again
    assert admission.admit("a")
    assert (admission.total, admission.public, admission.refused) == (4, 4, 1)


def test_the_reserve_is_kept_for_validators_declared_or_learned() -> None:
    admission = ConnectionAdmission(
        capacity=10, per_peer=6, reserved=4, declared_validators=lambda: frozenset({"v1"})
    )
    assert sum(admission.admit("crowd") is not None for _ in range(10)) == 6  # 10 - 4 reserved
    assert all(admission.admit("v1") for _ in range(3))  # the declared validator: past the public share
    admission.learn_validator("v2")
    v2 = admission.admit("v2")
    assert v2 is not None and admission.total == 10 and admission.public == 6
    admission.release(v2)
    assert admission.public == 6 and admission.admit("v1")


def test_a_newcomer_takes_the_place_of_the_heaviest_addresss_oldest_unproven_connection() -> None:
    aborted: list[str] = []
    admission = ConnectionAdmission(capacity=10, per_peer=6, reserved=4)
    crowd = [admission.admit("crowd", lambda i=i: aborted.append(f"crowd{i}")) for i in range(6)]
    assert all(crowd) and admission.public == 6
    # The public share is full: a stranger holding none takes the crowd's oldest place.
    assert admission.admit("stranger", lambda: aborted.append("stranger")) is not None
    assert aborted == ["crowd0"] and admission.held("crowd") == 5 and admission.evicted == 1
    # The crowd cannot take its place back, nor displace itself: it holds the most already.
    assert admission.admit("crowd") is None
    assert admission.unproven("stranger") == 1 and admission.public == 6


def test_an_authenticated_connection_is_the_validators_and_never_gives_way() -> None:
    admission = ConnectionAdmission(capacity=4, per_peer=4, reserved=1)
    first = admission.admit("newcomer", key="t1")
    assert first is not None and admission.ticket("t1") is first
    admission.authenticated(first)
    assert (admission.public, admission.unproven("newcomer")) == (0, 0)
    assert sum(admission.admit("crowd") is not None for _ in range(4)) == 3  # the total is full
    # Only the crowd's unproven connections give way, never the authenticated one.
    assert admission.admit("other") is not None and admission.held("newcomer") == 1
    admission.release(first)
    assert admission.ticket("t1") is None and admission.total == 3


def test_capacity_stays_below_the_open_file_limit_with_room_for_an_accept_burst() -> None:
    assert accept_backlog(1024) == 128 and accept_backlog(65536) == 1024 and accept_backlog(64) == 16
    assert connection_capacity(None, file_limit=1024) == 1024 - FILE_MARGIN - 128
    assert connection_capacity(100, file_limit=1024) == 100
    assert connection_capacity(5000, file_limit=1024) == 1024 - FILE_MARGIN - 128
    assert connection_capacity(None, file_limit=65536) == 65536 - FILE_MARGIN - 1024
    assert connection_capacity(None, file_limit=50) == 16


def test_a_low_file_limit_is_reported_with_the_command_to_raise_it(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        assert warn_if_file_limit_is_low(896, file_limit=1024)
        assert not warn_if_file_limit_is_low(65408, file_limit=65536)
    (record,) = caplog.records
    assert "open-file limit is 1024" in record.message and "ulimit -n 65536" in record.message


# --- over loopback -----------------------------------------------------------------------------


async def _open(port: int, source: str) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))


async def _is_reset(reader: asyncio.StreamReader, within_s: float = 2.0) -> bool:
    """Whether the server closed this connection (EOF or reset) within `within_s`."""
    try:
        return await asyncio.wait_for(reader.read(1), timeout=within_s) == b""
    except ConnectionError:
        return True
    except TimeoutError:
        return False


async def _health(port: int, source: str) -> int:
    connector = aiohttp.TCPConnector(local_addr=(source, 0), force_close=True)
    async with (
        aiohttp.ClientSession(connector=connector) as session,
        session.get(f"http://127.0.0.1:{port}/health") as response,
    ):
        return response.status


async def test_a_trickled_head_is_cut_at_the_head_deadline(start_miner) -> None:
    miner = await start_miner(ServerPolicy(head_timeout_s=0.5))
    reader, writer = await _open(miner.port, ATTACKERS[0])
    started = time.perf_counter()
    writer.write(f"POST {CHAT_PATH} HTTP/1.1\r\n".encode())
    closed = False
    for _ in range(40):  # one header byte every 0.1 s: 4 s if the server let it
        try:
            writer.write(b"X")
            await writer.drain()
        except ConnectionError:
            closed = True
            break
        if await _is_reset(reader, within_s=0.1):
            closed = True
            break
    writer.close()
    assert closed and time.perf_counter() - started < 3.0  # cut at 0.5 s; 4 s if let through
    assert await _health(miner.port, ATTACKERS[0]) == 200  # the address itself is not punished


async def test_connections_past_an_addresss_cap_are_reset(start_miner) -> None:
    miner = await start_miner(ServerPolicy(per_ip_max_connections=4))
    held = [await _open(miner.port, ATTACKERS[0]) for _ in range(4)]
    reader, writer = await _open(miner.port, ATTACKERS[0])
    assert await _is_reset(reader)
    writer.close()
    assert await _health(miner.port, ATTACKERS[1]) == 200
    assert miner.server.app[GATE_KEY].connections.held(ATTACKERS[0]) == 4
    for _, held_writer in held:
        held_writer.close()


@pytest.mark.parametrize("how", ["declared on the metagraph", "learned from a signed request"])
async def test_validators_are_served_when_strangers_hold_the_public_share(
    how: str, wallets, metagraph: StaticDirectory, kit
) -> None:
    entries = [entry for entry in metagraph if entry.hotkey != wallets.hotkey("validator")]
    axon_ip = VALIDATOR_ADDRESS if how.startswith("declared") else ""
    entries.append(DirectoryEntry(uid=1, hotkey=wallets.hotkey("validator"), stake=5_000.0, axon_ip=axon_ip))
    policy = ServerPolicy(max_connections=8, validator_reserved_share=0.5, per_ip_max_connections=2)
    app = build_miner_app(
        hotkey_ss58=wallets.hotkey("miner"),
        directory=MetagraphDirectory(StaticDirectory(entries)),
        policy=policy,
        handler=kit.recording_handler(),
    )
    server = MinerServer(app, host="127.0.0.1", port=0)
    await server.start()
    body = kit.sample_request().to_body()

    async def signed_request() -> int:
        connector = aiohttp.TCPConnector(local_addr=(VALIDATOR_ADDRESS, 0), force_close=True)
        headers = kit.signed_headers(wallets["validator"], body, wallets.hotkey("miner"))
        async with (
            aiohttp.ClientSession(connector=connector) as session,
            session.post(f"http://127.0.0.1:{server.port}{CHAT_PATH}", data=body, headers=headers) as r,
        ):
            return r.status

    held = []
    try:
        if how.startswith("learned"):
            assert await signed_request() == 200
        for source in ATTACKERS[:2]:
            held += [await _open(server.port, source) for _ in range(2)]
        gate = server.app[GATE_KEY]
        assert gate.connections.public == 4  # the public share (4 of 8) is full
        # A third address takes the place of one of theirs (it holds none); its own place then
        # cannot be taken back by the first two, which hold more.
        reader, writer = await _open(server.port, ATTACKERS[2])
        assert not await _is_reset(reader, within_s=0.2)
        assert [await _is_reset(held_reader, within_s=0.2) for held_reader, _ in held].count(True) == 1
        writer.close()
        assert [await signed_request() for _ in range(3)] == [200, 200, 200]
    finally:
        for _, held_writer in held:
            held_writer.close()
        await server.stop(drain_timeout=1.0)
