"""Schema-guided decoding: keeps each generated row on a well-formed call of an offered tool.

Two parts:

* **The call automaton.** `CallGrammar.build(format, tools)` turns the offered tools' JSON
  schemas into a character-level automaton for one output format (``json``, ``hermes``,
  ``pythonic``; `GUIDED_FORMATS`). Its states are immutable `Frame` objects: feeding a character
  returns the next state (or None: not allowed), so a state is copied by keeping a reference and
  extended one token text at a time. What it accepts: the function name is one of the offered
  names; argument keys are that function's properties, each at most once, and the arguments
  close only once the required ones are there; values follow the property's schema (string,
  integer, number, boolean, enum values, arrays with their item schema and size bounds, nested
  objects with their own properties and required keys, and any JSON value where the schema says
  nothing). ``number`` values are written with a fraction (``2.0``), because the scorer takes an
  integer for a float only at the top level. Whitespace is canonical: one optional space after
  ``:`` and ``,``. Strings are capped at `MAX_STRING` characters and numbers at 12 + 8 digits, so
  a row cannot loop in one value. After the call the row may only end, or, where the format
  holds several calls, open the next one.

* **The logits processor.** `GuidedCalls` runs inside ``model.generate`` with one automaton state
  per row. Per step it takes the row's top-k tokens (one ``topk`` for the batch) and walks them in
  descending order: greedy keeps the first token whose text the state accepts; sampling keeps the
  accepted ones among the top-k. Only when the top-k holds none does it look further down the
  sorted row. Token texts are computed once per tokenizer (`TokenTable`); tokens that are not
  clean UTF-8 (byte fragments) and special tokens other than EOS are never allowed in a call.

Whether to call at all stays the model's choice under ``tool_choice: auto``: at the first step
the row's best call-opening token (plus a bias, `PROMPTED_CALL_BIAS` where the format is taught
by the adapter's prompt rather than the model's own template) is compared with its best other
token; if the other token wins, the row is left alone for good (prose, e.g. for an irrelevant
request). A required or named ``tool_choice`` starts the row inside the call. Nothing the model
writes is executed; the guide only removes tokens from the choice.

``--model.guided forced`` and ``grounded`` are for a model too weak to choose (the demo
model): every answer is decoded as a call whose free string values are spans of the request
and whose numbers are the request's (`Extraction`), among the tools sharing most words with
the request (`best_fitting`), required arguments only. ``grounded`` then keeps the call only
when the request grounds it (`ungrounded_reason`, from the `CallEvidence` the guide kept while
decoding) and answers in prose otherwise.
"""

from __future__ import annotations

import bisect
import json
import keyword
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import torch

MAX_STRING = 200  # characters in one free string value
MAX_INTEGER_DIGITS = 12  # digits before the point of one number
MAX_FRACTION_DIGITS = 8  # digits after it
MAX_FREE_DEPTH = 6  # nesting of containers in one argument where free JSON is allowed
MAX_CALLS = 16  # calls in one answer
TOP_K = 32  # candidates walked per row and step before a wider search
# Logit bonus of the best call-opening token against the best prose token at the first step
# (tool_choice auto). A model whose own chat template renders the tools was trained to open
# its calls: its first-token preference decides as it is. A model taught the format only by
# the adapter's system prompt (the demo model) rarely opens a call on its own even when one
# fits: its call opener is a few logits behind its prose for every kind of request; the bias
# lets it call where the opener is closest. Per format, measured on SmolLM2-135M: just under
# the smallest gap it showed on an irrelevant or missing-parameter request, so that none of
# those was called (see docs/miner.md for the figures; they barely separate the two kinds).
NATIVE_CALL_BIAS = 0.0
PROMPTED_CALL_BIAS: dict[str, float] = {"hermes": 0.8, "json": 2.6, "pythonic": 3.4}

_HEX = frozenset("0123456789abcdefABCDEF")
_DIGITS = frozenset("0123456789")


# --- dialects: how literals are spelled -------------------------------------------------------


@dataclass(frozen=True)
class Dialect:
    """JSON or Python literal spelling (booleans, string quotes and escapes)."""

    true: str
    false: str
    quotes: str  # characters that open (and then close) a string
    escapes: frozenset[str]  # characters allowed after a backslash ("u" starts 4 hex digits)

    def encode_string(self, text: str) -> list[str]:
        """Every way this dialect quotes `text` (Python: double and single quotes)."""
        double = json.dumps(text, ensure_ascii=False)
        if "'" not in self.quotes:
            return [double]
        inner = double[1:-1].replace('\\"', '"').replace("'", "\\'")
        return [double, f"'{inner}'"]

    def encode(self, value: Any) -> list[str]:
        """A schema enum value as this dialect writes it (empty: not writable)."""
        if isinstance(value, bool):
            return [self.true if value else self.false]
        if isinstance(value, str):
            return self.encode_string(value)
        if isinstance(value, int | float):
            return [json.dumps(value)]
        return []


JSON = Dialect("true", "false", '"', frozenset('"\\/bfnrtu'))
PYTHON = Dialect("True", "False", "\"'", frozenset("\"'\\bfnrtu"))  # "\/" is no Python escape


# --- frames: the automaton's states ----------------------------------------------------------


class Frame:
    """One state of the automaton: the innermost construct being read, linked to its parent.

    Frames are immutable; `feed` returns a new frame. A child that completes hands its text to
    the parent's `resume`, which returns the parent's next state.
    """

    __slots__ = ("parent",)

    def __init__(self, parent: Frame | None) -> None:
        self.parent = parent

    def feed(self, char: str) -> Frame | None:
        raise NotImplementedError

    def resume(self, text: str) -> Frame:
        raise NotImplementedError(f"{type(self).__name__} has no children")

    def can_stop(self) -> bool:
        """Whether the answer may end here (EOS)."""
        return False

    def must_stop(self) -> bool:
        """Whether ending is the only way on (no character is accepted)."""
        return False

    def close_step(self) -> str:
        """A short text this state accepts on the shortest way to a complete answer."""
        raise NotImplementedError(f"{type(self).__name__} cannot close")

    def _up(self, text: str) -> Frame:
        assert self.parent is not None
        return self.parent.resume(text)


def advance(frame: Frame | None, text: str) -> Frame | None:
    """The state after `text`, or None when some character of it is not allowed."""
    for char in text:
        if frame is None:
            return None
        frame = frame.feed(char)
    return frame


def closing_text(frame: Frame, limit: int = 4096) -> str:
    """The shortest-way text that completes the answer from `frame` (empty: it may stop now)."""
    text = ""
    state: Frame | None = frame
    while state is not None and not state.can_stop() and len(text) < limit:
        step = state.close_step()
        state = advance(state, step)
        text += step
    return text


class End(Frame):
    """After the last call: only EOS."""

    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(None)

    def feed(self, char: str) -> Frame | None:
        return None

    def can_stop(self) -> bool:
        return True

    def must_stop(self) -> bool:
        return True


# --- value specs (from JSON schemas) and their frames ------------------------------------------


class Spec:
    """What a value must look like. `begin` starts reading it with its first character."""

    first: frozenset[str] = frozenset()

    def begin(self, parent: Frame, char: str) -> Frame | None:
        raise NotImplementedError

    def opener(self) -> str:
        """The first character of the shortest value of this spec."""
        return min(self.first)


class StringSpec(Spec):
    """A free string (any content, JSON/Python escapes, at most `max_length` characters)."""

    def __init__(self, dialect: Dialect, max_length: int = MAX_STRING) -> None:
        self.dialect = dialect
        self.max_length = max_length
        self.first = frozenset(dialect.quotes)

    def begin(self, parent: Frame, char: str) -> Frame | None:
        return _StringFrame(parent, self, 1, 0, char) if char in self.first else None


