"""The logits processor: one xgrammar matcher per row, a token bitmask per step.

`Guidance` is built once per tokenizer (xgrammar's `TokenizerInfo` and `GrammarCompiler`, and a
cache of compiled grammars per format and tools). `Guidance.row_guide` gives a request its
`RowGuide`: a `GrammarMatcher` of its grammar, advanced past the forced prefix already in the
prompt. `GuidedCalls` runs inside ``model.generate`` (or the engine, one row at a time): each
step it fills the guided rows' bitmasks and masks their logits, so greedy and sampling alike
take only tokens that continue a well-formed call (special tokens never; EOS only where the
answer may end).

Whether to call at all stays the model's choice under ``tool_choice: auto``: at the first step
the row's best allowed token (plus a bias, `PROMPTED_CALL_BIAS` where the format is taught by the
adapter's prompt rather than the model's own template) is compared with its best token overall;
if the other token wins, the row is left alone for good (prose). A required or named
``tool_choice`` starts the row inside the call.

Near its budget a row only takes tokens after which the call can still be closed in the tokens
left (`closing_text`), and writes the closing text itself when it must; after a complete call
another one opens only while the budget holds one as long as the longest so far.
"""

from __future__ import annotations

import logging
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from scoring.formats import prompted_call_biases
from subnet.miner.guided.extraction import Extraction
from subnet.miner.guided.grammar import COPIED, MAX_STRING, CallGrammar, functions_of
from subnet.miner.guided.grounding import CallEvidence

if TYPE_CHECKING:
    import torch

log = logging.getLogger(__name__)

# Logit bonus of the best call-opening token against the best prose token at the first step
# (tool_choice auto). A model whose own chat template renders the tools was trained to open
# its calls: its first-token preference decides as it is. A model taught the format only by
# the adapter's system prompt (the demo model) rarely opens a call on its own even when one
# fits: its call opener is a few logits behind its prose for every kind of request; the bias
# lets it call where the opener is closest. Per format, measured on SmolLM2-135M: just under
# the smallest gap it showed on an irrelevant or missing-parameter request, so that none of
# those was called (see docs/miner.md for the figures; they barely separate the two kinds).
NATIVE_CALL_BIAS = 0.0
PROMPTED_CALL_BIAS: dict[str, float] = prompted_call_biases()  # the format registry's (scoring.formats)
# Within this many tokens of its budget a row checks that the call can still be closed in time.
CLOSING_WINDOW = 64
# Near the budget, the model's candidates: its best this many tokens (the allowed ones among them
# are tried, best first); when none is allowed and fits, the row writes its closing text itself.
CLOSING_CANDIDATES = 32
NEED_EVERY = 8  # steps between two estimates of a call's closing before the window
COMPILED_CACHE = 256  # compiled grammars kept per tokenizer (per format, tools and source)
# The order in which `closing_text` tries characters where the grammar leaves a choice: closers
# first, so every open string, list and object ends as soon as it may; then the rest of ASCII,
# and UTF-8 continuation bytes (a token may have written part of a character).
_QUOTES = frozenset((b'"', b"'"))
_CLOSERS = frozenset(char.encode() for char in "]})>")
_CLOSING_ORDER = [
    *(char.encode() for char in "\"']})>,<{[.0123456789-tTfF\n"),  # "." first: a number ends in two steps
    *(bytes([code]) for code in range(32, 127)),
    *(bytes([code]) for code in range(0x80, 0xC0)),
]


def call_bias_for(format_name: str, *, native: bool) -> float:
    """The first-step call bias for a prompt whose tools the chat template rendered (native) or
    the adapter's system prompt described."""
    return NATIVE_CALL_BIAS if native else PROMPTED_CALL_BIAS.get(format_name, NATIVE_CALL_BIAS)


