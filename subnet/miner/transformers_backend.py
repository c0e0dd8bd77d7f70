"""The transformers backend: a local model folder served with continuous batching.

Concurrent requests wait in one queue. A batcher task runs the model in a single generation
thread, so the event loop stays free while the model runs. When the model is idle it gathers
requests for up to ``batch_wait_ms`` (or until ``max_batch``); while it is busy, new requests
join the running batch between two decoding steps as soon as there is room, and each one leaves
at its own end (EOS or its ``max_tokens``), so a short answer never waits for a long one
(subnet.miner.engine; its prompt-prefix reuse is ``--model.prefix_cache_tokens``). Models whose
cache cannot be split by row (sliding-window or recurrent layers) fall back to ``generate`` on
left-padded batches. Every request owns its future, so answers cannot cross between callers; a
failed step fails only the requests in it and the batcher goes on.

torch and transformers are imported when the backend starts, never at import time.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from subnet.miner.adapters import (
    OutputAdapter,
    forced_function,
    format_for_template,
    history_forms,
    native_format,
    template_takes_tools,
)
from subnet.miner.base import (
    BadModelRequest,
    GenerationRequest,
    GenerationResult,
    ModelError,
    ModelLoadError,
    ModelOptions,
    Usage,
)
from subnet.miner.engine import DecodeEngine, Row, supports_model
from subnet.miner.guided import (
    GUIDED_FORMATS,
    CallEvidence,
    Extraction,
    Guidance,
    GuidedCalls,
    GuidedMode,
    RowGuide,
    call_bias_for,
    ungrounded_reason,
)

if TYPE_CHECKING:
    import torch

log = logging.getLogger(__name__)

_DTYPES = ("bfloat16", "float16", "float32")
# Smaller positive temperatures decode greedily: sampling at them is greedy in all but name.
MIN_SAMPLING_TEMPERATURE = 1e-5


@dataclass(frozen=True)
class Prompt:
    """A rendered prompt: the text the model continues, the forced start of its answer, whether
    the answer may hold calls (``tool_choice: none`` says it may not), and, when a call is
    required but the function is not named, the continuations it must start with (one per tool:
    the function's name and what follows it in the format)."""

    text: str
    prefix: str
    allow_calls: bool
    choices: tuple[str, ...] = ()
    native: bool = False  # the chat template rendered the tools itself
    tools: tuple[dict[str, Any], ...] = ()  # offered, to type the values some families write as text


def build_prompt(
    tokenizer: Any, adapter: OutputAdapter, requested_format: str, request: GenerationRequest
) -> Prompt:
    """Render a request with the model's chat template.

    The template's own tool rendering (``tools=``) is used when it has one and it speaks the
    chosen format; otherwise the adapter's system prompt describes the tools. Earlier calls and
    their results go in the first form of the history that the template accepts (`history_forms`).
    """
    template = getattr(tokenizer, "chat_template", None)
    template = template if isinstance(template, str) else None
    tools = [] if request.tool_choice == "none" else list(request.tools)
    native = template_takes_tools(template) and (
        requested_format == "auto" or native_format(template) == adapter.name
    )
    extra: dict[str, Any] = {"tools": tools} if native and tools else {}
    refusal: Exception | None = None
    for messages in history_forms(adapter, request.messages, tools, native=native):
        try:
            text = tokenizer.apply_chat_template(
                messages, tokenize=False, add_generation_prompt=True, **extra
            )
            break
        except Exception as error:  # the template refuses this form: try the next one
            refusal = refusal or error
    else:
        assert refusal is not None
        raise refusal
    must_call, function_name = forced_function(request.tool_choice, tools)
    prefix = adapter.forced_prefix(function_name) if must_call and tools else ""
    choices: tuple[str, ...] = ()
    if must_call and tools and function_name is None:
        names = [str(tool.get("function", tool).get("name", "")) for tool in tools]
        choices = tuple(adapter.forced_prefix(name)[len(prefix) :] for name in names if name)
    return Prompt(
        text=str(text) + prefix,
        prefix=prefix,
        allow_calls=bool(tools),
        choices=choices,
        native=native,
        tools=tuple(tools),
    )


@dataclass
class _Pending:
    request: GenerationRequest
    future: asyncio.Future[GenerationResult]
    temperature: float
    arrived: float = field(default_factory=time.monotonic)


def _answer(pending: _Pending, outcome: GenerationResult | ModelError) -> None:
    """Hands a caller its result or its error, unless it went away meanwhile."""
    if pending.future.done():
        return
    if isinstance(outcome, ModelError):
        pending.future.set_exception(outcome)
    else:
        pending.future.set_result(outcome)


def _failed_alone(error: Exception, what: str) -> ModelError:
    """The error one caller gets when its own request failed (the rest of the batch went on);
    the traceback goes to the log, once."""
    if isinstance(error, ModelError):
        return error
    log.error("%s failed for one request; the rest of its batch went on", what, exc_info=error)
    return ModelError(f"generation failed: {type(error).__name__}: {error}")


def _sampling_temperature(request: GenerationRequest) -> float:
    # Greedy unless the caller asks for a temperature of at least MIN_SAMPLING_TEMPERATURE:
    # below it sampling is greedy in all but name, and logits divided by a vanishing one
    # (1e-300) overflow to a NaN softmax that the sampler refuses.
    temperature = request.temperature
    return float(temperature) if temperature and temperature >= MIN_SAMPLING_TEMPERATURE else 0.0


class TransformersBackend:
    """A transformers causal LM behind a dynamic batcher. See the module docstring."""

    def __init__(self, options: ModelOptions, *, continuous: bool = True) -> None:
        """``continuous`` False keeps generate() on left-padded batches even where rows could
        join a running batch (tests, comparisons)."""
        self.options = options
        self._continuous = continuous
        self.model: Any = None
        self.tokenizer: Any = None
        self.adapter: OutputAdapter | None = None
        self.device = "cpu"
        self.dtype = "float32"
        self.model_dir = ""
        self._executor: ThreadPoolExecutor | None = None
        self._pending: deque[_Pending] = deque()
        self._arrival: asyncio.Event | None = None
        self._batcher: asyncio.Task[None] | None = None
        self._running: list[_Pending] = []  # the requests in the generation thread now
        self._closing = False
        # for tests and the benchmark: how many groups of requests started together (a generate
        # call, or an admission into the running batch)
        self.batches_run = 0
        self.engine: DecodeEngine | None = None  # None: generate() on left-padded batches
        self._rows: dict[int, _RowContext] = {}  # generation thread only: rows in the engine
        self._next_key = 0
        self.guidance: Guidance | None = None  # xgrammar's context, under --model.guided

    # -- life cycle ---------------------------------------------------------------------------

    async def start(self) -> None:
        """Load the model (in the generation thread) and start the batcher."""
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="miner-generate")
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(self._executor, self._load)
        self._arrival = asyncio.Event()
        self._batcher = asyncio.create_task(self._batch_loop(), name="miner-batcher")

    async def close(self) -> None:
        """Stop taking requests, fail the waiting ones, let the running batch finish, free the thread."""
        self._closing = True
        while self._pending:
            pending = self._pending.popleft()
            if not pending.future.done():
                pending.future.set_exception(ModelError("the miner is shutting down"))
        if self._batcher is not None and self._arrival is not None:
            # The batcher delivers the batch it is generating, then sees _closing and returns.
            self._arrival.set()
            try:
                await self._batcher
            except asyncio.CancelledError:
                # close() itself was cancelled: stop the batcher and tell the running batch.
                self._batcher.cancel()
                self._fail_running()
                raise
            finally:
                self._batcher = None
        if self._executor is not None:
            await asyncio.get_running_loop().run_in_executor(None, self._executor.shutdown, True)
            self._executor = None
        self._fail_running()

    def _fail_running(self) -> None:
        for pending in self._running:
            if not pending.future.done():
                pending.future.set_exception(ModelError("the miner is shutting down"))
        self._running = []

    def describe(self) -> str:
        adapter = self.adapter.name if self.adapter else self.options.format
        return f"{self.options.served_name} (transformers, {self.device} {self.dtype}, format {adapter})"

    # -- loading ------------------------------------------------------------------------------

    def _resolve_path(self) -> str:
        path = self.options.path
        if not path:
            raise ModelLoadError(
                "--model.path is required for the transformers backend (a model folder or 'demo')"
            )
        if path == "demo":
            from subnet.miner.demo import ensure_demo_model

            return str(ensure_demo_model(self.options.cache_dir))
        folder = Path(path).expanduser()
        if folder.is_dir():
            if not (folder / "config.json").is_file():
                raise ModelLoadError(f"model folder {folder} has no config.json; is it a transformers model?")
            return str(folder)
        if folder.exists() or path.startswith((".", "/", "~")) or path.count("/") != 1:
            raise ModelLoadError(f"model path {path} is not a model folder")
        return path  # a hub id: loads only where a hub is reachable (or cached)

    def _load(self) -> None:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        self.model_dir = self._resolve_path()
        self.device = self._pick_device(torch)
        self.dtype = self._pick_dtype(self.device)
        trust = self.options.trust_remote_code
        try:
            tokenizer = AutoTokenizer.from_pretrained(self.model_dir, trust_remote_code=trust)
            model: Any = AutoModelForCausalLM.from_pretrained(
                self.model_dir, dtype=getattr(torch, self.dtype), trust_remote_code=trust
            )
        except (OSError, ValueError) as error:
            first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise ModelLoadError(f"cannot load model {self.options.path}: {first_line}") from error
        model.to(self.device)
        model.eval()
        tokenizer.padding_side = "left"
        if tokenizer.pad_token_id is None:
            tokenizer.pad_token = tokenizer.eos_token
        if not isinstance(getattr(tokenizer, "chat_template", None), str):
            raise ModelLoadError(
                f"model {self.options.path} has no chat template; the miner needs a chat model"
            )
        self.adapter = format_for_template(self.options.format, tokenizer.chat_template)
        self.tokenizer = tokenizer
        self.model = model
        if GuidedMode(self.options.guided).guides:
            try:
                self.guidance = Guidance.of_tokenizer(
                    tokenizer, self._eos_ids(), getattr(model.config, "vocab_size", None)
                )
            except ImportError as error:
                raise ModelLoadError(
                    f"--model.guided {self.options.guided} needs xgrammar: pip install --no-deps "
                    "xgrammar==0.2.8 apache-tvm-ffi (scripts/setup.sh does it)"
                ) from error
            if self.adapter.name not in GUIDED_FORMATS:
                log.warning(
                    "--model.guided on: format %s is not guided (only %s); calls are unguided",
                    self.adapter.name,
                    ", ".join(GUIDED_FORMATS),
                )
        if self._continuous and supports_model(model):
            self.engine = DecodeEngine(
                model,
                eos_ids=self._eos_ids(),
                pad_id=int(tokenizer.pad_token_id),
                prefix_tokens=self.options.prefix_cache_tokens,
            )
        elif self._continuous:
            log.info("%s: rows cannot join a running batch; batches run with generate()", self.model_dir)

    def _pick_device(self, torch_module: Any) -> str:
        device = self.options.device
        if device == "auto":
            return "cuda" if torch_module.cuda.is_available() else "cpu"
        if device.startswith("cuda") and not torch_module.cuda.is_available():
            raise ModelLoadError(f"--model.device {device} asked for, but torch sees no CUDA device")
        return device

    def _pick_dtype(self, device: str) -> str:
        dtype = self.options.dtype
        if dtype == "auto":
            return "bfloat16" if device.startswith("cuda") else "float32"
        if dtype not in _DTYPES:
            raise ModelLoadError(f"--model.dtype {dtype} is not one of auto, {', '.join(_DTYPES)}")
        return dtype

    # -- requests -----------------------------------------------------------------------------

    async def generate(self, request: GenerationRequest) -> GenerationResult:
        """Queue one request for the next batch and wait for its own answer."""
        if self._closing or self._arrival is None:
            raise ModelError("the model is not serving (starting up or shutting down)")
        future: asyncio.Future[GenerationResult] = asyncio.get_running_loop().create_future()
        self._pending.append(_Pending(request, future, _sampling_temperature(request)))
        self._arrival.set()
        return await future

    async def _batch_loop(self) -> None:
        if self.engine is not None:
            await self._continuous_loop()
            return
        assert self._arrival is not None and self._executor is not None
        loop = asyncio.get_running_loop()
        while not self._closing:
            if not self._pending:
                self._arrival.clear()
                await self._arrival.wait()
                continue
            await self._gather()
            batch = self._take_batch()
            if not batch:
                continue
            self._running = batch
            try:
                outcomes = await loop.run_in_executor(
                    self._executor, self._run_batch, [pending.request for pending in batch]
                )
            except Exception as error:  # one bad batch must not stop the miner
                log.exception("generation of a batch of %d failed", len(batch))
                outcomes = [ModelError(f"generation failed: {type(error).__name__}: {error}")] * len(batch)
            self.batches_run += 1
            self._running = []
            for pending, outcome in zip(batch, outcomes, strict=True):
                _answer(pending, outcome)

    async def _continuous_loop(self) -> None:
        """Admit what fits, decode one step, answer the rows that ended; until closed and empty.
        On close the rows already running are finished and answered."""
        assert self._arrival is not None and self._executor is not None
        loop = asyncio.get_running_loop()
        active: dict[int, _Pending] = {}
        while active or not self._closing:
            if not active:
                if not self._pending:
                    self._arrival.clear()
                    await self._arrival.wait()
                    continue
                await self._gather()
            # Callers that went away (timed out, disconnected): their rows leave at this turn
            # instead of decoding to their budget, and their places go to waiting requests.
            gone = [key for key, pending in active.items() if pending.future.done()]
            for key in gone:
                del active[key]
            admitted: list[tuple[int, _Pending]] = []
            if not self._closing:
                for pending in self._take_room(self.options.max_batch - len(active)):
                    admitted.append((self._next_key, pending))
                    self._next_key += 1
            if admitted:
                self.batches_run += 1
            active.update(admitted)
            self._running = list(active.values())
            try:
                outcomes = await loop.run_in_executor(
                    self._executor,
                    self._engine_turn,
                    [(key, pending.request) for key, pending in admitted],
                    gone,
                )
            except Exception as error:  # one failed step must not stop the miner
                log.exception("a decoding step of %d requests failed", len(active))
                failure = ModelError(f"generation failed: {type(error).__name__}: {error}")
                outcomes = [(key, failure) for key in active]
                await loop.run_in_executor(self._executor, self._forget_rows)
            for key, outcome in outcomes:
                _answer(active.pop(key), outcome)
            self._running = list(active.values())
            if outcomes:
                # Let the callers just answered run: one that sends its next request at once
                # has it admitted at the next step, not one step later.
                await asyncio.sleep(0)

    def _take_room(self, room: int) -> list[_Pending]:
        """Up to ``room`` live requests, oldest first (rows decode with their own temperature)."""
        taken: list[_Pending] = []
        while self._pending and len(taken) < room:
            pending = self._pending.popleft()
            if not pending.future.done():
                taken.append(pending)
        return taken

    async def _gather(self) -> None:
        """Wait until the oldest request has waited batch_wait_ms, or a full batch is there."""
        assert self._arrival is not None
        deadline = self._pending[0].arrived + self.options.batch_wait_ms / 1000
        while len(self._pending) < self.options.max_batch:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            self._arrival.clear()
            try:
                await asyncio.wait_for(self._arrival.wait(), remaining)
            except TimeoutError:
                return

    def _take_batch(self) -> list[_Pending]:
        """Up to max_batch live requests that decode alike (same temperature), oldest first."""
        while self._pending and self._pending[0].future.done():
            self._pending.popleft()
        if not self._pending:
            return []
        temperature = self._pending[0].temperature
        batch: list[_Pending] = []
        kept: deque[_Pending] = deque()
        while self._pending:
            pending = self._pending.popleft()
            if pending.future.done():
                continue
            if len(batch) < self.options.max_batch and pending.temperature == temperature:
                batch.append(pending)
            else:
                kept.append(pending)
        self._pending = kept
        return batch

    # -- the generation thread ----------------------------------------------------------------

    def _run_batch(self, requests: list[GenerationRequest]) -> list[GenerationResult | ModelError]:
        """Render, generate together, split: one outcome per request, in order."""
        outcomes: list[GenerationResult | ModelError | None] = [None] * len(requests)
        rows: list[tuple[int, Prompt, list[int], int]] = []
        guides: list[RowGuide | None] = []
        for index, request in enumerate(requests):
            try:
                prompt, token_ids, budget = self._prepare(request)
                guide = self._guide(request, prompt)
            except Exception as error:  # that request's own fault or bug: it fails alone
                outcomes[index] = _failed_alone(error, "preparing the prompt")
                continue
            rows.append((index, prompt, token_ids, budget))
            guides.append(guide)
        if rows:
            generated, failures = self._generate_rows(
                [token_ids for _, _, token_ids, _ in rows],
                [budget for _, _, _, budget in rows],
                _sampling_temperature(requests[rows[0][0]]),
                [
                    [] if guide is not None and guide.guided else self._choice_tokens(prompt)
                    for (_, prompt, _, _), guide in zip(rows, guides, strict=True)
                ],
                guides if any(guide is not None and guide.guided for guide in guides) else None,
            )
            for position, ((index, prompt, token_ids, budget), new_tokens, guide) in enumerate(
                zip(rows, generated, guides, strict=True)
            ):
                guided = guide is not None and guide.guided
                evidence = guide.evidence if guide is not None else None
                try:
                    if position in failures:
                        raise failures[position]
                    outcomes[index] = self._finish(
                        prompt, len(token_ids), new_tokens, budget, guided=guided, evidence=evidence
                    )
                except Exception as error:
                    outcomes[index] = _failed_alone(error, "guiding or reading the answer")
        return [outcome if outcome is not None else ModelError("no outcome") for outcome in outcomes]

    def _engine_turn(
        self, admitted: list[tuple[int, GenerationRequest]], gone: Sequence[int] = ()
    ) -> list[tuple[int, GenerationResult | ModelError]]:
        """Drop the rows whose callers are gone, prefill the admitted requests into the running
        batch, decode one step; the outcomes of the requests that ended (or could not start)."""
        assert self.engine is not None
        if gone:
            self.engine.drop(set(gone))
            for key in gone:
                self._rows.pop(key, None)
        outcomes: list[tuple[int, GenerationResult | ModelError]] = []
        rows: list[Row] = []
        for key, request in admitted:
            try:
                prompt, token_ids, budget = self._prepare(request)
                temperature = _sampling_temperature(request)
                guide = self._guide(request, prompt)
                guided = guide is not None and guide.guided
                processors: list[Any] = []
                if guided and self.guidance is not None and guide is not None:
                    processors.append(
                        GuidedCalls(0, [guide], self.guidance, budgets=[budget], sample=temperature > 0)
                    )
                elif prompt.choices:
                    processors.append(_RequiredChoice(0, [self._choice_tokens(prompt)]))
            except Exception as error:  # that request's own fault or bug: it fails alone
                outcomes.append((key, _failed_alone(error, "preparing the prompt")))
                continue
            evidence = guide.evidence if guide is not None else None
            self._rows[key] = _RowContext(prompt, len(token_ids), budget, guided, evidence)
            rows.append(
                Row(
                    key=key,
                    prompt=token_ids,
                    budget=budget,
                    temperature=temperature,
                    guide=_ProcessorsOnOneRow(processors) if processors else None,
                )
            )
        finished = self.engine.admit(rows) if rows else []
        finished += self.engine.step()
        for row in finished:
            context = self._rows.pop(row.key)
            try:
                if row.error is not None:
                    raise row.error
                outcome: GenerationResult | ModelError = self._finish(
                    context.prompt,
                    context.prompt_tokens,
                    row.generated,
                    context.budget,
                    guided=context.guided,
                    evidence=context.evidence,
                )
            except Exception as error:
                outcome = _failed_alone(error, "generating or reading the answer")
            outcomes.append((row.key, outcome))
        return outcomes

    def _forget_rows(self) -> None:
        """After a failed step: drop the running batch (its callers were told)."""
        if self.engine is not None:
            self.engine.reset()
        self._rows.clear()

    def _prepare(self, request: GenerationRequest) -> tuple[Prompt, list[int], int]:
        assert self.adapter is not None
        try:
            prompt = build_prompt(self.tokenizer, self.adapter, self.options.format, request)
        except Exception as error:  # the template refused these messages: that request's fault only
            raise BadModelRequest(f"the chat template cannot render these messages: {error}") from error
        token_ids = list(self.tokenizer(prompt.text, add_special_tokens=False)["input_ids"])
        budget = min(request.max_tokens or self.options.max_new_tokens, self.options.max_new_tokens)
        limit = getattr(self.model.config, "max_position_embeddings", None)
        if isinstance(limit, int) and len(token_ids) + budget > limit:
            raise BadModelRequest(
                f"prompt of {len(token_ids)} tokens plus {budget} new tokens exceeds the model's {limit}"
            )
        return prompt, token_ids, budget

    def _guide(self, request: GenerationRequest, prompt: Prompt) -> RowGuide | None:
        """The row's call guide under --model.guided on (None: off, or nothing to guide)."""
        if self.guidance is None or not prompt.allow_calls:
            return None
        assert self.adapter is not None
        must_call, function_name = forced_function(request.tool_choice, list(request.tools))
        # forced: every answer a call, its values copied from the request; grounded: the same,
        # and the call kept only when the request grounds it (_finish); see subnet.miner.guided
        mode = GuidedMode(self.options.guided)
        forced = mode.copies_values
        grounded = mode is GuidedMode.GROUNDED
        return self.guidance.row_guide(
            self.adapter.name,
            request.tools,
            must_call=must_call or forced,
            source=Extraction.of_messages(request.messages) if forced else None,
            evidence=CallEvidence() if grounded and not must_call else None,
            function_name=function_name,
            prefix=prompt.prefix,
            prefix_tokens=len(self.tokenizer(prompt.prefix, add_special_tokens=False)["input_ids"]),
            call_bias=call_bias_for(self.adapter.name, native=prompt.native),
        )

    def _choice_tokens(self, prompt: Prompt) -> list[list[int]]:
        return [
            list(self.tokenizer(choice, add_special_tokens=False)["input_ids"]) for choice in prompt.choices
        ]

    def _generate_rows(
        self,
        prompts: list[list[int]],
        budgets: list[int],
        temperature: float,
        choices: list[list[list[int]]] | None = None,
        guides: list[RowGuide | None] | None = None,
    ) -> tuple[list[list[int]], dict[int, Exception]]:
        """Each row's new tokens, and the rows whose guide failed (they ended at EOS there)."""
        import torch
        from transformers import GenerationConfig, LogitsProcessorList, StoppingCriteriaList

        pad_id = int(self.tokenizer.pad_token_id)
        width = max(len(ids) for ids in prompts)
        input_ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
        attention = torch.zeros((len(prompts), width), dtype=torch.long)
        for row, ids in enumerate(prompts):
            input_ids[row, width - len(ids) :] = torch.tensor(ids, dtype=torch.long)
            attention[row, width - len(ids) :] = 1
        config = GenerationConfig(
            max_new_tokens=max(budgets),
            do_sample=temperature > 0,
            temperature=temperature if temperature > 0 else None,
            top_p=None,
            top_k=None,
            pad_token_id=pad_id,
            eos_token_id=self._eos_ids(),
        )
        processors: list[Any] = [_RequiredChoice(width, choices)] if choices and any(choices) else []
        failures: dict[int, Exception] = {}
        if guides is not None and self.guidance is not None:
            guide = GuidedCalls(
                width,
                [guide or RowGuide() for guide in guides],
                self.guidance,
                budgets=budgets,
                sample=temperature > 0,
            )
            processors.append(guide)
            failures = guide.failures  # filled while generate runs
        with torch.inference_mode():
            output = self.model.generate(
                input_ids=input_ids.to(self.device),
                attention_mask=attention.to(self.device),
                generation_config=config,
                stopping_criteria=StoppingCriteriaList([_RowBudgets(width, budgets)]),
                logits_processor=LogitsProcessorList(processors),
            )
        new_tokens = output[:, width:].tolist()
        return [row[:budget] for row, budget in zip(new_tokens, budgets, strict=True)], failures

    def _eos_ids(self) -> list[int]:
        ids = self.model.generation_config.eos_token_id
        ids = ids if isinstance(ids, list) else [ids]
        ids = [int(i) for i in ids if i is not None]
        if self.tokenizer.eos_token_id is not None and self.tokenizer.eos_token_id not in ids:
            ids.append(int(self.tokenizer.eos_token_id))
        return ids

    def _finish(
        self,
        prompt: Prompt,
        prompt_tokens: int,
        new_tokens: list[int],
        budget: int,
        *,
        guided: bool = False,
        evidence: CallEvidence | None = None,
    ) -> GenerationResult:
        assert self.adapter is not None
        eos = set(self._eos_ids())
        stop = next((position for position, token in enumerate(new_tokens) if token in eos), None)
        kept = new_tokens if stop is None else new_tokens[:stop]
        skip_special = not self.adapter.keeps_special_tokens
        text = prompt.prefix + self.tokenizer.decode(kept, skip_special_tokens=skip_special)
        answer = self.adapter.read(text, allow_calls=prompt.allow_calls, tools=list(prompt.tools))
        if guided and answer.tool_calls:
            # A small model under the guide tends to repeat its call word for word where the
            # format allows several; the repeats are never meant, keep each call once.
            answer = replace(answer, tool_calls=_distinct_calls(answer.tool_calls))
        if evidence is not None and answer.tool_calls:
            reason = ungrounded_reason(evidence, answer.tool_calls)
            answer = answer if reason is None else replace(answer, tool_calls=None, content=reason)
        if answer.tool_calls:
            finish = "tool_calls"
        elif stop is None and len(new_tokens) >= budget:
            finish = "length"
        else:
            finish = "stop"
        return GenerationResult(
            tool_calls=answer.tool_calls,
            content=answer.content,
            usage=Usage(prompt_tokens=prompt_tokens, completion_tokens=len(kept) + (stop is not None)),
            finish_reason=finish,
            raw_text=text,
        )


