"""`python -m subnet.evaluate` signed, as a validator: against the miner's real gate, through a
miner process on the devchain, with the validator's client, judge and request builder.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from subnet import evaluate
from tests.ops.evaluate_standin import (
    ROOT,
    SEED,
    SignedMiner,
    StandInServer,
    expected_accuracy,
    right_or_wrong,
    settings,
    task_key,
    tasks_for,
)

# --------------------------------------------------------------------------- a real miner gate


def test_signed_run_against_a_real_miner_gate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("subnet.transport.server", reason="the transport has not landed")
    from subnet.wallets import create_dev_wallet

    validator = create_dev_wallet("validator", path=tmp_path)
    miner = create_dev_wallet("miner", path=tmp_path)
    chosen = settings("http://unused", n=12)
    by_key = tasks_for(chosen)
    argv = ["--tasks.count", "12", "--seed", str(SEED), "--json", "--query.concurrency", "2"]
    with SignedMiner(by_key, miner.hotkey_ss58, validator.hotkey_ss58) as server:
        # Unsigned: the gate refuses every request before any model work.
        assert evaluate.main(["--endpoint", server.url, *argv]) == 0
        unsigned = json.loads(capsys.readouterr().out)
        assert unsigned["statuses"] == {"http_error": 12}
        assert {row["http_status"] for row in unsigned["tasks"]} == {401}
        table = [
            "--endpoint",
            server.url,
            "--tasks.count",
            "12",
            "--seed",
            str(SEED),
            "--query.concurrency",
            "2",
        ]
        assert evaluate.main(table) == 0  # the table names the HTTP code, stderr what to do
        shown = capsys.readouterr()
        assert "http errors: 401 x12" in shown.out
        assert "every answer was HTTP 401" in shown.err and "--wallet.name NAME" in shown.err
        assert server.callers == []
        # Signed as the registered validator; the miner's hotkey comes from its /health.
        signing = ["--wallet.name", "validator", "--wallet.path", str(tmp_path)]
        assert evaluate.main(["--endpoint", server.url, *argv, *signing]) == 0
        signed = json.loads(capsys.readouterr().out)
    assert signed["statuses"] == {"ok": 12}
    assert server.callers == [validator.hotkey_ss58] * 12
    for category, accuracy in expected_accuracy(list(by_key.values())).items():
        assert signed["categories"][category]["accuracy"] == accuracy


def test_signing_with_a_missing_wallet_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--endpoint", "http://127.0.0.1:9/v1", "--wallet.name", "nobody", "--wallet.path", str(tmp_path)]
    assert evaluate.main([*argv, "--tasks.count", "3", "--seed", "1"]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "nobody" in lines[0] and "subnet.wallets create" in lines[0]


def test_the_wallets_directory_comes_from_bt_wallet_path_as_for_the_neurons(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from subnet.wallets import create_dev_wallet

    validator = create_dev_wallet("validator", path=tmp_path / "env")
    monkeypatch.setenv("BT_WALLET_PATH", str(tmp_path / "env"))
    signer = evaluate.load_signer(
        evaluate.parse_settings(["--endpoint", "http://x/v1", "--wallet.name", "validator"])
    )
    assert signer.ss58_address == validator.hotkey_ss58
    # the flag still wins over the environment
    flagged = [
        "--endpoint",
        "http://x/v1",
        "--wallet.name",
        "validator",
        "--wallet.path",
        str(tmp_path / "none"),
    ]
    with pytest.raises(evaluate.EvaluateError, match="validator"):
        evaluate.load_signer(evaluate.parse_settings(flagged))


async def _wait_healthy(url: str, process: subprocess.Popen[str], deadline_s: float) -> None:
    import aiohttp

    deadline = time.monotonic() + deadline_s
    async with aiohttp.ClientSession() as session:
        while time.monotonic() < deadline:
            assert process.poll() is None, f"the miner exited early: {process.communicate()[1][-2000:]}"
            try:
                async with session.get(url + "/health", timeout=aiohttp.ClientTimeout(total=2)) as response:
                    if response.status == 200:
                        return
            except aiohttp.ClientError:
                pass
            await asyncio.sleep(0.3)
    raise AssertionError("the miner did not become healthy in time")


def test_end_to_end_through_a_miner_process_on_the_devchain(
    tmp_path: Path, unused_tcp_port: int, capsys: pytest.CaptureFixture[str]
) -> None:
    """bootstrap (devchain) -> neurons/miner.py (openai backend) -> stand-in engine; evaluate signs."""
    if not (ROOT / "neurons" / "miner.py").is_file():
        pytest.skip("neurons/miner.py has not landed")
    from subnet.bootstrap import BootstrapSettings, bootstrap

    chain_path, wallets = tmp_path / "chain.sqlite", tmp_path / "wallets"
    asyncio.run(
        bootstrap(
            BootstrapSettings(
                network="dev", devchain_path=chain_path, wallet_path=wallets, miners=("miner1",)
            ),
            log=lambda _line: None,
        )
    )
    chosen = settings("http://unused", n=20)
    with StandInServer(tasks_for(chosen), right_or_wrong) as engine:
        miner_url = f"http://127.0.0.1:{unused_tcp_port}"
        command = [
            sys.executable,
            "neurons/miner.py",
            "--wallet.name",
            "miner1",
            "--wallet.path",
            str(wallets),
        ]
        command += ["--subtensor.network", "dev", "--devchain.path", str(chain_path), "--netuid", "1"]
        command += [
            "--axon.ip",
            "127.0.0.1",
            "--axon.port",
            str(unused_tcp_port),
            "--axon.external_ip",
            "127.0.0.1",
        ]
        command += ["--model.backend", "openai", "--model.base_url", engine.url + "/v1"]
        command += ["--blacklist.min_stake", "0"]
        miner = subprocess.Popen(
            command,
            cwd=ROOT,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            asyncio.run(_wait_healthy(miner_url, miner, deadline_s=90))
            argv = [
                "--endpoint",
                miner_url,
                "--tasks.count",
                "20",
                "--seed",
                str(SEED),
                "--json",
                "--rate",
                "8",
            ]
            code = evaluate.main([*argv, "--wallet.name", "validator", "--wallet.path", str(wallets)])
        finally:
            miner.terminate()
            miner.communicate(timeout=30)
    assert code == 0
    report = json.loads(capsys.readouterr().out)
    assert report["statuses"] == {"ok": 20}
    for category, accuracy in expected_accuracy(list(tasks_for(chosen).values())).items():
        assert report["categories"][category]["accuracy"] == accuracy


def test_each_score_is_the_validator_judges_on_the_same_answer(capsys: pytest.CaptureFixture[str]) -> None:
    """Every task row of a run (structured calls and text, right and wrong) carries the verdict
    the validator's own judge gives the answer the endpoint sent for that task."""
    from subnet.protocol import ChatCompletionResponse
    from subnet.validator.judge import BfclJudge

    chosen = settings("http://unused", n=40)
    by_key = tasks_for(chosen)
    with StandInServer(by_key, right_or_wrong) as server:
        assert (
            evaluate.main(["--endpoint", server.url, "--tasks.count", "40", "--seed", str(SEED), "--json"])
            == 0
        )
    rows = {row["task_id"]: row for row in json.loads(capsys.readouterr().out)["tasks"]}
    judge = BfclJudge()
    verdicts = set()
    for task in by_key.values():
        _status, payload, _delay = right_or_wrong(task, 0)
        judgement = judge.judge(ChatCompletionResponse.model_validate(payload).message, task)
        row = rows[task.id]
        assert (row["valid"], row["score"]) == (judgement.valid, judgement.score), task.id
        assert row["error_type"] == (None if judgement.valid else judgement.error_type), task.id
        verdicts.add(judgement.valid)
    assert verdicts == {True, False}