class _StringFrame(Frame):
    # phase 1: content; 2: after a backslash; 3..6: hex digits of \uXXXX
    __slots__ = ("length", "phase", "quote", "spec")

    def __init__(self, parent: Frame | None, spec: StringSpec, phase: int, length: int, quote: str) -> None:
        super().__init__(parent)
        self.spec, self.phase, self.length, self.quote = spec, phase, length, quote

    def _next(self, phase: int, grown: int) -> _StringFrame:
        return _StringFrame(self.parent, self.spec, phase, self.length + grown, self.quote)

    def feed(self, char: str) -> Frame | None:
        phase = self.phase
        if phase == 1:
            if char == self.quote:
                return self._up("")
            if self.length >= self.spec.max_length or char < " ":
                return None
            return self._next(2, 0) if char == "\\" else self._next(1, 1)
        if phase == 2:
            if char == "u":
                return self._next(3, 0)
            return self._next(1, 1) if char in self.spec.dialect.escapes else None
        if char not in _HEX:
            return None
        return self._next(1, 1) if phase == 6 else self._next(phase + 1, 0)

    def close_step(self) -> str:
        return {1: self.quote, 2: "n"}.get(self.phase, "0")


class LiteralsSpec(Spec):
    """One of a fixed set of texts (enum values, booleans, property or function names).

    The options are kept sorted, and a text is a prefix of some option when the first option
    not below it starts with it (a binary search): building costs O(n log n) and memory stays
    the options' own size, whatever a request's schema holds (a set of every prefix costs the
    square of an option's length: 1.7 GiB for one enum value of 60,000 characters).
    """

    def __init__(self, options: Iterable[str]) -> None:
        self.options = frozenset(option for option in options if option)
        self.ordered = sorted(self.options)
        # texts that are an option and also the start of a longer one ("1" and "10"): they end
        # only when the next character cannot continue them. The options that start with an
        # option follow it directly in sorted order, so its successor tells.
        self.extendable = frozenset(
            option
            for option, after in zip(self.ordered, self.ordered[1:], strict=False)
            if after.startswith(option)
        )
        self.first = frozenset(option[0] for option in self.options)
        self.shortest = min(self.options, key=lambda option: (len(option), option)) if self.options else ""

    def begin(self, parent: Frame, char: str) -> Frame | None:
        return _LiteralsFrame(parent, self, "").feed(char)

    def opener(self) -> str:
        return self.shortest[:1]

    def continues(self, text: str) -> bool:
        """Whether `text` is the start of an option (or an option)."""
        index = bisect.bisect_left(self.ordered, text)
        return index < len(self.ordered) and self.ordered[index].startswith(text)

    def completions(self, text: str) -> Iterator[str]:
        """The options that start with `text`, in sorted order."""
        for option in self.ordered[bisect.bisect_left(self.ordered, text) :]:
            if not option.startswith(text):
                return
            yield option


class _LiteralsFrame(Frame):
    __slots__ = ("spec", "text")

    def __init__(self, parent: Frame | None, spec: LiteralsSpec, text: str) -> None:
        super().__init__(parent)
        self.spec, self.text = spec, text

    def feed(self, char: str) -> Frame | None:
        text = self.text + char
        spec = self.spec
        if spec.continues(text):
            if text in spec.options and text not in spec.extendable:
                return self._up(text)
            return _LiteralsFrame(self.parent, spec, text)
        if self.text in spec.options:  # a complete option, ended by what follows it
            return self._up(self.text).feed(char)
        return None

    def close_step(self) -> str:
        if self.text in self.spec.options:
            return self._up(self.text).close_step()
        shortest = min(self.spec.completions(self.text), key=lambda option: (len(option), option))
        return shortest[len(self.text)]


class NumberSpec(Spec):
    """An integer (``-12``), a number written with a fraction (``3.25``), or, for free values,
    either; no exponents."""

    first = frozenset("-0123456789")

    def __init__(self, integer: bool, fraction_required: bool = True) -> None:
        self.integer = integer
        self.fraction_required = fraction_required and not integer

    def begin(self, parent: Frame, char: str) -> Frame | None:
        return _NumberFrame(parent, self, 0, 0).feed(char)

    def opener(self) -> str:
        return "0"


# number phases
_N_START, _N_MINUS, _N_ZERO, _N_INT, _N_DOT, _N_FRACTION = range(6)


class _NumberFrame(Frame):
    # length: digits written in the current part (the integer part, then the fraction)
    __slots__ = ("length", "phase", "spec")

    def __init__(self, parent: Frame | None, spec: NumberSpec, phase: int, length: int) -> None:
        super().__init__(parent)
        self.spec, self.phase, self.length = spec, phase, length

    def _next(self, phase: int, length: int) -> _NumberFrame:
        return _NumberFrame(self.parent, self.spec, phase, length)

    def _complete(self) -> bool:
        if self.phase == _N_FRACTION:
            return True
        return self.phase in (_N_ZERO, _N_INT) and not self.spec.fraction_required

    def feed(self, char: str) -> Frame | None:
        phase = self.phase
        if char in _DIGITS:
            if phase in (_N_START, _N_MINUS):
                return self._next(_N_ZERO if char == "0" else _N_INT, 1)
            if phase == _N_INT and self.length < MAX_INTEGER_DIGITS:
                return self._next(_N_INT, self.length + 1)
            if phase == _N_DOT or (phase == _N_FRACTION and self.length < MAX_FRACTION_DIGITS):
                return self._next(_N_FRACTION, self.length + 1)
        elif char == "-" and phase == _N_START:
            return self._next(_N_MINUS, 0)
        elif char == "." and phase in (_N_ZERO, _N_INT) and not self.spec.integer:
            return self._next(_N_DOT, 0)
        if self._complete():
            return self._up("").feed(char)
        return None

    def close_step(self) -> str:
        if self._complete():
            return self._up("").close_step()
        return "." if self.phase in (_N_ZERO, _N_INT) else "0"


@dataclass(frozen=True)
class ObjectSyntax:
    """How an object is spelled: ``{"key": value}`` or Python keyword arguments ``key=value)``."""

    open: str
    close: str
    colon: str
    space_after_colon: bool
    quoted_keys: bool


JSON_OBJECT = ObjectSyntax("{", "}", ":", True, True)
KEYWORD_ARGUMENTS = ObjectSyntax("", ")", "=", False, False)


class ObjectSpec(Spec):
    """An object with known properties (each at most once, required ones before it closes), or
    a free object (``properties`` None: any string keys, any values)."""

    def __init__(
        self,
        dialect: Dialect,
        properties: dict[str, Spec] | None,
        required: Iterable[str] = (),
        syntax: ObjectSyntax = JSON_OBJECT,
        depth: int = 0,
    ) -> None:
        self.dialect = dialect
        self.properties = properties
        self.syntax = syntax
        self.depth = depth
        names = set(properties or ())
        self.required = frozenset(key for key in required if key in names)
        self.first = frozenset(syntax.open[:1])
        self._keys: dict[frozenset[str], Spec] = {}
        self._encoded: dict[str, str] = {}
        if properties is not None:
            self._encoded = {written: key for key in properties for written in self._spellings(key)}

    def _spellings(self, key: str) -> list[str]:
        return self.dialect.encode_string(key) if self.syntax.quoted_keys else [key]

    def keys_after(self, seen: frozenset[str]) -> Spec | None:
        """What the next key may be, given the keys already written (None: no key left)."""
        if self.properties is None:
            return StringSpec(self.dialect)
        spec = self._keys.get(seen)
        if spec is None:
            left = [encoded for encoded, key in self._encoded.items() if key not in seen]
            spec = LiteralsSpec(left) if left else _NOTHING
            self._keys[seen] = spec
        return None if spec is _NOTHING else spec

    def key_of(self, text: str) -> str:
        if self.properties is None:
            return ""
        return self._encoded[text]

    def value_of(self, key: str) -> Spec:
        if self.properties is None:
            return AnySpec(self.dialect, self.depth + 1)
        return self.properties[key]

    def may_close(self, seen: frozenset[str]) -> bool:
        return self.required <= seen

    def next_key(self, seen: frozenset[str]) -> str:
        """A key (as written) that brings the object closer to closing: a missing required one."""
        if self.properties is None:
            return '"'
        missing = [key for key in sorted(self.required) if key not in seen] or [
            key for key in sorted(self.properties) if key not in seen
        ]
        return self._spellings(missing[0])[0]

    def opener(self) -> str:
        if self.syntax.open:
            return self.syntax.open
        return self.syntax.close if self.may_close(frozenset()) else self.next_key(frozenset())[0]

    def begin(self, parent: Frame, char: str) -> Frame | None:
        if not self.syntax.open:
            return _ObjectFrame(parent, self, _O_FIRST, frozenset(), "", False).feed(char)
        return (
            _ObjectFrame(parent, self, _O_FIRST, frozenset(), "", False) if char == self.syntax.open else None
        )


