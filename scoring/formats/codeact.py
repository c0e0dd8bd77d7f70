"""CodeAct: calls as the top-level statements of one python block (CodeActAgent, which writes its
code between ``<execute>`` tags). Nothing is ever run: scoring.decoding reads the statements."""

from __future__ import annotations

import re
from typing import Any

from scoring.formats.spec import Format, Prompting, functions_of
from scoring.formats.writing import python_call
from scoring.model import Call
from scoring.schema import SCHEMA_TYPES

_EXECUTE = re.compile(r"<execute>(.*?)(?:</execute>|$)", re.DOTALL)

# Schema type name -> the Python annotation a prompt shows for it (``any`` and unknown names:
# ``object``), from the scorer's one table of schema types.
_JSON_TO_PYTHON = {name: py_type.__name__ for name, py_type in SCHEMA_TYPES.items() if py_type is not None}


def render(calls: list[Call]) -> str:
    return "```python\n" + "".join(python_call(call) + "\n" for call in calls) + "```"


def _dict_or_empty(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def python_signature(function: dict[str, Any]) -> str:
    """A function schema as a python ``def`` with its docstring (the prompt's listing)."""
    # Any JSON may stand where a schema has a dict or a list: what is not one counts as empty.
    parameters = _dict_or_empty(function.get("parameters"))
    properties = _dict_or_empty(parameters.get("properties"))
    listed = parameters.get("required")
    required = {str(key) for key in listed} if isinstance(listed, list) else set()
    rendered = []
    for key in sorted(properties, key=lambda key: key not in required):
        spec = properties[key] if isinstance(properties[key], dict) else {}
        annotation = _JSON_TO_PYTHON.get(str(spec.get("type")), "object")
        rendered.append(f"{key}: {annotation}" + ("" if key in required else " = None"))
    lines = [f"def {function.get('name', 'function')}({', '.join(rendered)}):"]
    doc = str(function.get("description", "")).strip()
    for key, spec in properties.items():
        if isinstance(spec, dict) and spec.get("description"):
            doc += f"\n    {key}: {spec['description']}"
            if spec.get("enum"):
                doc += f" (one of {spec['enum']})"
    lines.append(f'    """{doc.replace(chr(34) * 3, "")}"""' if doc else "    ...")
    return "\n".join(lines)


def system_prompt(tools: list[dict[str, Any]]) -> str:
    signatures = "\n\n".join(python_signature(function) for function in functions_of(tools))
    return (
        "You act by writing Python. The functions below are available; call them with keyword "
        "arguments in one ```python block, one call per line, for example:\n"
        '```python\nfunction_name(parameter="value")\n```\n'
        "Write calls only: no imports, assignments or definitions. If no function fits, or a "
        "required argument is missing, answer in plain text without code.\n\n"
        f"```python\n{signatures}\n```"
    )


def forced_prefix(function_name: str | None) -> str:
    return "```python\n" if function_name is None else f"```python\n{function_name}("


def clean(text: str) -> str:
    """CodeActAgent's ``<execute>`` blocks, read as the one python block they are."""
    blocks = _EXECUTE.findall(text)
    if blocks:
        return "```python\n" + "\n".join(block.strip() for block in blocks) + "\n```"
    return text


FORMAT = Format(
    name="codeact",
    render=render,
    writes="calls as the statements of one python block (or `<execute>` block)",
    families="CodeActAgent",
    auto_when="`<execute>` or a python fence",
    fingerprints=(("<execute>",), ("```python",)),
    fingerprint_rank=130,
    prompting=Prompting(system_prompt=system_prompt, forced_prefix=forced_prefix, clean=clean),
)
