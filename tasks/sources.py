"""Task sources: one registry entry per source (:data:`SOURCES`), their loaders, and per-source shares.

A source is a :class:`SourceKind`: its name (the key of ``--tasks.sources``), the loader of its
pool, the flag naming its files (``--tasks.NAME`` for the neurons, ``--NAME`` for ``python -m
tasks``; both are generated from the registry), and whether it holds multi-turn episodes only.
Adding a source is adding its loader and an entry.

BFCL: a question file (JSON lines: ``id``, ``question``, ``function``) and a possible-answer
file (JSON lines: ``id``, ``ground_truth``), e.g. the ``data`` folder of the ``bfcl-eval``
package. xLAM: a JSON array (or JSON lines) of ``{query, tools, answers}`` records, where tools
and answers may themselves be JSON strings. Everything becomes ``Task`` records with OpenAI
tools; ``generate`` shuffles their surface like any builtin task.

A missing or malformed file raises ``SourceFileError`` naming the file and line.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tasks.answers import solvable
from tasks.errors import SourceFileError, TaskConfigError
from tasks.model import GENERATOR_VERSION, Task
from tasks.task_sets import BUILTIN, Source

__all__ = [
    "BFCL_DEFAULT_FILES",
    "EPISODE_ONLY_SOURCES",
    "KNOWN_SOURCES",
    "PATH_FLAGS",
    "SOURCES",
    "SourceKind",
    "bfcl_data_dir",
    "load_bfcl",
    "load_bfcl_dir",
    "load_sources",
    "load_xlam",
    "parse_source_shares",
]

#: BFCL v4 single-turn categories whose checker we share (Java/JavaScript use other type names).
BFCL_DEFAULT_FILES = (
    "simple_python",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
)

_ID_SUFFIX = re.compile(r"_\d+(-\d+)*$")


def parse_source_shares(text: str) -> dict[str, float]:
    """``"builtin=0.8,bfcl=0.2"`` -> ``{"builtin": 0.8, "bfcl": 0.2}`` (the --tasks.sources flag)."""
    shares: dict[str, float] = {}
    for raw in text.split(","):
        entry = raw.strip()
        if not entry:
            continue
        name, sep, value = entry.partition("=")
        name = name.strip()
        if not sep or not name:
            raise TaskConfigError(f"source share {entry!r} is not of the form name=share (e.g. builtin=0.8)")
        if name not in SOURCES:
            raise TaskConfigError(f"unknown task source {name!r} (known: {', '.join(SOURCES)})")
        if name in shares:
            raise TaskConfigError(f"task source {name!r} is listed twice")
        try:
            share = float(value)
        except ValueError:
            raise TaskConfigError(f"share of {name!r} is not a number: {value.strip()!r}") from None
        if not share >= 0 or share == float("inf"):
            raise TaskConfigError(
                f"share of {name!r} must be a finite non-negative number, got {value.strip()}"
            )
        shares[name] = share
    if not shares or not any(shares.values()):
        raise TaskConfigError(f"no positive source share in {text!r}")
    return shares


def _json_lines(path: Path) -> Iterator[tuple[int, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SourceFileError(str(path), "file not found") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SourceFileError(str(path), f"cannot read: {error}") from None
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, json.loads(line)
        except json.JSONDecodeError as error:
            raise SourceFileError(str(path), f"not valid JSON ({error.msg})", number) from None


def _openai_schema(schema: Any) -> Any:
    """BFCL type names -> JSON-schema ones, recursively; ``any`` loses its type (accepts all)."""
    from scoring.schema import SCHEMA_TYPE_ALIASES  # here: `import tasks` loads no scorer

    if isinstance(schema, list):
        return [_openai_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "type" and isinstance(value, str):
            if value == "any":
                continue
            out[key] = SCHEMA_TYPE_ALIASES.get(value, value)
        elif key in ("properties",) and isinstance(value, dict):
            out[key] = {name: _openai_schema(prop) for name, prop in value.items()}
        elif key in ("items", "parameters"):
            out[key] = _openai_schema(value)
        else:
            out[key] = value
    return out


def _tool(function: Any, path: Path, line: int) -> dict[str, Any]:
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise SourceFileError(str(path), "each function needs a string 'name'", line)
    converted = _openai_schema(function)
    converted.setdefault("description", "")
    parameters = converted.get("parameters")
    if not isinstance(parameters, dict):
        converted["parameters"] = {"type": "object", "properties": {}, "required": []}
    return {"type": "function", "function": converted}


def _category_of(task_id: str, fallback: str) -> str:
    base = _ID_SUFFIX.sub("", task_id) or fallback
    if base in ("simple_python", "simple_java", "simple_javascript"):
        return "simple"
    return base.removeprefix("live_") if base.startswith("live_") and "relevance" not in base else base


def _content_id(source: str, payload: Any) -> str:
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()).hexdigest()
    return digest


def load_bfcl(question_path: str | Path, answer_path: str | Path | None = None) -> tuple[Task, ...]:
    """BFCL tasks from a question file and (except for irrelevance) its possible-answer file."""
    question_path = Path(question_path)
    answers: dict[str, list[Any]] = {}
    if answer_path is not None:
        answer_path = Path(answer_path)
        for line, record in _json_lines(answer_path):
            if (
                not isinstance(record, dict)
                or "id" not in record
                or not isinstance(record.get("ground_truth"), list)
            ):
                raise SourceFileError(
                    str(answer_path), "expected an object with 'id' and a 'ground_truth' list", line
                )
            answers[str(record["id"])] = record["ground_truth"]
    tasks: list[Task] = []
    for line, record in _json_lines(question_path):
        if not isinstance(record, dict) or "id" not in record:
            raise SourceFileError(str(question_path), "expected an object with an 'id'", line)
        task_id = str(record["id"])
        question = record.get("question")
        if isinstance(question, list) and question and isinstance(question[0], list):
            question = question[0]
        if not (isinstance(question, list) and question and all(isinstance(m, dict) for m in question)):
            raise SourceFileError(str(question_path), f"{task_id}: 'question' must hold chat messages", line)
        functions = record.get("function")
        if not isinstance(functions, list):
            raise SourceFileError(str(question_path), f"{task_id}: 'function' must be a list", line)
        category = _category_of(task_id, question_path.stem)
        expected: list[Any] = []
        if "relevance" not in category:
            if task_id not in answers:
                raise SourceFileError(str(question_path), f"{task_id}: no possible answer for this id", line)
            expected = answers[task_id]
            if not all(isinstance(call, dict) and len(call) == 1 for call in expected):
                raise SourceFileError(str(question_path), f"{task_id}: malformed possible answer", line)
        tasks.append(
            Task(
                id=f"bfcl-{task_id}",
                category=category,
                messages=[dict(message) for message in question],
                tools=[_tool(function, question_path, line) for function in functions],
                expected=expected,
                seed=_content_id("bfcl", record),
                source="bfcl",
                generator_version=GENERATOR_VERSION,
            )
        )
    if not tasks:
        raise SourceFileError(str(question_path), "no tasks in file")
    return tuple(tasks)


def bfcl_data_dir() -> Path | None:
    """The data folder of the installed ``bfcl-eval`` package, or None when it is not installed."""
    spec = importlib.util.find_spec("bfcl_eval")
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = Path(next(iter(spec.submodule_search_locations))) / "data"
    return folder if folder.is_dir() else None


def load_bfcl_dir(directory: str | Path, names: Sequence[str] | None = None) -> tuple[Task, ...]:
    """BFCL v4 tasks from a data folder laid out like ``bfcl_eval/data`` (BFCL_v4_<name>.json).

    Without ``names``, every file of ``BFCL_DEFAULT_FILES`` that the folder holds is read.
    """
    directory = Path(directory)
    if names is None:
        names = [name for name in BFCL_DEFAULT_FILES if (directory / f"BFCL_v4_{name}.json").exists()]
        if not names:
            raise SourceFileError(str(directory), "no BFCL_v4_<category>.json question file in this folder")
    tasks: list[Task] = []
    for name in names:
        question = directory / f"BFCL_v4_{name}.json"
        answer = directory / "possible_answer" / f"BFCL_v4_{name}.json"
        tasks.extend(load_bfcl(question, answer if answer.exists() else None))
    return tuple(tasks)


def _maybe_json(value: Any, path: Path, line: int, what: str) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except json.JSONDecodeError as error:
            raise SourceFileError(
                str(path), f"'{what}' is a string but not valid JSON ({error.msg})", line
            ) from None
    return value


_XLAM_TYPES = {
    "str": "string",
    "string": "string",
    "int": "integer",
    "integer": "integer",
    "float": "number",
    "number": "number",
    "bool": "boolean",
    "boolean": "boolean",
    "dict": "object",
    "object": "object",
}


def _xlam_param(spec: Any) -> tuple[dict[str, Any], bool]:
    """One xLAM parameter ``{"type": "List[int], optional", ...}`` -> (JSON schema, required)."""
    if not isinstance(spec, dict):
        return {"description": str(spec)}, True
    raw = str(spec.get("type", ""))
    optional = raw.replace(" ", "").lower().endswith(",optional") or "default" in spec
    base = raw.split(",")[0].strip()
    lowered = base.lower()
    schema: dict[str, Any] = {}
    if lowered.startswith(("list", "tuple", "array")):
        schema["type"] = "array"
        inner = re.search(r"\[(\w+)", base)
        if inner and inner.group(1).lower() in _XLAM_TYPES:
            schema["items"] = {"type": _XLAM_TYPES[inner.group(1).lower()]}
    elif lowered in _XLAM_TYPES:
        schema["type"] = _XLAM_TYPES[lowered]
    schema["description"] = str(spec.get("description", ""))
    if "default" in spec:
        schema["default"] = spec["default"]
    return schema, not optional


def _xlam_tool(tool: Any, path: Path, line: int) -> dict[str, Any]:
    if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
        raise SourceFileError(str(path), "each tool needs a string 'name'", line)
    params = tool.get("parameters") or {}
    if isinstance(params, dict) and params.get("type") in ("object", "dict") and "properties" in params:
        parameters = _openai_schema(params)
    elif isinstance(params, dict):
        properties: dict[str, Any] = {}
        required: list[str] = []
        for name, spec in params.items():
            properties[name], is_required = _xlam_param(spec)
            if is_required:
                required.append(name)
        parameters = {"type": "object", "properties": properties, "required": required}
    else:
        raise SourceFileError(str(path), f"tool {tool['name']!r}: 'parameters' must be an object", line)
    return {
        "type": "function",
        "function": {
            "name": tool["name"],
            "description": str(tool.get("description", "")),
            "parameters": parameters,
        },
    }


def _xlam_records(path: Path) -> Iterator[tuple[int, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SourceFileError(str(path), "file not found") from None
    except (OSError, UnicodeDecodeError) as error:
        raise SourceFileError(str(path), f"cannot read: {error}") from None
    if text.lstrip().startswith("["):
        try:
            records = json.loads(text)
        except json.JSONDecodeError as error:
            raise SourceFileError(str(path), f"not valid JSON ({error.msg})", error.lineno) from None
        # A JSON array has no line per record; report the record number instead.
        yield from enumerate(records, start=1)
    else:
        yield from _json_lines(path)


def load_xlam(path: str | Path) -> tuple[Task, ...]:
    """xLAM-style tasks: records with ``query``, ``tools`` and ``answers`` (name + arguments)."""
    from scoring.schema import function_of  # here: `import tasks` loads no scorer

    path = Path(path)
    tasks: list[Task] = []
    for line, record in _xlam_records(path):
        if not isinstance(record, dict) or not isinstance(record.get("query"), str):
            raise SourceFileError(str(path), "expected an object with a string 'query'", line)
        tools = _maybe_json(record.get("tools"), path, line, "tools")
        answers = _maybe_json(record.get("answers", []), path, line, "answers")
        if not isinstance(tools, list) or not tools:
            raise SourceFileError(str(path), "'tools' must be a non-empty list", line)
        if not isinstance(answers, list):
            raise SourceFileError(str(path), "'answers' must be a list", line)
        openai_tools = [_xlam_tool(tool, path, line) for tool in tools]
        functions = [function_of(tool) for tool in openai_tools]
        schemas = {function["name"]: function["parameters"] for function in functions}
        expected: list[dict[str, Any]] = []
        for answer in answers:
            if not isinstance(answer, dict) or not isinstance(answer.get("name"), str):
                raise SourceFileError(str(path), "each answer needs a string 'name'", line)
            name = answer["name"]
            if name not in schemas:
                raise SourceFileError(str(path), f"answer calls {name!r}, which is not among the tools", line)
            arguments = answer.get("arguments") or {}
            if not isinstance(arguments, dict):
                raise SourceFileError(str(path), f"arguments of {name!r} must be an object", line)
            properties = schemas[name].get("properties", {})
            call: dict[str, list[Any]] = {key: [value] for key, value in arguments.items()}
            for param in properties:
                if param not in call and param not in schemas[name].get("required", []):
                    call[param] = [""]
            expected.append({name: call})
        names = [next(iter(call)) for call in expected]
        if not expected:
            category = "irrelevance"
        elif len(expected) == 1:
            category = "simple" if len(openai_tools) == 1 else "multiple"
        else:
            category = "parallel" if len(set(names)) == 1 else "parallel_multiple"
        raw_id = record.get("id", line)
        tasks.append(
            Task(
                id=f"xlam-{raw_id}",
                category=category,
                messages=[{"role": "user", "content": record["query"]}],
                tools=openai_tools,
                expected=expected,
                seed=_content_id("xlam", record),
                source="xlam",
                generator_version=GENERATOR_VERSION,
            )
        )
    if not tasks:
        raise SourceFileError(str(path), "no tasks in file")
    return tuple(tasks)


Paths = Sequence[str | Path]


@dataclass(frozen=True)
class SourceKind:
    """One task source: where its pool comes from and how a user names its files."""

    name: str
    #: Its pool from the files its flag names (None: none were given; the loader may know a
    #: default). None for the builtin generator, which needs no pool.
    load: Callable[[Paths | None], tuple[Any, ...]] | None = None
    #: The flag naming its files, without dashes (``bfcl``: ``--tasks.bfcl`` / ``--bfcl``); sources
    #: may share one. None: it reads no files.
    path_flag: str | None = None
    #: What that flag takes, plural (help text), and what happens without it.
    files: str = ""
    without_files: str = ""
    metavar: str = "PATH,..."
    #: Holds multi-turn episodes (tasks.episodes), not single-turn tasks.
    episode_only: bool = False
    #: The kind of file, as the error of a required one that was not given names it (``xLAM``);
    #: empty when the loader has a default.
    required: str = ""


def _load_bfcl_multi_turn(paths: Paths | None) -> tuple[Any, ...]:
    # tasks.episodes.bfcl reads files with this module's helpers: imported when used, not here.
    from tasks.episodes.bfcl import load_bfcl_multi_turn

    return load_bfcl_multi_turn(paths[0] if paths else None)


def _load_xlam_paths(paths: Paths | None) -> tuple[Task, ...]:
    return tuple(task for path in paths or () for task in load_xlam(path))


def _load_bfcl_paths(paths: Paths | None) -> tuple[Task, ...]:
    if not paths:
        folder = bfcl_data_dir()
        if folder is None:
            raise TaskConfigError(
                "source 'bfcl' has a share but no BFCL file was given and bfcl-eval is not installed"
            )
        return load_bfcl_dir(folder)
    tasks: list[Task] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            tasks.extend(load_bfcl_dir(path))
            continue
        answer = path.parent / "possible_answer" / path.name
        tasks.extend(load_bfcl(path, answer if answer.exists() else None))
    return tuple(tasks)


_BFCL_FILES = "BFCL question files or data folders"

#: Every task source, in the order they are listed to users.
SOURCES: dict[str, SourceKind] = {
    kind.name: kind
    for kind in (
        SourceKind(BUILTIN),
        SourceKind(
            "bfcl",
            _load_bfcl_paths,
            path_flag="bfcl",
            files=_BFCL_FILES,
            without_files="default: the installed bfcl-eval",
        ),
        SourceKind(
            "xlam",
            _load_xlam_paths,
            path_flag="xlam",
            files="xLAM-style JSON files",
            without_files="needed when xlam has a share",
            metavar="FILE,...",
            required="xLAM",
        ),
        SourceKind(
            "bfcl_multi_turn",
            _load_bfcl_multi_turn,
            path_flag="bfcl",
            files=_BFCL_FILES,
            without_files="default: the installed bfcl-eval",
            episode_only=True,
        ),
    )
}
KNOWN_SOURCES = tuple(SOURCES)
#: Sources that hold multi-turn episodes (tasks.episodes), not single-turn tasks.
EPISODE_ONLY_SOURCES = frozenset(name for name, kind in SOURCES.items() if kind.episode_only)


def _path_flags() -> dict[str, SourceKind]:
    flags: dict[str, SourceKind] = {}
    for kind in SOURCES.values():
        if kind.path_flag is not None:
            flags.setdefault(kind.path_flag, kind)
    return flags


#: The file flags, each once (the first source to use it describes it): flag name -> source kind.
PATH_FLAGS = _path_flags()


def load_sources(
    shares: Mapping[str, float],
    bfcl: Paths | None = None,
    xlam: Paths | None = None,
    *,
    paths: Mapping[str, Paths | None] | None = None,
) -> list[Source]:
    """Sources for ``generate``: the shares, with the pools they need loaded.

    ``paths`` maps a file flag of :data:`PATH_FLAGS` (``bfcl``, ``xlam``) to the files it named;
    ``bfcl=`` and ``xlam=`` are the same for those two. BFCL question files have their possible
    answers looked up in a sibling ``possible_answer`` folder, or name data folders; without
    any, the installed ``bfcl-eval`` package's data folder is used.
    """
    files: dict[str, Paths | None] = {"bfcl": bfcl, "xlam": xlam, **(paths or {})}
    sources: list[Source] = []
    for name, share in shares.items():
        kind = SOURCES.get(name)
        if kind is None:
            raise TaskConfigError(f"unknown task source {name!r} (known: {', '.join(SOURCES)})")
        if kind.episode_only:
            raise TaskConfigError(
                f"source {name!r} holds multi-turn episodes, not single-turn tasks: use it where episodes "
                "are played (python -m tasks sample --episodes N, python -m subnet.evaluate --episodes N)"
            )
        if kind.load is None or share <= 0:
            sources.append(Source(name, share))
            continue
        given = files.get(kind.path_flag or "") or None
        if given is None and kind.required:
            raise TaskConfigError(
                f"source {name!r} has a share but no {kind.required} file was given: name it with "
                f"--tasks.{kind.path_flag} FILE (python -m tasks: --{kind.path_flag} FILE)"
            )
        pool = kind.load(given)
        usable = tuple(task for task in pool if solvable(task))
        if not usable:
            raise TaskConfigError(
                f"source {name!r}: none of its {len(pool)} tasks has a valid reference answer"
            )
        sources.append(Source(name, share, usable))
    return sources
