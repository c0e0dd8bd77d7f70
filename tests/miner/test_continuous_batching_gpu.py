"""The engine's captured steps on a CUDA GPU (skipped where there is none): the same tokens as
the same bucketed steps run eagerly, rows joining and leaving, and each bucket captured once.
The rows' play is `bench/gpu.py`'s own (`play_joining`), which its GPU run checks too."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

pytestmark = [
    pytest.mark.gpu,
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device"),
]


def test_captured_steps_write_what_eager_steps_write(
    tiny_model_dir: Path, load_bench: Callable[[str], ModuleType]
) -> None:
    play_joining = load_bench("gpu").play_joining
    model = (
        transformers.AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32).cuda().eval()
    )
    rng = random.Random(3)
    vocab = model.config.vocab_size
    prompts = [[rng.randrange(3, vocab) for _ in range(rng.randrange(5, 90))] for _ in range(6)]
    budgets = [24, 7, 30, 12, 3, 18]
    captured, engine = play_joining(model, prompts, budgets, captured=True)
    eager, _ = play_joining(model, prompts, budgets, captured=False)
    assert captured == eager
    assert engine.graphs and engine.replayed == engine.steps > 0
    assert len(engine._captured) < engine.steps  # buckets are reused, not captured per step
