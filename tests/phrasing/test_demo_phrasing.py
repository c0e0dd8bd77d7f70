"""The demo model as a phrasing engine: the mechanics on a real (tiny, bad) model on this CPU.

SmolLM2-135M phrases badly; what must hold is that its texts are verified, retried, dropped and
counted, and that nothing unverified is kept.
"""

from __future__ import annotations

from pathlib import Path

import pytest

import tasks
from subnet.config import PhrasingSettings
from subnet.phrasing import build_engine
from subnet.phrasing.session import policy_from
from tasks.phrasing import intent_of, phrase, verify


@pytest.mark.slow
async def test_the_demo_model_phrases_through_the_stage(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    monkeypatch.setenv("SUBNET_MODEL_CACHE", str(tmp_path))
    torch = pytest.importorskip("torch")
    # A small model is latency-bound: on a shared CPU one intra-op thread is several times faster
    # than torch's default (tests/miner/conftest.py's one_torch_thread does the same).
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    request.addfinalizer(lambda: torch.set_num_threads(threads))
    settings = PhrasingSettings(
        engine="transformers",
        path="demo",
        device="cpu",
        max_tokens=48,
        concurrency=2,
        attempts=2,
        replacements=1,
        # The mechanics are tested, not the speed: under two busy test workers (load 12 on two
        # cores) every attempt ran past the default 60 s and nothing was phrased at all.
        timeout=900.0,
        deadline=1800.0,
    )
    engine = build_engine(settings)
    await engine.start()
    try:
        # Two tasks: enough for a retry, a drop or a replacement to show in the counts below.
        generated = tasks.generate(b"demo-phrasing", 2, mix={"simple": 1.0})
        result = await phrase(generated, engine, b"round", policy=policy_from(settings), redraw=tasks.redraw)
    finally:
        await engine.close()
    stats = result.stats
    print(stats.summary())
    assert stats.slots == 2 and stats.phrased + stats.unfilled == 2 == len(result.tasks) + stats.unfilled
    assert sum(stats.rejected.values()) == stats.retried + stats.dropped
    assert stats.prompt_tokens > 0 and stats.completion_tokens > 0
    for task in result.tasks:
        assert verify(task.request, intent_of(task)).reason is None
