"""The continuous-batching engine on a tiny random Llama: rows that join a running batch, leave
it at their own end and share it with rows of other lengths write exactly what a plain
``generate`` writes for each of them alone (greedy), and guides restrict each row separately."""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from subnet.miner.continuous_batching import DecodeEngine, Row, supports_model  # noqa: E402


@pytest.fixture(scope="module")
def model_and_tokens(tiny_model_dir: Path) -> tuple[Any, list[list[int]], int]:
    model = transformers.AutoModelForCausalLM.from_pretrained(tiny_model_dir, dtype=torch.float32).eval()
    rng = random.Random(7)
    vocab = model.config.vocab_size
    prompts = [[rng.randrange(3, vocab) for _ in range(rng.randrange(3, 40))] for _ in range(7)]
    return model, prompts, vocab


def _alone(model: Any, prompt: list[int], budget: int, eos: int) -> list[int]:
    with torch.inference_mode():
        output = model.generate(
            input_ids=torch.tensor([prompt]),
            attention_mask=torch.ones((1, len(prompt)), dtype=torch.long),
            max_new_tokens=budget,
            do_sample=False,
            eos_token_id=eos,
            pad_token_id=0,
        )
    return [int(token) for token in output[0, len(prompt) :]]


def _eos_for(model: Any, prompts: list[list[int]]) -> int:
    """A token the model does write now and then, so some rows end early at 'EOS'."""
    counts: dict[int, int] = {}
    for prompt in prompts:
        for token in _alone(model, prompt, 12, eos=-1):
            counts[token] = counts.get(token, 0) + 1
    return max(counts, key=lambda token: (counts[token], token))


def test_the_tiny_llama_qualifies(model_and_tokens: tuple[Any, list[list[int]], int]) -> None:
    model, _, _ = model_and_tokens
    assert supports_model(model)


def test_rows_joining_and_leaving_write_what_generate_writes_alone(
    model_and_tokens: tuple[Any, list[list[int]], int],
) -> None:
    model, prompts, _ = model_and_tokens
    eos = _eos_for(model, prompts)
    budgets = [3, 17, 9, 1, 12, 20, 5]
    expected = [_alone(model, prompt, budget, eos) for prompt, budget in zip(prompts, budgets, strict=True)]
    assert any(len(tokens) < budget for tokens, budget in zip(expected, budgets, strict=True)), "no early EOS"

    engine = DecodeEngine(model, eos_ids=[eos], pad_id=0)
    rows = [
        Row(key=index, prompt=prompt, budget=budget)
        for index, (prompt, budget) in enumerate(zip(prompts, budgets, strict=True))
    ]
    finished: list[Row] = []
    # Three rows start; the others join one or two at a time while earlier ones are mid-answer.
    arrivals = {0: rows[:3], 2: rows[3:4], 4: rows[4:6], 9: rows[6:]}
    step = 0
    with torch.inference_mode():
        while step < 100 and (engine.active or any(key >= step for key in arrivals)):
            if step in arrivals:
                finished += engine.admit(arrivals[step])
            finished += engine.step()
            step += 1
    assert engine.active == 0
    assert sorted(row.key for row in finished) == list(range(len(rows)))
    for row in rows:
        assert row.finished
        assert row.generated == expected[row.key], f"row {row.key}"


def test_a_finished_row_leaves_while_the_others_go_on(
    model_and_tokens: tuple[Any, list[list[int]], int],
) -> None:
    model, prompts, _ = model_and_tokens
    engine = DecodeEngine(model, eos_ids=[-1], pad_id=0)
    short, long = Row(key="short", prompt=prompts[0], budget=2), Row(key="long", prompt=prompts[1], budget=6)
    with torch.inference_mode():
        assert engine.admit([short, long]) == []
        assert engine.step() == [short]
        assert engine.active == 1
        left: list[Row] = []
        while engine.active:
            left += engine.step()
    assert left == [long] and len(long.generated) == 6 and len(short.generated) == 2


class _OnlyEven:
    """A guide that allows even token ids only, and records what it was shown."""

    def __init__(self) -> None:
        self.seen: list[int] = []

    def constrain(self, generated: Sequence[int], scores: Any) -> Any:
        self.seen.append(len(generated))
        scores[1::2] = float("-inf")
        return scores