class _Nothing(Spec):
    def begin(self, parent: Frame, char: str) -> Frame | None:
        return None


_NOTHING = _Nothing()

# object phases
_O_FIRST, _O_KEY, _O_COLON, _O_VALUE, _O_IN_VALUE, _O_AFTER, _O_NEXT = range(7)


class _ObjectFrame(Frame):
    __slots__ = ("key", "phase", "seen", "spaced", "spec")

    def __init__(
        self, parent: Frame | None, spec: ObjectSpec, phase: int, seen: frozenset[str], key: str, spaced: bool
    ) -> None:
        super().__init__(parent)
        self.spec, self.phase, self.seen, self.key, self.spaced = spec, phase, seen, key, spaced

    def _to(
        self, phase: int, seen: frozenset[str] | None = None, key: str = "", spaced: bool = False
    ) -> _ObjectFrame:
        return _ObjectFrame(self.parent, self.spec, phase, self.seen if seen is None else seen, key, spaced)

    def feed(self, char: str) -> Frame | None:
        phase, spec = self.phase, self.spec
        syntax = spec.syntax
        if phase == _O_AFTER:
            if char == ",":
                return self._to(_O_NEXT) if spec.keys_after(self.seen) is not None else None
            if char == syntax.close and spec.may_close(self.seen):
                return self._up("")
            return None
        if phase in (_O_FIRST, _O_NEXT):
            if phase == _O_NEXT and char == " " and not self.spaced:
                return self._to(_O_NEXT, spaced=True)
            if phase == _O_FIRST and char == syntax.close and spec.may_close(self.seen):
                return self._up("")
            keys = spec.keys_after(self.seen)
            return keys.begin(self._to(_O_KEY), char) if keys is not None else None
        if phase == _O_COLON:
            if char == syntax.colon:
                return self._to(_O_VALUE, key=self.key)
            return None
        if phase == _O_VALUE:
            if char == " " and syntax.space_after_colon and not self.spaced:
                return self._to(_O_VALUE, key=self.key, spaced=True)
            return spec.value_of(self.key).begin(self._to(_O_IN_VALUE, key=self.key), char)
        return None

    def close_step(self) -> str:
        phase, spec = self.phase, self.spec
        if phase in (_O_FIRST, _O_AFTER) and spec.may_close(self.seen):
            return spec.syntax.close
        if phase == _O_AFTER:
            return ","
        if phase == _O_COLON:
            return spec.syntax.colon
        if phase == _O_VALUE:
            return spec.value_of(self.key).opener()
        return spec.next_key(self.seen)

    def resume(self, text: str) -> Frame:
        if self.phase == _O_KEY:
            return self._to(_O_COLON, key=self.spec.key_of(text))
        seen = self.seen | {self.key} if self.spec.properties is not None else self.seen
        return self._to(_O_AFTER, seen=seen)


class ArraySpec(Spec):
    """``[item, item]`` with the item schema and size bounds."""

    first = frozenset("[")

    def __init__(self, items: Spec, min_items: int = 0, max_items: int | None = None) -> None:
        self.items = items
        self.min_items = min_items
        self.max_items = max_items

    def begin(self, parent: Frame, char: str) -> Frame | None:
        return _ArrayFrame(parent, self, _A_FIRST, 0, False) if char == "[" else None

    def opener(self) -> str:
        return "["


_A_FIRST, _A_IN_ITEM, _A_AFTER, _A_NEXT = range(4)


class _ArrayFrame(Frame):
    __slots__ = ("count", "phase", "spaced", "spec")

    def __init__(self, parent: Frame | None, spec: ArraySpec, phase: int, count: int, spaced: bool) -> None:
        super().__init__(parent)
        self.spec, self.phase, self.count, self.spaced = spec, phase, count, spaced

    def feed(self, char: str) -> Frame | None:
        spec, phase = self.spec, self.phase
        if phase == _A_AFTER:
            if char == "," and (spec.max_items is None or self.count < spec.max_items):
                return _ArrayFrame(self.parent, spec, _A_NEXT, self.count, False)
            if char == "]" and self.count >= spec.min_items:
                return self._up("")
            return None
        if phase == _A_FIRST and char == "]" and spec.min_items == 0:
            return self._up("")
        if phase == _A_FIRST and spec.max_items == 0:
            return None
        if phase == _A_NEXT and char == " " and not self.spaced:
            return _ArrayFrame(self.parent, spec, _A_NEXT, self.count, True)
        if phase in (_A_FIRST, _A_NEXT):
            return spec.items.begin(_ArrayFrame(self.parent, spec, _A_IN_ITEM, self.count, False), char)
        return None

    def close_step(self) -> str:
        spec = self.spec
        if self.phase in (_A_FIRST, _A_AFTER) and self.count >= spec.min_items:
            return "]"
        return "," if self.phase == _A_AFTER else spec.items.opener()

    def resume(self, text: str) -> Frame:
        return _ArrayFrame(self.parent, self.spec, _A_AFTER, self.count + 1, False)


class UnionSpec(Spec):
    """One of several specs, told apart by the first character (the first one listed wins)."""

    def __init__(self, specs: Sequence[Spec]) -> None:
        self.by_first: dict[str, Spec] = {}
        for spec in specs:
            for char in spec.first:
                self.by_first.setdefault(char, spec)
        self.first = frozenset(self.by_first)

    def begin(self, parent: Frame, char: str) -> Frame | None:
        spec = self.by_first.get(char)
        return spec.begin(parent, char) if spec is not None else None

    def opener(self) -> str:
        return next(iter(self.by_first.values())).opener() if self.by_first else ""


class AnySpec(Spec):
    """Any value of the dialect (no null): what a schema without a type allows."""

    def __init__(self, dialect: Dialect, depth: int = 0) -> None:
        self.dialect = dialect
        self.depth = depth
        self._union: UnionSpec | None = None
        self.first = frozenset('"-0123456789[{') | {dialect.true[0], dialect.false[0]}

    def opener(self) -> str:
        return "0"

    def begin(self, parent: Frame, char: str) -> Frame | None:
        if self._union is None:
            specs: list[Spec] = [
                StringSpec(self.dialect),
                NumberSpec(integer=False, fraction_required=False),
                LiteralsSpec((self.dialect.true, self.dialect.false)),
            ]
            if self.depth < MAX_FREE_DEPTH:
                specs.append(ArraySpec(AnySpec(self.dialect, self.depth + 1)))
                specs.append(ObjectSpec(self.dialect, None, depth=self.depth + 1))
            self._union = UnionSpec(specs)
        return self._union.begin(parent, char)


_TYPE_ALIASES = {"dict": "object", "float": "number", "tuple": "array", "bool": "boolean", "int": "integer"}


def value_spec(schema: Any, dialect: Dialect, depth: int = 0, source: Extraction | None = None) -> Spec:
    """The spec of a value of JSON `schema` (BFCL's type names accepted too); with a `source`,
    free strings and numbers are copied from it (`Extraction`)."""
    if not isinstance(schema, dict):
        return AnySpec(dialect, depth)
    enum = schema.get("enum")
    if isinstance(enum, list) and enum:
        options = [text for value in enum for text in dialect.encode(value)]
        if options:
            return LiteralsSpec(options)
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds]
    specs = [
        spec for kind in kinds if (spec := _typed_spec(schema, kind, dialect, depth, source)) is not None
    ]
    if not specs:
        return AnySpec(dialect, depth)
    return specs[0] if len(specs) == 1 else UnionSpec(specs)


