"""Task sources: one registry entry per source (:data:`SOURCES`), their loaders, and per-source shares.

A source is a :class:`SourceKind`: its name (the key of ``--tasks.sources``), the loader of its
pool of single-turn tasks or of multi-turn episodes (or neither: the builtin generators), and the
flag naming its files (``--tasks.NAME`` for the neurons and evaluate, ``--NAME`` for ``python -m
tasks``; all generated from the registry). One share string serves both: ``load_sources`` takes
the sources that hold tasks, ``load_episode_sources`` those that hold episodes. Adding a source is
adding its loader and an entry; tests/tasks/test_sources.py names what an entry lacks.

BFCL: a question file (JSON lines: ``id``, ``question``, ``function``) and a possible-answer
file (JSON lines: ``id``, ``ground_truth``), e.g. the ``data`` folder of the ``bfcl-eval``
package. xLAM: a JSON array (or JSON lines) of ``{query, tools, answers}`` records, where tools
and answers may themselves be JSON strings. Everything becomes ``Task`` records with OpenAI
tools; ``generate`` shuffles their surface like any builtin task.

A missing or malformed file raises ``SourceFileError`` naming the file and line.

Loading judges every pool task with the scorer's checker (``solvable``) and may load BFCL's
multi-turn episodes (``tasks.episodes.bfcl``): this module is imported by whoever loads pools or
reads the source flags, never by ``import tasks`` (the generator and the validator's score state).
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

from scoring import Call
from scoring.checking import check
from scoring.schema import function_of
from tasks.answers import reference_calls
from tasks.episodes.bfcl import load_bfcl_multi_turn
from tasks.episodes.generate import EpisodeSource
from tasks.episodes.model import Episode
from tasks.errors import SourceFileError, TaskConfigError
from tasks.files import json_lines, openai_schema
from tasks.model import GENERATOR_VERSION, Task
from tasks.task_sets import BUILTIN, Source

__all__ = [
    "BFCL_DEFAULT_FILES",
    "KNOWN_SOURCES",
    "PATH_FLAGS",
    "SOURCES",
    "SourceKind",
    "bfcl_data_dir",
    "load_bfcl",
    "load_bfcl_dir",
    "load_episode_sources",
    "load_sources",
    "load_xlam",
    "parse_source_shares",
    "solvable",
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


def _tool(function: Any, path: Path, line: int) -> dict[str, Any]:
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise SourceFileError(str(path), "each function needs a string 'name'", line)
    converted = openai_schema(function)
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
        for line, record in json_lines(answer_path):
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
    for line, record in json_lines(question_path):
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
        parameters = openai_schema(params)
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
        yield from json_lines(path)


def load_xlam(path: str | Path) -> tuple[Task, ...]:
    """xLAM-style tasks: records with ``query``, ``tools`` and ``answers`` (name + arguments)."""
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
    """One source of single-turn tasks, of multi-turn episodes, or of both: where its pools come
    from and how a user names its files. One ``--tasks.sources`` string gives every kind its
    share; each draws what it holds (``load_sources``: tasks, ``load_episode_sources``: episodes)."""

    name: str
    #: Its single-turn tasks from the files its flag names (None: none were given; the loader may
    #: know a default). None: it holds no single-turn tasks (or generates them: ``generated``).
    load: Callable[[Paths | None], tuple[Task, ...]] | None = None
    #: The flag naming its files, without dashes (``bfcl``: ``--tasks.bfcl`` / ``--bfcl``); sources
    #: may share one. None: it reads no files.
    path_flag: str | None = None
    #: What that flag takes, plural (help text), and what happens without it.
    files: str = ""
    without_files: str = ""
    metavar: str = "PATH,..."
    #: The kind of file, as the error of a required one that was not given names it (``xLAM``);
    #: empty when the loader has a default.
    required: str = ""
    #: Its multi-turn episodes (tasks.episodes) from the files its flag names; None: it holds none
    #: (or generates them).
    load_episodes: Callable[[Paths | None], tuple[Episode, ...]] | None = None
    #: It generates its tasks and episodes itself, from the round's seed, with no pool (builtin).
    generated: bool = False

    @property
    def holds_tasks(self) -> bool:
        return self.generated or self.load is not None

    @property
    def holds_episodes(self) -> bool:
        return self.generated or self.load_episodes is not None


def _load_bfcl_multi_turn(paths: Paths | None) -> tuple[Episode, ...]:
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

#: Every source of tasks and episodes, in the order they are listed to users. Adding a source is
#: adding its loader and an entry here: shares, file flags (neurons, evaluate, ``python -m
#: tasks``), loading and drawing all read this table.
SOURCES: dict[str, SourceKind] = {
    kind.name: kind
    for kind in (
        SourceKind(BUILTIN, generated=True),
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
            path_flag="bfcl",
            files=_BFCL_FILES,
            without_files="default: the installed bfcl-eval",
            load_episodes=_load_bfcl_multi_turn,
        ),
    )
}
KNOWN_SOURCES = tuple(SOURCES)


def _path_flags() -> dict[str, SourceKind]:
    flags: dict[str, SourceKind] = {}
    for kind in SOURCES.values():
        if kind.path_flag is not None:
            flags.setdefault(kind.path_flag, kind)
    return flags


#: The file flags, each once (the first source to use it describes it): flag name -> source kind.
PATH_FLAGS = _path_flags()


def _kind(name: str) -> SourceKind:
    kind = SOURCES.get(name)
    if kind is None:
        raise TaskConfigError(f"unknown task source {name!r} (known: {', '.join(SOURCES)})")
    return kind


def _files(kind: SourceKind, paths: Mapping[str, Paths | None] | None) -> Paths | None:
    """The files the source's flag named (None: none), or a one-line error when it needs some."""
    given = (paths or {}).get(kind.path_flag or "") or None
    if given is None and kind.required:
        raise TaskConfigError(
            f"source {kind.name!r} has a share but no {kind.required} file was given: name it with "
            f"--tasks.{kind.path_flag} FILE (python -m tasks: --{kind.path_flag} FILE)"
        )
    return given