def test_a_guide_constrains_its_own_row_only(model_and_tokens: tuple[Any, list[list[int]], int]) -> None:
    model, prompts, _ = model_and_tokens
    guide = _OnlyEven()
    guided = Row(key="guided", prompt=prompts[2], budget=8, guide=guide)
    free = Row(key="free", prompt=prompts[2], budget=8)
    engine = DecodeEngine(model, eos_ids=[-1], pad_id=0)
    with torch.inference_mode():
        engine.admit([guided, free])
        while engine.active:
            engine.step()
    assert all(token % 2 == 0 for token in guided.generated)
    assert guide.seen == list(range(8))  # shown each row's own history, one token more each step
    assert free.generated == _alone(model, prompts[2], 8, eos=-1)


def test_sampling_is_reproducible_for_a_seed(model_and_tokens: tuple[Any, list[list[int]], int]) -> None:
    model, prompts, _ = model_and_tokens

    def sample(seed: int) -> list[int]:
        engine = DecodeEngine(model, eos_ids=[-1], pad_id=0, seed=seed)
        row = Row(key=0, prompt=prompts[3], budget=10, temperature=1.5)
        with torch.inference_mode():
            engine.admit([row])
            while engine.active:
                engine.step()
        return row.generated

    assert sample(1) == sample(1)
    assert sample(1) != sample(2)


def test_prompts_sharing_a_beginning_reuse_it_and_write_the_same(
    model_and_tokens: tuple[Any, list[list[int]], int],
) -> None:
    model, prompts, vocab = model_and_tokens
    rng = random.Random(11)
    system = [rng.randrange(3, vocab) for _ in range(40)]
    # A shared "system prompt", then different questions; one prompt is a prefix of another's
    # beginning plus more, one repeats exactly.
    asks = [system + prompt for prompt in prompts[:4]] + [system[:30] + prompts[5], system + prompts[0]]
    budgets = [6, 11, 3, 8, 9, 6]
    expected = [_alone(model, ask, budget, eos=-1) for ask, budget in zip(asks, budgets, strict=True)]
    engine = DecodeEngine(model, eos_ids=[-1], pad_id=0)
    rows = [Row(key=i, prompt=ask, budget=b) for i, (ask, b) in enumerate(zip(asks, budgets, strict=True))]
    with torch.inference_mode():
        engine.admit(rows[:1])
        engine.step()
        engine.admit(rows[1:3])  # reuse the first prompt's 40 shared tokens, while it is running
        engine.step()
        engine.step()
        engine.admit(rows[3:])
        while engine.active:
            engine.step()
    assert engine.prefixes is not None
    assert engine.prefixes.reused_tokens >= 40 * 3 + 30
    for row in rows:
        assert row.generated == expected[row.key], f"row {row.key}"


def test_the_prefix_store_is_bounded_and_can_be_off(
    model_and_tokens: tuple[Any, list[list[int]], int],
) -> None:
    model, prompts, _ = model_and_tokens
    engine = DecodeEngine(model, eos_ids=[-1], pad_id=0, prefix_tokens=60)
    with torch.inference_mode():
        for prompt in prompts:
            engine.admit([Row(key=0, prompt=prompt, budget=1)])
    assert engine.prefixes is not None
    assert 0 < engine.prefixes._tokens <= 60
    engine.prefixes.clear()
    assert engine.prefixes.longest(prompts[-1]) == (0, None)
    off = DecodeEngine(model, eos_ids=[-1], pad_id=0, prefix_tokens=0)
    row = Row(key=0, prompt=prompts[1] + prompts[2], budget=4)
    with torch.inference_mode():
        off.admit([Row(key=1, prompt=prompts[1] + prompts[3], budget=1)])
        off.admit([row])
        while off.active:
            off.step()
    assert off.prefixes is None
    assert row.generated == _alone(model, prompts[1] + prompts[2], 4, eos=-1)


def test_no_autograd_graph_is_kept_whoever_calls(model_and_tokens: tuple[Any, list[list[int]], int]) -> None:
    # The backend calls the engine from its generation thread with no inference_mode around it;
    # a graph there would hold every step's activations (hundreds of MB per request).
    model, prompts, _ = model_and_tokens
    engine = DecodeEngine(model, eos_ids=[-1], pad_id=0)
    engine.admit([Row(key=0, prompt=prompts[0], budget=5), Row(key=1, prompt=prompts[1], budget=5)])
    engine.step()
    assert len(engine._slots.keys) == model.config.num_hidden_layers
    for buffer in [*engine._slots.keys, *engine._slots.values]:
        assert buffer.grad_fn is None and not buffer.requires_grad


