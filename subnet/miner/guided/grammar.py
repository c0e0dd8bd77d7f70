"""The grammar of an answer that calls the offered tools, written as EBNF for xgrammar.

`CallGrammar.build(format, tools)` turns the offered tools' JSON schemas into one grammar in an
output format (``json``, ``hermes``, ``pythonic``; `GUIDED_FORMATS`; a family with a markup of its
own, Qwen3-Coder's XML or DeepSeek's DSML, is guided through xgrammar's structural tags instead:
`subnet.miner.guided.markup`, `markup_formats`). What it accepts: the
function name is one of the offered names; the arguments are that function's properties (in any
order up to `MAX_ANY_ORDER` of them, in the schema's order beyond), the required ones always, each
at most once; values follow the
property's schema (string, integer, number, boolean, enum values, arrays with their item schema
and size bounds, nested objects with their own properties and required keys, and any value where
the schema says nothing; no null). ``number`` values are written with a fraction (``2.0``),
because the scorer takes an integer for a float only at the top level. Whitespace is canonical:
one optional space after ``:`` and ``,``. After the call the answer ends or, where the format
holds several calls, the next one opens. Repetition is right recursion, so xgrammar precomputes
the token masks; the processor closes a value that runs past `MAX_STRING` characters.

With an `Extraction` (``--model.guided forced|grounded``) a free string must be a span of the
request and a number one the request writes; only the required arguments are written, and the
function is among those that share most words with the request (`best_fitting`). Copied values
are captured rules (``copied``), so the processor can tell which tokens wrote them.
"""

from __future__ import annotations

import bisect
import itertools
import json
import keyword
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from scoring.formats import REGISTRY
from scoring.formats.spec import CallMarkup
from scoring.schema import SCHEMA_TYPE_ALIASES
from subnet.miner.guided.extraction import Extraction
from subnet.miner.guided.grounding import best_fitting
from subnet.miner.guided.markup import exits, markup_ebnf

MAX_STRING = 200  # characters in one value without a quote (kept by the processor)
MAX_FREE_DEPTH = 6  # nesting of containers in one argument where free JSON is allowed
MAX_ANY_ORDER = 4  # objects of up to this many properties take them in any order (2^n rules)
MAX_COUNTED_ITEMS = 16  # array bounds (minItems, maxItems) up to this are kept by the grammar
SEPARATOR = '"," " "?'  # between items, arguments and calls: a comma and an optional space
NEWLINE = '"\\n"?'  # between two hermes calls: an optional newline
COPIED = "copied"  # the capture name of a value copied from the request
# Copied strings are spans of the request's last this many characters: the grammar holds a
# rule per place a span may end, and compiling it grows faster than the text (0.4 s at 18,000
# characters, 3 s at 36,000); values come from the latest turns and tool results.
MAX_COPIED_SOURCE = 12_000


def ebnf_literal(text: str) -> str:
    """`text` as an EBNF string literal (UTF-8 characters as they are)."""
    out = []
    for char in text:
        if char in '"\\':
            out.append("\\" + char)
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\x{ord(char):02x}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


@dataclass(frozen=True)
class Dialect:
    """JSON or Python literal spelling (booleans, string quotes and escapes)."""

    name: str
    true: str
    false: str
    quotes: str  # characters that open (and then close) a string
    escapes: str  # characters allowed after a backslash ("u" starts 4 hex digits)

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


JSON = Dialect("json", "true", "false", '"', '"\\/bfnrtu')
PYTHON = Dialect("py", "True", "False", "\"'", "\"'\\bfnrtu")  # "\/" is no Python escape


# --- the EBNF writer ------------------------------------------------------------------------------


