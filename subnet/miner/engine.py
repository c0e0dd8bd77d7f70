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


class RowGuide(Protocol):
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
    guide: RowGuide | None = None
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
        # [rows, cached columns]: 1 where a column holds one of the row's real tokens. Real tokens
        # are right-aligned; a prompt that reused a stored beginning may have a gap of padding
        # between that beginning and the rest.
        self._mask: torch.Tensor | None = None
        self._positions: torch.Tensor | None = None  # real tokens per row fed so far: the next position
        self._generator = torch.Generator(device="cpu").manual_seed(seed)

    @property
    def active(self) -> int:
        return len(self.rows)

    # -- joining ------------------------------------------------------------------------------

    def admit(self, rows: Sequence[Row]) -> list[Row]:
        """Prefill ``rows`` together, pick each one's first token and join them to the batch.
        Returns the rows already finished by that first token (EOS, or a budget of one)."""
        import torch

        rows = [row for row in rows if not row.finished]
        if not rows:
            return []
        reused = [self._reusable(row.prompt) for row in rows]
        past = max(len_ for len_, _ in reused)
        width = max(len(row.prompt) - len_ for row, (len_, _) in zip(rows, reused, strict=True))
        input_ids = torch.full((len(rows), width), self.pad_id, dtype=torch.long)
        mask = torch.zeros((len(rows), past + width), dtype=torch.long)
        positions = torch.zeros((len(rows), width), dtype=torch.long)
        for index, (row, (shared, _)) in enumerate(zip(rows, reused, strict=True)):
            rest = row.prompt[shared:]
            input_ids[index, width - len(rest) :] = torch.tensor(rest, dtype=torch.long)
            mask[index, past - shared : past] = 1
            mask[index, past + width - len(rest) :] = 1
            positions[index, width - len(rest) :] = torch.arange(shared, len(row.prompt))
        cache = self._past_cache(reused, past) if past else None
        logits, cache = self._forward(input_ids, mask, positions, cache=cache)
        self._remember(rows, cache, mask)
        self._join(rows, cache, mask, torch.tensor([len(row.prompt) for row in rows], dtype=torch.long))
        return self._advance(rows, logits, first_row=len(self.rows) - len(rows))

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

    def _past_cache(self, reused: list[tuple[int, Any]], past: int) -> Any:
        """A cache of ``past`` columns holding each row's reused beginning, right-aligned."""
        import torch
        from transformers import DynamicCache

        cache = DynamicCache(config=self.model.config)
        template = next(layers for _, layers in reused if layers is not None)
        for layer_index, (keys, values) in enumerate(template):
            shape = (len(reused), keys.shape[1], past, keys.shape[3])
            past_keys = torch.zeros(shape, dtype=keys.dtype, device=keys.device)
            past_values = torch.zeros(shape, dtype=values.dtype, device=values.device)
            for row, (shared, layers) in enumerate(reused):
                if layers is not None and shared:
                    stored_keys, stored_values = layers[layer_index]
                    past_keys[row, :, past - shared :, :] = stored_keys[0, :, :shared, :]
                    past_values[row, :, past - shared :, :] = stored_values[0, :, :shared, :]
            cache.update(past_keys, past_values, layer_index)
        return cache

    def _remember(self, rows: list[Row], cache: Any, mask: torch.Tensor) -> None:
        """Store each new prompt's keys and values (its real columns only) for later prompts."""
        import torch

        if self.prefixes is None:
            return
        for index, row in enumerate(rows):
            columns = torch.nonzero(mask[index]).flatten().to(self.device)
            self.prefixes.put(
                row.prompt,
                [
                    (
                        layer.keys[index : index + 1].index_select(2, columns),
                        layer.values[index : index + 1].index_select(2, columns),
                    )
                    for layer in cache.layers
                ],
            )

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
        last = torch.tensor([[row.generated[-1]] for row in self.rows], dtype=torch.long)
        self._mask = torch.nn.functional.pad(self._mask, (0, 1), value=1)
        positions = self._positions.unsqueeze(1).clone()
        logits, self._cache = self._forward(last, self._mask, positions, cache=self._cache)
        self._positions = self._positions + 1
        return self._advance(list(self.rows), logits, first_row=0)

    def _advance(self, rows: list[Row], logits: torch.Tensor, first_row: int) -> list[Row]:
        """Choose the next token of ``rows`` (batch rows first_row...), drop the finished ones."""
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
        # Columns before every row's first real token are padding in every row.
        unused = int(self._mask.argmax(dim=1).min().item())
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