def test_steps_write_into_the_slots_in_place(model_and_tokens: tuple[Any, list[list[int]], int]) -> None:
    # Keys and values live in buffers allocated once: a step writes each row's column there,
    # joining and leaving copy one row at most, and no step allocates a cache of its own.
    model, prompts, _ = model_and_tokens
    engine = DecodeEngine(model, eos_ids=[-1], pad_id=0, prefix_tokens=0)
    rows = [Row(key=index, prompt=prompts[index], budget=9 + 2 * index) for index in range(3)]
    engine.admit(rows[:2])
    stores = [buffer.data_ptr() for buffer in [*engine._slots.keys, *engine._slots.values]]
    for step in range(5):
        if step == 2:
            engine.admit(rows[2:])
        engine.step()
    while engine.active:
        engine.step()
    assert [buffer.data_ptr() for buffer in [*engine._slots.keys, *engine._slots.values]] == stores
    for row in rows:
        assert row.generated == _alone(model, row.prompt, row.budget, eos=-1)


@pytest.mark.parametrize("chunk", [4, 512])
def test_bucketed_steps_and_chunked_prefill_write_what_generate_writes(
    model_and_tokens: tuple[Any, list[list[int]], int], chunk: int
) -> None:
    # graphs=True on a CPU runs the captured path's shapes eagerly: batch and context rounded up
    # to their buckets, the extra slots parked. A prompt admitted while rows decode is prefilled
    # a chunk a step; the running rows get their token at every step meanwhile.
    model, prompts, _ = model_and_tokens
    eos = _eos_for(model, prompts)
    budgets = [3, 17, 9, 1, 12, 20, 5]
    expected = [_alone(model, prompt, budget, eos) for prompt, budget in zip(prompts, budgets, strict=True)]
    engine = DecodeEngine(model, eos_ids=[eos], pad_id=0, graphs=True, max_rows=4, prefill_chunk=chunk)
    assert engine.bucketed and not engine.graphs  # no CUDA here: nothing is captured
    rows = [Row(key=i, prompt=p, budget=b) for i, (p, b) in enumerate(zip(prompts, budgets, strict=True))]
    arrivals = {0: rows[:3], 2: rows[3:4], 4: rows[4:6], 9: rows[6:]}
    finished: list[Row] = []
    written: list[int] = []
    with torch.inference_mode():
        for step in range(100):
            if not engine.active and not any(key >= step for key in arrivals):
                break
            if step in arrivals:
                finished += engine.admit(arrivals[step])
            running = [row for row in engine.rows if row.generated and not row.finished]
            before = {row.key: len(row.generated) for row in running}
            finished += engine.step()
            written += [len(row.generated) - before[row.key] for row in running]
    assert engine.active == 0
    assert sorted(row.key for row in finished) == list(range(len(rows)))
    assert set(written) == {1}  # every decoding row got exactly one token per step
    for row in rows:
        assert row.generated == expected[row.key], f"row {row.key}"


def test_rows_prefilled_together_write_what_each_writes_alone(
    model_and_tokens: tuple[Any, list[list[int]], int],
) -> None:
    # Several rows in one prefill pass (as on a GPU): left-padded to the longest, each from its
    # own start (a reused prefix, a chunk already fed), each row's tokens as generate writes them.
    model, prompts, vocab = model_and_tokens
    rng = random.Random(4)
    system = [rng.randrange(3, vocab) for _ in range(30)]
    asks = [system + prompt for prompt in prompts[:3]] + prompts[3:]
    budgets = [5, 9, 3, 7, 4, 8, 6]
    expected = [_alone(model, ask, budget, eos=-1) for ask, budget in zip(asks, budgets, strict=True)]
    engine = DecodeEngine(model, eos_ids=[-1], pad_id=0, prefill_rows=3, prefill_chunk=24)
    rows = [Row(key=i, prompt=ask, budget=b) for i, (ask, b) in enumerate(zip(asks, budgets, strict=True))]
    widths: list[int] = []  # rows per prefill pass
    real_forward = engine._forward

    def forward(input_ids: Any, *args: Any, **kwargs: Any) -> Any:
        if input_ids.shape[1] > 1:  # a prefill pass (a step feeds one token a row)
            widths.append(int(input_ids.shape[0]))
        return real_forward(input_ids, *args, **kwargs)

    engine._forward = forward  # type: ignore[method-assign]
    with torch.inference_mode():
        engine.admit(rows[:1])
        engine.admit(rows[1:])  # the first decodes: 24 tokens a step, up to 3 rows a pass
        while engine.active:
            engine.step()
    assert max(widths) == 3
    assert engine.prefixes is not None and engine.prefixes.reused_tokens >= 2 * 30
    for row in rows:
        assert row.generated == expected[row.key], f"row {row.key}"