def _typed_spec(
    schema: dict[str, Any], kind: Any, dialect: Dialect, depth: int, source: Extraction | None = None
) -> Spec | None:
    kind = _TYPE_ALIASES.get(str(kind), str(kind)) if kind is not None else None
    if kind == "string":
        return (
            ExtractedStringSpec(dialect, source)
            if source is not None and source.starts
            else StringSpec(dialect)
        )
    if kind in ("integer", "number"):
        return _extracted_number(kind == "integer", source)
    if kind == "boolean":
        return LiteralsSpec((dialect.true, dialect.false))
    if kind == "array":
        items = value_spec(schema.get("items"), dialect, depth + 1, source)
        low = schema.get("minItems")
        high = schema.get("maxItems")
        return ArraySpec(
            items,
            low if isinstance(low, int) and low >= 0 else 0,
            high if isinstance(high, int) and high >= 0 else None,
        )
    if kind == "object":
        return object_spec(schema, dialect, JSON_OBJECT, depth, source)
    if kind in (None, "any", "None"):
        return AnySpec(dialect, depth) if kind is not None else None
    return None  # "null" and unknown types: not written


def object_spec(
    schema: dict[str, Any],
    dialect: Dialect,
    syntax: ObjectSyntax,
    depth: int = 0,
    source: Extraction | None = None,
) -> ObjectSpec:
    """The spec of an object schema: its properties and required keys (free without properties)."""
    properties = schema.get("properties")
    if not isinstance(properties, dict) or (not properties and syntax is JSON_OBJECT and depth > 0):
        return ObjectSpec(dialect, None, syntax=syntax, depth=depth)
    specs = {
        str(key): value_spec(sub, dialect, depth + 1, source)
        for key, sub in properties.items()
        if syntax.quoted_keys or _keyword_argument(str(key))
    }
    required = schema.get("required")
    return ObjectSpec(dialect, specs, required if isinstance(required, list) else (), syntax, depth)


def _keyword_argument(key: str) -> bool:
    """Whether a property can be written as a Python keyword argument (``key=value``). Others
    (``""``, ``"a b"``, ``"class"``) are left out of a pythonic call: no reader could parse them,
    and an empty one left the automaton without a first character to write."""
    return key.isidentifier() and not keyword.iskeyword(key)


# --- extraction: argument values copied from the request ---------------------------------------

_NUMBER_PATTERN = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\w.])-?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class Extraction:
    """What a request offers to copy into argument values: the text of its user turns and tool
    results, where a copied span may start (the start of a word, a number or a bracketed or
    quoted phrase), and the numbers it writes.

    A small model picks argument values badly but copies well: under ``--model.guided
    grounded`` a free string value must be a span of this text (starting at a word start, ending
    at a word end) and a number one of its numbers. Enum and boolean values stay schema-bound.
    """

    text: str
    starts: tuple[int, ...]
    integers: tuple[str, ...]
    decimals: tuple[str, ...]

    @classmethod
    def of_text(cls, text: str) -> Extraction:
        starts = tuple(
            index
            for index, char in enumerate(text)
            if not char.isspace()
            and char not in "\"'\\"
            and (
                index == 0
                or text[index - 1].isspace()
                or text[index - 1] in "\"'`([{"
                or (char.isalnum() and not text[index - 1].isalnum())
            )
        )
        integers: dict[str, None] = {}
        decimals: dict[str, None] = {}
        for match in _NUMBER_PATTERN.finditer(text):
            written = match.group().replace(",", "")
            for spelled in {written, written.lstrip("-")}:
                value = float(spelled)
                if "." not in spelled:
                    integers[str(int(spelled))] = None
                decimals[repr(value) if "." in repr(value) else f"{value:.1f}"] = None
                if "." in spelled:
                    decimals[spelled] = None
        return cls(text, starts, tuple(integers), tuple(decimals))

    @classmethod
    def of_messages(cls, messages: Sequence[dict[str, Any]]) -> Extraction | None:
        """The text of the user turns and of the tool results (None: nothing to copy from). In an
        episode a later call takes its values from what earlier calls returned (the file that
        list_files found, the id that a search gave)."""
        texts = [
            message["content"]
            for message in messages
            if isinstance(message, dict)
            and message.get("role") in ("user", "tool")
            and isinstance(message.get("content"), str)
        ]
        text = "\n".join(text for text in texts if text.strip())
        return cls.of_text(text) if text else None

    def ends_word(self, end: int) -> bool:
        """Whether a span may end before `end` (not inside a word or a number, not on a space)."""
        text = self.text
        if text[end - 1].isspace():
            return False
        return end >= len(text) or not (text[end - 1].isalnum() and text[end].isalnum())


class ExtractedStringSpec(Spec):
    """A string whose content is a span of the request (see `Extraction`)."""

    def __init__(self, dialect: Dialect, source: Extraction, max_length: int = MAX_STRING) -> None:
        self.dialect = dialect
        self.source = source
        self.max_length = max_length
        self.first = frozenset(dialect.quotes)
        self._following: dict[str, dict[str, tuple[int, ...]]] = {}

    def begin(self, parent: Frame, char: str) -> Frame | None:
        if char not in self.first:
            return None
        return _ExtractedStringFrame(parent, self, char, self.source.starts, "")

    def following(self, content: str, starts: tuple[int, ...]) -> dict[str, tuple[int, ...]]:
        """The `starts` of `content` grouped by the character after it, worked out once per
        content. A state is fed many candidates (the top-k, and in a wide search every first
        character of the vocabulary), each in a frame of its own: filtering every start per
        character cost seconds a step on a long request (2.4 s at 5,000 words)."""
        groups = self._following.get(content)
        if groups is None:
            groups = self._following[content] = _group_by_next(self.source.text, starts, len(content))
        return groups


class _ExtractedStringFrame(Frame):
    # content: what the string holds so far; starts: where in the source that content begins
    # (every place it matches). What may follow is looked up in the spec's groups (see
    # `ExtractedStringSpec.following`).
    __slots__ = ("content", "quote", "spec", "starts")

    def __init__(
        self,
        parent: Frame | None,
        spec: ExtractedStringSpec,
        quote: str,
        starts: tuple[int, ...],
        content: str,
    ) -> None:
        super().__init__(parent)
        self.spec, self.quote, self.starts, self.content = spec, quote, starts, content

    def _closable(self) -> bool:
        length = len(self.content)
        return length > 0 and any(self.spec.source.ends_word(start + length) for start in self.starts)

    def feed(self, char: str) -> Frame | None:
        if char == self.quote:
            return self._up("") if self._closable() else None
        if char == "\\" or char < " " or len(self.content) >= self.spec.max_length:  # no escapes needed
            return None
        starts = self.spec.following(self.content, self.starts).get(char)
        if not starts:
            return None
        return _ExtractedStringFrame(self.parent, self.spec, self.quote, starts, self.content + char)

    def close_step(self) -> str:
        if self._closable():
            return self.quote
        start = self.starts[0]
        return self.spec.source.text[start + len(self.content)]


def _group_by_next(text: str, starts: tuple[int, ...], at: int) -> dict[str, tuple[int, ...]]:
    """The starts grouped by the character `at` places after each (in order within a group)."""
    groups: dict[str, list[int]] = {}
    for start in starts:
        if start + at < len(text):
            groups.setdefault(text[start + at], []).append(start)
    return {char: tuple(group) for char, group in groups.items()}


class ExtractedNumbersSpec(LiteralsSpec):
    """A number that the request writes (integers, or numbers spelled with a fraction)."""


def _extracted_number(integer: bool, source: Extraction | None) -> Spec:
    if source is not None:
        options = source.integers if integer else source.decimals
        if options:
            return ExtractedNumbersSpec(options)
    return NumberSpec(integer=integer)


def _extractive(spec: Spec) -> bool:
    return isinstance(spec, ExtractedStringSpec | ExtractedNumbersSpec)


def in_extracted_value(state: Frame, following: Frame | None) -> bool:
    """Whether a token taken in `state` (leading to `following`) writes a copied value."""
    for frame in (state, following):
        if isinstance(frame, _ExtractedStringFrame) or (
            isinstance(frame, _LiteralsFrame) and isinstance(frame.spec, ExtractedNumbersSpec)
        ):
            return True
    if isinstance(state, _ObjectFrame) and state.phase == _O_VALUE and state.spec.properties is not None:
        return _extractive(state.spec.value_of(state.key))
    if isinstance(state, _ArrayFrame) and state.phase in (_A_FIRST, _A_NEXT):
        return _extractive(state.spec.items)
    return False