def _holding(shares: Mapping[str, float], holds: Callable[[SourceKind], bool]) -> list[str]:
    """The sources of ``shares`` (each a known one) whose kind ``holds`` what is being loaded."""
    return [name for name in shares if holds(_kind(name))]


def solvable(task: Task) -> bool:
    """True when the reference answer of a task passes ``scoring.check`` on its own tools.

    Used to drop the few external tasks whose published ground truth contradicts their own
    schema (e.g. BFCL entries whose answer omits a required parameter).
    """
    calls = [Call(name, arguments) for name, arguments in reference_calls(task.expected)]
    try:
        return check(calls, task.tools, task.expected, task.scoring_category).valid
    except ValueError:
        return False


def load_sources(
    shares: Mapping[str, float], *, paths: Mapping[str, Paths | None] | None = None
) -> list[Source]:
    """Sources for ``generate``: the shares of the sources that hold single-turn tasks, with the
    pools they need loaded (the others hold episodes: ``load_episode_sources``).

    ``paths`` maps a file flag of :data:`PATH_FLAGS` (``bfcl``, ``xlam``) to the files it named.
    BFCL question files have their possible answers looked up in a sibling ``possible_answer``
    folder, or name data folders; without any, the installed ``bfcl-eval`` package's data folder
    is used.
    """
    names = _holding(shares, lambda kind: kind.holds_tasks)
    if not any(shares[name] > 0 for name in names):
        raise TaskConfigError(
            "no source with a share holds single-turn tasks: give one of "
            f"{', '.join(kind.name for kind in SOURCES.values() if kind.holds_tasks)} a share"
        )
    sources: list[Source] = []
    for name in names:
        kind, share = SOURCES[name], shares[name]
        if kind.load is None or share <= 0:
            sources.append(Source(name, share))
            continue
        pool = kind.load(_files(kind, paths))
        usable = tuple(task for task in pool if solvable(task))
        if not usable:
            raise TaskConfigError(
                f"source {name!r}: none of its {len(pool)} tasks has a valid reference answer"
            )
        sources.append(Source(name, share, usable))
    return sources


def load_episode_sources(
    shares: Mapping[str, float], *, paths: Mapping[str, Paths | None] | None = None
) -> list[EpisodeSource]:
    """Sources for ``tasks.episodes.generate_episodes``: the shares of the sources that hold
    multi-turn episodes (``builtin=0.8,bfcl_multi_turn=0.2``), with their pools loaded from the
    files of ``paths`` (as ``load_sources``; BFCL's: its data folder, default the installed
    bfcl-eval package's). Shares that name no source of episodes (``bfcl=1.0``: a task set from
    BFCL alone) leave the episodes to the builtin generator."""
    names = _holding(shares, lambda kind: kind.holds_episodes)
    if not any(shares[name] > 0 for name in names):
        return [EpisodeSource(BUILTIN, 1.0)]
    sources: list[EpisodeSource] = []
    for name in names:
        kind, share = SOURCES[name], shares[name]
        if kind.load_episodes is None or share <= 0:
            sources.append(EpisodeSource(name, share))
            continue
        sources.append(EpisodeSource(name, share, kind.load_episodes(_files(kind, paths))))
    return sources