def test_a_failed_pass_of_several_rows_fails_only_the_row_at_fault(
    model_and_tokens: tuple[Any, list[list[int]], int], monkeypatch: pytest.MonkeyPatch
) -> None:
    model, prompts, _ = model_and_tokens
    engine = DecodeEngine(model, eos_ids=[-1], pad_id=0, prefix_tokens=0, prefill_rows=4)
    doomed_prompt = prompts[2]
    real_forward = engine._forward

    def forward(input_ids: Any, *args: Any, **kwargs: Any) -> Any:
        if any(row[-len(doomed_prompt) :] == doomed_prompt for row in input_ids.tolist()):
            raise RuntimeError("out of memory with this prompt in the pass")
        return real_forward(input_ids, *args, **kwargs)

    monkeypatch.setattr(engine, "_forward", forward)
    rows = [Row(key=index, prompt=prompts[index], budget=6) for index in range(4)]
    with torch.inference_mode():
        failed = engine.admit(rows)
        while engine.active:
            engine.step()
    assert failed == [rows[2]] and isinstance(rows[2].error, RuntimeError)
    for row in (rows[0], rows[1], rows[3]):
        assert row.error is None and row.generated == _alone(model, row.prompt, 6, eos=-1)


def test_a_long_prompt_is_prefilled_a_chunk_a_step_while_others_decode(
    model_and_tokens: tuple[Any, list[list[int]], int],
) -> None:
    model, prompts, _ = model_and_tokens
    long_prompt = [token for prompt in prompts for token in prompt]
    engine = DecodeEngine(model, eos_ids=[-1], pad_id=0, prefix_tokens=0, prefill_chunk=16)
    running = Row(key="running", prompt=prompts[0], budget=40)
    late = Row(key="late", prompt=long_prompt, budget=6)
    fed: list[int] = []
    real_forward = engine._forward

    def forward(input_ids: Any, *args: Any, **kwargs: Any) -> Any:
        fed.append(int(input_ids.shape[1]))
        return real_forward(input_ids, *args, **kwargs)

    with torch.inference_mode():
        engine.admit([running])
        engine.step()
        engine._forward = forward  # type: ignore[method-assign]
        engine.admit([late])
        steps = 0
        while not late.generated:
            engine.step()
            steps += 1
        while engine.active:
            engine.step()
    chunks = -(-len(long_prompt) // 16)
    assert steps == chunks - 1  # the first chunk at admission, one more at each step
    assert max(fed) == 16
    assert late.generated == _alone(model, long_prompt, 6, eos=-1)
    assert running.generated == _alone(model, prompts[0], 40, eos=-1)


def test_rows_fed_past_their_reserved_room_grow_the_cache(
    model_and_tokens: tuple[Any, list[list[int]], int],
) -> None:
    # The room is sized to the rows' budgets; a caller that raises a budget mid-answer still gets
    # the right tokens (the buffers grow by copying once).
    model, prompts, _ = model_and_tokens
    engine = DecodeEngine(model, eos_ids=[-1], pad_id=0)
    row = Row(key=0, prompt=prompts[4], budget=2)
    other = Row(key=1, prompt=prompts[5], budget=30)
    engine.admit([row])
    row.budget = 80
    engine.admit([other])
    other.budget = 90
    while engine.active:
        engine.step()
    assert row.generated == _alone(model, prompts[4], 80, eos=-1)
    assert other.generated == _alone(model, prompts[5], 90, eos=-1)


class _BreaksAt:
    """A guide that raises when shown its ``at``-th token (a bug in one request's guide)."""

    def __init__(self, at: int) -> None:
        self.at = at

    def constrain(self, generated: Sequence[int], scores: Any) -> Any:
        if len(generated) == self.at:
            raise AssertionError("the guide lost its state")
        return scores


def test_a_row_whose_guide_raises_ends_alone(model_and_tokens: tuple[Any, list[list[int]], int]) -> None:
    model, prompts, _ = model_and_tokens
    broken = Row(key="broken", prompt=prompts[1], budget=10, guide=_BreaksAt(3))
    at_once = Row(key="at once", prompt=prompts[4], budget=10, guide=_BreaksAt(0))  # on its first token
    others = [Row(key=index, prompt=prompts[index], budget=10) for index in (0, 2, 3)]
    engine = DecodeEngine(model, eos_ids=[-1], pad_id=0)
    finished: list[Row] = []
    with torch.inference_mode():
        finished += engine.admit([others[0], broken, at_once, others[1]])
        assert finished == [at_once] and engine.active == 3  # it never joined the batch
        for step in range(12):
            if step == 1:
                finished += engine.admit([others[2]])  # joins after the failure, at a later step
            finished += engine.step()
    assert engine.active == 0
    assert isinstance(broken.error, AssertionError) and broken.finished
    assert len(broken.generated) == 3  # the tokens written before its guide failed
    assert isinstance(at_once.error, AssertionError) and at_once.generated == []
    for row in others:
        assert row.error is None
        assert row.generated == _alone(model, row.prompt, 10, eos=-1), f"row {row.key}"
    assert sorted(str(row.key) for row in finished) == sorted(
        str(row.key) for row in [broken, at_once, *others]
    )


def test_a_prefill_that_fails_fails_its_row_only(
    model_and_tokens: tuple[Any, list[list[int]], int], monkeypatch: pytest.MonkeyPatch
) -> None:
    model, prompts, _ = model_and_tokens
    engine = DecodeEngine(model, eos_ids=[-1], pad_id=0, prefix_tokens=0)
    running = Row(key="running", prompt=prompts[0], budget=8)
    doomed = Row(key="doomed", prompt=prompts[5], budget=8)
    real_forward = engine._forward

    def forward(input_ids: Any, *args: Any, **kwargs: Any) -> Any:
        if input_ids.shape[1] == len(doomed.prompt):
            raise RuntimeError("out of memory on this prompt")
        return real_forward(input_ids, *args, **kwargs)

    monkeypatch.setattr(engine, "_forward", forward)
    with torch.inference_mode():
        assert engine.admit([running]) == []
        engine.step()
        assert engine.admit([doomed]) == [doomed]
        while engine.active:
            engine.step()
    assert isinstance(doomed.error, RuntimeError) and doomed.generated == []
    assert running.error is None and running.generated == _alone(model, prompts[0], 8, eos=-1)


def test_dropped_rows_leave_and_the_others_write_what_they_write_alone(
    model_and_tokens: tuple[Any, list[list[int]], int],
) -> None:
    model, prompts, _ = model_and_tokens
    rows = [Row(key=index, prompt=prompts[index], budget=9) for index in range(4)]
    engine = DecodeEngine(model, eos_ids=[-1], pad_id=0)
    with torch.inference_mode():
        engine.admit(rows)
        engine.step()
        assert engine.drop({1, 3, "not running"}) == [rows[1], rows[3]]
        assert engine.active == 2 and engine.drop({1}) == []  # gone already: nothing to do
        while engine.active:
            engine.step()
    assert [len(row.generated) for row in rows] == [9, 2, 9, 2]
    for row in (rows[0], rows[2]):
        assert row.generated == _alone(model, row.prompt, 9, eos=-1)


def test_rows_dropped_by_a_caller_outside_inference_mode_move_and_go_on(
    model_and_tokens: tuple[Any, list[list[int]], int],
) -> None:
    # The backend drops the rows of callers that went away from its generation thread, with no
    # inference_mode around it; the last row then moves into the gap (a write into the buffers).
    model, prompts, _ = model_and_tokens
    rows = [Row(key=index, prompt=prompts[index], budget=7) for index in range(3)]
    engine = DecodeEngine(model, eos_ids=[-1], pad_id=0)
    engine.admit(rows)
    engine.step()
    assert engine.drop({0}) == [rows[0]]
    while engine.active:
        engine.step()
    for row in rows[1:]:
        assert row.generated == _alone(model, row.prompt, 7, eos=-1)