def closing_text(matcher: Any, limit: int = 2048, exits: Sequence[bytes] = ()) -> str | None:
    """A short text that completes the answer from `matcher`'s state (empty: it may stop now;
    None: none found within `limit` bytes). Forced stretches come from xgrammar's jump forward;
    where the grammar leaves a choice, a closer comes first (`_CLOSING_ORDER`), and among other
    characters the one whose forced stretch after it is shortest (the shortest of several names
    or enum values). `exits`: the grammar's ways out of a free-text value (a family's end tags,
    `CallGrammar.exits`), tried first: where any character continues a value, no single one
    ends it."""
    fork = matcher.fork()
    text = b""
    while not fork.is_completed():
        if len(text) > limit:
            return None
        forced = _jump_forward(fork)
        if forced and fork.accept_string(forced):
            text += forced
            continue
        step = _exit(fork, exits) or _closing_step(fork)
        if step is None:
            return None
        fork.accept_string(step)
        text += step
    return text.decode("utf-8", errors="surrogateescape")


def _jump_forward(matcher: Any) -> bytes:
    """The text `matcher` forces next (xgrammar's jump forward); empty where none is forced, or
    where the forced stretch starts inside a character (xgrammar cannot hand that back as text:
    a family's markers hold characters of several bytes, and the closing text then goes on
    byte by byte)."""
    try:
        return str(matcher.find_jump_forward_string()).encode("utf-8")
    except UnicodeDecodeError:
        return b""


def _exit(matcher: Any, exits: Sequence[bytes]) -> bytes | None:
    """The shortest text that finishes one of `exits` (the rest of one already begun, or a whole
    one) which the grammar takes now and after which no letter may follow (the value or the
    call is over), or None. Without the rests, a guide that wrote ``</`` would write a whole
    ``</arg_value>`` after it (content, as the value goes on) and start again."""
    rests = sorted({text[cut:] for text in exits for cut in range(len(text))}, key=len)
    for text in rests:
        if not matcher.accept_string(text):
            continue
        over = matcher.is_completed() or not matcher.accept_string(b"a")
        matcher.rollback(1 if over else 2)  # a string accepted is one step
        if over:
            return text
    return None


def _closing_step(matcher: Any) -> bytes | None:
    """The next character of the closing text where the grammar leaves a choice. Each trial is
    accepted and rolled back (a fork per trial copies the whole parser state). A quote is taken
    first where it closes a string (after it no letter may follow: inside a Python string the
    other quote is content, and taking it would never end), then a closer, then a quote that
    opens a string, then the character whose forced stretch after it is shortest."""
    best: tuple[int, bytes] | None = None
    opening: bytes | None = None
    for char in _CLOSING_ORDER:
        if not matcher.accept_string(char):
            continue
        if char in _QUOTES or char in _CLOSERS:
            # a quote or closer that is content (inside a string, or a family's free-text
            # value) is no way out of it: after a real one no letter may follow
            closes = not matcher.accept_string(b"a")
            matcher.rollback(1 if closes else 2)
            if closes:
                return char
            if char in _QUOTES:
                opening = opening or char
            continue
        length = 0 if matcher.is_completed() else len(_jump_forward(matcher)) or 1 << 20
        matcher.rollback(1)
        if opening is None and (best is None or length < best[0]):
            best = (length, char)
    if opening is not None:
        return opening
    return best[1] if best is not None else None


@dataclass
class RowGuide:
    """How one row of a batch is guided: its matcher after the forced prefix (None: the row is
    left alone), whether the call is forced (tool_choice required or named, or ``--model.guided
    forced|grounded``), and where the row's `CallEvidence` goes (None: not kept)."""

    matcher: Any = None
    forced: bool = False
    call_bias: float = NATIVE_CALL_BIAS
    prefix_tokens: int = 0  # tokens of the call already written by the forced prefix
    evidence: CallEvidence | None = None
    exits: tuple[bytes, ...] = ()  # the grammar's ways out of a free-text value (`closing_text`)

    @property
    def guided(self) -> bool:
        return self.matcher is not None