# --- whole answers: calls in a format ---------------------------------------------------------


class _Lit:
    """A fixed text inside a sequence."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


class _Space:
    """One optional character (a space or a newline) inside a sequence."""

    __slots__ = ("chars",)

    def __init__(self, chars: str = " ") -> None:
        self.chars = chars


class _NameSlot:
    """The function name: one of the offered names, as the format writes it."""

    __slots__ = ("names", "spec")

    def __init__(self, encoded: dict[str, str]) -> None:
        self.names = encoded  # written form -> function name
        self.spec = LiteralsSpec(encoded)


class _ArgumentsSlot:
    """The arguments of the function named earlier in the sequence."""

    __slots__ = ("by_name",)

    def __init__(self, by_name: dict[str, Spec]) -> None:
        self.by_name = by_name


_Part = _Lit | _Space | _NameSlot | _ArgumentsSlot | Spec


class SequenceSpec(Spec):
    """Fixed texts, optional spaces, a function name and its arguments, in order: one call."""

    def __init__(self, parts: Sequence[_Part]) -> None:
        self.parts = tuple(parts)
        first = parts[0]
        if isinstance(first, _Lit):
            self.first = frozenset(first.text[:1])
        elif isinstance(first, _NameSlot):
            self.first = first.spec.first

    def begin(self, parent: Frame, char: str) -> Frame | None:
        return _SequenceFrame(parent, self, 0, 0, "").feed(char)

    def opener(self) -> str:
        first = self.parts[0]
        if isinstance(first, _Lit):
            return first.text[0]
        assert isinstance(first, _NameSlot)
        return first.spec.opener()


class _SequenceFrame(Frame):
    __slots__ = ("index", "name", "position", "spec")

    def __init__(
        self, parent: Frame | None, spec: SequenceSpec, index: int, position: int, name: str
    ) -> None:
        super().__init__(parent)
        self.spec, self.index, self.position, self.name = spec, index, position, name

    def _at(self, index: int, position: int = 0) -> Frame:
        if index == len(self.spec.parts):
            return self._up(self.name)
        return _SequenceFrame(self.parent, self.spec, index, position, self.name)

    def feed(self, char: str) -> Frame | None:
        frame: _SequenceFrame = self
        while True:
            part = frame.spec.parts[frame.index]
            if isinstance(part, _Lit):
                if char != part.text[frame.position]:
                    return None
                if frame.position + 1 < len(part.text):
                    return frame._at(frame.index, frame.position + 1)
                return frame._at(frame.index + 1)
            if isinstance(part, _Space):
                if char in part.chars:
                    return frame._at(frame.index + 1)
                skipped = frame._at(frame.index + 1)
                if not isinstance(skipped, _SequenceFrame):
                    return skipped.feed(char)
                frame = skipped
                continue
            if isinstance(part, _NameSlot):
                return part.spec.begin(frame, char)
            if isinstance(part, _ArgumentsSlot):
                return part.by_name[frame.name].begin(frame, char)
            return part.begin(frame, char)

    def close_step(self) -> str:
        part = self.spec.parts[self.index]
        if isinstance(part, _Lit):
            return part.text[self.position]
        if isinstance(part, _Space):
            return self._at(self.index + 1).close_step()
        if isinstance(part, _NameSlot):
            return part.spec.opener()
        if isinstance(part, _ArgumentsSlot):
            return part.by_name[self.name].opener()
        return part.opener()

    def resume(self, text: str) -> Frame:
        part = self.spec.parts[self.index]
        name = part.names[text] if isinstance(part, _NameSlot) else self.name
        if self.index + 1 == len(self.spec.parts):
            return self._up(name)
        return _SequenceFrame(self.parent, self.spec, self.index + 1, 0, name)


class CallListSpec(Spec):
    """``[call, call]``: one or more calls in a list (JSON list, Python list)."""

    first = frozenset("[")

    def __init__(self, call: Spec) -> None:
        self.call = call

    def begin(self, parent: Frame, char: str) -> Frame | None:
        return _CallListFrame(parent, self, _A_FIRST, 0, False) if char == "[" else None

    def opener(self) -> str:
        return "["


class _CallListFrame(Frame):
    __slots__ = ("count", "phase", "spaced", "spec")

    def __init__(
        self, parent: Frame | None, spec: CallListSpec, phase: int, count: int, spaced: bool
    ) -> None:
        super().__init__(parent)
        self.spec, self.phase, self.count, self.spaced = spec, phase, count, spaced

    def feed(self, char: str) -> Frame | None:
        if self.phase == _A_AFTER:
            if char == "," and self.count < MAX_CALLS:
                return _CallListFrame(self.parent, self.spec, _A_NEXT, self.count, False)
            return self._up("") if char == "]" else None
        if self.phase == _A_NEXT and char == " " and not self.spaced:
            return _CallListFrame(self.parent, self.spec, _A_NEXT, self.count, True)
        if self.phase in (_A_FIRST, _A_NEXT):
            inner = _CallListFrame(self.parent, self.spec, _A_IN_ITEM, self.count, False)
            return self.spec.call.begin(inner, char)
        return None

    def close_step(self) -> str:
        return "]" if self.phase == _A_AFTER else self.spec.call.opener()

    def resume(self, text: str) -> Frame:
        return _CallListFrame(self.parent, self.spec, _A_AFTER, self.count + 1, False)


class _Root(Frame):
    """The start of an answer: the format's opening; the whole answer completes into `End`."""

    __slots__ = ("spec",)

    def __init__(self, spec: Spec) -> None:
        super().__init__(None)
        self.spec = spec

    def feed(self, char: str) -> Frame | None:
        return self.spec.begin(_Finish(), char)

    def close_step(self) -> str:
        return self.spec.opener()


class _Finish(Frame):
    __slots__ = ()

    def __init__(self) -> None:
        super().__init__(None)

    def feed(self, char: str) -> Frame | None:
        return None

    def resume(self, text: str) -> Frame:
        return End()


class _Repeated(Frame):
    """After a tagged call (hermes): end here, or (after an optional newline) open another."""

    __slots__ = ("count", "newline", "spec")

    def __init__(self, spec: Spec, count: int, newline: bool) -> None:
        super().__init__(None)
        self.spec, self.count, self.newline = spec, count, newline

    def feed(self, char: str) -> Frame | None:
        if char == "\n" and not self.newline:
            return _Repeated(self.spec, self.count, True)
        if self.count >= MAX_CALLS:
            return None
        return self.spec.begin(_Repeated(self.spec, self.count + 1, False), char)

    def resume(self, text: str) -> Frame:
        return self  # the call's frame was started with the next state as its parent

    def can_stop(self) -> bool:
        return True


class _RepeatedRoot(Frame):
    __slots__ = ("spec",)

    def __init__(self, spec: Spec) -> None:
        super().__init__(None)
        self.spec = spec

    def feed(self, char: str) -> Frame | None:
        return self.spec.begin(_Repeated(self.spec, 1, False), char)

    def close_step(self) -> str:
        return self.spec.opener()