def _distinct_calls(tool_calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    seen: set[tuple[str, str]] = set()
    distinct = []
    for call in tool_calls:
        function = call.get("function", {})
        key = (str(function.get("name")), str(function.get("arguments")))
        if key not in seen:
            seen.add(key)
            distinct.append(call)
    return distinct


@dataclass(frozen=True)
class _RowContext:
    """What the answer of an engine row needs besides its tokens."""

    prompt: Prompt
    prompt_tokens: int
    budget: int
    guided: bool
    evidence: CallEvidence | None = None


class _ProcessorsOnOneRow:
    """The engine's per-row TokenConstraint made of ``generate``-style logits processors, each built for a
    batch of this one row with a prompt width of 0 (it is shown the row's written tokens only)."""

    def __init__(self, processors: list[Any]) -> None:
        self.processors = processors

    def constrain(self, generated: Any, scores: torch.Tensor) -> torch.Tensor:
        import torch

        written = torch.tensor([list(generated)], dtype=torch.long)
        batch = scores.unsqueeze(0)
        for processor in self.processors:
            batch = processor(written, batch)
            failures = getattr(processor, "failures", None)  # GuidedCalls keeps a row's failure
            if failures:
                raise next(iter(failures.values()))  # the engine ends this row alone with it
        return batch[0]


class _RowBudgets:
    """Stops each row of a batch at its own token budget (rows stop independently in generate)."""

    def __init__(self, prompt_width: int, budgets: list[int]) -> None:
        self.prompt_width = prompt_width
        self.budgets = budgets
        self._limits: torch.Tensor | None = None

    def __call__(self, input_ids: torch.Tensor, scores: Any, **kwargs: Any) -> torch.Tensor:
        import torch

        if self._limits is None:
            self._limits = torch.tensor(self.budgets, device=input_ids.device)
        return (input_ids.shape[1] - self.prompt_width) >= self._limits


class _RequiredChoice:
    """Makes each row with choices begin its answer with one of them, token by token: a call
    is required, and the model picks which function (the likeliest allowed token at each step)."""

    def __init__(self, prompt_width: int, choices: list[list[list[int]]]) -> None:
        self.prompt_width = prompt_width
        self.choices = choices

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        step = input_ids.shape[1] - self.prompt_width
        for row, options in enumerate(self.choices):
            if not options:
                continue
            written = input_ids[row, self.prompt_width :].tolist() if step else []
            if written in options:  # one choice is written out: the rest is the model's
                continue
            allowed = {option[step] for option in options if len(option) > step and option[:step] == written}
            if allowed:
                keep = list(allowed)
                kept_scores = scores[row, keep].clone()
                scores[row, :] = float("-inf")
                scores[row, keep] = kept_scores
        return scores
