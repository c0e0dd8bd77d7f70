"""Limits that fit the protocol (issue 26): a validator's whole round, sent as fast as the miner
answers, is never refused with 429, while strangers still meet their limits; and strangers'
connections, however many, cannot lock out a validator the miner has not met yet."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import Counter

import pytest

from subnet.config import LimitsSettings, RoundSettings
from subnet.config.settings import EPISODE_MAX_STEP_CAP, EPISODE_MAX_TURNS, ROUND_REQUESTS, round_requests
from subnet.transport import (
    CHAT_PATH,
    GATE_KEY,
    AuthPolicy,
    ClientTimeouts,
    DirectoryEntry,
    MetagraphDirectory,
    MinerClient,
    MinerServer,
    MinerTarget,
    QueryStatus,
    ServerPolicy,
    StaticDirectory,
    build_miner_app,
)

VALIDATOR_ADDRESS = "127.0.0.2"
STRANGER_ADDRESS = "127.0.0.3"


# --- one default, derived from the round ------------------------------------------------------


def test_the_round_bound_covers_every_builtin_episode() -> None:
    from tasks.episodes.generate import EPISODE_CATEGORIES, generate_episodes

    assert max(category.step_cap for category in EPISODE_CATEGORIES.values()) <= EPISODE_MAX_STEP_CAP
    episodes = [episode for seed in range(60) for episode in generate_episodes(seed, 8)]
    assert max(len(episode.turns) for episode in episodes) <= EPISODE_MAX_TURNS
    assert max(len(episode.turns) * episode.step_cap for episode in episodes) <= (
        EPISODE_MAX_TURNS * EPISODE_MAX_STEP_CAP
    )
    assert ROUND_REQUESTS == round_requests(RoundSettings.tasks, RoundSettings.episodes) == 328


def test_the_transport_and_the_flags_share_one_default() -> None:
    policy, limits = ServerPolicy(), LimitsSettings()
    assert policy.per_caller_rate == limits.per_caller_rate
    assert policy.per_caller_burst == limits.per_caller_burst == ROUND_REQUESTS
    # The validator's client keeps --round.tasks queries in flight per miner: all are taken.
    assert policy.per_caller_max_in_flight == limits.per_caller_concurrency == RoundSettings.tasks


# --- a round as fast as the engine answers ----------------------------------------------------


async def _round(client: MinerClient, target: MinerTarget, kit, tasks: int, episodes: int) -> Counter[int]:
    """A validator's round at its largest: its tasks at once, each episode's steps one after the
    other (every turn to its step cap), all beside each other; HTTP statuses by count."""
    statuses: Counter[int] = Counter()

    async def ask() -> None:
        result = await client.query(target, kit.sample_request())
        statuses[result.http_status or 0] += 1

    async def episode() -> None:
        for _ in range(EPISODE_MAX_TURNS * EPISODE_MAX_STEP_CAP):
            await ask()

    await asyncio.gather(*(ask() for _ in range(tasks)), *(episode() for _ in range(episodes)))
    return statuses


async def test_a_validators_rounds_at_stub_speed_are_never_refused(start_miner, wallets, kit) -> None:
    # The default policy, as a miner runs it; the stand-in model answers at once.
    miner = await start_miner(policy=ServerPolicy(auth=AuthPolicy(min_stake=1000.0)))
    target = MinerTarget(hotkey=miner.hotkey, ip="127.0.0.1", port=miner.port, uid=0)
    client = MinerClient(
        wallets["validator"],
        timeouts=ClientTimeouts(total_s=10.0),
        per_miner_concurrency=RoundSettings.tasks,  # as the validator sets it
        local_addr=(VALIDATOR_ADDRESS, 0),
    )
    async with client:
        rounds = [
            await _round(client, target, kit, RoundSettings.tasks, RoundSettings.episodes) for _ in range(3)
        ]
    assert rounds == [Counter({200: ROUND_REQUESTS})] * 3


async def test_strangers_still_meet_their_limits(start_miner, wallets, kit, http) -> None:
    policy = ServerPolicy(
        auth=AuthPolicy(require_validator_permit=False),
        per_ip_failed_auth_rate=1.0,
        per_ip_failed_auth_burst=5,
    )
    miner = await start_miner(policy=policy)
    body = kit.sample_request().to_body()

    # A registered hotkey without a permit (served where permits are not required): its bucket,
    # the burst and what refills while the requests go (a loaded machine sends them slower: a
    # fixed count of requests once met only 4 refusals where 5 were asked for).
    no_permit: Counter[int] = Counter()
    started = time.monotonic()
    for _ in range(ROUND_REQUESTS + 200):
        headers = kit.signed_headers(wallets["no_permit"], body, miner.hotkey)
        async with http.post(miner.url + CHAT_PATH, data=body, headers=headers) as response:
            no_permit[response.status] += 1
        if no_permit[429] >= 5:
            break
    refilled = policy.per_caller_rate * (time.monotonic() - started)
    assert set(no_permit) == {200, 429} and no_permit[429] >= 5, no_permit
    assert ROUND_REQUESTS <= no_permit[200] <= ROUND_REQUESTS + refilled + 1, (no_permit, refilled)

    # Forged signatures from one address: its failure budget.
    forged: Counter[int] = Counter()
    for _ in range(20):
        headers = kit.signed_headers(wallets["forger"], body, miner.hotkey)
        headers["X-Bittensor-Hotkey"] = wallets.hotkey("validator")
        async with http.post(miner.url + CHAT_PATH, data=body, headers=headers) as response:
            forged[response.status] += 1
    assert forged == Counter({401: 5, 429: 15}), forged


# --- strangers' connections against a validator the miner has not met -------------------------


async def _keep_alive_stranger(port: int, source: str, period_s: float, stop: asyncio.Event) -> None:
    """One attacker connection: an unsigned GET /health every `period_s`, kept alive; when the
    miner closes it, a new one opened at once and held until the next GET (the most a stranger
    can hold)."""
    while not stop.is_set():
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
        except OSError:
            await asyncio.sleep(0.05)
            continue
        try:
            while not stop.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stop.wait(), timeout=period_s)
                writer.write(b"GET /health HTTP/1.1\r\nHost: miner\r\n\r\n")
                await writer.drain()
                head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), timeout=5.0)
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                await reader.readexactly(length)
                if b"connection: close" in head.lower():
                    break
        except (ConnectionError, OSError, asyncio.IncompleteReadError, TimeoutError):
            pass
        finally:
            writer.close()


@pytest.mark.parametrize("period_s", [0.5, 3.0], ids=["GET every 0.5 s", "GET every 3 s"])
async def test_a_never_met_validator_is_served_while_strangers_hold_every_public_place(
    period_s: float, wallets, kit
) -> None:
    # No axon address for the validator: the miner has never met it.
    directory = MetagraphDirectory(
        StaticDirectory([DirectoryEntry(uid=1, hotkey=wallets.hotkey("validator"), stake=5_000.0)])
    )
    # 96 places, 72 of them public; 12 addresses x 8 connections want more than that.
    policy = ServerPolicy(max_connections=96, per_ip_max_connections=8)
    app = build_miner_app(
        hotkey_ss58=wallets.hotkey("miner"),
        directory=directory,
        policy=policy,
        handler=kit.recording_handler(),
    )
    server = MinerServer(app, host="127.0.0.1", port=0)
    await server.start()
    admission = app[GATE_KEY].connections
    stop = asyncio.Event()
    sources = [f"127.0.0.{40 + index}" for index in range(12)]
    attack = [
        asyncio.create_task(_keep_alive_stranger(server.port, source, period_s, stop))
        for source in sources
        for _ in range(8)
    ]
    client = MinerClient(
        wallets["validator"], timeouts=ClientTimeouts(total_s=5.0), local_addr=(VALIDATOR_ADDRESS, 0)
    )
    target = MinerTarget(hotkey=wallets.hotkey("miner"), ip="127.0.0.1", port=server.port, uid=0)
    try:
        for _ in range(200):  # at most 10 s for the attack to take its places
            if admission.public >= 72:
                break
            await asyncio.sleep(0.05)
        assert admission.public == 72  # every public place is a stranger's
        async with client:
            results = []
            for _ in range(29):
                results.append(await client.query(target, kit.sample_request()))
                await asyncio.sleep(0.02)
        assert [result.status for result in results] == [QueryStatus.OK] * 29, Counter(
            (result.status, result.error) for result in results
        )
    finally:
        stop.set()
        await asyncio.gather(*attack, return_exceptions=True)
        await server.stop(drain_timeout=1.0)


# --- the localnet with a fast engine -----------------------------------------------------------


@pytest.mark.slow
def test_a_localnet_with_an_engine_that_answers_at_once_gets_no_429(load_bench) -> None:
    """`python -m subnet.localnet --miners 0 --model.base_url URL`, 5 rounds of 8 tasks and 4
    episodes, in front of a stand-in engine answering at once (what `bench/transport.py
    --scenario localnet` runs and prints): the validator is never answered 429."""
    bench = load_bench("transport")
    lines: list[str] = []
    args = bench._parse(["--scenario", "localnet", "--rounds", "5"])
    assert bench._localnet(args, print_line=lines.append) == 0, "\n".join(lines)
    assert "over 5 rounds: 0" in lines[-1], "\n".join(lines)
    assert not any(" 0 rows" in line for line in lines), "\n".join(lines)


def test_an_operator_may_name_validators_addresses() -> None:
    policy = ServerPolicy(validator_addresses=frozenset({"203.0.113.7", "2001:db8::1"}))
    # Kept as the admission counts peers: an IPv6 address by its /64.
    assert policy.validator_addresses == {"203.0.113.7", "2001:db8::/64"}


async def test_a_named_validator_address_uses_the_reserve_from_its_first_connection(wallets, kit) -> None:
    directory = MetagraphDirectory(
        StaticDirectory([DirectoryEntry(uid=1, hotkey=wallets.hotkey("validator"), stake=5_000.0)])
    )
    policy = ServerPolicy(max_connections=8, validator_addresses=frozenset({VALIDATOR_ADDRESS}))
    app = build_miner_app(
        hotkey_ss58=wallets.hotkey("miner"),
        directory=directory,
        policy=policy,
        handler=kit.recording_handler(),
    )
    admission = app[GATE_KEY].connections
    assert admission.is_validator(VALIDATOR_ADDRESS) and not admission.is_validator(STRANGER_ADDRESS)
    ticket = admission.admit(VALIDATOR_ADDRESS)
    assert ticket is not None and ticket.validator and admission.public == 0
