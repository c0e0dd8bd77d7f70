"""The engine's captured steps on a CUDA GPU (skipped where there is none): the same tokens as
the same bucketed steps run eagerly, rows joining and leaving, and each bucket captured once."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from subnet.miner.engine import DecodeEngine, Row  # noqa: E402

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


def _run(
    model: object, prompts: list[list[int]], budgets: list[int], captured: bool
) -> tuple[list[list[int]], DecodeEngine]:
    engine = DecodeEngine(model, eos_ids=[], pad_id=0, prefix_tokens=0, max_rows=4, graphs=True)
    engine.graphs = captured
    rows = [Row(key=i, prompt=p, budget=b) for i, (p, b) in enumerate(zip(prompts, budgets, strict=True))]
    arrivals = {0: rows[:2], 3: rows[2:4], 5: rows[4:]}
    for step in range(200):
        if step in arrivals:
            engine.admit(arrivals[step])
        engine.step()
        if not engine.active and step > max(arrivals):
            break
    return [row.generated for row in rows], engine


def test_captured_steps_write_what_eager_steps_write(tiny_model_dir: Path) -> None:
    model = (
        transformers.AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32).cuda().eval()
    )
    rng = random.Random(3)
    vocab = model.config.vocab_size
    prompts = [[rng.randrange(3, vocab) for _ in range(rng.randrange(5, 90))] for _ in range(6)]
    budgets = [24, 7, 30, 12, 3, 18]
    captured, engine = _run(model, prompts, budgets, captured=True)
    eager, _ = _run(model, prompts, budgets, captured=False)
    assert captured == eager
    assert engine.graphs and engine.replayed == engine.steps > 0
    assert len(engine._captured) < engine.steps  # buckets are reused, not captured per step
