"""A fast reader for the python-call text models usually write, with :func:`ast.parse` as fallback.

Most python-call outputs are a few keyword calls with plain literal arguments:
``[get_weather(city="Paris", days=3)]``, a bare ``f(a=1), g(b=[1, 2])`` or CodeAct's one call per
line. :func:`read_simple_calls` reads exactly that subset with one regular-expression scan and a
small recursive-descent parser, several times faster than building Python's syntax tree, and gives
the same calls as :class:`scoring.literals.LiteralReader` on the tree. The commonest shapes, plain
keyword calls whose arguments are literals or flat lists and dicts of literals, are read without
tokenising, one regular-expression match per argument. Anything outside the subset
(escapes in strings, arithmetic, tuples, sets, nested calls, comments, positional arguments,
trailing commas, indentation, non-ASCII names, any doubt) makes it answer None, and the caller
parses the text with :mod:`ast` as before, so verdicts and error messages stay those of the
reference path. tests/scoring/test_simple_calls.py holds the two paths to the same answers.
Nothing is evaluated: numbers go through ``int``/``float``, strings are sliced.
"""

from __future__ import annotations

import keyword
import re
from typing import Any

from scoring.model import Call, make_call

# Longer text goes straight to ast: the regular-expression scan tokenises the whole text before
# parsing, so giving up late (a trailing comma after 500 list items) costs a scan plus the ast
# parse; the cap keeps that extra under half a millisecond. Typical outputs are a few hundred chars.
MAX_CHARS = 1024

