"""The chain goes away for a while: rounds go on with the last metagraph; weights are set when it is back."""

from __future__ import annotations

import inspect
from typing import Any

from subnet.chain import ChainClient
from subnet.devchain import DevChain
from subnet.validator.jobs import GuardedJob
from subnet.validator.node import Validator, ValidatorOptions
from subnet.wallets import load_wallet
from tests.support.results import record_results, stored_round
from tests.support.simulation import SimulatedSubnet


class FlakySubstrate:
    """The devchain, behind a switch that makes every call fail like a dropped connection."""

    def __init__(self, inner: DevChain) -> None:
        self._inner = inner
        self.down = False

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._inner, name)
        if not callable(attribute) or name == "close":
            return attribute
        if inspect.iscoroutinefunction(attribute):

            async def call_async(*args: Any, **kwargs: Any) -> Any:
                if self.down:
                    raise ConnectionError("simulated outage")
                return await attribute(*args, **kwargs)

            return call_async

        def call(*args: Any, **kwargs: Any) -> Any:
            if self.down:
                raise ConnectionError("simulated outage")
            return attribute(*args, **kwargs)

        return call


async def test_rounds_continue_and_weights_resume_after_an_outage(quick_subnet: SimulatedSubnet) -> None:
    settings = quick_subnet.settings
    wallet = load_wallet(settings.wallet)
    substrate = FlakySubstrate(DevChain(settings.devchain.path, block_time=settings.devchain.block_time))
    chain = ChainClient.from_settings(settings, wallet, substrate=substrate)
    validator = Validator(
        settings,
        wallet=wallet,
        chain=chain,
        options=ValidatorOptions(observer=quick_subnet.key.observe, install_signal_handlers=False),
    )
    results = record_results(validator)
    await validator.start()
    try:
        jobs = {spec.name: GuardedJob(spec) for spec in validator.job_specs()}

        async def one_cycle() -> None:
            for name in ("metagraph", "round", "weights"):
                await jobs[name].run_once()

        await one_cycle()
        await one_cycle()
        assert [a.outcome for a in results.weight_attempts][-1] == "ok"
        view_before = validator.view

        substrate.down = True
        await one_cycle()
        await one_cycle()
        assert jobs["metagraph"].stats.failures == 2
        assert jobs["round"].stats.failures == 0 and len(results.reports) == 4
        assert validator.view is view_before  # rounds ran on the last known metagraph
        assert [a.outcome for a in results.weight_attempts][-2:] == ["chain_unavailable"] * 2

        substrate.down = False
        await one_cycle()
        assert results.weight_attempts[-1].outcome == "ok"
        submissions = await validator.store.weight_submissions()
        assert [s.outcome for s in submissions][-3:] == ["chain_unavailable", "chain_unavailable", "ok"]
        right_uid = quick_subnet.uid_of["right"]
        assert submissions[-1].weights[submissions[-1].uids.index(right_uid)] > 0
    finally:
        await validator.close()
        await chain.close()


async def test_a_restart_during_an_outage_runs_rounds_on_the_stored_miners(
    quick_subnet: SimulatedSubnet,
) -> None:
    settings = quick_subnet.settings

    def build(substrate: FlakySubstrate) -> tuple[Validator, ChainClient]:
        wallet = load_wallet(settings.wallet)
        chain = ChainClient.from_settings(settings, wallet, substrate=substrate)
        options = ValidatorOptions(observer=quick_subnet.key.observe, install_signal_handlers=False)
        return Validator(settings, wallet=wallet, chain=chain, options=options), chain

    first, first_chain = build(FlakySubstrate(DevChain(settings.devchain.path)))
    first_results = record_results(first)
    await first.run(rounds=1)
    await first_chain.close()

    down = FlakySubstrate(DevChain(settings.devchain.path))
    down.down = True
    second, second_chain = build(down)
    await second.start()
    try:
        report = await second.run_round()
        stored = await stored_round(settings.db.url, report.round_id)
        assert report.n_miners == 3 and stored.statuses["ok"] == 24
        assert report.block == first_results.reports[0].block  # the stored block hash seeds the round
        assert report.number == first_results.reports[0].number + 1
    finally:
        await second.close()
        await second_chain.close()