class Guidance:
    """A tokenizer's xgrammar context: its token info, a compiler and the compiled grammars."""

    def __init__(self, info: Any, eos_ids: Sequence[int]) -> None:
        import xgrammar

        self.info = info
        self.eos = list(eos_ids)
        self.compiler = xgrammar.GrammarCompiler(info, max_threads=1)
        self._compiled: OrderedDict[str, Any] = OrderedDict()
        self.token_bytes: list[bytes] = list(info.decoded_vocab)
        self._by_bytes: dict[bytes, int] = {}
        special = set(info.special_token_ids) | set(self.eos)
        for index, piece in enumerate(self.token_bytes):
            if piece and index not in special:
                self._by_bytes.setdefault(piece, index)
        self.longest = max((len(piece) for piece in self._by_bytes), default=1)

    @classmethod
    def of_tokenizer(cls, tokenizer: Any, eos_ids: Sequence[int], vocab_size: int | None = None) -> Guidance:
        """The context of a Hugging Face tokenizer; `vocab_size` the model's logits width."""
        import xgrammar

        size = max(len(tokenizer), vocab_size or 0)
        info = xgrammar.TokenizerInfo.from_huggingface(
            tokenizer, vocab_size=size, stop_token_ids=list(eos_ids)
        )
        return cls(info, eos_ids)

    @property
    def vocab_size(self) -> int:
        return int(self.info.vocab_size)

    def compile(self, grammar: CallGrammar) -> Any:
        """The compiled grammar, from the cache when this grammar was compiled before."""
        import xgrammar

        compiled = self._compiled.get(grammar.ebnf)
        if compiled is None:
            compiled = self.compiler.compile_grammar(xgrammar.Grammar.from_ebnf(grammar.ebnf))
            self._compiled[grammar.ebnf] = compiled
            while len(self._compiled) > COMPILED_CACHE:
                self._compiled.popitem(last=False)
        else:
            self._compiled.move_to_end(grammar.ebnf)
        return compiled

    def matcher(self, grammar: CallGrammar) -> Any:
        import xgrammar

        return xgrammar.GrammarMatcher(self.compile(grammar), override_stop_tokens=self.eos)

    def tokens_for(self, text: str) -> list[int]:
        """`text` as token ids, longest known token first (to write a closing text)."""
        data = text.encode("utf-8", errors="surrogateescape")
        ids: list[int] = []
        position = 0
        while position < len(data):
            for end in range(min(len(data), position + self.longest), position, -1):
                token = self._by_bytes.get(data[position:end])
                if token is not None:
                    ids.append(token)
                    position = end
                    break
            else:
                return []  # a byte no token spells: cannot be written
        return ids

    def row_guide(
        self,
        format_name: str,
        tools: Sequence[dict[str, Any]],
        *,
        must_call: bool,
        function_name: str | None,
        prefix: str = "",
        call_bias: float = NATIVE_CALL_BIAS,
        prefix_tokens: int = 0,
        source: Extraction | None = None,
        evidence: CallEvidence | None = None,
    ) -> RowGuide:
        """The guide of a request: its tools' grammar in the adapter's format (values copied
        from `source` when given), advanced past the forced prefix already in the prompt.
        Unguided (no matcher) when there is nothing to guide."""
        grammar = CallGrammar.build(
            format_name, tools, only=function_name if must_call else None, source=source
        )
        if grammar is None:
            return RowGuide()
        matcher = self.matcher(grammar)
        if prefix and not matcher.accept_string(prefix):  # a prefix the grammar does not know
            return RowGuide()
        if evidence is not None:
            evidence.request_text = source.text if source is not None else ""
            evidence.functions = functions_of(tools)
        return RowGuide(
            matcher,
            forced=must_call,
            call_bias=call_bias,
            prefix_tokens=prefix_tokens,
            evidence=evidence,
            exits=tuple(text.encode("utf-8") for text in grammar.exits),
        )


