"""The transformers backend: a local model folder served with continuous batching.

The queue and the batcher are `subnet.miner.batcher`'s: while the model is busy, new requests
join the running batch between two decoding steps as soon as there is room, and each one leaves
at its own end (EOS or its ``max_tokens``), so a short answer never waits for a long one
(subnet.miner.continuous_batching; its prompt-prefix reuse is ``--model.prefix_cache_tokens``). Models whose
cache cannot be split by row (sliding-window or recurrent layers) fall back to ``generate`` on
left-padded batches. Prompts come from `subnet.miner.prompt`, the logits processors from
`subnet.miner.processors` and, under ``--model.guided``, `subnet.miner.guided`.

torch and transformers are imported when the backend starts, never at import time.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from subnet.metrics import Reading
from subnet.miner.adapters import OutputAdapter, forced_function, format_for_template
from subnet.miner.base import (
    BadModelRequest,
    GenerationRequest,
    GenerationResult,
    ModelError,
    ModelLoadError,
    ModelOptions,
    Usage,
)
from subnet.miner.batcher import MIN_SAMPLING_TEMPERATURE, BatchingBackend, failed_alone, sampling_temperature
from subnet.miner.continuous_batching import DecodeEngine, Row, supports_model
from subnet.miner.demo import ensure_demo_model
from subnet.miner.guided import (
    GUIDED_FORMATS,
    CallEvidence,
    Extraction,
    Guidance,
    GuidedCalls,
    GuidedMode,
    RowGuide,
    call_bias_for,
    guided_format_names,
    markup_formats,
    ungrounded_reason,
)
from subnet.miner.processors import ProcessorsOnOneRow, RequiredChoice, RowBudgets
from subnet.miner.prompt import Prompt, build_prompt

log = logging.getLogger(__name__)

_DTYPES = ("bfloat16", "float16", "float32")

__all__ = ["MIN_SAMPLING_TEMPERATURE", "Prompt", "TransformersBackend", "build_prompt"]


class TransformersBackend(BatchingBackend):
    """A transformers causal LM behind a dynamic batcher. See the module docstring."""

    def __init__(self, options: ModelOptions) -> None:
        super().__init__(options)
        self.model: Any = None
        self.tokenizer: Any = None
        self.adapter: OutputAdapter | None = None
        self.device = "cpu"
        self.dtype = "float32"
        self.model_dir = ""
        self.engine: DecodeEngine | None = None  # None: generate() on left-padded batches
        self._rows: dict[int, _RowContext] = {}  # generation thread only: rows in the engine
        self.guidance: Guidance | None = None  # xgrammar's context, under --model.guided

    def describe(self) -> str:
        adapter = self.adapter.name if self.adapter else self.options.format
        return f"{self.options.served_name} (transformers, {self.device} {self.dtype}, format {adapter})"

    def readings(self) -> list[Reading]:
        def reused() -> float | None:
            prefixes = self.engine.prefixes if self.engine is not None else None
            return None if prefixes is None else prefixes.reused_tokens

        def prefilled() -> float | None:
            prefixes = self.engine.prefixes if self.engine is not None else None
            return None if prefixes is None else prefixes.prefilled_tokens

        def steps() -> float | None:
            return None if self.engine is None else self.engine.steps

        def replayed() -> float | None:
            return None if self.engine is None else self.engine.replayed

        return [
            *super().readings(),
            Reading("subnet_miner_decode_steps", "Decoding steps of the running batch", steps, counter=True),
            # replayed / steps: how much of the decoding ran from captured CUDA graphs (--model.cuda_graphs)
            Reading(
                "subnet_miner_decode_steps_replayed",
                "Decoding steps replayed from a captured CUDA graph",
                replayed,
                counter=True,
            ),
            # reused / (reused + prefilled): how much of the prompts the prefix store saved
            Reading(
                "subnet_miner_prefix_reused_tokens",
                "Prompt tokens taken from the prefix store instead of prefilled",
                reused,
                counter=True,
            ),
            Reading(
                "subnet_miner_prefilled_tokens",
                "Prompt tokens prefilled after a look in the prefix store",
                prefilled,
                counter=True,
            ),
        ]

    # -- loading ------------------------------------------------------------------------------

    def _resolve_path(self) -> str:
        path = self.options.path
        if not path:
            raise ModelLoadError(
                "--model.path is required for the transformers backend (a model folder or 'demo')"
            )
        if path == "demo":
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
        self.adopt(model, tokenizer)

    def adopt(self, model: Any, tokenizer: Any) -> None:
        """Serve a loaded model and its tokenizer (on ``self.device``): the format, the guide and
        the decoding engine are set up for them. ``_load`` calls it; so does a benchmark that
        builds its model in memory."""
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
            mode = GuidedMode(self.options.guided)
            if mode.copies_values and self.adapter.name in markup_formats():
                raise ModelLoadError(
                    f"--model.guided {mode}: format {self.adapter.name} is guided in its own markup, "
                    f"where values are not copied from the request; use --model.guided on, or a format "
                    f"that copies them ({', '.join(GUIDED_FORMATS)})"
                )
            if self.adapter.name not in guided_format_names():
                log.warning(
                    "--model.guided %s: format %s is not guided (only %s); calls are unguided",
                    mode,
                    self.adapter.name,
                    ", ".join(guided_format_names()),
                )
        if supports_model(model):
            graphs = self.options.cuda_graphs == "on" or (
                self.options.cuda_graphs == "auto" and str(self.device).startswith("cuda")
            )
            self.engine = DecodeEngine(
                model,
                eos_ids=self._eos_ids(),
                pad_id=int(tokenizer.pad_token_id),
                prefix_tokens=self.options.prefix_cache_tokens,
                max_rows=self.options.max_batch,
                graphs=graphs,
                prefill_chunk=self.options.prefill_chunk,
            )
        else:
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
                outcomes[index] = failed_alone(error, "preparing the prompt")
                continue
            rows.append((index, prompt, token_ids, budget))
            guides.append(guide)
        if rows:
            generated, failures = self._generate_rows(
                [token_ids for _, _, token_ids, _ in rows],
                [budget for _, _, _, budget in rows],
                sampling_temperature(requests[rows[0][0]]),
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
                    outcomes[index] = failed_alone(error, "guiding or reading the answer")
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
                temperature = sampling_temperature(request)
                guide = self._guide(request, prompt)
                guided = guide is not None and guide.guided
                processors: list[Any] = []
                if guided and self.guidance is not None and guide is not None:
                    processors.append(
                        GuidedCalls(0, [guide], self.guidance, budgets=[budget], sample=temperature > 0)
                    )
                elif prompt.choices:
                    processors.append(RequiredChoice(0, [self._choice_tokens(prompt)]))
            except Exception as error:  # that request's own fault or bug: it fails alone
                outcomes.append((key, failed_alone(error, "preparing the prompt")))
                continue
            evidence = guide.evidence if guide is not None else None
            self._rows[key] = _RowContext(prompt, len(token_ids), budget, guided, evidence)
            rows.append(
                Row(
                    key=key,
                    prompt=token_ids,
                    budget=budget,
                    temperature=temperature,
                    guide=ProcessorsOnOneRow(processors) if processors else None,
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
                outcome = failed_alone(error, "generating or reading the answer")
            outcomes.append((row.key, outcome))
        return outcomes

    def _continuous(self) -> bool:
        return self.engine is not None

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
        processors: list[Any] = [RequiredChoice(width, choices)] if choices and any(choices) else []
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
                stopping_criteria=StoppingCriteriaList([RowBudgets(width, budgets)]),
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
