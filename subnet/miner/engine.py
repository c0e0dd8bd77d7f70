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

A prompt that begins like one seen recently (the same system prompt and tools, which is what an
agent's requests and the format's instructions look like) reuses that beginning's keys and values
from a small store bounded in tokens, and only the rest of the prompt is prefilled. On a CPU,
prefill is most of a short tool call's cost.

All methods run on the one generation thread; nothing here is thread-safe or asynchronous.
"""

from __future__ import annotations

from collections.abc import Sequence
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
        rows already finished by that first token (EOS, or a budget of one).

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
        cache = self._past_cache(layers, shared) if layers is not None else None
        logits, cache = self._forward(rest, mask, positions, cache=cache)
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
        import torch

        if self._cache is None or self._mask is None or self._positions is None:
            self._cache, self._mask, self._positions = cache, mask, positions
            self.rows = list(rows)
            return
        width = max(self._mask.shape[1], mask.shape[1])
        old_pad, new_pad = width - self._mask.shape[1], width - mask.shape[1]
        for old_layer, new_layer in zip(self._cache.layers, cache.layers, strict=True):
            old_layer.keys = torch.cat(
                [_pad_left(old_layer.keys, old_pad), _pad_left(new_layer.keys, new_pad)]
            )
            old_layer.values = torch.cat(
                [_pad_left(old_layer.values, old_pad), _pad_left(new_layer.values, new_pad)]
            )
        self._mask = torch.cat(
            [torch.nn.functional.pad(self._mask, (old_pad, 0)), torch.nn.functional.pad(mask, (new_pad, 0))]
        )
        self._positions = torch.cat([self._positions, positions])
        self.rows.extend(rows)

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
            token = self._choose(row, logits[offset])
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
        """Drop finished rows from the cache, then the columns that are padding in every row."""
        import torch

        assert self._mask is not None and self._positions is not None
        keep = [index for index, row in enumerate(self.rows) if not row.finished]
        if not keep:
            self.reset()
            return
        if len(keep) < len(self.rows):
            selected = torch.tensor(keep, dtype=torch.long, device=self.device)
            for layer in self._cache.layers:
                layer.keys = layer.keys.index_select(0, selected)
                layer.values = layer.values.index_select(0, selected)
            cpu_selected = selected.cpu()
            self._mask = self._mask.index_select(0, cpu_selected)
            self._positions = self._positions.index_select(0, cpu_selected)
            self.rows = [self.rows[index] for index in keep]
        unused = int(self._mask.shape[1] - self._positions.max().item())  # padding in every row
        if unused > 0:
            for layer in self._cache.layers:
                layer.keys = layer.keys[:, :, unused:, :]
                layer.values = layer.values[:, :, unused:, :]
            self._mask = self._mask[:, unused:]

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


def _pad_left(tensor: torch.Tensor, columns: int) -> torch.Tensor:
    """Zero columns before the sequence axis (dim -2) of a [batch, heads, seq, dim] tensor."""
    import torch

    if columns == 0:
        return tensor
    return torch.nn.functional.pad(tensor, (0, 0, columns, 0))


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
