"""Command line: ``python -m tasks sample`` shows tasks readably, ``python -m tasks export``
writes a chat-form fine-tuning set (JSON lines) for miners to train on, ``python -m tasks
compile`` builds the compiled generator modules (:mod:`tasks.compiled`).

User mistakes (unknown category, bad share list, missing source file, unwritable output) end
in one line on stderr and exit code 2.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any, TextIO

from scoring import Call
from scoring.rendering import to_openai_tool_calls
from scoring.schema import function_of
from subnet.cli import OneLineParser, run_main
from subnet.config.flags import add_flag
from subnet.phrasing import PhrasingSetupError, add_phrasing_arguments, phrasing_settings
from subnet.phrasing.session import PhrasingSession
from subnet.registry import engine_rewrites
from tasks import compiled
from tasks.answers import reference_calls
from tasks.categories import CATEGORIES
from tasks.episodes import generate_episodes
from tasks.episodes.reference import trajectory
from tasks.errors import SourceFileError, TaskConfigError
from tasks.model import Task
from tasks.seeding import seed_bytes, sub_seed
from tasks.sources import PATH_FLAGS, load_episode_sources, load_sources, parse_source_shares
from tasks.task_sets import Source, generate, redraw

__all__ = ["main"]

_EXPORT_BATCH = 500
# Former spellings, refused in one line naming the flag now (the validator's and evaluate's names).
_RENAMED = {
    "--n": "--tasks.count",
    "--sources": "--tasks.sources",
    **{f"--{flag}": f"--tasks.{flag}" for flag in PATH_FLAGS},
}
_NO_CALL_REPLIES = {
    "irrelevance": "None of the tools I have can do that, so I can't help with it here.",
    "missing_param": "I can do that, but I need one more detail first: which one exactly do you mean?",
}


def _parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="python -m tasks", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command", required=True, parser_class=OneLineParser)

    # The phrasing engines run models and live with the validator (subnet.phrasing); the flags the
    # validator also takes are its registry's (subnet.config), spelt and checked the same way.
    def add_sources(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("--category", choices=sorted(CATEGORIES), help="only builtin tasks of this category")
        add_flag(sub, "tasks.sources", dest="sources")
        for flag, kind in PATH_FLAGS.items():  # one per file flag of the source registry
            sub.add_argument(
                f"--tasks.{flag}",
                dest=flag,
                action="append",
                default=None,
                help=f"{kind.files} (repeatable; {kind.without_files})",
            )

    sample = commands.add_parser("sample", help="show generated tasks", renamed=_RENAMED)
    sample.add_argument("--seed", default="0", help="any text; the same seed gives the same tasks")
    sample.add_argument("--tasks.count", dest="n", type=int, default=5, help="number of tasks")
    sample.add_argument("--json", action="store_true", help="one JSON task per line instead of text")
    sample.add_argument(
        "--episodes", type=int, default=None, metavar="N", help="show N multi-turn episodes instead of tasks"
    )
    add_sources(sample)
    add_phrasing_arguments(sample)

    export = commands.add_parser(
        "export", help="write a chat-form fine-tuning set (JSON lines)", renamed=_RENAMED
    )
    export.add_argument(
        "--tasks.count", dest="n", type=int, default=None, help="number of single-turn examples"
    )
    export.add_argument(
        "--episodes", type=int, default=None, metavar="N", help="write N episode trajectories instead"
    )
    export.add_argument("--out", type=Path, required=True, help="output .jsonl file")
    export.add_argument("--seed", default="export", help="any text; the same seed gives the same set")
    add_sources(export)
    add_phrasing_arguments(export)

    build = commands.add_parser(
        "compile", help="compile the generator's hot modules with mypyc (same tasks, faster)"
    )
    action = build.add_mutually_exclusive_group()
    action.add_argument("--status", action="store_true", help="say whether this Python would run a build")
    action.add_argument("--clean", action="store_true", help="remove the build")
    return parser


def _sources(args: argparse.Namespace) -> list[Source] | None:
    if args.sources is None:
        return None
    return load_sources(
        parse_source_shares(args.sources), paths={flag: getattr(args, flag) for flag in PATH_FLAGS}
    )


@contextlib.contextmanager
def _phrasing(args: argparse.Namespace, sources: list[Source] | None) -> Iterator[Callable[..., list[Task]]]:
    """A function phrasing a batch of tasks with ``--phrasing.engine`` (the tasks unchanged
    without one); the engine is started once for the whole command."""
    try:
        settings = phrasing_settings(args)
        if settings is None:
            yield lambda tasks, seed, quiet=False: tasks
            return
        with PhrasingSession(settings, lambda task, seed: redraw(task, seed, sources)) as session:

            def phrased(tasks: list[Task], seed: bytes, quiet: bool = False) -> list[Task]:
                result = session.phrase(tasks, seed)
                if tasks and not result.tasks:
                    raise TaskConfigError(f"no request could be phrased: {result.stats.summary()}")
                if not quiet:
                    sys.stderr.write(result.stats.summary() + "\n")
                return result.tasks

            yield phrased
    except PhrasingSetupError as error:
        raise TaskConfigError(str(error)) from None


def _mix(args: argparse.Namespace) -> dict[str, float] | None:
    return {args.category: 1.0} if args.category else None


def _signature(tool: dict[str, Any]) -> str:
    function = function_of(tool)
    parameters = function.get("parameters") or {}
    required = set(parameters.get("required") or [])
    params = []
    for name, prop in (parameters.get("properties") or {}).items():
        kind = prop.get("type", "any") if isinstance(prop, dict) else "any"
        params.append(f"{name}: {kind}" + ("" if name in required else "?"))
    return f"{function.get('name', '?')}({', '.join(params)})"


def _show(task: Task, number: int, out: TextIO) -> None:
    out.write(f"#{number} {task.category} [{task.source}] {task.id}\n")
    for message in task.messages:
        # The system line (today) is what relative dates in the request are worked out from.
        if message.get("role") == "system":
            out.write(f"  system:   {message.get('content', '')}\n")
    if task.phrasing is not None and engine_rewrites(str(task.phrasing.get("engine"))):
        if "replaces" in task.phrasing:
            out.write(f"  replaces: {task.phrasing['replaces']} (its request could not be phrased)\n")
        out.write(f"  template: {task.phrasing.get('template', '')}\n")
        out.write(f"  phrased:  {task.request}\n")
    else:
        out.write(f"  request:  {task.request}\n")
    for tool in task.tools:
        out.write(f"  tool:     {_signature(tool)}\n")
    if not task.expected:
        out.write("  expected: no call\n")
    for call in task.expected:
        out.write(f"  expected: {json.dumps(call, ensure_ascii=False)}\n")
    out.write("\n")


def _show_episode(episode: Any, number: int, out: TextIO) -> None:
    out.write(f"#{number} {episode.category} [{episode.environment}, size {episode.size}] {episode.id}\n")
    for index, turn in enumerate(episode.turns, start=1):
        out.write(f"  turn {index} user: {turn.user}\n")
        out.write(f"    tools:  {', '.join(turn.tools)}\n")
        if not turn.plan:
            out.write("    plan:   no state-changing call (ask, or say it cannot be done)\n")
        for call in turn.plan:
            out.write(
                f"    plan:   {call['name']}({json.dumps(call['arguments'], ensure_ascii=False)[:300]})\n"
            )
        if turn.needed:
            out.write(f"    needed: {json.dumps(turn.needed, ensure_ascii=False)}\n")
    if episode.cut is not None:
        out.write(f"  agent_step: predict reference call #{episode.cut + 1}\n")
    out.write("\n")


def _episode_sources(args: argparse.Namespace) -> Any:
    """``--tasks.sources`` for episodes (builtin, bfcl_multi_turn; ``--tasks.bfcl`` names BFCL's data
    folder)."""
    if args.sources is None:
        return None
    return load_episode_sources(
        parse_source_shares(args.sources), paths={flag: getattr(args, flag) for flag in PATH_FLAGS}
    )


def _refuse_unused_with_episodes(args: argparse.Namespace) -> None:
    """A flag that episodes do not read is refused, not silently dropped."""
    unused = [
        flag
        for flag, given in (
            ("--category", args.category is not None),
            ("--tasks.count", args.n is not None and args.command == "export"),
            ("--phrasing.engine", args.phrasing_engine is not None),
        )
        if given
    ]
    if unused:
        raise TaskConfigError(
            f"{', '.join(unused)} {'has' if len(unused) == 1 else 'have'} no effect with --episodes "
            "(episodes are drawn from their own generators): drop one"
        )


def _sample_episodes(args: argparse.Namespace) -> int:
    if args.episodes < 0:
        raise TaskConfigError("--episodes must not be negative")
    _refuse_unused_with_episodes(args)
    for number, episode in enumerate(
        generate_episodes(args.seed, args.episodes, sources=_episode_sources(args)), start=1
    ):
        if args.json:
            sys.stdout.write(json.dumps(episode.to_dict(), ensure_ascii=False) + "\n")
        else:
            _show_episode(episode, number, sys.stdout)
    return 0


def _sample(args: argparse.Namespace) -> int:
    if args.episodes is not None:
        return _sample_episodes(args)
    if args.n < 0:
        raise TaskConfigError("--tasks.count must not be negative")
    sources = _sources(args)
    tasks = generate(args.seed, args.n, mix=_mix(args), sources=sources)
    with _phrasing(args, sources) as phrased:
        tasks = phrased(tasks, seed_bytes(args.seed))
    for number, task in enumerate(tasks, start=1):
        if args.json:
            sys.stdout.write(json.dumps(task.to_dict(), ensure_ascii=False) + "\n")
        else:
            _show(task, number, sys.stdout)
    return 0


def training_example(task: Task) -> dict[str, Any]:
    """A chat-form example: the request, the tools, and the expected answer as the assistant turn."""
    calls = [Call(name, arguments) for name, arguments in reference_calls(task.expected)]
    if calls:
        reply: dict[str, Any] = {
            "role": "assistant",
            "content": None,
            "tool_calls": to_openai_tool_calls(calls),
        }
    else:
        text = _NO_CALL_REPLIES.get(task.category, _NO_CALL_REPLIES["irrelevance"])
        reply = {"role": "assistant", "content": text}
    return {
        "messages": [*task.messages, reply],
        "tools": task.tools,
        "category": task.category,
        "id": task.id,
    }


class _Progress:
    """A one-line progress bar on stderr."""

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total = max(total, 1)
        self.stream = stream
        self.shown = -1

    def update(self, done: int) -> None:
        percent = done * 100 // self.total
        if percent == self.shown:
            return
        self.shown = percent
        filled = percent * 30 // 100
        self.stream.write(f"\rexporting [{'#' * filled}{'.' * (30 - filled)}] {done}/{self.total}")
        self.stream.flush()

    def close(self) -> None:
        self.stream.write("\n")
        self.stream.flush()


def _check_folder(target: Path) -> None:
    """Refuse an output whose folder does not exist (before any work)."""
    if not target.parent.exists():
        raise TaskConfigError(f"cannot write {target}: folder {target.parent} does not exist")


def _write_jsonl(target: Path, total: int, batches: Callable[[int, int], Iterable[dict[str, Any]]]) -> None:
    """Write ``total`` rows to ``target`` as JSON lines, ``batches(index, size)`` giving them in
    batches, with a progress bar; the file appears whole or not at all (a ``.partial`` first)."""
    _check_folder(target)
    partial = target.with_name(target.name + ".partial")
    progress = _Progress(total, sys.stderr)
    try:
        with partial.open("w", encoding="utf-8") as out:
            done = 0
            batch = 0
            while done < total:
                size = min(_EXPORT_BATCH, total - done)
                for row in batches(batch, size):
                    out.write(json.dumps(row, ensure_ascii=False) + "\n")
                done += size
                batch += 1
                progress.update(done)
        os.replace(partial, target)
    except OSError as error:
        raise TaskConfigError(f"cannot write {target}: {error.strerror or error}") from None
    finally:
        progress.close()
        if partial.exists():
            partial.unlink()


def _export_episodes(args: argparse.Namespace) -> int:
    if args.episodes < 0:
        raise TaskConfigError("--episodes must not be negative")
    _refuse_unused_with_episodes(args)
    sources = _episode_sources(args)
    root = seed_bytes(args.seed)

    def batches(batch: int, size: int) -> Iterable[dict[str, Any]]:
        episodes = generate_episodes(sub_seed(root, b"export-episodes", batch), size, sources=sources)
        return (trajectory(episode) for episode in episodes)

    _write_jsonl(args.out, args.episodes, batches)
    sys.stderr.write(f"wrote {args.episodes} episode trajectories to {args.out}\n")
    return 0


def _export(args: argparse.Namespace) -> int:
    if args.episodes is not None:
        return _export_episodes(args)
    if args.n is None:
        raise TaskConfigError(
            "give --tasks.count N (single-turn examples) or --episodes N (episode trajectories)"
        )
    if args.n < 0:
        raise TaskConfigError("--tasks.count must not be negative")
    _check_folder(args.out)
    sources = _sources(args)
    mix = _mix(args)
    root = seed_bytes(args.seed)
    with _phrasing(args, sources) as phrased:

        def batches(batch: int, size: int) -> Iterable[dict[str, Any]]:
            batch_seed = sub_seed(root, b"export", batch)
            generated = generate(batch_seed, size, mix=mix, sources=sources)
            return (training_example(task) for task in phrased(generated, batch_seed, quiet=True))

        _write_jsonl(args.out, args.n, batches)
    sys.stderr.write(f"wrote {args.n} examples to {args.out}\n")
    return 0


def _compile(args: argparse.Namespace) -> int:
    folder = compiled.default_dir()
    if args.clean:
        removed = compiled.clean(folder)
        print(f"removed {folder}" if removed else f"no build in {folder}")
        return 0
    if args.status:
        # What a new process would do: this one may have imported the Python modules already.
        found = compiled.check(folder)
        print(found.reason)
        if os.environ.get("SUBNET_COMPILED", "").strip() == "0":
            print("SUBNET_COMPILED=0 is set: processes with it run the Python modules")
        return 0
    done = compiled.build(folder, say=lambda line: print(line, file=sys.stderr))
    print(done.reason)
    return 0


_COMMANDS = {"sample": _sample, "export": _export, "compile": _compile}


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit code."""

    def run() -> int:
        args = _parser().parse_args(argv)
        try:
            return _COMMANDS[args.command](args)
        except BrokenPipeError:  # the reader (head, less) stopped early
            return 0

    return run_main("tasks", run, errors=(TaskConfigError, SourceFileError, compiled.CompileError))