def test_a_signed_run_goes_through_the_validators_client(tmp_path: Path) -> None:
    from subnet.transport import EngineTarget, MinerClient
    from subnet.wallets import create_dev_wallet

    validator = create_dev_wallet("validator", path=tmp_path)
    miner = create_dev_wallet("miner", path=tmp_path)
    with SignedMiner({}, miner.hotkey_ss58, validator.hotkey_ss58) as server:
        signed = evaluate.parse_settings(
            ["--endpoint", server.url, "--wallet.name", "validator", "--wallet.path", str(tmp_path)]
        )

        async def clients() -> tuple[Any, Any, Any, Any]:
            async with evaluate.open_endpoint(signed) as endpoint:
                signed_client, target = endpoint.client, endpoint.target
            async with evaluate.open_endpoint(dataclasses.replace(signed, wallet_name=None)) as endpoint:
                return signed_client, target, endpoint.client, endpoint.target

        signed_client, target, plain_client, plain_target = asyncio.run(clients())
    assert isinstance(signed_client, MinerClient)
    assert target.hotkey == miner.hotkey_ss58  # read from the miner's /health
    # Unsigned, the same client (and its bounds) sends to the engine's URL, signing nothing.
    assert isinstance(plain_client, MinerClient)
    assert plain_target == EngineTarget(signed.endpoint, (("Accept", "application/json"),))


