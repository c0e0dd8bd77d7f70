"""Continuous batching for a transformers causal LM: sequences join and leave between steps.

``model.generate`` runs a batch until its longest row is done, so a short answer waits for the
longest one and the requests that arrived meanwhile wait for all of them. Here every sequence
leaves the batch at its own end (EOS or its token budget), and new ones are prefilled and join the
running batch at the next step, so the batch stays full while requests keep coming.

**Slots.** Keys and values live in one static buffer per layer, ``[slots, kv_heads, columns,
head_dim]``, allocated once (and regrown, rarely, by doubling). A row owns a slot: its token at
position ``p`` sits in column ``p`` of its slot, so rows of any length share the buffers without
padding, joining writes only the new row's slot and leaving frees one (the last slot's row moves
into the gap, so the rows in use are always slots ``0..n-1``). The last column is the parking
column: a slot with no decoding row (free, or a row still being prefilled) writes its step's
throwaway key there, where no row ever looks.

**One decoding step** feeds every decoding row its last token at its own position; the attention
mask (built from the positions, on the device) lets each row see its columns ``0..p``. Its shapes
depend only on the batch and context *buckets* (``batch_buckets``, powers of two for the context),
so on a CUDA device each bucket's step is captured once as a CUDA graph and replayed: one launch
for the whole forward pass instead of hundreds of kernel launches from Python, which is what
bounded a step before (about 70 ms for a 1.7B model on a GPU that reads its weights in 1 ms).
Rows joining and leaving change only the graph's inputs (tokens and positions, one host-to-device
copy a step), never its shapes. On a CPU, or with ``graphs=False``, the same step runs eagerly
with exact shapes (the rows in use and the longest context) and writes the same tokens.

**Prefill** runs eagerly, straight into the rows' slots, in chunks of ``prefill_chunk`` tokens
while other rows are decoding: a long prompt costs the running rows one chunk per step, not the
whole prompt at once. With no row decoding, admitted prompts are prefilled whole at once. On a GPU
up to ``prefill_rows`` rows share a pass (a pass of a few hundred tokens costs its kernel
launches there, not its arithmetic); on a CPU prefill is compute-bound, so each row has its own.

A prompt that begins like one seen recently (the same system prompt and tools, which is what an
agent's requests and the format's instructions look like) reuses that beginning's keys and values
from a small store bounded in tokens, and only the rest of the prompt is prefilled.

**Choosing tokens** is batched: one ``argmax`` over the greedy rows and one read back to the host
a step. A row's guide (``TokenConstraint``) may also ``prepare`` the step on the CPU (xgrammar
fills the row's token bitmask for the token it just accepted): that runs while the device
computes the step's forward pass, so guiding adds little to a step beyond applying the mask.

A row fails alone where its failure is its own: a prefill that raises (its forward pass touches
only its own slot) or a guide that raises while choosing the row's next token ends that row, with
the exception in ``Row.error``, and the other rows go on. A decoding step's forward pass is every
row's at once, so a failure there raises to the caller, who resets.

All methods run on the one generation thread; nothing here is thread-safe or asynchronous.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from subnet.miner.kv_slots import KeyValueSlots, PrefixStore, slot_cache_class

if TYPE_CHECKING:
    import torch

log = logging.getLogger(__name__)

# Context buckets of a captured step start here and double: a step attends over its bucket's
# columns, so a short context does not pay for the buffer's width.
MIN_CONTEXT_BUCKET = 64
# Columns a fresh buffer holds at least (it grows by doubling when a row needs more).
MIN_COLUMNS = 512


class TokenConstraint(Protocol):
    """Restricts what one sequence may write next (a forced function name, a schema).

    A constraint may also have ``prepare(generated)``: the engine calls it before the step's
    logits are read, while the device still computes them, so CPU work that needs only the
    tokens written so far (a grammar matcher accepting the last token, filling its bitmask)
    overlaps the forward pass. ``constrain`` is then called with the same ``generated``."""

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


def batch_buckets(max_rows: int) -> list[int]:
    """The batch sizes a captured step is made for: powers of two up to ``max_rows``, and
    ``max_rows`` itself (a step of ``n`` rows runs in the smallest bucket that holds them)."""
    buckets = [1]
    while buckets[-1] * 2 < max_rows:
        buckets.append(buckets[-1] * 2)
    if buckets[-1] < max_rows:
        buckets.append(max_rows)
    return buckets


def _bucket(value: int, buckets: Sequence[int]) -> int:
    return next((bucket for bucket in buckets if bucket >= value), buckets[-1])


@dataclass(eq=False)
class _Seat:
    """A row in its slot: the tokens of it already in the slot's keys and values."""

    row: Row
    length: int = 0  # columns written: the position of the next token fed

    @property
    def prefilling(self) -> bool:
        return self.length < len(self.row.prompt)


