"""Where the decoding engine keeps keys and values (subnet.miner.continuous_batching).

`KeyValueSlots`: one static buffer per layer with a slot per row, written in place by every
forward pass (the model's attention layers call its ``update`` through `slot_cache_class`'s object).
`PrefixStore`: the keys and values of recent prompts, for prompts that begin alike.

torch and transformers are imported on first use, never at import time.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch


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


class KeyValueSlots:
    """The engine's keys and values: per layer a ``[slots, kv_heads, columns, head_dim]`` buffer
    for keys and one for values, allocated on the first write (from its shapes, so no model
    config is read) and regrown by copying when rows need more slots or columns.

    It is the ``past_key_values`` of every forward pass: ``update`` is what the model's
    attention layers call, and it writes where the engine's current pass says (`write_at`: which
    slots, each token's column, how many columns attention reads)."""

    def __init__(self, slots: int, columns: int) -> None:
        self.slots = slots
        self.columns = columns
        self.keys: list[torch.Tensor] = []
        self.values: list[torch.Tensor] = []
        self._pass: tuple[Any, ...] = ()

    @property
    def park(self) -> int:
        """The column slots without a decoding row write to (no row ever attends to it)."""
        return self.columns - 1

    def write_at(self, slots: Sequence[int], width: int, positions: torch.Tensor) -> None:
        """The coming pass feeds the rows of ``slots`` (consecutive slots are read in place, others
        gathered), each token at its position (``positions``: ``[rows, tokens]``, on the device);
        attention reads columns ``0..width-1`` of those slots."""
        first = slots[0]
        consecutive = list(slots) == list(range(first, first + len(slots)))
        self._pass = (first, len(slots), width, positions, None if consecutive else list(slots))

    def update(
        self,
        key_states: torch.Tensor,
        value_states: torch.Tensor,
        layer_index: int,
        *args: Any,
        **kwargs: Any,
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if layer_index == len(self.keys):
            self._allocate(key_states)
        first, rows, width, positions, scattered = self._pass
        out = []
        for buffer, states in (
            (self.keys[layer_index], key_states),
            (self.values[layer_index], value_states),
        ):
            if scattered is None:
                block = buffer[first : first + rows]
                tokens = positions.shape[1]
                index = positions.view(rows, 1, tokens, 1).expand(
                    rows, states.shape[1], tokens, states.shape[3]
                )
                block.scatter_(2, index, states)
                out.append(block[:, :, :width])
            else:
                import torch

                slots = torch.tensor(scattered, device=buffer.device)
                buffer[slots.view(-1, 1), :, positions] = states.transpose(1, 2)
                out.append(buffer[:, :, :width].index_select(0, slots))
        return out[0], out[1]

    def _allocate(self, like: torch.Tensor) -> None:
        import torch

        # Zeros, not empty: a masked column weighs 0, and 0 * NaN is NaN.
        shape = (self.slots, like.shape[1], self.columns, like.shape[3])
        self.keys.append(torch.zeros(shape, dtype=like.dtype, device=like.device))
        self.values.append(torch.zeros(shape, dtype=like.dtype, device=like.device))

    def grow(self, slots: int, columns: int) -> None:
        """At least ``slots`` slots and ``columns`` columns (the contents kept; the parking
        column moves to the new last one)."""
        import torch

        slots, columns = max(slots, self.slots), max(columns, self.columns)
        if (slots, columns) == (self.slots, self.columns):
            return
        for buffers in (self.keys, self.values):
            for index, old in enumerate(buffers):
                new = torch.zeros(
                    (slots, old.shape[1], columns, old.shape[3]), dtype=old.dtype, device=old.device
                )
                new[: self.slots, :, : self.columns - 1].copy_(old[:, :, : self.columns - 1])
                buffers[index] = new
        self.slots, self.columns = slots, columns

    def move(self, source: int, target: int, length: int) -> None:
        """Copy a slot's first ``length`` columns into another slot."""
        for buffers in (self.keys, self.values):
            for buffer in buffers:
                buffer[target, :, :length].copy_(buffer[source, :, :length])

    def load(self, slot: int, layers: list[tuple[torch.Tensor, torch.Tensor]], length: int) -> None:
        """Write stored keys and values (per layer ``[1, heads, n >= length, dim]``) into a slot."""
        for index, (keys, values) in enumerate(layers):
            self.keys[index][slot, :, :length].copy_(keys[0, :, :length])
            self.values[index][slot, :, :length].copy_(values[0, :, :length])

    def copy_out(self, slot: int, length: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """A slot's first ``length`` columns, copied (per layer ``[1, heads, length, dim]``)."""
        return [
            (keys[slot : slot + 1, :, :length].clone(), values[slot : slot + 1, :, :length].clone())
            for keys, values in zip(self.keys, self.values, strict=True)
        ]


@functools.cache
def slot_cache_class() -> type[Any]:
    """The cache object handed to the model (a class made on first use: transformers is imported
    late). A ``DynamicCache`` to the model's eyes, so every check it makes passes, whose
    ``update`` writes into the engine's slots instead of growing per-layer lists."""
    from transformers import DynamicCache

    class SlotCache(DynamicCache):
        def __init__(self, config: Any, slots: KeyValueSlots) -> None:
            super().__init__(config=config)
            self.slots = slots

        def update(
            self,
            key_states: torch.Tensor,
            value_states: torch.Tensor,
            layer_idx: int,
            *args: Any,
            **kwargs: Any,
        ) -> tuple[torch.Tensor, torch.Tensor]:
            return self.slots.update(key_states, value_states, layer_idx)

        def get_seq_length(self, *args: Any, **kwargs: Any) -> int:
            return 0  # positions are always given; nothing asks the cache for them

    return SlotCache