# (leading blanks, token). Strings without backslashes, newlines, NUL or surrogates (their value is
# the text between the quotes); decimal numbers with an optional minus; ASCII (dotted) names;
# punctuation; any other single character, which makes the parser give up.
_TOKEN = re.compile(
    r"([ \t\n]*)("
    r"""'[^'\\\n\r\x00\ud800-\udfff]*'|"[^"\\\n\r\x00\ud800-\udfff]*\""""
    r"|-?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?"
    r"|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
    r"|[\[\](){},:=]"
    r"|[\s\S])"
)
# The same tokens for text on one line that does not start with a blank: no blanks to keep (they
# only matter next to line ends and at the start), so one group, and findall gives plain strings.
_LINE_TOKEN = re.compile(
    r"[ \t]*("
    r"""'[^'\\\n\r\x00\ud800-\udfff]*'|"[^"\\\n\r\x00\ud800-\udfff]*\""""
    r"|-?[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?"
    r"|[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*"
    r"|[\[\](){},:=]"
    r"|[\s\S])"
)
# Plain keyword calls, the most common shape by far: ``[f(a='x', b=2)]``, or CodeAct's calls one
# per line, every argument a string without escapes, a decimal number or True/False/None. Such text
# (checked whole by _PLAIN_TEXT) is read with one match per call name and per argument (_PLAIN_ITEM),
# without tokenising it. It is a subset of what the token parser below reads, with the same values;
# anything else (bare names, containers, blanks around "=", 007, 1., 1e5, ...) goes on to it.
_PLAIN_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_PLAIN_STRINGS = r"""'[^'\\\n\r\x00\ud800-\udfff]*+'|"[^"\\\n\r\x00\ud800-\udfff]*+\""""
_PLAIN_NUMBER = r"-?(?:0|[1-9][0-9]*+)(?:\.[0-9]++)?+"
_PLAIN_ARGUMENT = rf"{_PLAIN_NAME}=(?:{_PLAIN_STRINGS}|{_PLAIN_NUMBER}|True|False|None)"
_PLAIN_CALL = rf"{_PLAIN_NAME}(?:\.{_PLAIN_NAME})*+\((?:{_PLAIN_ARGUMENT}(?:, ?{_PLAIN_ARGUMENT})*+)?+\)"
_PLAIN_TEXT = re.compile(rf"\[{_PLAIN_CALL}(?:, ?{_PLAIN_CALL})*+\]|{_PLAIN_CALL}(?:\n{_PLAIN_CALL})*+")
# Groups: argument name, then its value as a quoted string, a float, an int or a named constant
# (each non-empty when it matched, so findall's tuples tell which one did) | call name. Argument
# names come first, being the most frequent; on text that _PLAIN_TEXT matched, a call name is never
# followed by "=" and an argument name never by "(" or ".", so the order changes nothing.
_PLAIN_ITEM = re.compile(
    rf"([A-Za-z_][A-Za-z0-9_]*+)=(?:({_PLAIN_STRINGS})"
    r"|(-?(?:0|[1-9][0-9]*)\.[0-9]+)|(-?(?:0|[1-9][0-9]*))|(True|False|None))"
    r"|([A-Za-z_][A-Za-z0-9_.]*+)\("
)
# Plain calls whose arguments may also be flat lists and dicts of those literals: ``passengers=['Ada',
# 'Alan']``, ``options={'seat': 'aisle', 'bags': 2}``, read by read_flat_calls. Tried only where
# _PLAIN_TEXT failed and the text holds a bracket after its first character. A container sits at
# depth 1 and its elements at depth 2 (a minus there too), so the depth cap must be 2 or more.
# Each sequence is written "(?:(first item: right after the opener) | (", " not right after it)
# item)*", which names the item once (the item pattern written twice per sequence, nested three
# deep, made a 7,500-character pattern that took 90 ms to compile). The previous character tells
# the first item from the others: no item ends with an opening bracket.
_PLAIN_SCALAR = rf"(?:{_PLAIN_STRINGS}|{_PLAIN_NUMBER}|True|False|None)"
_FLAT_LIST = rf"\[(?:(?:(?<=\[)|(?<!\[), ?){_PLAIN_SCALAR})*+\]"
_FLAT_DICT = rf"\{{(?:(?:(?<=\{{)|(?<!\{{), ?){_PLAIN_SCALAR}: ?{_PLAIN_SCALAR})*+\}}"
_FLAT_ARGUMENT = rf"{_PLAIN_NAME}=(?:{_PLAIN_SCALAR}|{_FLAT_LIST}|{_FLAT_DICT})"
_FLAT_CALL = rf"{_PLAIN_NAME}(?:\.{_PLAIN_NAME})*+\((?:(?:(?<=\()|(?<!\(), ?){_FLAT_ARGUMENT})*+\)"
_FLAT_TEXT = re.compile(rf"\[(?:(?:(?<=\[)|(?<!\[), ?){_FLAT_CALL})++\]|{_FLAT_CALL}(?:\n{_FLAT_CALL})*+")
# _PLAIN_ITEM's groups, then a list's and a dict's text, brackets included; on text that
# _FLAT_TEXT matched whole each argument's match takes in its whole value, containers included.
_FLAT_ITEM = re.compile(
    rf"([A-Za-z_][A-Za-z0-9_]*+)=(?:({_PLAIN_STRINGS})"
    r"|(-?(?:0|[1-9][0-9]*)\.[0-9]+)|(-?(?:0|[1-9][0-9]*))|(True|False|None)"
    rf"|(\[(?:{_PLAIN_SCALAR}|, ?)*+\])|(\{{(?:{_PLAIN_SCALAR}|[,:] ?)*+\}}))"
    r"|([A-Za-z_][A-Za-z0-9_.]*+)\("
)
# One literal of a container's text: a quoted string, a float, an int or a named constant.
_FLAT_SCALAR = re.compile(
    rf"({_PLAIN_STRINGS})|(-?(?:0|[1-9][0-9]*)\.[0-9]+)|(-?(?:0|[1-9][0-9]*))|(True|False|None)"
)
_NAME_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_")
_NUMBER_START = frozenset("-0123456789")
_KEYWORDS = frozenset(keyword.kwlist)
_NAMED_CONSTANTS: dict[str, Any] = {"True": True, "False": False, "None": None}
_QUOTES = frozenset("'\"")


class _GiveUp(Exception):
    """The text is outside the subset this reader handles: parse it with ast instead."""


