"""Continuous batching for a transformers causal LM: sequences join and leave between steps.

``model.generate`` runs a batch until its longest row is done, so a short answer waits for the
longest one and the requests that arrived meanwhile wait for all of them. Here every sequence
leaves the batch at its own end (EOS or its token budget), and new ones are prefilled and join the
running batch at the next step, so the batch stays full while requests keep coming.

The running batch is one key/value cache, left-padded: each row's real tokens are right-aligned,
the attention mask hides the padding, and positions count each row's real tokens only. Joining
pads the shorter cache on the left and concatenates along the batch; leaving selects the rows
that remain and trims columns that have become padding in every row. This needs a cache of plain
per-layer key/value tensors (transformers' ``DynamicCache`` of ``DynamicLayer``s, which is what
full-attention decoders such as Llama, Qwen2, Mistral and Phi use); ``supports_model`` says whether
a model qualifies, and the backend keeps ``generate`` for the rest.

The running batch's layers keep their keys and values in buffers with room on the right for the
tokens the rows may still write, and a step writes its column in place. ``DynamicLayer`` appends
with ``torch.cat``, which copies the whole cache at every step: a third of an 8-row step of a
135M model on a CPU at 300 cached tokens, and more as the context grows. Buffers are rebuilt only
when rows join or leave (which copy the cache anyway).

A prompt that begins like one seen recently (the same system prompt and tools, which is what an
agent's requests and the format's instructions look like) reuses that beginning's keys and values
from a small store bounded in tokens, and only the rest of the prompt is prefilled. On a CPU,
prefill is most of a short tool call's cost.

A row fails alone where its failure is its own: a prefill that raises (its forward pass has
not touched the running batch yet) or a guide that raises while choosing the row's next token
ends that row, with the exception in ``Row.error``, and the other rows go on. A decoding step's
forward pass is every row's at once, so a failure there raises to the caller, who resets.

All methods run on the one generation thread; nothing here is thread-safe or asynchronous.
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    import torch


class TokenConstraint(Protocol):
    """Restricts what one sequence may write next (a forced function name, a schema)."""

    def constrain(self, generated: Sequence[int], scores: torch.Tensor) -> torch.Tensor:
        """The next-token scores (1-D over the vocabulary) with disallowed tokens at -inf."""
        ...


@dataclass(eq=False)
class Row:
    """One sequence in flight: its prompt, its budget, what it has written so far."""

    key: Any  # the caller's handle, returned untouched
    prompt: list[int]
    budget: int
    temperature: float = 0.0
    guide: TokenConstraint | None = None
    generated: list[int] = field(default_factory=list)
    finished: bool = False
    error: Exception | None = None  # why the row ended early, when it failed alone


class PrefixStore:
    """Keys and values of recent prompts, one entry per prompt, least recently used out first,
    at most ``max_tokens`` tokens in all. ``longest`` finds the entry sharing the longest
    beginning with a new prompt."""

    def __init__(self, max_tokens: int) -> None:
        self.max_tokens = max_tokens
        self._entries: dict[tuple[int, ...], list[tuple[torch.Tensor, torch.Tensor]]] = {}
        self._tokens = 0
        self.reused_tokens = 0  # prompt tokens served from the store instead of prefilled
        self.prefilled_tokens = 0

    def longest(self, prompt: Sequence[int]) -> tuple[int, list[tuple[torch.Tensor, torch.Tensor]] | None]:
        best, layers = 0, None
        key: tuple[int, ...] = ()
        for tokens, entry in self._entries.items():
            shared = _shared_prefix(tokens, prompt)
            if shared > best:
                best, layers, key = shared, entry, tokens
        if layers is not None:
            self._entries[key] = self._entries.pop(key)  # most recently used last
        return best, layers

    def clear(self) -> None:
        """Forget every stored prompt (the counters stay)."""
        self._entries.clear()
        self._tokens = 0

    def put(self, prompt: Sequence[int], layers: list[tuple[torch.Tensor, torch.Tensor]]) -> None:
        key = tuple(prompt)
        if len(key) > self.max_tokens or key in self._entries:
            return
        self._entries[key] = layers
        self._tokens += len(key)
        while self._tokens > self.max_tokens:
            oldest = next(iter(self._entries))
            del self._entries[oldest]
            self._tokens -= len(oldest)


def _shared_prefix(first: Sequence[int], second: Sequence[int]) -> int:
    shared = 0
    for left, right in zip(first, second, strict=False):
        if left != right:
            break
        shared += 1
    return shared


class DecodeEngine:
    """The running batch of one model. ``admit`` prefills new rows into it, ``step`` decodes one
    token for every row and returns the rows that finished (they have left the batch)."""

    # Reusing fewer tokens than this saves less than the copying costs.
    MIN_REUSE = 16

    def __init__(
        self,
        model: Any,
        *,
        eos_ids: Sequence[int],
        pad_id: int,
        seed: int = 0,
        prefix_tokens: int = 4096,
    ) -> None:
        import torch

        self.model = model
        self.device = next(model.parameters()).device
        self.eos_ids = frozenset(int(token) for token in eos_ids)
        self.pad_id = int(pad_id)
        self.rows: list[Row] = []
        self.prefixes = PrefixStore(prefix_tokens) if prefix_tokens > 0 else None
        self._cache: Any = None
        # [rows, cached columns]: 1 where a column holds one of the row's real tokens (right-aligned).
        self._mask: torch.Tensor | None = None
        self._positions: torch.Tensor | None = None  # real tokens per row fed so far: the next position
        self._generator = torch.Generator(device="cpu").manual_seed(seed)

    @property
    def active(self) -> int:
        return len(self.rows)

    # -- joining ------------------------------------------------------------------------------

    def admit(self, rows: Sequence[Row]) -> list[Row]:
        """Prefill ``rows``, pick each one's first token and join them to the batch. Returns the
        rows already finished by that first token (EOS, or a budget of one) or failed alone.

        Each row is prefilled on its own: prefill is compute-bound, so padding prompts of
        different lengths to one width only adds work, and a row prefilled after another can
        reuse the beginning they share."""
        import torch

        finished: list[Row] = []
        with torch.inference_mode():  # no autograd graph: it would hold every step's activations
            for row in rows:
                if not row.finished:
                    finished += self._prefill(row)
        return finished

    def _prefill(self, row: Row) -> list[Row]:
        import torch

        shared, layers = self._reusable(row.prompt)
        rest = torch.tensor([row.prompt[shared:]], dtype=torch.long)
        mask = torch.ones((1, len(row.prompt)), dtype=torch.long)
        positions = torch.arange(shared, len(row.prompt)).unsqueeze(0)
        try:
            cache = self._past_cache(layers, shared) if layers is not None else None
            logits, cache = self._forward(rest, mask, positions, cache=cache)
        except Exception as error:  # this row's own pass (e.g. out of memory on its prompt)
            row.error, row.finished = error, True
            return [row]
        self._remember(row, cache)
        self._join([row], cache, mask, torch.tensor([len(row.prompt)], dtype=torch.long))
        return self._advance([row], logits)

    def _reusable(self, prompt: list[int]) -> tuple[int, list[tuple[torch.Tensor, torch.Tensor]] | None]:
        """How many of the prompt's first tokens come from the store (at least one is prefilled,
        for the logits of the last), and their keys and values."""
        if self.prefixes is None:
            return 0, None
        shared, layers = self.prefixes.longest(prompt)
        shared = min(shared, len(prompt) - 1)
        if shared < self.MIN_REUSE or layers is None:
            shared, layers = 0, None
        self.prefixes.reused_tokens += shared
        self.prefixes.prefilled_tokens += len(prompt) - shared
        return shared, layers

    def _past_cache(self, layers: list[tuple[torch.Tensor, torch.Tensor]], shared: int) -> Any:
        """A one-row cache holding the first ``shared`` stored columns."""
        from transformers import DynamicCache

        cache = DynamicCache(config=self.model.config)
        for layer_index, (keys, values) in enumerate(layers):
            cache.update(keys[:, :, :shared, :], values[:, :, :shared, :], layer_index)
        return cache

    def _remember(self, row: Row, cache: Any) -> None:
        """Store the new prompt's keys and values for later prompts (copies: the running batch's
        tensors change shape as rows come and go)."""
        if self.prefixes is None:
            return
        self.prefixes.put(row.prompt, [(layer.keys.clone(), layer.values.clone()) for layer in cache.layers])

    def _join(self, rows: list[Row], cache: Any, mask: torch.Tensor, positions: torch.Tensor) -> None:
        """Add prefilled rows (their one-row caches, masks and positions) to the running batch."""
        import torch

        if self._cache is None or self._mask is None or self._positions is None:
            parts = [(cache, 0)]
            self._mask, self._positions, self.rows = mask, positions, list(rows)
        else:
            width = max(self._mask.shape[1], mask.shape[1])
            old_pad, new_pad = width - self._mask.shape[1], width - mask.shape[1]
            parts = [(self._cache, old_pad), (cache, new_pad)]
            self._mask = torch.cat(
                [
                    torch.nn.functional.pad(self._mask, (old_pad, 0)),
                    torch.nn.functional.pad(mask, (new_pad, 0)),
                ]
            )
            self._positions = torch.cat([self._positions, positions])
            self.rows.extend(rows)
        room = self._room()
        self._cache = self._batch_cache(
            [[(layer.keys, layer.values, pad) for layer in part.layers] for part, pad in parts],
            room,
        )

    def _room(self) -> int:
        """Columns to keep free on the right: the most tokens a row may still write."""
        return max(max(row.budget - len(row.generated), 1) for row in self.rows)

    def _batch_cache(self, parts: list[list[tuple[torch.Tensor, torch.Tensor, int]]], room: int) -> Any:
        """A DynamicCache of in-place layers holding ``parts`` (per part, per layer: keys, values
        and the padding columns to put on their left) stacked along the batch."""
        from transformers import DynamicCache

        cache = DynamicCache(config=self.model.config)
        cache.layers = [
            _in_place_layer_class()([part[index] for part in parts], room) for index in range(len(parts[0]))
        ]
        return cache

    def drop(self, keys: Collection[Any]) -> list[Row]:
        """Take the rows of ``keys`` out of the batch before their end (their callers went away:
        a row nobody waits for would hold its place until its budget ran out). Returns them."""
        dropped = [row for row in self.rows if row.key in keys and not row.finished]
        for row in dropped:
            row.finished = True
        if dropped:
            self._leave()
        return dropped

    # -- decoding -----------------------------------------------------------------------------

    def step(self) -> list[Row]:
        """Feed every row its last token, pick the next one; returns the rows that finished."""
        import torch

        if not self.rows:
            return []
        assert self._mask is not None and self._positions is not None
        with torch.inference_mode():
            last = torch.tensor([[row.generated[-1]] for row in self.rows], dtype=torch.long)
            self._mask = torch.nn.functional.pad(self._mask, (0, 1), value=1)
            positions = self._positions.unsqueeze(1).clone()
            logits, self._cache = self._forward(last, self._mask, positions, cache=self._cache)
            self._positions = self._positions + 1
            return self._advance(list(self.rows), logits)

    def _advance(self, rows: list[Row], logits: torch.Tensor) -> list[Row]:
        """Choose the next token of ``rows`` (one logits row each), drop the finished ones."""
        for offset, row in enumerate(rows):
            try:
                token = self._choose(row, logits[offset])
            except Exception as error:  # the row's guide failed: the row ends, the others go on
                row.error, row.finished = error, True
                continue
            row.generated.append(token)
            if token in self.eos_ids or len(row.generated) >= row.budget:
                row.finished = True
        done = [row for row in rows if row.finished]
        if done:
            self._leave()
        return done

    def _choose(self, row: Row, scores: torch.Tensor) -> int:
        import torch

        scores = scores.float()
        if row.guide is not None:
            scores = row.guide.constrain(row.generated, scores.clone())
        if row.temperature <= 0:
            return int(torch.argmax(scores).item())
        probabilities = torch.softmax(scores / row.temperature, dim=-1).cpu()
        return int(torch.multinomial(probabilities, 1, generator=self._generator).item())

    def _leave(self) -> None:
        """Drop finished rows from the cache, then the columns that are padding in every row (in
        place: no buffer is allocated)."""
        import torch

        assert self._mask is not None and self._positions is not None
        remaining = sum(not row.finished for row in self.rows)
        if not remaining:
            self.reset()
            return
        # Rows from the end fill the gaps, so only they are copied (the order of rows is free).
        keep = list(range(remaining))
        gaps = [index for index in keep if self.rows[index].finished]
        movers = [index for index in range(remaining, len(self.rows)) if not self.rows[index].finished]
        for gap, mover in zip(gaps, movers, strict=True):
            keep[gap] = mover
        selected = torch.tensor(keep, dtype=torch.long)
        self._mask = self._mask.index_select(0, selected)
        self._positions = self._positions.index_select(0, selected)
        self.rows = [self.rows[index] for index in keep]
        unused = int(self._mask.shape[1] - self._positions.max().item())  # padding in every row
        self._mask = self._mask[:, unused:]
        for layer in self._cache.layers:
            layer.keep(keep, unused)

    def reset(self) -> None:
        """Forget the running batch (after the last row left, or after a failed step)."""
        self.rows = []
        self._cache = None
        self._mask = None
        self._positions = None

    def _forward(
        self, input_ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor, cache: Any
    ) -> tuple[torch.Tensor, Any]:
        from transformers import DynamicCache

        device = self.device
        output = self.model(
            input_ids=input_ids.to(device),
            attention_mask=mask.to(device),
            position_ids=positions.to(device),
            past_key_values=cache if cache is not None else DynamicCache(config=self.model.config),
            use_cache=True,
            logits_to_keep=1,
        )
        return output.logits[:, -1, :], output.past_key_values


@functools.cache
def _in_place_layer_class() -> type[Any]:
    """The running batch's cache layer (a class made on first use: transformers is imported late).

    Its ``keys`` and ``values`` are views of larger buffers; ``update`` writes the new columns
    into the room after the cached ones, so a step copies one column per row instead of the
    whole cache, and a row leaving moves only the rows after it up. When the room runs out (it is
    sized to the rows' budgets, so only if a caller feeds more than that) the buffers grow by
    copying once."""
    import torch
    from transformers.cache_utils import DynamicLayer

    class InPlaceLayer(DynamicLayer):
        def __init__(self, parts: list[tuple[torch.Tensor, torch.Tensor, int]], room: int) -> None:
            super().__init__()
            keys, _, pad = parts[0]
            self.dtype, self.device = keys.dtype, keys.device
            self.is_initialized = True
            width = keys.shape[-2] + pad
            rows = sum(part_keys.shape[0] for part_keys, _, _ in parts)
            shape = (rows, keys.shape[1], width + room, keys.shape[3])
            self._key_store = torch.empty(shape, dtype=keys.dtype, device=keys.device)
            self._value_store = torch.empty(shape, dtype=keys.dtype, device=keys.device)
            first = 0
            for part_keys, part_values, part_pad in parts:
                last = first + part_keys.shape[0]
                for store, part in ((self._key_store, part_keys), (self._value_store, part_values)):
                    # Padding must hold finite numbers: a masked column weighs 0, and 0 * NaN is NaN.
                    store[first:last, :, :part_pad].zero_()
                    store[first:last, :, part_pad:width].copy_(part)
                first = last
            # The layer's rows are the stores' first ``_rows``, its columns ``_start:_end``.
            self._rows, self._start, self._end = rows, 0, width
            self._expose()

        def _expose(self) -> tuple[torch.Tensor, torch.Tensor]:
            keys = self._key_store[: self._rows, :, self._start : self._end]
            values = self._value_store[: self._rows, :, self._start : self._end]
            self.keys, self.values = keys, values
            return keys, values

        def update(
            self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
        ) -> tuple[torch.Tensor, torch.Tensor]:
            end = self._end + key_states.shape[-2]
            if end > self._key_store.shape[-2]:
                keys, values = self._expose()
                grown = InPlaceLayer([(keys, values, 0)], max(64, 2 * key_states.shape[-2]))
                self._key_store, self._value_store = grown._key_store, grown._value_store
                self._start, end = 0, end - self._start
            self._key_store[: self._rows, :, self._end : end].copy_(key_states)
            self._value_store[: self._rows, :, self._end : end].copy_(value_states)
            self._end = end
            return self._expose()

        def keep(self, rows: list[int], unused: int) -> None:
            """Keep row ``rows[slot]`` in each slot, drop the first ``unused`` columns. A row moves
            only from past the new number of rows into a slot whose row has left."""
            for slot, row in enumerate(rows):
                if slot != row:
                    for store in (self._key_store, self._value_store):
                        store[slot, :, self._start : self._end].copy_(store[row, :, self._start : self._end])
            self._rows, self._start = len(rows), self._start + unused
            self._expose()

    return InPlaceLayer


def supports_model(model: Any) -> bool:
    """Whether the model's cache is plain per-layer key/value tensors that rows can join and leave
    (no sliding window, no recurrent state): probed with a one-token forward pass."""
    import torch
    from transformers import DynamicCache
    from transformers.cache_utils import DynamicLayer

    try:
        cache = DynamicCache(config=model.config)
        with torch.inference_mode():
            device = next(model.parameters()).device
            model(
                input_ids=torch.zeros((1, 1), dtype=torch.long, device=device),
                attention_mask=torch.ones((1, 1), dtype=torch.long, device=device),
                past_key_values=cache,
                use_cache=True,
                logits_to_keep=1,
            )
    except Exception:  # a model without these arguments: generate() serves it
        return False
    layers: list[Any] = list(getattr(cache, "layers", None) or [])
    return bool(layers) and all(type(layer) is DynamicLayer for layer in layers)