def test_a_signed_run_needs_a_miners_address(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A miner serves plain HTTP at /v1/chat/completions, the path its signatures cover."""
    from subnet.wallets import create_dev_wallet

    create_dev_wallet("validator", path=tmp_path)
    argv = ["--wallet.name", "validator", "--wallet.path", str(tmp_path), "--tasks.count", "2", "--seed", "1"]
    assert evaluate.main(["--endpoint", "https://127.0.0.1:9/v1", *argv]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "a signed run (--wallet.name) talks to a miner" in lines[0]


def test_the_answer_cap_is_the_model_max_new_tokens_flag(capsys: pytest.CaptureFixture[str]) -> None:
    chosen = settings("http://unused", n=4)
    with StandInServer(tasks_for(chosen), right_or_wrong) as server:
        argv = ["--endpoint", server.url, "--tasks.count", "4", "--seed", str(SEED)]
        assert evaluate.main([*argv, "--model.max_new_tokens", "77"]) == 0
    assert [body["max_tokens"] for body in server.requests] == [77] * 4
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        evaluate.parse_settings(["--endpoint", "http://h/v1", "--max-tokens", "77"])
    assert stopped.value.code == 2
    assert "unrecognized arguments: --max-tokens" in capsys.readouterr().err


def test_each_request_is_the_one_a_validators_round_sends() -> None:
    """The round, the episode player and evaluate build their requests with one builder."""
    from subnet.evaluate import run
    from subnet.validator import episodes, request, rounds

    builders = {module.__name__: module.build_request for module in (rounds, episodes, run)}
    assert all(builder is request.build_request for builder in builders.values()), builders


def test_the_request_on_the_wire_is_the_builders_with_the_runs_model(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """What reaches the endpoint is `build_request` for the task (messages, tools, tool_choice,
    max_tokens) with only the run's model and temperature put in."""
    from subnet.validator.request import build_request

    chosen = settings("http://unused", n=30)
    by_key = tasks_for(chosen)
    with StandInServer(by_key, right_or_wrong) as server:
        argv = [
            "--endpoint",
            server.url,
            "--tasks.count",
            "30",
            "--seed",
            str(SEED),
            "--model.max_new_tokens",
            "300",
        ]
        assert evaluate.main([*argv, "--temperature", "0.5"]) == 0
    capsys.readouterr()
    assert len(server.requests) == 30
    for body in server.requests:
        task = by_key[task_key(body["messages"], body["tools"])]
        expected = build_request(task.messages, task.tools, 300)
        shown = expected.model_copy(update={"model": "stand-in-model", "temperature": 0.5})
        assert body == json.loads(shown.to_body()), task.id