def read_simple_calls(text: str, max_depth: int) -> list[Call] | None:
    """The calls in ``text`` if it is a simple python-call statement list, else None.

    ``text`` is stripped; its syntax has passed :func:`scoring.payloads.guard_syntax`.
    ``max_depth`` is the nesting cap of :class:`scoring.model.Limits`: where the reference
    reader would refuse a value as too deep, this one gives up and lets it say so.
    """
    if len(text) > MAX_CHARS:
        return None
    if max_depth >= 1 and _PLAIN_TEXT.fullmatch(text) is not None:  # a minus is at depth 1
        plain = read_plain_calls(text)
        if plain is not None:
            return plain
    elif (
        max_depth >= 2 and (text.find("[", 1) >= 0 or "{" in text) and _FLAT_TEXT.fullmatch(text) is not None
    ):
        flat = read_flat_calls(text)
        if flat is not None:
            return flat
    if "\n" in text or text[:1] in (" ", "\t"):
        pairs = _TOKEN.findall(text)
        tokens = [token for _, token in pairs]
        blanks = [blank for blank, _ in pairs]
    else:
        tokens = _LINE_TOKEN.findall(text)
        blanks = [""] * len(tokens)
    tokens += ("", "")  # the end, twice: the parser looks one token ahead
    blanks += ("", "")
    try:
        return _statements(tokens, blanks, max_depth)
    except (_GiveUp, ValueError, IndexError):  # ValueError: int() over Python's digit limit
        return None


def read_plain_calls(text: str) -> list[Call] | None:
    """The calls of text that ``_PLAIN_TEXT`` matches whole; None where a name is a keyword or
    an argument is repeated (the token parser gives up there too, and ast says why)."""
    calls: list[Call] = []
    arguments: dict[str, Any] = {}
    for key, string, real, integer, constant, name in _PLAIN_ITEM.findall(text):
        if name:
            if name in _KEYWORDS or ("." in name and not _KEYWORDS.isdisjoint(name.split("."))):
                return None
            arguments = {}
            calls.append(make_call(name, arguments))
        elif key in arguments or key in _KEYWORDS:
            return None
        elif string:
            arguments[key] = string[1:-1]
        elif integer:
            arguments[key] = int(integer)
        elif real:
            arguments[key] = float(real)
        else:
            arguments[key] = _NAMED_CONSTANTS[constant]
    return calls


def read_flat_calls(text: str) -> list[Call] | None:
    """The calls of text that ``_FLAT_TEXT`` matches whole, as :func:`read_plain_calls` reads
    them, flat lists and dicts included; None where the token parser would give up on a name."""
    calls: list[Call] = []
    arguments: dict[str, Any] = {}
    for key, string, real, integer, constant, items, entries, name in _FLAT_ITEM.findall(text):
        if name:
            if name in _KEYWORDS or ("." in name and not _KEYWORDS.isdisjoint(name.split("."))):
                return None
            arguments = {}
            calls.append(make_call(name, arguments))
        elif key in arguments or key in _KEYWORDS:
            return None
        elif string:
            arguments[key] = string[1:-1]
        elif integer:
            arguments[key] = int(integer)
        elif real:
            arguments[key] = float(real)
        elif constant:
            arguments[key] = _NAMED_CONSTANTS[constant]
        elif items:
            arguments[key] = _flat_values(items)
        else:
            values = _flat_values(entries)
            # Keys and values alternate; a repeated key keeps its first key object and its last
            # value, as a dict display does.
            arguments[key] = dict(zip(values[::2], values[1::2], strict=True))
    return calls


def _flat_values(text: str) -> list[Any]:
    values: list[Any] = []
    for string, real, integer, constant in _FLAT_SCALAR.findall(text):
        if string:
            values.append(string[1:-1])
        elif integer:
            values.append(int(integer))
        elif real:
            values.append(float(real))
        else:
            values.append(_NAMED_CONSTANTS[constant])
    return values


def _statements(tokens: list[str], blanks: list[str], max_depth: int) -> list[Call]:
    """Statements, one per line: a call, a bare tuple of calls, or a list of calls. ``blanks[i]``
    is the white space before ``tokens[i]``."""
    calls: list[Call] = []
    if blanks[0]:  # an indented first statement
        raise _GiveUp
    index = 0
    while True:
        if tokens[index] == "[":
            index = _call(tokens, blanks, index + 1, calls, max_depth, False)
            while tokens[index] == ",":
                index = _call(tokens, blanks, index + 1, calls, max_depth, False)
            if tokens[index] != "]":
                raise _GiveUp
            index += 1
        else:
            index = _call(tokens, blanks, index, calls, max_depth, True)
            while tokens[index] == ",":  # a bare tuple: no newline may end the statement early
                if "\n" in blanks[index] or "\n" in blanks[index + 1]:
                    raise _GiveUp
                index = _call(tokens, blanks, index + 1, calls, max_depth, True)
        if not tokens[index]:
            return calls
        # The next statement starts a line (a newline outside brackets ends a statement) and
        # is not indented.
        if not blanks[index].endswith("\n"):
            raise _GiveUp