@dataclass
class _Rules:
    """The rules of one grammar, named as they are written; identical bodies share a rule."""

    dialect: Dialect
    source: Extraction | None = None
    lines: dict[str, str] = field(default_factory=dict)
    by_body: dict[str, str] = field(default_factory=dict)

    def add(self, body: str, hint: str, capture: bool = False) -> str:
        key = ("[copied]" if capture else "") + body
        name = self.by_body.get(key)
        if name is None:
            name = f"{hint}_{len(self.lines)}"
            head = f'{name}[capture="{COPIED}"]' if capture else name
            self.lines[name] = f"{head} ::= {body}"
            self.by_body[key] = name
        return name

    def named(self, name: str, body: str) -> str:
        """A rule under a fixed name (the shared scalar rules), written once."""
        if name not in self.lines:
            self.lines[name] = f"{name} ::= {body}"
        return name

    # scalars

    # Repetition is written as right recursion (``rest ::= "" | item rest``), as xgrammar's own
    # JSON grammar does: its token masks are then precomputed per rule. A bounded repetition
    # (``c{0,200}``) is expanded and checked per step: 70 ms a mask on a 49k vocabulary, against
    # 5 microseconds; its length bounds (strings, digits) are kept by the processor instead.

    def string(self) -> str:
        if self.dialect is JSON:
            escape = self.named(
                "jescape", r'["\\/bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F]'
            )
            rest = self.named(
                "jstring_rest", rf'"\"" | [^"\\\x00-\x1f] jstring_rest | "\\" {escape} jstring_rest'
            )
            return self.named("jstring", f'"\\"" {rest}')
        escape = self.named("pescape", r'["\'\\bfnrt] | "u" [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F] [0-9a-fA-F]')
        double = self.named(
            "pdstring_rest", rf'"\"" | [^"\\\x00-\x1f] pdstring_rest | "\\" {escape} pdstring_rest'
        )
        single = self.named(
            "psstring_rest", rf'"\'" | [^\'\\\x00-\x1f] psstring_rest | "\\" {escape} psstring_rest'
        )
        return self.named("pstring", f'"\\"" {double} | "\'" {single}')

    def integer(self) -> str:
        digits = self.named("digits", '"" | [0-9] digits')
        return self.named("integer", f'"-"? ("0" | [1-9] {digits})')

    def number(self, fraction_required: bool = True) -> str:
        integer = self.integer()
        fraction = self.named("fraction", '"." [0-9] digits')
        if fraction_required:
            return self.named("number", f"{integer} {fraction}")
        return self.named("anynumber", f'{integer} ("" | {fraction})')

    def boolean(self) -> str:
        return self.named(
            "boolean", f"{ebnf_literal(self.dialect.true)} | {ebnf_literal(self.dialect.false)}"
        )

    def literals(self, options: Sequence[str], hint: str = "enum", capture: bool = False) -> str:
        return self.add(" | ".join(ebnf_literal(option) for option in options), hint, capture)

    def any_value(self, depth: int = 0) -> str:
        name = f"any{depth}"
        if name in self.lines:
            return name
        self.lines[name] = ""  # reserved: a nested rule may refer back to it
        options = [self.string(), self.number(fraction_required=False), self.boolean()]
        if depth < MAX_FREE_DEPTH:
            options.append(self._array(self.any_value(depth + 1), 0, None))
            options.append(self._free_object(depth + 1))
        self.lines[name] = f"{name} ::= " + " | ".join(options)
        return name

    # copied values

    def copied_string(self) -> str:
        """A string whose content is a span of the request (see `Extraction`): per quote, a rule
        per place a span may end (``"" | the next word P_next``), and the starts as alternatives."""
        assert self.source is not None
        source = self.source
        options = []
        for quote in self.dialect.quotes:
            options.append(f"{ebnf_literal(quote)} {self._spans(source, quote)} {ebnf_literal(quote)}")
        return self.add(" | ".join(options), "copied_string", capture=True)

    def _spans(self, source: Extraction, quote: str) -> str:
        text = source.text
        blocked = {quote, "\\"}
        suffix = "dq" if quote == '"' else "sq"

        def usable(char: str) -> bool:
            return char not in blocked and char >= " "

        first = max(0, len(text) - MAX_COPIED_SOURCE)
        # the places a span may end, in order; between two of them the text is one step
        ends = [end for end in range(first + 1, len(text) + 1) if source.ends_word(end)]
        later = dict(itertools.pairwise(ends))  # a place -> the next place a span may end after it
        rest: dict[int, str] = {}
        for end in reversed(ends):
            following = later.get(end)
            piece = text[end:following] if following is not None else ""
            if following is not None and all(usable(char) for char in piece) and following in rest:
                body = f'"" | {ebnf_literal(piece)} {rest[following]}'
            else:
                body = '""'
            rest[end] = self.add(body, f"span_{suffix}")
        starts = []
        for start in source.starts:
            index = bisect.bisect_right(ends, start)  # the first place after the start
            if start < first or index == len(ends):
                continue
            end = ends[index]
            piece = text[start:end]
            if all(usable(char) for char in piece):
                starts.append(f"{ebnf_literal(piece)} {rest[end]}")
        if not starts:
            return '"\\x00"'  # nothing to copy with this quote: a string it cannot write
        return self.add(" | ".join(sorted(set(starts))), f"spans_{suffix}")

    # containers

    def repeated(self, item: str, separator: str = SEPARATOR) -> str:
        """Zero or more further items, each after the separator (right recursion)."""
        key = f"repeat {item} {separator}"
        name = self.by_body.get(key)
        if name is None:
            name = f"more_{len(self.lines)}"
            self.lines[name] = f'{name} ::= "" | {separator} {item} {name}'
            self.by_body[key] = name
        return name

    def _array(self, item: str, low: int, high: int | None) -> str:
        """``[item, ...]`` with `low` to `high` items: bounds up to `MAX_COUNTED_ITEMS` are
        counted by the grammar (a rule per count), larger ones left open."""
        low = min(low, MAX_COUNTED_ITEMS)
        high = None if high is None or high > MAX_COUNTED_ITEMS else max(high, low)
        if high == 0:
            return self.add('"[]"', "array")
        separator = SEPARATOR
        # after k items: what may follow, from the last count down
        tail = self.repeated(item, separator) if high is None else '""'
        for count in range(high - 1 if high is not None else low, 0, -1):
            step = f"{separator} {item} {tail}"
            tail = self.add(step if count < low else f'"" | {step}', "items")
        first = f"{item} {tail}"
        body = f'"[" {first} "]"' if low > 0 else f'"[" ("]" | {first} "]")'
        return self.add(body, "array")

    def _free_object(self, depth: int) -> str:
        key = self.string()
        value = self.any_value(depth)
        pair = self.add(f'{key} ":" " "? {value}', "pair")
        return self.add(f'"{{" ("}}" | {pair} {self.repeated(pair)} "}}")', "object")

    def properties(
        self, pairs: Sequence[tuple[str, bool]], open_: str, close: str, separator: str = SEPARATOR
    ) -> str:
        """An object of `pairs` (rule of one key and its value, required?): the required ones
        always, each pair at most once; in any order up to `MAX_ANY_ORDER` pairs (a rule per set
        of pairs written), in the schema's order beyond (O(n) rules)."""
        if len(pairs) <= MAX_ANY_ORDER:
            inside = self._any_order(pairs, frozenset(), separator)
            return self.add(f"{ebnf_literal(open_)} {inside} {ebnf_literal(close)}", "object")
        after: str = '""'  # the rest once something is written: each next pair after a comma
        first: str = '""'  # the rest while nothing is written yet
        for pair, required in reversed(pairs):
            tail = f"({separator} {pair} {after})"
            head = f"({pair} {after})"
            after = self.add(tail if required else f"{tail} | {after}", "more")
            first = self.add(head if required else f"{head} | {first}", "first")
        return self.add(f"{ebnf_literal(open_)} {first} {ebnf_literal(close)}", "object")

    def _any_order(self, pairs: Sequence[tuple[str, bool]], written: frozenset[int], separator: str) -> str:
        """What may follow once the pairs at `written` are written: another pair not written
        yet, or the end once every required pair is there."""
        options = []
        if all(index in written for index, (_, required) in enumerate(pairs) if required):
            options.append('""')
        for index, (pair, _) in enumerate(pairs):
            if index not in written:
                rest = self._any_order(pairs, written | {index}, separator)
                options.append(f"{separator} {pair} {rest}" if written else f"{pair} {rest}")
        return self.add(" | ".join(options) if options else '""', "keys")

    def value(self, schema: Any, depth: int = 0) -> str:
        """The rule of a value of JSON `schema` (BFCL's type names accepted too)."""
        if not isinstance(schema, dict):
            return self.any_value(depth)
        enum = schema.get("enum")
        if isinstance(enum, list) and enum:
            options = [text for value in enum for text in self.dialect.encode(value)]
            if options:
                return self.literals(options)
        kinds = schema.get("type")
        kinds = kinds if isinstance(kinds, list) else [kinds]
        rules = [rule for kind in kinds if (rule := self._typed(schema, kind, depth)) is not None]
        if not rules:
            return self.any_value(depth)
        return rules[0] if len(rules) == 1 else self.add(" | ".join(rules), "union")

    def _typed(self, schema: dict[str, Any], kind: Any, depth: int) -> str | None:
        kind = SCHEMA_TYPE_ALIASES.get(str(kind), str(kind)) if kind is not None else None
        source = self.source
        if kind == "string":
            return self.copied_string() if source is not None and source.starts else self.string()
        if kind in ("integer", "number"):
            options = (source.integers if kind == "integer" else source.decimals) if source else ()
            if options:
                return self.literals(options, "copied_number", capture=True)
            return self.integer() if kind == "integer" else self.number()
        if kind == "boolean":
            return self.boolean()
        if kind == "array":
            items = self.value(schema.get("items"), depth + 1)
            low, high = schema.get("minItems"), schema.get("maxItems")
            return self._array(
                items,
                low if isinstance(low, int) and low >= 0 else 0,
                high if isinstance(high, int) and high >= 0 else None,
            )
        if kind == "object":
            return self.object(schema, depth)
        if kind in ("any", "None"):
            return self.any_value(depth)
        return None  # "null" and unknown types: not written

    def object(self, schema: dict[str, Any], depth: int = 0) -> str:
        """A JSON object (a dict literal in Python): its properties, or free without them."""
        properties = schema.get("properties")
        if not isinstance(properties, dict) or (not properties and depth > 0):
            return self._free_object(depth + 1)
        required = schema.get("required")
        required = required if isinstance(required, list) else []
        pairs = []
        for key, sub in properties.items():
            keys = [ebnf_literal(spelled) for spelled in self.dialect.encode_string(str(key))]
            value = self.value(sub, depth + 1)
            pairs.append((self.add(f'({" | ".join(keys)}) ":" " "? {value}', "pair"), key in required))
        return self.properties(pairs, "{", "}")

    def keyword_arguments(self, schema: dict[str, Any]) -> str:
        """Python keyword arguments ``key=value, ...)``, up to the closing parenthesis."""
        properties = schema.get("properties")
        properties = properties if isinstance(properties, dict) else {}
        required = schema.get("required")
        required = required if isinstance(required, list) else []
        pairs = [
            (self.add(f"{ebnf_literal(str(key) + '=')} {self.value(sub, 1)}", "kwarg"), key in required)
            for key, sub in properties.items()
            if _keyword_argument(str(key))
        ]
        return self.properties(pairs, "", ")")

    def text(self, root: str) -> str:
        return "\n".join([f"root ::= {root}", *self.lines.values()])