@dataclass
class _Graph:
    graph: Any  # torch.cuda.CUDAGraph
    logits: torch.Tensor  # the captured step's output, rewritten by every replay


class DecodeEngine:
    """The running batch of one model. ``admit`` prefills new rows into it, ``step`` decodes one
    token for every row and returns the rows that finished (they have left the batch)."""

    # Reusing fewer tokens than this saves less than the copying costs.
    MIN_REUSE = 16
    # Padded tokens at most in one prefill pass of several rows (its activations' size).
    PREFILL_TOKENS = 8192

    def __init__(
        self,
        model: Any,
        *,
        eos_ids: Sequence[int],
        pad_id: int,
        seed: int = 0,
        prefix_tokens: int = 4096,
        max_rows: int = 8,
        graphs: bool = False,
        prefill_chunk: int = 512,
        prefill_rows: int | None = None,
    ) -> None:
        import torch

        self.model = model
        self.device = next(model.parameters()).device
        self.eos_ids = frozenset(int(token) for token in eos_ids)
        self.pad_id = int(pad_id)
        self.prefixes = PrefixStore(prefix_tokens) if prefix_tokens > 0 else None
        self.prefill_chunk = max(1, prefill_chunk)
        # Rows prefilled in one pass. On a GPU a pass of a few hundred tokens costs its kernel
        # launches, not its arithmetic, so rows share passes; on a CPU prefill is compute-bound
        # and padding to a common width only adds work, so each row has its own.
        self.prefill_rows = prefill_rows or (8 if self.device.type == "cuda" else 1)
        self._seats: list[_Seat] = []  # slot i holds _seats[i]; always slots 0..n-1
        self._slots = KeyValueSlots(max(1, max_rows), MIN_COLUMNS)
        self._cache = slot_cache_class()(model.config, self._slots)
        self._cache_argument = _cache_argument(model)
        self._generator = torch.Generator(device="cpu").manual_seed(seed)
        self._dtype = next(model.parameters()).dtype
        # Step inputs on the device (row 0: tokens fed, row 1: their positions), filled from a
        # host buffer (pinned on CUDA: the copy is asynchronous) with one copy a step.
        self._inputs = torch.zeros((2, self._slots.slots), dtype=torch.long, device=self.device)
        self._staging = torch.zeros((2, self._slots.slots), dtype=torch.long)
        self._columns = torch.arange(self._slots.columns, device=self.device)
        # graphs=True: steps of bucketed shapes, captured where the device is a CUDA GPU (on a
        # CPU the bucketed steps run eagerly: the same path, which is what the CPU tests run)
        self.bucketed = graphs
        self.graphs = graphs and self.device.type == "cuda"
        self._captured: dict[tuple[int, int], _Graph] = {}
        self._copied: Any = None  # the CUDA event of the last step's input copy
        if self.graphs:
            self._staging = self._staging.pin_memory()
        self.steps = 0  # decoding steps run, and of them the ones replayed from a captured graph
        self.replayed = 0

    @property
    def active(self) -> int:
        """Rows in the engine (decoding, or still being prefilled)."""
        return len(self._seats)

    @property
    def rows(self) -> list[Row]:
        return [seat.row for seat in self._seats]

    # -- joining ------------------------------------------------------------------------------

    def admit(self, rows: Sequence[Row]) -> list[Row]:
        """Seat ``rows`` and prefill them: whole when no row is decoding, else up to
        ``prefill_chunk`` tokens now and the rest over the next steps. A row whose prefill is
        done has its first token and decodes from the next step on. Returns the rows already
        finished (EOS, or a budget of one, at their first token) or failed alone."""
        import torch

        with torch.inference_mode():  # no autograd graph: it would hold every step's activations
            for row in rows:
                if not row.finished:
                    self._seat(row)
            return self._prefill_some()

    def _seat(self, row: Row) -> None:
        slot = len(self._seats)
        self._make_room(slot + 1, len(row.prompt) + row.budget)
        seat = _Seat(row)
        self._seats.append(seat)
        shared, layers = self._reusable(row.prompt)
        if layers is not None:
            self._slots.load(slot, layers, shared)
            seat.length = shared

    def _reusable(self, prompt: list[int]) -> tuple[int, list[tuple[torch.Tensor, torch.Tensor]] | None]:
        """How many of the prompt's first tokens come from the store (at least one is prefilled,
        for the logits of the last), and their keys and values."""
        if self.prefixes is None or not self._slots.keys:
            return 0, None
        shared, layers = self.prefixes.longest(prompt)
        shared = min(shared, len(prompt) - 1)
        if shared < self.MIN_REUSE or layers is None:
            shared, layers = 0, None
        self.prefixes.reused_tokens += shared
        self.prefixes.prefilled_tokens += len(prompt) - shared
        return shared, layers

    def _prefill_some(self) -> list[Row]:
        """Prefill the seated rows' prompts, oldest first: all of them when no row is decoding,
        else at most ``prefill_chunk`` tokens. Up to ``prefill_rows`` rows share one forward pass
        (left-padded to the longest piece). Returns the rows that ended (failed, or finished at
        their first token)."""
        decoding = any(not seat.prefilling for seat in self._seats)
        budget = self.prefill_chunk if decoding else None
        pieces: list[tuple[_Seat, int]] = []  # a seat and the end of its piece of prompt
        for seat in self._seats:
            if not seat.prefilling:
                continue
            if budget is not None and budget <= 0:
                break
            end = len(seat.row.prompt)
            if budget is not None:
                end = min(end, seat.length + budget)
                budget -= end - seat.length
            pieces.append((seat, end))
        ended: list[Row] = []
        done: list[tuple[Row, torch.Tensor]] = []
        for group in self._groups(pieces):
            for (seat, end), logits in zip(group, self._prefill_group(group), strict=True):
                row = seat.row
                if isinstance(logits, Exception):  # this row's own pass (e.g. out of memory on it)
                    row.error, row.finished = logits, True
                    ended.append(row)
                    continue
                seat.length = end
                if seat.prefilling:
                    continue
                if self.prefixes is not None:
                    # copies: the slot is rewritten when the row leaves
                    slot = self._seats.index(seat)
                    self.prefixes.put(row.prompt, self._slots.copy_out(slot, len(row.prompt)))
                done.append((row, logits))
        if done:
            self._prepare([row for row, _ in done])
            import torch

            ended += self._advance(
                [row for row, _ in done], torch.stack([logits for _, logits in done]).float()
            )
        if ended:
            self._leave()
        return ended

    def _groups(self, pieces: list[tuple[_Seat, int]]) -> list[list[tuple[_Seat, int]]]:
        """Pieces in groups of at most ``prefill_rows`` rows and ``PREFILL_TOKENS`` padded tokens."""
        groups: list[list[tuple[_Seat, int]]] = []
        for seat, end in pieces:
            length = end - seat.length
            if groups:
                group = groups[-1]
                widest = max(length, *(stop - other.length for other, stop in group))
                if len(group) < self.prefill_rows and widest * (len(group) + 1) <= self.PREFILL_TOKENS:
                    group.append((seat, end))
                    continue
            groups.append([(seat, end)])
        return groups

    def _prefill_group(self, group: list[tuple[_Seat, int]]) -> list[torch.Tensor | Exception]:
        """Each piece's last logits (``[vocabulary]``), or the exception its pass raised: a group
        whose pass fails is retried a row at a time, so only the row at fault fails."""
        try:
            logits = self._prefill_pass(group)
            return [logits[index] for index in range(len(group))]
        except Exception as error:
            if len(group) == 1:
                return [error]
        return [self._prefill_group([piece])[0] for piece in group]

    def _prefill_pass(self, group: list[tuple[_Seat, int]]) -> torch.Tensor:
        """One forward pass feeding each seat its prompt tokens up to its piece's end, left-padded
        to the longest piece (a padding token is fed at the parking column, where no row looks,
        so every row's last token is the pass's last)."""
        import torch

        width = max(end - seat.length for seat, end in group)
        tokens = [[self.pad_id] * width for _ in group]
        positions = [[self._slots.park] * width for _ in group]
        for index, (seat, end) in enumerate(group):
            piece = seat.row.prompt[seat.length : end]
            tokens[index][width - len(piece) :] = piece
            positions[index][width - len(piece) :] = range(seat.length, end)
        input_ids = torch.tensor(tokens, dtype=torch.long, device=self.device)
        fed = torch.tensor(positions, dtype=torch.long, device=self.device)
        context = max(end for _, end in group)
        # Query i of a row (at position p) sees that row's columns 0..p; padding sees them all.
        visible = self._columns[:context].view(1, 1, context) <= fed.unsqueeze(-1)
        self._slots.write_at([self._seats.index(seat) for seat, _ in group], context, fed)
        mask = self._additive(visible).view(len(group), 1, width, context)
        return self._forward(input_ids, mask, fed)

    def _additive(self, visible: torch.Tensor) -> torch.Tensor:
        """An additive attention mask (0 where visible, the dtype's least value elsewhere: finite,
        so a row that sees nothing gives no NaN)."""
        import torch

        zero = torch.zeros((), dtype=self._dtype, device=visible.device)
        least = torch.full((), torch.finfo(self._dtype).min, dtype=self._dtype, device=visible.device)
        return torch.where(visible, zero, least)

    def _make_room(self, slots: int, columns: int) -> None:
        """Buffers holding ``slots`` slots and ``columns`` columns for real tokens (plus the parking
        column). Growing them frees the captured steps (their buffers moved)."""
        import torch

        need_columns = columns + 1
        if slots <= self._slots.slots and need_columns <= self._slots.columns:
            return
        new_slots = self._slots.slots
        while new_slots < slots:
            new_slots *= 2
        new_columns = self._slots.columns
        while new_columns < need_columns:
            new_columns *= 2
        limit = getattr(self.model.config, "max_position_embeddings", None)
        if isinstance(limit, int) and need_columns <= limit + 1 < new_columns:
            new_columns = limit + 1
        self._slots.grow(new_slots, new_columns)
        if new_slots > self._inputs.shape[1]:
            self._inputs = torch.zeros((2, new_slots), dtype=torch.long, device=self.device)
            self._staging = torch.zeros((2, new_slots), dtype=torch.long)
            if self.graphs:
                self._staging = self._staging.pin_memory()
        self._columns = torch.arange(self._slots.columns, device=self.device)
        self._captured.clear()

    def drop(self, keys: Collection[Any]) -> list[Row]:
        """Take the rows of ``keys`` out of the batch before their end (their callers went away:
        a row nobody waits for would hold its place until its budget ran out). Returns them."""
        import torch

        dropped = [seat.row for seat in self._seats if seat.row.key in keys and not seat.row.finished]
        for row in dropped:
            row.finished = True
        if dropped:
            with torch.inference_mode():  # the buffers are inference tensors; moving rows writes them
                self._leave()
        return dropped

    # -- decoding -----------------------------------------------------------------------------

    def step(self) -> list[Row]:
        """Go on prefilling (a chunk), feed every decoding row its last token, pick the next one;
        returns the rows that finished."""
        import torch

        with torch.inference_mode():
            ended = self._prefill_some() if any(seat.prefilling for seat in self._seats) else []
            decoding = [slot for slot, seat in enumerate(self._seats) if not seat.prefilling]
            if not decoding:
                return ended
            seats = [self._seats[slot] for slot in decoding]
            self._make_room(len(self._seats), max(seat.length + 1 for seat in seats))
            rows, width = self._shape(max(seat.length for seat in seats) + 1)
            staging = self._staging
            if self._copied is not None:
                self._copied.synchronize()
            staging[0, :rows] = self.pad_id
            staging[1, :rows] = self._slots.park
            fed = torch.tensor(
                [[seat.row.generated[-1] for seat in seats], [seat.length for seat in seats]],
                dtype=torch.long,
            )
            staging[:, decoding] = fed
            self._inputs[:, :rows].copy_(staging[:, :rows], non_blocking=self.graphs)
            if self.graphs:  # the host buffer is rewritten next step: only once this copy is done
                self._copied = torch.cuda.Event()
                self._copied.record()
            logits = self._decode(rows, width)
            for seat in seats:
                seat.length += 1
            self.steps += 1
            live = [seat.row for seat in seats]
            self._prepare(live)  # CPU work of the guides, while the device runs the step
            picked = logits[decoding].float() if len(decoding) < rows else logits.float()
            return ended + self._advance(live, picked)

    def _shape(self, context: int) -> tuple[int, int]:
        """The step's batch and context: exact when it runs eagerly; the buckets when it is
        captured (a graph per bucket, so rows joining and leaving never capture anew)."""
        rows = len(self._seats)
        if not self.bucketed:
            return rows, context
        width = MIN_CONTEXT_BUCKET
        while width < context:
            width *= 2
        return _bucket(rows, batch_buckets(self._slots.slots)), min(width, self._slots.columns)

    def _decode(self, rows: int, width: int) -> torch.Tensor:
        """The step's logits, ``[rows, vocabulary]``: a captured graph replayed where there is one
        (captured now if its bucket is new), else the forward pass run eagerly."""
        if not self.graphs:
            return self._decode_forward(rows, width)
        graph = self._captured.get((rows, width))
        if graph is None:
            graph = self._capture(rows, width)
            if graph is None:  # this model's step cannot be captured: eager from now on
                return self._decode_forward(rows, width)
            self._captured[(rows, width)] = graph
        graph.graph.replay()
        self.replayed += 1
        return graph.logits

    def _decode_forward(self, rows: int, width: int) -> torch.Tensor:
        tokens = self._inputs[0, :rows].view(rows, 1)
        positions = self._inputs[1, :rows].view(rows, 1)
        visible = self._columns[:width].view(1, width) <= positions
        self._slots.write_at(range(rows), width, positions)
        return self._forward(tokens, self._additive(visible).view(rows, 1, 1, width), positions)

    def _capture(self, rows: int, width: int) -> _Graph | None:
        """Capture the step of this bucket as a CUDA graph (after two eager warm-up passes on a
        side stream, as CUDA graphs need). The passes write what the step itself writes, so they
        change nothing. None, and graphs off for good, when the model's forward cannot be
        captured (a host sync inside it, say)."""
        import torch

        try:
            stream = torch.cuda.Stream(self.device)
            stream.wait_stream(torch.cuda.current_stream(self.device))
            with torch.cuda.stream(stream):
                for _ in range(2):
                    self._decode_forward(rows, width)
            torch.cuda.current_stream(self.device).wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            # Each graph its own memory pool: a step's activations are small, and a pool shared
            # by graphs that were freed (the buffers grew) trips the allocator on the next capture.
            with torch.cuda.graph(graph):
                logits = self._decode_forward(rows, width)
        except Exception as error:
            log.warning("decoding steps cannot be captured as CUDA graphs (%s); running them eagerly", error)
            self.graphs = False
            self._captured.clear()
            return None
        return _Graph(graph, logits)

    def _forward(self, input_ids: torch.Tensor, mask: torch.Tensor, positions: torch.Tensor) -> torch.Tensor:
        output = self.model(
            input_ids=input_ids,
            attention_mask=mask,
            position_ids=positions,
            use_cache=True,
            logits_to_keep=1,
            **{self._cache_argument: self._cache},
        )
        return output.logits[:, -1, :]

    def _prepare(self, rows: Sequence[Row]) -> None:
        """Let each guide that can do its CPU work for the coming choice now."""
        for row in rows:
            prepare = getattr(row.guide, "prepare", None)
            if prepare is None or row.finished:
                continue
            try:
                prepare(row.generated)
            except Exception as error:  # the row's guide failed: the row ends in _advance
                row.error = error

    def _advance(self, rows: list[Row], logits: torch.Tensor) -> list[Row]:
        """Choose the next token of ``rows`` (one logits row each), drop the finished ones."""
        chosen: list[int | None] = [None] * len(rows)
        greedy: list[int] = []
        for offset, row in enumerate(rows):
            try:
                if row.error is not None:
                    raise row.error
                if row.guide is not None:
                    logits[offset] = row.guide.constrain(row.generated, logits[offset])
                if row.temperature > 0:
                    chosen[offset] = self._sample(row, logits[offset])
                else:
                    greedy.append(offset)
            except Exception as error:  # the row's guide failed: the row ends, the others go on
                row.error, row.finished = error, True
        if greedy:
            best = logits[greedy].argmax(dim=-1) if len(greedy) < len(rows) else logits.argmax(dim=-1)
            for offset, token in zip(greedy, best.tolist(), strict=True):  # one read back a step
                chosen[offset] = int(token)
        done: list[Row] = []
        for row, token in zip(rows, chosen, strict=True):
            if token is None:
                done.append(row)
                continue
            row.generated.append(token)
            if token in self.eos_ids or len(row.generated) >= row.budget:
                row.finished = True
                done.append(row)
        if done:
            self._leave()
        return done

    def _sample(self, row: Row, scores: torch.Tensor) -> int:
        import torch

        probabilities = torch.softmax(scores / row.temperature, dim=-1).cpu()
        return int(torch.multinomial(probabilities, 1, generator=self._generator).item())

    def _leave(self) -> None:
        """Free the slots of finished rows; the rows in the last slots move into the gaps (their
        keys and values copied), so the slots in use stay ``0..n-1``."""
        keep = [seat for seat in self._seats if not seat.row.finished]
        if len(keep) == len(self._seats):
            return
        old = {id(seat): slot for slot, seat in enumerate(self._seats)}
        new: list[_Seat | None] = [
            seat if slot < len(keep) else None for slot, seat in enumerate(self._seats)
        ]
        gaps = [slot for slot in range(len(keep)) if self._seats[slot].row.finished]
        movers = [seat for seat in self._seats[len(keep) :] if not seat.row.finished]
        for gap, seat in zip(gaps, movers, strict=True):
            self._slots.move(old[id(seat)], gap, seat.length)
            new[gap] = seat
        self._seats = [seat for seat in new[: len(keep)] if seat is not None]

    def reset(self) -> None:
        """Forget every row (after a failed step). The buffers and captured steps stay."""
        self._seats = []


def _cache_argument(model: Any) -> str:
    """The name the model's forward takes its cache by (``cache`` in newer transformers,
    ``past_key_values`` before)."""
    try:
        parameters = inspect.signature(model.forward).parameters
    except (TypeError, ValueError):
        return "past_key_values"
    return "cache" if "cache" in parameters else "past_key_values"


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
                use_cache=True,
                logits_to_keep=1,
                **{_cache_argument(model): cache},
            )
    except Exception:  # a model without these arguments: generate() serves it
        return False
    layers: list[Any] = list(getattr(cache, "layers", None) or [])
    return bool(layers) and all(type(layer) is DynamicLayer for layer in layers)