def _call(
    tokens: list[str], blanks: list[str], index: int, calls: list[Call], max_depth: int, top: bool
) -> int:
    """``name(key=value, ...)`` at ``index``; appends the call, returns the index after it.
    ``top``: outside brackets, where a newline would end the statement."""
    name = tokens[index]
    if name[:1] not in _NAME_START or name in _KEYWORDS:
        raise _GiveUp
    if "." in name and not _KEYWORDS.isdisjoint(name.split(".")):
        raise _GiveUp
    if tokens[index + 1] != "(" or (top and "\n" in blanks[index + 1]):
        raise _GiveUp
    index += 2
    arguments: dict[str, Any] = {}
    if tokens[index] != ")":
        while True:
            key = tokens[index]
            if (
                key[:1] not in _NAME_START
                or "." in key
                or key in _KEYWORDS
                or key in arguments
                or tokens[index + 1] != "="
            ):
                raise _GiveUp
            token = tokens[index + 2]
            if token[:1] in _QUOTES and len(token) > 1:  # a string, the common case, inline
                arguments[key] = token[1:-1]
                index += 3
            else:
                arguments[key], index = _value(tokens, index + 2, 1, max_depth)
            separator = tokens[index]
            if separator == ")":
                break
            if separator != ",":
                raise _GiveUp
            index += 1
    calls.append(make_call(name, arguments))
    return index + 1


def _value(tokens: list[str], index: int, depth: int, max_depth: int) -> tuple[Any, int]:
    """One literal at ``index`` -> (value, index after it). ``depth`` counts as the reference
    reader counts: keyword values are at depth 1, each container adds one."""
    token = tokens[index]
    first = token[:1]
    if first == "'" or first == '"':
        if len(token) < 2:  # a lone quote: an unterminated or escaped string
            raise _GiveUp
        return token[1:-1], index + 1
    if first in _NUMBER_START:
        return _number(token, depth, max_depth), index + 1
    if first == "[":
        return _list(tokens, index + 1, depth, max_depth)
    if first == "{":
        return _dict(tokens, index + 1, depth, max_depth)
    if first in _NAME_START:
        if token in _NAMED_CONSTANTS:
            return _NAMED_CONSTANTS[token], index + 1
        if "." in token or token in _KEYWORDS or depth > max_depth:
            raise _GiveUp
        return token, index + 1  # a bare name is its own text, as BFCL reads it
    raise _GiveUp


def _number(token: str, depth: int, max_depth: int) -> int | float:
    digits = token
    if token[0] == "-":  # a unary minus: a syntax node of its own, so the depth cap applies
        if len(token) == 1 or depth > max_depth:
            raise _GiveUp
        digits = token[1:]
    if "." in digits or "e" in digits or "E" in digits:
        return float(token)
    if digits[0] == "0" and len(digits) > 1:  # 007 is a syntax error, 00 is zero: leave both to ast
        raise _GiveUp
    return int(token)


def _list(tokens: list[str], index: int, depth: int, max_depth: int) -> tuple[list[Any], int]:
    if depth > max_depth:
        raise _GiveUp
    items: list[Any] = []
    if tokens[index] == "]":
        return items, index + 1
    while True:
        item, index = _value(tokens, index, depth + 1, max_depth)
        items.append(item)
        separator = tokens[index]
        if separator == "]":
            return items, index + 1
        if separator != ",":
            raise _GiveUp
        index += 1


def _dict(tokens: list[str], index: int, depth: int, max_depth: int) -> tuple[dict[Any, Any], int]:
    if depth > max_depth:
        raise _GiveUp
    result: dict[Any, Any] = {}
    if tokens[index] == "}":
        return result, index + 1
    while True:
        key, index = _value(tokens, index, depth + 1, max_depth)
        if type(key) is list or type(key) is dict or tokens[index] != ":":
            raise _GiveUp
        result[key], index = _value(tokens, index + 1, depth + 1, max_depth)
        separator = tokens[index]
        if separator == "}":
            return result, index + 1
        if separator != ",":
            raise _GiveUp
        index += 1