def _keyword_argument(key: str) -> bool:
    """Whether a property can be written as a Python keyword argument (``key=value``). Others
    (``""``, ``"a b"``, ``"class"``) are left out of a pythonic call: no reader could parse them."""
    return key.isidentifier() and not keyword.iskeyword(key)


# --- whole answers: calls in a format -------------------------------------------------------------


def functions_of(tools: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The named functions of OpenAI tools (bare functions accepted too)."""
    functions = [tool.get("function", tool) for tool in tools if isinstance(tool, dict)]
    return [function for function in functions if isinstance(function, dict) and function.get("name")]


def _parameters(function: dict[str, Any], source: Extraction | None) -> dict[str, Any]:
    parameters = function.get("parameters")
    parameters = parameters if isinstance(parameters, dict) else {}
    if source is not None:
        parameters = _required_only(parameters)
    return parameters


def _required_only(parameters: dict[str, Any]) -> dict[str, Any]:
    """The parameters schema without its optional properties (where some are required): with
    values copied from the request, a weak model's optional arguments are mostly guesses, and
    an optional argument left out takes its default."""
    properties, required = parameters.get("properties"), parameters.get("required")
    if not isinstance(properties, dict) or not isinstance(required, list) or not required:
        return parameters
    return {**parameters, "properties": {key: value for key, value in properties.items() if key in required}}


def _json_call(rules: _Rules, functions: list[dict[str, Any]]) -> str:
    calls = []
    for function in functions:
        name = ebnf_literal(json.dumps(str(function["name"]), ensure_ascii=False))
        arguments = rules.object({"type": "object", **_parameters(function, rules.source)})
        calls.append(f'"{{\\"name\\":" " "? {name} "," " "? "\\"arguments\\":" " "? {arguments} "}}"')
    return rules.add(" | ".join(calls), "call")


def _json_answer(rules: _Rules, functions: list[dict[str, Any]]) -> str:
    call = _json_call(rules, functions)
    return f'{call} | "[" {call} {rules.repeated(call, SEPARATOR)} "]"'


def _hermes_answer(rules: _Rules, functions: list[dict[str, Any]]) -> str:
    call = _json_call(rules, functions)
    tagged = rules.add(f'"<tool_call>" "\\n"? {call} "\\n"? "</tool_call>"', "tagged")
    return f"{tagged} {rules.repeated(tagged, NEWLINE)}"


def _pythonic_answer(rules: _Rules, functions: list[dict[str, Any]]) -> str:
    calls = []
    for function in functions:
        arguments = rules.keyword_arguments(_parameters(function, rules.source))
        calls.append(f"{ebnf_literal(str(function['name']) + '(')} {arguments}")
    call = rules.add(" | ".join(calls), "call")
    return f'"[" {call} {rules.repeated(call, SEPARATOR)} "]"'


@dataclass(frozen=True)
class GuidedFormat:
    """How a format writes its answer of calls: the literal dialect and the answer's rule."""

    dialect: Dialect
    answer: Callable[[_Rules, list[dict[str, Any]]], str]


# format name -> how an answer of calls is written in it
GUIDED_FORMATS: dict[str, GuidedFormat] = {
    "json": GuidedFormat(JSON, _json_answer),
    "hermes": GuidedFormat(JSON, _hermes_answer),
    "pythonic": GuidedFormat(PYTHON, _pythonic_answer),
}


def _markup(format_name: str) -> CallMarkup | None:
    family = REGISTRY.get(format_name)
    return family.prompting.markup if family is not None and family.prompting is not None else None


def markup_formats() -> tuple[str, ...]:
    """The formats guided in their family's own markup (``--model.guided on`` only: values are
    not copied from the request there)."""
    return tuple(name for name in REGISTRY if name not in GUIDED_FORMATS and _markup(name) is not None)


def guided_format_names() -> tuple[str, ...]:
    """Every format ``--model.guided on`` constrains."""
    return (*GUIDED_FORMATS, *markup_formats())


@dataclass(frozen=True)
class CallGrammar:
    """The EBNF grammar of answers that call the offered tools in one format."""

    format: str
    ebnf: str
    functions: tuple[str, ...]
    exits: tuple[str, ...] = ()  # where values are free text: the texts that end them (`markup`)

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
        guided = GUIDED_FORMATS.get(format_name)
        markup = _markup(format_name) if guided is None else None
        functions = functions_of(tools)
        if only is not None:
            functions = [function for function in functions if function["name"] == only] or functions
        elif source is not None:
            functions = best_fitting(functions, source.text)
        if not functions:
            return None
        if markup is not None and source is None:
            ebnf = markup_ebnf(markup, functions)
            names = tuple(str(function["name"]) for function in functions)
            return cls(format_name, ebnf, names, exits(markup))
        if guided is None:
            return None
        rules = _Rules(guided.dialect, source)
        root = guided.answer(rules, functions)
        return cls(format_name, rules.text(root), tuple(str(function["name"]) for function in functions))