def _functions(tools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    functions = [tool.get("function", tool) for tool in tools if isinstance(tool, dict)]
    return [function for function in functions if isinstance(function, dict) and function.get("name")]


def _arguments(
    functions: list[dict[str, Any]], dialect: Dialect, syntax: ObjectSyntax, source: Extraction | None
) -> dict[str, Spec]:
    by_name: dict[str, Spec] = {}
    for function in functions:
        parameters = function.get("parameters")
        parameters = parameters if isinstance(parameters, dict) else {}
        if source is not None:
            parameters = _required_only(parameters)
        by_name[str(function["name"])] = object_spec(parameters, dialect, syntax, source=source)
    return by_name


def _required_only(parameters: dict[str, Any]) -> dict[str, Any]:
    """The parameters schema without its optional properties (where some are required): with
    values copied from the request, a weak model's optional arguments are mostly guesses, and
    an optional argument left out takes its default."""
    properties, required = parameters.get("properties"), parameters.get("required")
    if not isinstance(properties, dict) or not isinstance(required, list) or not required:
        return parameters
    return {**parameters, "properties": {key: value for key, value in properties.items() if key in required}}


def _json_call(functions: list[dict[str, Any]], source: Extraction | None) -> SequenceSpec:
    names = {JSON.encode_string(str(function["name"]))[0]: str(function["name"]) for function in functions}
    return SequenceSpec(
        [
            _Lit('{"name":'),
            _Space(),
            _NameSlot(names),
            _Lit(","),
            _Space(),
            _Lit('"arguments":'),
            _Space(),
            _ArgumentsSlot(_arguments(functions, JSON, JSON_OBJECT, source)),
            _Lit("}"),
        ]
    )


def _json_answer(functions: list[dict[str, Any]], source: Extraction | None = None) -> Frame:
    call = _json_call(functions, source)
    return _Root(UnionSpec([call, CallListSpec(call)]))


def _hermes_answer(functions: list[dict[str, Any]], source: Extraction | None = None) -> Frame:
    tagged = SequenceSpec(
        [_Lit("<tool_call>"), _Space("\n"), _json_call(functions, source), _Space("\n"), _Lit("</tool_call>")]
    )
    return _RepeatedRoot(tagged)


def _pythonic_answer(functions: list[dict[str, Any]], source: Extraction | None = None) -> Frame:
    names = {str(function["name"]): str(function["name"]) for function in functions}
    call = SequenceSpec(
        [
            _NameSlot(names),
            _Lit("("),
            _ArgumentsSlot(_arguments(functions, PYTHON, KEYWORD_ARGUMENTS, source)),
        ]
    )
    return _Root(CallListSpec(call))


# format name -> the start state of an answer of calls to these functions (values copied from
# the request where an `Extraction` is given)
GUIDED_FORMATS: dict[str, Callable[[list[dict[str, Any]], Extraction | None], Frame]] = {
    "json": _json_answer,
    "hermes": _hermes_answer,
    "pythonic": _pythonic_answer,
}


@dataclass(frozen=True)
class CallGrammar:
    """The automaton of answers that call the offered tools in one format."""

    format: str
    start: Frame

    @classmethod
    def build(
        cls,
        format_name: str,
        tools: Sequence[dict[str, Any]],
        only: str | None = None,
        source: Extraction | None = None,
    ) -> CallGrammar | None:
        """The grammar for `tools` (only the function `only`, when named; free strings and
        numbers copied from `source`, when given); None when the format is not guided or no tool
        has a name."""
        builder = GUIDED_FORMATS.get(format_name)
        functions = _functions(tools)
        if only is not None:
            functions = [function for function in functions if function["name"] == only] or functions
        elif source is not None:
            functions = best_fitting(functions, source.text)
        if builder is None or not functions:
            return None
        return cls(format_name, builder(functions, source))

    def accepts(self, text: str) -> bool:
        """Whether `text` is a complete answer (the automaton may stop after it)."""
        state = advance(self.start, text)
        return state is not None and state.can_stop()

    def prefix_ok(self, text: str) -> bool:
        """Whether `text` can be continued into a complete answer."""
        return advance(self.start, text) is not None


# --- token texts ------------------------------------------------------------------------------


def _byte_level_alphabet() -> dict[str, int]:
    """The printable character a byte-level BPE vocabulary uses for each byte (GPT-2's scheme:
    printable Latin-1 bytes stand for themselves, the others map to 256 and up, in order)."""
    printable = [
        *range(ord("!"), ord("~") + 1),
        *range(ord("¡"), ord("¬") + 1),
        *range(ord("®"), ord("ÿ") + 1),
    ]
    alphabet = {chr(byte): byte for byte in printable}
    shifted = 0
    for byte in range(256):
        if byte not in printable:
            alphabet[chr(256 + shifted)] = byte
            shifted += 1
    return alphabet


class TokenTable:
    """Each token id's text (None: special, empty, or not clean UTF-8), computed once per
    tokenizer, with what the processor looks up per step: token ids by text (to write a closing
    text), and each token's first character as a small integer (to filter a whole row at once)."""

    def __init__(self, texts: list[str | None]) -> None:
        self.texts = texts
        self.by_text: dict[str, int] = {}
        for index, text in enumerate(texts):
            if text is not None:
                self.by_text.setdefault(text, index)
        self.longest = max((len(text) for text in self.by_text), default=1)
        self.first_chars = sorted({text[0] for text in self.by_text})
        number = {char: position for position, char in enumerate(self.first_chars)}
        self.first_codes = [number[text[0]] if text is not None else -1 for text in texts]
        self._codes_on: dict[str, torch.Tensor] = {}

    @classmethod
    def build(cls, tokenizer: Any) -> TokenTable:
        size = len(tokenizer)
        added = getattr(tokenizer, "added_tokens_decoder", {}) or {}
        special = {int(i) for i in getattr(tokenizer, "all_special_ids", []) or []}
        special |= {int(i) for i, token in added.items() if getattr(token, "special", False)}
        backend = getattr(tokenizer, "backend_tokenizer", None)
        decoder = getattr(backend, "decoder", None)
        texts: list[str | None]
        if decoder is not None and type(decoder).__name__ == "ByteLevel":
            texts = _byte_level_texts(tokenizer, size, added)
        else:
            texts = list(tokenizer.batch_decode([[index] for index in range(size)]))
        return cls(
            [None if index in special or not _clean(text) else text for index, text in enumerate(texts)]
        )

    def __len__(self) -> int:
        return len(self.texts)

    def first_codes_on(self, device: Any) -> torch.Tensor:
        import torch

        key = str(device)
        if key not in self._codes_on:
            self._codes_on[key] = torch.tensor(self.first_codes, dtype=torch.long, device=device)
        return self._codes_on[key]

    def tokens_for(self, text: str) -> list[int]:
        """`text` as token ids, longest known token first (to write a closing text)."""
        ids: list[int] = []
        position = 0
        while position < len(text):
            for end in range(min(len(text), position + self.longest), position, -1):
                token = self.by_text.get(text[position:end])
                if token is not None:
                    ids.append(token)
                    position = end
                    break
            else:
                return []  # a character no token spells: cannot be written
        return ids


def _byte_level_texts(tokenizer: Any, size: int, added: dict[int, Any]) -> list[str | None]:
    alphabet = _byte_level_alphabet()
    texts: list[str | None] = []
    for index, piece in enumerate(tokenizer.convert_ids_to_tokens(list(range(size)))):
        if index in added:
            texts.append(str(getattr(added[index], "content", piece)))
            continue
        if piece is None:
            texts.append(None)
            continue
        try:
            texts.append(bytes(alphabet[char] for char in piece).decode("utf-8"))
        except (KeyError, UnicodeDecodeError):
            texts.append(None)
    return texts


def _clean(text: str | None) -> bool:
    return bool(text) and "\ufffd" not in (text or "")


def token_table(tokenizer: Any) -> TokenTable:
    """The tokenizer's table, built on first use and kept on the tokenizer object."""
    table = getattr(tokenizer, "_guided_token_table", None)
    if not isinstance(table, TokenTable) or len(table) != len(tokenizer):
        table = TokenTable.build(tokenizer)
        tokenizer._guided_token_table = table
    return table


# --- the logits processor ---------------------------------------------------------------------

_FREE, _UNDECIDED, _GUIDED, _DONE = range(4)
# Within this many tokens of its budget a row checks that the call can still be closed in time.
CLOSING_WINDOW = 64


@dataclass
class CallEvidence:
    """What a row's guided decoding showed about its call, for `--model.guided grounded`: per
    token the guide let through, how many logits it was behind the model's own first choice,
    and whether it wrote a value copied from the request (`Extraction`) or the call's frame
    (format, name, keys). Filled by `GuidedCalls` as the row decodes."""

    steps: list[tuple[bool, float]] = field(default_factory=list)  # (copied value?, gap)
    request_text: str = ""  # what the values were copied from
    functions: list[dict[str, Any]] = field(default_factory=list)  # the offered functions

    def value_gaps(self) -> list[list[float]]:
        """The gaps of each copied value's tokens, value by value."""
        values: list[list[float]] = []
        inside = False
        for copied, gap in self.steps:
            if copied and not inside:
                values.append([])
            if copied:
                values[-1].append(gap)
            inside = copied
        return values

    def frame_gaps(self) -> list[float]:
        return [gap for copied, gap in self.steps if not copied]


@dataclass
class RowGuide:
    """How one row of a batch is guided: its grammar's state after the forced prefix (None: the
    row is left alone), whether the call is forced (tool_choice required or named, or
    ``--model.guided grounded``), and where the row's `CallEvidence` goes (None: not kept)."""

    state: Frame | None
    forced: bool = False
    call_bias: float = NATIVE_CALL_BIAS
    prefix_tokens: int = 0  # tokens of the call already written by the forced prefix
    evidence: CallEvidence | None = None


def row_guide(
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
    """The guide of a request: its tools' grammar in the adapter's format (values copied from
    `source` when given), advanced past the forced prefix already in the prompt. Unguided
    (state None) when there is nothing to guide."""
    grammar = CallGrammar.build(format_name, tools, only=function_name if must_call else None, source=source)
    if grammar is None:
        return RowGuide(None)
    state = advance(grammar.start, prefix)
    if state is None:  # a prefix the grammar does not know: leave the row to the model
        return RowGuide(None)
    if evidence is not None:
        evidence.request_text = source.text if source is not None else ""
        evidence.functions = _functions(tools)
    return RowGuide(
        state, forced=must_call, call_bias=call_bias, prefix_tokens=prefix_tokens, evidence=evidence
    )


class GuidedCalls:
    """A ``generate`` logits processor keeping each guided row on a well-formed call.

    Rows are independent: each has its own state, budget and mode (free, undecided, guided,
    done). A row whose last token is not one this processor let through (padding after EOS, a
    row the budget stopped) is done and left alone. Near its budget a guided row only takes
    tokens after which the call can still be closed (`closing_text`) in the tokens left, and
    writes the closing text itself when the model's candidates do not allow that. A row whose
    guide raises ends at EOS with the exception in ``failures``; the other rows go on.
    """

    def __init__(
        self,
        prompt_width: int,
        guides: Sequence[RowGuide],
        table: TokenTable,
        eos_ids: Sequence[int],
        *,
        budgets: Sequence[int] | None = None,
        sample: bool = False,
        top_k: int = TOP_K,
    ) -> None:
        self.prompt_width = prompt_width
        self.table = table
        self.eos = list(eos_ids)
        self.eos_set = frozenset(self.eos)
        self.budgets = list(budgets) if budgets is not None else [1 << 30] * len(guides)
        self.sample = sample
        self.top_k = top_k
        self.call_biases = [guide.call_bias for guide in guides]
        self.evidence = [guide.evidence for guide in guides]
        self.states: list[Frame | None] = [guide.state for guide in guides]
        self.modes = [
            _FREE if guide.state is None else (_GUIDED if guide.forced else _UNDECIDED) for guide in guides
        ]
        # token id -> the state after it, for the tokens let through at the last step
        self.pending: list[dict[int, Frame | None]] = [{} for _ in guides]
        # tokens of the call being written, and of the longest call written, per row: another
        # call is opened only when the budget left holds one as long (a call cut short by the
        # budget is worth less than none)
        self.call_tokens = [guide.prefix_tokens for guide in guides]
        self.longest_call = [0] * len(guides)
        # rows whose guide raised: each ended at EOS there, and its caller must get an error
        self.failures: dict[int, Exception] = {}
        self.wide_searches = 0  # how often the top-k held no allowed token (tests, tuning)
        self.closings = 0  # how often a row near its budget had to write its closing text

    def modes_by_row(self) -> list[str]:
        """Each row's mode, in words (tests, logs)."""
        names = {_FREE: "free", _UNDECIDED: "undecided", _GUIDED: "guided", _DONE: "done"}
        return [names[mode] for mode in self.modes]

    def __call__(self, input_ids: torch.Tensor, scores: torch.Tensor) -> torch.Tensor:
        step = input_ids.shape[1] - self.prompt_width
        if step > 0:
            self._take_last(input_ids)
        rows = [row for row, mode in enumerate(self.modes) if mode in (_UNDECIDED, _GUIDED)]
        if not rows:
            return scores
        k = min(self.top_k, scores.shape[-1])
        top_values, top_ids = scores[rows].topk(k, dim=-1)
        values_by_row = top_values.tolist()
        ids_by_row = top_ids.tolist()
        for position, row in enumerate(rows):
            left = self.budgets[row] - step - 1  # tokens after the one chosen now
            try:
                keep = self._choose(row, scores, ids_by_row[position], values_by_row[position], left)
            except Exception as error:  # this row's guide failed: end the row, keep the others
                self.failures[row] = error
                self.modes[row], self.states[row], self.pending[row] = _DONE, None, {}
                keep = self.eos[:1]
            if keep is None:
                continue
            kept = scores[row, keep].clone()
            scores[row, :] = float("-inf")
            scores[row, keep] = kept
        return scores

    def _take_last(self, input_ids: torch.Tensor) -> None:
        rows = [row for row, mode in enumerate(self.modes) if mode == _GUIDED]
        if not rows:
            return
        last = input_ids[rows, -1].tolist()
        for row, token in zip(rows, last, strict=True):
            pending = self.pending[row]
            # a token the guide did not offer, or one it offered with no state after it (only
            # EOS should have none), ends the guidance: the row must never be guided stateless
            state = None if token in self.eos_set else pending.get(token)
            if state is None:
                self.modes[row] = _DONE
                self.states[row] = None
            else:
                self.states[row] = state
                self.call_tokens[row] += 1
                if state.can_stop():  # a call is complete
                    self.longest_call[row] = max(self.longest_call[row], self.call_tokens[row])
                    self.call_tokens[row] = 0
            self.pending[row] = {}

    def _choose(
        self, row: int, scores: torch.Tensor, ids: list[int], values: list[float], left: int
    ) -> list[int] | None:
        """The token ids this row may take now (None: leave the row's scores as they are)."""
        state = self.states[row]
        assert state is not None
        if state.must_stop() or (state.can_stop() and left < self.longest_call[row] + 2):
            self.pending[row] = {}
            return self.eos[:1] if self.modes[row] == _GUIDED else None
        fits = self._fits(left) if left < CLOSING_WINDOW else None
        allowed = self._allowed(state, ids, first_only=not self.sample, fits=fits)
        if self.modes[row] == _UNDECIDED:
            call = allowed or self._wider(state, scores[row])
            best_call = scores[row, next(iter(call))].item() if call else None
            if best_call is None or best_call + self.call_biases[row] < values[0]:
                self.modes[row] = _FREE  # the model prefers to answer in words
                self.states[row] = None
                return None
            self.modes[row] = _GUIDED
            if not allowed and (fits is None or all(fits(following) for following in call.values())):
                allowed = call
        if not allowed and fits is None:
            self.wide_searches += 1
            allowed = self._wider(state, scores[row])
        if not allowed:  # near the budget (or nothing else continues the call): close it now
            allowed = self._closing(state)
        self.pending[row] = allowed
        evidence = self.evidence[row]
        if evidence is not None:
            token, following = next(iter(allowed.items()))
            gap = values[0] - float(scores[row, token].item())
            evidence.steps.append((in_extracted_value(state, following), gap))
        return list(allowed)

    def _fits(self, left: int) -> Callable[[Frame | None], bool]:
        """Whether the call can still be closed from a state within `left` tokens."""

        # No token is longer than the table's longest, so a closing text past `reach`
        # characters cannot fit; it is not worked out further. (A schema whose shortest
        # completion is long, `minItems: 1e9` or a long enum value, made every candidate
        # work out 4096 characters: 60 times a step's cost, for 64 steps.)
        reach = left * self.table.longest

        def fits(state: Frame | None) -> bool:
            if state is None or state.can_stop():
                return True
            text = closing_text(state, limit=reach + 1)
            if len(text) > reach:
                return False
            ids = self.table.tokens_for(text)
            return bool(ids) and len(ids) <= left

        return fits

    def _allowed(
        self,
        state: Frame,
        ids: Iterable[int],
        *,
        first_only: bool,
        fits: Callable[[Frame | None], bool] | None = None,
    ) -> dict[int, Frame | None]:
        allowed: dict[int, Frame | None] = {}
        texts = self.table.texts
        for token in ids:
            if token in self.eos_set:
                if state.can_stop():
                    allowed[token] = None
            else:
                text = texts[token] if token < len(texts) else None
                if text is None:
                    continue
                following = advance(state, text)
                if following is None or (fits is not None and not fits(following)):
                    continue
                allowed[token] = following
            if allowed and first_only:
                break
        return allowed

    def _wider(self, state: Frame, row_scores: torch.Tensor) -> dict[int, Frame | None]:
        """The best allowed token of the whole row: only tokens whose first character the
        state accepts are looked at, in descending order."""
        import torch

        table = self.table
        accepted = [code for code, char in enumerate(table.first_chars) if state.feed(char) is not None]
        if state.can_stop():
            return {self.eos[0]: None}
        if not accepted:
            return {}
        codes = table.first_codes_on(row_scores.device)
        wanted = torch.tensor(accepted, dtype=torch.long, device=row_scores.device)
        usable = torch.isin(codes, wanted)
        width = min(len(table), row_scores.shape[-1])
        masked = torch.where(
            usable[:width], row_scores[:width], torch.full_like(row_scores[:width], float("-inf"))
        )
        count = int(usable[:width].sum().item())
        order = masked.argsort(descending=True)[:count].tolist()
        for start in range(0, len(order), 256):
            found = self._allowed(state, order[start : start + 256], first_only=True)
            if found:
                return found
        return {}

    def _closing(self, state: Frame) -> dict[int, Frame | None]:
        """The first token of the closing text (the row is about to run out of tokens)."""
        self.closings += 1
        ids = self.table.tokens_for(closing_text(state))
        following = advance(state, self.table.texts[ids[0]] or "") if ids else None
        if following is None:  # the tokenizer splits the closing text so that it does not continue
            return {self.eos[0]: None}  # the call: end the row rather than write outside the schema
        return {ids[0]: following}


def call_bias_for(format_name: str, *, native: bool) -> float:
    """The first-step call bias for a prompt whose tools the chat template rendered (native) or
    the adapter's system prompt described."""
    return NATIVE_CALL_BIAS if native else PROMPTED_CALL_BIAS.get(format_name, NATIVE_CALL_BIAS)


# --- grounding: keep a forced call only where the request supports it ---------------------------

# --model.guided grounded decodes every answer as a call (forced), its free values copied from
# the request (`Extraction`), then keeps a call only when the request grounds it:
# * the tool: its name, description or parameter descriptions share a content word with the
#   request (no offered tool fits an irrelevant request, so the model's pick shares none);
# * the values: while writing each copied value the model's own first choice was never more
#   than GROUNDED_MAX_VALUE_GAP logits above the copied token. A value the request does not
#   give (a missing parameter) is one the model wants to invent: it strains against the copy;
# * the values again, as written: no value only names its parameter's kind ("the table"), no
#   two parameters hold the same text, every number is one the request writes.
# Measured on SmolLM2-135M (docs/miner.md): 3 x 48 tasks, 8 per category, json format.
GROUNDED_MAX_VALUE_GAP = 8.0
GROUNDED_MIN_SHARED_WORDS = 1
# words that say nothing about what a tool does (tool-description boilerplate, function words)
_PLAIN_TEXT = """the and for with from this that these those its are was were has have had not but all any
    can you your our out into onto over per via one two some how what which who whom whose when
    where why will would could should please thanks thank tool call calls called returns return
    result results structured data argument arguments required every fill only request requests
    needs need case insensitive possible given value values"""
_PLAIN_WORDS = frozenset(_PLAIN_TEXT.split())
_WORD = re.compile(r"[a-z]+")
_CAMEL = re.compile(r"([a-z])([A-Z])")


def content_words(text: str) -> frozenset[str]:
    """The content words of a text, stemmed to five letters (camelCase and snake_case split)."""
    spaced = _CAMEL.sub(r"\1 \2", text).lower()
    return frozenset(
        word[:5] for word in _WORD.findall(spaced) if len(word) >= 3 and word not in _PLAIN_WORDS
    )


def tool_words(function: dict[str, Any]) -> frozenset[str]:
    """What a function says it is about: its name, description and parameter names and
    descriptions, as `content_words`."""
    parts = [str(function.get("name", "")), str(function.get("description", ""))]
    parameters = function.get("parameters")
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    for key, schema in (properties or {}).items():
        parts.append(str(key))
        if isinstance(schema, dict):
            parts.append(str(schema.get("description", "")))
    return content_words(" ".join(parts))


def best_fitting(functions: list[dict[str, Any]], request_text: str) -> list[dict[str, Any]]:
    """The functions that share the most content words with the request (all of them when none
    shares any): with values copied from the request, the call picks among these only. A small
    model picks its tool badly among several; word overlap with the request is a plain and
    sturdy retrieval of the tool that fits."""
    request = content_words(request_text)
    shared = [len(request & tool_words(function)) for function in functions]
    most = max(shared, default=0)
    if most == 0:
        return functions
    return [function for function, count in zip(functions, shared, strict=True) if count == most]


def ungrounded_reason(evidence: CallEvidence, tool_calls: Sequence[dict[str, Any]]) -> str | None:
    """Why the forced answer's calls are not grounded in the request (the prose answer to give
    instead), or None: keep them. `tool_calls` are the answer's OpenAI tool calls."""
    request = content_words(evidence.request_text)
    by_name = {str(function["name"]): function for function in evidence.functions}
    for call in tool_calls:
        name = str(call.get("function", {}).get("name", ""))
        function = by_name.get(name)
        if function is None or len(request & tool_words(function)) < GROUNDED_MIN_SHARED_WORDS:
            return "None of the tools I have fits this request, so I have not called any."
    missing = (
        "The request does not give every value the call needs; "
        "tell me the missing details and I will make the call."
    )
    if any(gaps and max(gaps) > GROUNDED_MAX_VALUE_GAP for gaps in evidence.value_gaps()):
        return missing
    numbers = {float(number) for number in Extraction.of_text(evidence.request_text).decimals}
    for call in tool_calls:
        function = by_name[str(call.get("function", {}).get("name", ""))]
        arguments = _arguments_of(call)
        if _names_only_the_kind(function, arguments) or not _copied_once(function, arguments, numbers):
            return missing
    return None


def _arguments_of(call: dict[str, Any]) -> dict[str, Any]:
    arguments = call.get("function", {}).get("arguments")
    try:
        values = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        return {}
    return values if isinstance(values, dict) else {}


def _copied_once(function: dict[str, Any], arguments: dict[str, Any], numbers: set[float]) -> bool:
    """Whether the call's values are the request's own, each once: no two parameters hold the
    same text (the request gave one value where the call needs two), and every number is one
    the request writes (a request without numbers leaves the guide's numbers free: invented)."""
    texts = [value for value in arguments.values() if isinstance(value, str)]
    if len(texts) != len(set(texts)):
        return False
    parameters = function.get("parameters")
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    for key, value in arguments.items():
        schema = properties.get(key) if isinstance(properties, dict) else None
        numeric = isinstance(value, int | float) and not isinstance(value, bool)
        if numeric and isinstance(schema, dict) and "enum" not in schema and float(value) not in numbers:
            return False
    return True


def _names_only_the_kind(function: dict[str, Any], values: dict[str, Any]) -> bool:
    """Whether some string value only repeats its parameter's own name or description: "the
    big table" gives a table's kind, not which table ({"table": "table"}); a request that
    names the thing itself ("sessions_2025", "Porto") gives a value the parameter does not
    describe."""
    parameters = function.get("parameters")
    properties = parameters.get("properties") if isinstance(parameters, dict) else None
    if not isinstance(properties, dict):
        return False
    for key, value in values.items():
        schema = properties.get(key)
        if not isinstance(schema, dict) or "enum" in schema:
            continue
        texts = (
            [value]
            if isinstance(value, str)
            else [item for item in value if isinstance(item, str)]
            if isinstance(value, list)
            else []
        )
        kind = content_words(f"{key} {schema.get('description', '')}")
        for text in texts:
            words = content_words(text)
            # an identifier or an amount ("DRN-509") is specific even where the description
            # gives an example of its form ("e.g. DRN-123")
            if words and words <= kind and not any(char.isdigit() for char in text):
                return True
    return False