_FREE, _UNDECIDED, _GUIDED, _DONE = range(4)


class GuidedCalls:
    """A ``generate`` logits processor keeping each guided row on a well-formed call.

    Rows are independent: each has its own matcher, budget and mode (free, undecided, guided,
    done). A row whose last token its matcher refuses (padding after EOS, a row the budget
    stopped) is done and left alone. A row whose guide raises ends at EOS with the exception in
    ``failures``; the other rows go on.
    """

    def __init__(
        self,
        prompt_width: int,
        guides: Sequence[RowGuide],
        guidance: Guidance,
        *,
        budgets: Sequence[int] | None = None,
        sample: bool = False,
    ) -> None:
        self.prompt_width = prompt_width
        self.guidance = guidance
        self.eos = list(guidance.eos)
        self.eos_set = frozenset(self.eos)
        self.budgets = list(budgets) if budgets is not None else [1 << 30] * len(guides)
        self.sample = sample
        self.call_biases = [guide.call_bias for guide in guides]
        self.evidence = [guide.evidence for guide in guides]
        self.matchers = [guide.matcher for guide in guides]
        self.exits = [guide.exits for guide in guides]
        self.modes = [
            _FREE if guide.matcher is None else (_GUIDED if guide.forced else _UNDECIDED) for guide in guides
        ]
        # tokens of the call being written, and of the longest call written, per row: another
        # call is opened only when the budget left holds one as long (a call cut short by the
        # budget is worth less than none)
        self.call_tokens = [guide.prefix_tokens for guide in guides]
        self.longest_call = [0] * len(guides)
        # rows whose guide raised: each ended at EOS there, and its caller must get an error
        self.failures: dict[int, Exception] = {}
        # for the evidence: each row's logits at the last step, the bytes written, and where
        # each step's token starts in them
        self._last_logits: dict[int, torch.Tensor] = {}
        self._written: list[bytearray] = [bytearray() for _ in guides]
        self._offsets: list[list[int]] = [[] for _ in guides]
        self._captured = [0] * len(guides)
        # characters written since the last quote: past MAX_STRING a value is closed (the
        # grammar does not count; a row must not loop in one string or number)
        self._unquoted = [0] * len(guides)
        self._need: dict[int, int] = {}  # per row: tokens to keep for closing (`_closing_need`)
        self._bitmask: torch.Tensor | None = None
        self._prepared: int | None = None  # the step whose CPU work `prepare` did already
        self._need_left: dict[int, int] = {}  # per row: the tokens left when _need was worked out

    def prepare(self, input_ids: torch.Tensor) -> None:
        """The step's CPU work, before its logits are read: the matchers take the tokens just
        written and fill their bitmasks (and the closing estimates are brought up to date). The
        engine calls it while the device computes the step's forward pass; ``__call__`` at the
        same step then only applies the masks and chooses."""
        step = input_ids.shape[1] - self.prompt_width
        if step > 0:
            self._take_last(input_ids)
        rows = [row for row, mode in enumerate(self.modes) if mode in (_UNDECIDED, _GUIDED)]
        self._fill(rows)
        for row in rows:
            left = self.budgets[row] - step - 1
            matcher = self.matchers[row]
            if self.modes[row] == _GUIDED and left >= CLOSING_WINDOW and not matcher.is_completed():
                self._closing_need(row, matcher, left)
        self._prepared = step

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        step = input_ids.shape[1] - self.prompt_width
        prepared, self._prepared = self._prepared == step, None
        if not prepared and step > 0:
            self._take_last(input_ids)
        rows = [row for row, mode in enumerate(self.modes) if mode in (_UNDECIDED, _GUIDED)]
        if not rows:
            return scores
        if not prepared:
            self._fill(rows)
        masked = self._apply(rows, scores)
        for position, row in enumerate(rows):
            left = self.budgets[row] - step - 1  # tokens after the one chosen now
            try:
                keep = self._choose(row, scores[row], masked[position], left)
            except Exception as error:  # this row's guide failed: end the row, keep the others
                self.failures[row] = error
                self.modes[row], self.matchers[row] = _DONE, None
                keep = self.eos[:1]
            if keep is None:
                continue
            if self.evidence[row] is not None:
                self._last_logits[row] = scores[row].clone()
            if isinstance(keep, list):
                kept = scores[row, keep].clone()
                scores[row, :] = float("-inf")
                scores[row, keep] = kept
            else:
                scores[row] = keep
        return scores

    def _fill(self, rows: list[int]) -> None:
        """The rows' bitmasks of the tokens their matchers accept next (CPU work)."""
        import xgrammar

        if self._bitmask is None or self._bitmask.shape[0] < len(self.modes):
            self._bitmask = xgrammar.allocate_token_bitmask(len(self.modes), self.guidance.vocab_size)
        for row in rows:
            self.matchers[row].fill_next_token_bitmask(self._bitmask, row)

    def _apply(self, rows: list[int], scores: torch.Tensor) -> torch.Tensor:
        """The rows' logits with the tokens their (filled) bitmasks refuse at -inf."""
        import xgrammar

        assert self._bitmask is not None
        width = self.guidance.vocab_size
        masked = scores[rows].clone()
        if masked.shape[-1] > width:  # logits wider than the vocabulary: padding ids are never written
            masked[:, width:] = float("-inf")
        bitmask = self._bitmask[rows].to(masked.device, non_blocking=True)
        xgrammar.apply_token_bitmask_inplace(masked, bitmask, vocab_size=min(width, masked.shape[-1]))
        return masked

    def _take_last(self, input_ids: torch.Tensor) -> None:
        rows = [row for row, mode in enumerate(self.modes) if mode == _GUIDED]
        if not rows:
            return
        last = input_ids[rows, -1].tolist()
        for row, token in zip(rows, last, strict=True):
            matcher = self.matchers[row]
            # a token the guide did not offer (or EOS) ends the guidance of the row
            if token in self.eos_set or not matcher.accept_token(int(token)):
                self.modes[row], self.matchers[row] = _DONE, None
                self._last_logits.pop(row, None)
                continue
            self._record(row, int(token))
            piece = self.guidance.token_bytes[int(token)]
            quote = max(piece.rfind(b'"'), piece.rfind(b"'"))
            self._unquoted[row] = len(piece) - quote - 1 if quote >= 0 else self._unquoted[row] + len(piece)
            self.call_tokens[row] += 1
            if matcher.is_completed():  # a call is complete
                self.longest_call[row] = max(self.longest_call[row], self.call_tokens[row])
                self.call_tokens[row] = 0

    def _record(self, row: int, token: int) -> None:
        """The row's evidence for the token just taken: its gap to the model's first choice, and
        (once a copied value completes) which steps wrote that value."""
        evidence = self.evidence[row]
        logits = self._last_logits.pop(row, None)
        if evidence is None or logits is None:
            return
        evidence.steps.append((False, float(logits.max().item() - logits[token].item())))
        written = self._written[row]
        self._offsets[row].append(len(written))
        written += self.guidance.token_bytes[token]
        captures = [value for name, value in self.matchers[row].get_captures() if name == COPIED]
        if len(captures) > self._captured[row]:
            search_end = len(written)
            for value in reversed(captures[self._captured[row] :]):
                start = written.rfind(value, 0, search_end)
                if start < 0:
                    continue
                mark_copied(evidence, self._offsets[row], start, start + len(value))
                search_end = start
            self._captured[row] = len(captures)

    def _choose(
        self, row: int, row_scores: torch.Tensor, masked: torch.Tensor, left: int
    ) -> list[int] | torch.Tensor | None:
        """The token ids this row may take now, or its masked logits (None: leave the row)."""
        matcher = self.matchers[row]
        if self.modes[row] == _UNDECIDED:
            best_call = float(masked.max().item())
            if best_call == float("-inf") or best_call + self.call_biases[row] < float(
                row_scores.max().item()
            ):
                self.modes[row], self.matchers[row] = _FREE, None  # the model prefers words
                return None
            self.modes[row] = _GUIDED
        if matcher.is_completed() and left < self.longest_call[row] + 2:
            return self.eos[:1]
        exits = self.exits[row]
        if self._unquoted[row] >= MAX_STRING:  # a value runs on: close it (and the call)
            return self._closing(matcher, exits)
        if left >= CLOSING_WINDOW and left >= self._closing_need(row, matcher, left):
            return masked
        return self._fitting(matcher, row_scores, masked, left - 1, exits)  # one kept for EOS after the call

    def _closing_need(self, row: int, matcher: Any, left: int) -> int:
        """Before the closing window: twice the tokens the call's closing text takes now (worked
        out every `NEED_EVERY` steps), so a call whose closing alone is longer than the window
        (many required keys, a small vocabulary) starts closing in time."""
        if row not in self._need or (left % NEED_EVERY == 0 and self._need_left.get(row) != left):
            self._need_left[row] = left
            text = closing_text(matcher, limit=left * self.guidance.longest, exits=self.exits[row])
            ids = self.guidance.tokens_for(text) if text else []
            self._need[row] = 2 * len(ids) + NEED_EVERY if text is not None else 0
        return self._need[row]

    def _fitting(
        self,
        matcher: Any,
        row_scores: torch.Tensor,
        masked: torch.Tensor,
        left: int,
        exits: Sequence[bytes] = (),
    ) -> list[int]:
        """Near the budget: the model's best candidates (its top `CLOSING_CANDIDATES`) that the
        grammar allows and after which the call can still be closed in the tokens left (greedy:
        the first; sampling: all of them), or else the first token of the closing text: the
        shortest way to a complete call, rather than a token far down the model's list."""
        count = min(CLOSING_CANDIDATES, row_scores.shape[-1])
        top = row_scores.topk(count).indices
        candidates = top[masked[top] > float("-inf")].tolist()
        fitting = []
        for token in candidates:
            if self._fits(matcher, token, left, exits):
                fitting.append(token)
                if not self.sample:
                    break
        return fitting or self._closing(matcher, exits)

    def _fits(self, matcher: Any, token: int, left: int, exits: Sequence[bytes] = ()) -> bool:
        if token in self.eos_set:
            return True
        fork = matcher.fork()
        if not fork.accept_token(token):
            return False
        if fork.is_completed():
            return True
        text = closing_text(fork, limit=left * self.guidance.longest, exits=exits)
        if text is None:
            return False
        ids = self.guidance.tokens_for(text)
        return bool(ids) and len(ids) <= left

    def _closing(self, matcher: Any, exits: Sequence[bytes] = ()) -> list[int]:
        """The first token of the closing text (the row is about to run out of tokens); EOS when
        the tokens of that text do not continue the call (rather than write outside the schema)."""
        if matcher.is_completed():
            return self.eos[:1]
        text = closing_text(matcher, exits=exits)
        ids = self.guidance.tokens_for(text) if text else []
        if not ids or not matcher.fork().accept_token(ids[0]):
            return self.eos[:1]
        return ids[:1]


def mark_copied(evidence: CallEvidence, offsets: Sequence[int], start: int, end: int) -> None:
    """Marks the steps whose token bytes (starting at `offsets`) overlap bytes [start, end) as
    writing a copied value."""
    steps = evidence.steps
    for index, begin in enumerate(offsets):
        finish = offsets[index + 1] if index + 1 < len(offsets) else None
        if begin >= end:
            break
        if finish is not None and finish <= start:
            continue
        steps[index] = (True, steps[index][1])
