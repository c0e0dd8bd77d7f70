"""Reading Python call syntax without running it.

Model output in the BFCL / BitAgent style (``[f(a=1, b="x")]``) and CodeAct code blocks is parsed
with :func:`ast.parse`, then walked here. Only literals become values: constants, lists, tuples and
sets (as lists), dicts, unary minus/plus, and arithmetic folded on numeric literals (BFCL evaluates
``5*2``; we fold it with bounded operands instead). Bare names become strings and nested calls their
source text, as BFCL does; everything else (attributes, lambdas, f-strings, comprehensions, ...) is
a :class:`DecodeError`. Nothing is evaluated, so nothing from the output can run.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

from scoring.model import Call, DecodeError, Limits

_Number = int | float
_ARITHMETIC: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_CONSTANT_TYPES = (str, int, float, bool, type(None))
# Constants taken as they are; ints too, since the parser refuses literals over 4,300 digits and the
# reader's int cap applies to folded arithmetic (a literal can be no larger than the output).
_PLAIN_CONSTANTS = frozenset({str, int, float, bool, type(None)})


def dotted_name(node: ast.expr) -> str:
    """``math.hypot`` -> "math.hypot"; the callee must be a name or a chain of attributes on one."""
    if type(node) is ast.Name:
        return node.id
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        raise DecodeError(f"the called object is not a name: {type(node).__name__}")
    parts.append(node.id)
    return ".".join(reversed(parts))


def _is_number(value: object) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


class LiteralReader:
    """Turns call and literal nodes into Python values, within the given limits."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits

    def call(self, node: ast.Call, depth: int = 0) -> Call:
        """A call node -> Call. Positional arguments are dropped, as BFCL does: they are not
        keyword arguments, so the checker reports the parameters as missing."""
        arguments: dict[str, Any] = {}
        for keyword in node.keywords:
            if keyword.arg is None:
                raise DecodeError("**-unpacking in a call is not a literal argument")
            if keyword.arg in arguments:
                raise DecodeError(f"keyword argument {keyword.arg!r} repeated")
            value = keyword.value
            if type(value) is ast.Constant and type(value.value) in _PLAIN_CONSTANTS:
                arguments[keyword.arg] = value.value
            else:
                arguments[keyword.arg] = self.value(value, depth + 1)
        return Call(dotted_name(node.func), arguments)

    def value(self, node: ast.expr, depth: int) -> Any:
        if type(node) is ast.Constant and type(node.value) in _PLAIN_CONSTANTS:  # the common case
            return node.value
        if depth > self.limits.max_depth:
            raise DecodeError(f"nesting deeper than {self.limits.max_depth}")
        reader = _READERS.get(type(node))
        if reader is None:
            raise DecodeError(f"{type(node).__name__} is not a literal value")
        return reader(self, node, depth)

    def _constant(self, node: ast.Constant, depth: int) -> Any:
        value = node.value
        if value is Ellipsis:
            return "..."
        if not isinstance(value, _CONSTANT_TYPES):
            raise DecodeError(f"{type(value).__name__} constants are not supported")
        return value

    def _name(self, node: ast.Name, depth: int) -> str:
        return node.id

    def _sequence(self, node: ast.List | ast.Tuple | ast.Set, depth: int) -> list[Any]:
        values = []
        for element in node.elts:  # long lists of plain constants are the costly common case
            if type(element) is ast.Constant and type(element.value) in _PLAIN_CONSTANTS:
                values.append(element.value)
            else:
                values.append(self.value(element, depth + 1))
        return values

    def _dict(self, node: ast.Dict, depth: int) -> dict[Any, Any]:
        result: dict[Any, Any] = {}
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            if key_node is None:
                raise DecodeError("**-unpacking in a dict is not a literal")
            key = self.value(key_node, depth + 1)
            if isinstance(key, list | dict):
                raise DecodeError("a dict key must be a constant")
            result[key] = self.value(value_node, depth + 1)
        return result

    def _unary(self, node: ast.UnaryOp, depth: int) -> _Number:
        operand = self.value(node.operand, depth + 1)
        if not _is_number(operand) or not isinstance(node.op, ast.USub | ast.UAdd):
            raise DecodeError(f"{type(node.op).__name__} applies to numbers only")
        return -operand if isinstance(node.op, ast.USub) else +operand

    def _binary(self, node: ast.BinOp, depth: int) -> _Number:
        apply = _ARITHMETIC.get(type(node.op))
        if apply is None:
            raise DecodeError(f"operator {type(node.op).__name__} is not numeric arithmetic")
        left = self.value(node.left, depth + 1)
        right = self.value(node.right, depth + 1)
        if not (_is_number(left) and _is_number(right)):
            raise DecodeError("arithmetic is folded on numeric literals only")
        self._check_size(node.op, left, right)
        try:
            result = apply(left, right)
        except (ArithmeticError, ValueError) as error:
            raise DecodeError(f"arithmetic failed: {error}") from None
        if not _is_number(result):
            raise DecodeError("arithmetic did not give a real number")
        if isinstance(result, int) and result.bit_length() > self.limits.max_int_bits:
            raise DecodeError(f"folded integer over {self.limits.max_int_bits} bits")
        return result

    def _check_size(self, op: ast.operator, left: _Number, right: _Number) -> None:
        """Refuse integer products and powers whose result would exceed the bit cap, before
        computing them: ``10**10**10`` must cost nothing."""
        if not (isinstance(left, int) and isinstance(right, int)):
            return
        cap = self.limits.max_int_bits
        if isinstance(op, ast.Mult) and left.bit_length() + right.bit_length() > cap + 1:
            raise DecodeError(f"folded integer over {cap} bits")
        if isinstance(op, ast.Pow) and abs(left) > 1 and right > 0 and (left.bit_length() - 1) * right > cap:
            raise DecodeError(f"folded integer over {cap} bits")

    def _source_text(self, node: ast.Call | ast.Subscript, depth: int) -> Any:
        """Nested calls and subscripts: BFCL keeps their source text (a call with keywords becomes
        ``{name: {kwargs}}``); we do the same after checking that the parts are literals too."""
        if isinstance(node, ast.Call) and node.keywords:
            inner = self.call(node, depth + 1)
            return {inner.name: inner.arguments}
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr) and not isinstance(child, ast.Name | ast.Attribute):
                self.value(child, depth + 1)
        try:
            return ast.unparse(node)
        except (RecursionError, ValueError) as error:
            raise DecodeError(f"cannot read nested expression: {error}") from None


_READERS: dict[type[ast.expr], Callable[[LiteralReader, Any, int], Any]] = {
    ast.Constant: LiteralReader._constant,
    ast.Name: LiteralReader._name,
    ast.List: LiteralReader._sequence,
    ast.Tuple: LiteralReader._sequence,
    ast.Set: LiteralReader._sequence,
    ast.Dict: LiteralReader._dict,
    ast.UnaryOp: LiteralReader._unary,
    ast.BinOp: LiteralReader._binary,
    ast.Call: LiteralReader._source_text,
    ast.Subscript: LiteralReader._source_text,
}
