"""External sources: BFCL and xLAM files, share parsing, errors naming file and line."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from scoring import Call
from scoring.checking import check
from scoring.rendering import FORMATS, render
from tasks import SourceFileError, TaskConfigError, generate, variant
from tasks.answers import reference_calls
from tasks.episodes import EpisodeSource
from tasks.sources import (
    bfcl_data_dir,
    load_bfcl,
    load_bfcl_dir,
    load_episode_sources,
    load_sources,
    load_xlam,
    parse_source_shares,
)

FIXTURE_FILES = ["simple_python", "parallel_multiple", "irrelevance"]


def _solvable_everywhere(task) -> bool:
    calls = [Call(name, args) for name, args in reference_calls(task.expected)]
    for fmt in FORMATS:
        output = render(calls, fmt) if calls else "no call"
        if not check(output, task.tools, task.expected, task.scoring_category).valid:
            return False
    return True


def test_bfcl_files_load_as_openai_tasks(fixtures: Path) -> None:
    loaded = load_bfcl_dir(fixtures / "bfcl", FIXTURE_FILES)
    assert [t.category for t in loaded] == ["simple", "simple", "simple", "parallel_multiple", "irrelevance"]
    hypot = loaded[1]
    assert hypot.id == "bfcl-simple_python_1" and hypot.source == "bfcl"
    parameters = hypot.tools[0]["function"]["parameters"]
    assert parameters["type"] == "object" and hypot.tools[0]["type"] == "function"
    store = loaded[2].tools[0]["function"]["parameters"]["properties"]
    assert store["pair"]["type"] == "array" and store["pair"]["items"]["type"] == "number"
    assert "type" not in store["payload"] and store["weight"]["type"] == "number"
    assert loaded[4].expected == []


def test_xlam_records_load_with_categories_and_optional_params(fixtures: Path) -> None:
    loaded = load_xlam(fixtures / "xlam.json")
    assert [t.category for t in loaded] == ["parallel", "parallel_multiple", "multiple"]
    primes = loaded[1]
    schema = next(t for t in primes.tools if t["function"]["name"] == "next_primes")["function"]["parameters"]
    assert schema["required"] == ["start"]
    assert schema["properties"]["values"] == {
        "type": "array",
        "items": {"type": "integer"},
        "description": "Seen values.",
    }
    assert primes.expected[1] == {"next_primes": {"start": [10], "count": [3], "values": [""]}}


def test_external_tasks_and_their_variants_are_solvable(fixtures: Path) -> None:
    pool = (*load_bfcl_dir(fixtures / "bfcl", FIXTURE_FILES), *load_xlam(fixtures / "xlam.json"))
    for task in pool:
        for index in range(40):
            other = variant(task, f"miner-{index}")
            assert _solvable_everywhere(other), (task.id, other.tool_names)
            if task.expected:
                assert not set(other.tool_names) & set(task.tool_names)


def test_generate_mixes_sources_by_share(fixtures: Path) -> None:
    sources = load_sources(
        parse_source_shares("builtin=0.5, bfcl=0.25, xlam=0.25"),
        paths={"bfcl": [fixtures / "bfcl"], "xlam": [fixtures / "xlam.json"]},
    )
    produced = generate("mixed", 40, sources=sources)
    assert Counter(t.source for t in produced) == {"builtin": 20, "bfcl": 10, "xlam": 10}
    for task in produced:
        assert _solvable_everywhere(task)
        if task.source != "builtin" and task.expected:
            original = next(iter(task.expected[0]))
            assert "." not in original, "external names are shuffled too"
    assert [t.to_dict() for t in produced] == [t.to_dict() for t in generate("mixed", 40, sources=sources)]


def test_bfcl_question_file_finds_its_answers_in_the_sibling_folder(fixtures: Path) -> None:
    sources = load_sources({"bfcl": 1.0}, paths={"bfcl": [fixtures / "bfcl" / "BFCL_v4_simple_python.json"]})
    assert len(sources[0].tasks) == 3


def test_parse_source_shares() -> None:
    assert parse_source_shares("builtin=0.8,bfcl=0.2") == {"builtin": 0.8, "bfcl": 0.2}
    assert parse_source_shares(" xlam = 1 ,") == {"xlam": 1.0}
    for bad, message in [
        ("builtin", "name=share"),
        ("nope=1", "unknown task source"),
        ("builtin=x", "not a number"),
        ("builtin=-1", "non-negative"),
        ("builtin=1,builtin=2", "twice"),
        ("builtin=0", "no positive"),
        ("", "no positive"),
        ("builtin=inf", "finite"),
    ]:
        with pytest.raises(TaskConfigError, match=message):
            parse_source_shares(bad)


def test_sources_need_their_files() -> None:
    with pytest.raises(TaskConfigError, match="xLAM"):
        load_sources({"xlam": 1.0})
    with pytest.raises(TaskConfigError, match="no tasks were loaded"):
        generate("x", 3, sources={"bfcl": 1.0})


def test_errors_name_the_file_and_line(tmp_path: Path, fixtures: Path) -> None:
    missing = tmp_path / "missing.json"
    with pytest.raises(SourceFileError, match=r"missing\.json: file not found"):
        load_bfcl(missing)

    broken = tmp_path / "questions.json"
    good = (fixtures / "bfcl" / "BFCL_v4_simple_python.json").read_text().splitlines()[0]
    broken.write_text(good + "\n{not json\n")
    with pytest.raises(SourceFileError, match=r"questions.json:2: not valid JSON") as error:
        load_bfcl(broken, fixtures / "bfcl" / "possible_answer" / "BFCL_v4_simple_python.json")
    assert error.value.line == 2 and error.value.path.endswith("questions.json")

    unanswered = tmp_path / "unanswered.json"
    unanswered.write_text(good + "\n")
    with pytest.raises(SourceFileError, match=r"unanswered.json:1: simple_python_0: no possible answer"):
        load_bfcl(unanswered)

    xlam = tmp_path / "xlam.jsonl"
    xlam.write_text(
        json.dumps({"query": "q", "tools": [{"name": "f", "parameters": {}}], "answers": []})
        + "\n"
        + json.dumps({"query": "q", "tools": "[{bad", "answers": []})
        + "\n"
    )
    with pytest.raises(SourceFileError, match=r"xlam.jsonl:2: 'tools' is a string but not valid JSON"):
        load_xlam(xlam)

    wrong_answer = tmp_path / "wrong.json"
    wrong_answer.write_text(
        json.dumps(
            [
                {
                    "query": "q",
                    "tools": [{"name": "f", "parameters": {}}],
                    "answers": [{"name": "g", "arguments": {}}],
                }
            ]
        )
    )
    with pytest.raises(SourceFileError, match=r"wrong.json:1: answer calls 'g'"):
        load_xlam(wrong_answer)


@pytest.mark.skipif(bfcl_data_dir() is None, reason="bfcl-eval is not installed")
def test_installed_bfcl_data_loads_and_almost_all_of_it_is_usable() -> None:
    (source,) = load_sources({"bfcl": 1.0})
    assert len(source.tasks) > 3000
    for task in generate("bfcl-real", 200, sources=[source]):
        assert _solvable_everywhere(task)


def test_every_source_is_one_registry_entry() -> None:
    from tasks.sources import KNOWN_SOURCES, PATH_FLAGS, SOURCES

    assert KNOWN_SOURCES == tuple(SOURCES) == ("builtin", "bfcl", "xlam", "bfcl_multi_turn")
    assert [name for name, kind in SOURCES.items() if kind.holds_tasks] == ["builtin", "bfcl", "xlam"]
    assert [name for name, kind in SOURCES.items() if kind.holds_episodes] == ["builtin", "bfcl_multi_turn"]
    assert list(PATH_FLAGS) == ["bfcl", "xlam"]  # bfcl_multi_turn reads BFCL's data folder too
    with pytest.raises(TaskConfigError, match="no source with a share holds single-turn tasks"):
        load_sources({"bfcl_multi_turn": 1.0})
    # A task set from BFCL alone leaves the episodes to the builtin generator, as it always did.
    assert load_episode_sources({"builtin": 0.0, "bfcl": 1.0}) == [EpisodeSource("builtin", 1.0)]
    # One share string serves both: each loader takes the sources that hold what it loads.
    assert [source.name for source in load_sources({"builtin": 0.8, "bfcl_multi_turn": 0.2})] == ["builtin"]
    assert [source.name for source in load_episode_sources({"builtin": 0.8, "xlam": 0.2})] == ["builtin"]


def test_files_can_be_named_by_their_flag(fixtures: Path) -> None:
    sources = load_sources({"builtin": 0.5, "xlam": 0.5}, paths={"xlam": [fixtures / "xlam.json"]})
    assert [source.name for source in sources] == ["builtin", "xlam"] and sources[1].tasks
    with pytest.raises(TaskConfigError, match=r"no xLAM file was given: name it with --tasks\.xlam FILE"):
        load_sources({"xlam": 1.0}, paths={"xlam": []})


def test_a_new_source_is_one_registry_entry(
    fixtures: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An entry (and its loader) is all a source needs: shares, loading and the CLI's file flag."""
    from subnet import tasks_cli as cli
    from tasks import sources

    def load_lines(paths):  # a stand-in loader: xLAM records under another name
        return tuple(task for path in paths or () for task in load_xlam(path))

    kind = sources.SourceKind(
        "lines", load_lines, path_flag="lines", files="JSON files of lines", required="lines"
    )
    monkeypatch.setitem(sources.SOURCES, "lines", kind)
    monkeypatch.setattr(cli, "PATH_FLAGS", {**sources.PATH_FLAGS, "lines": kind})
    assert parse_source_shares("builtin=0.5,lines=0.5") == {"builtin": 0.5, "lines": 0.5}
    with pytest.raises(TaskConfigError, match=r"no lines file was given: name it with --tasks\.lines FILE"):
        load_sources({"lines": 1.0})
    argv = [
        "sample",
        "--tasks.count",
        "2",
        "--json",
        "--tasks.sources",
        "lines=1",
        "--tasks.lines",
        str(fixtures / "xlam.json"),
    ]
    assert cli.main(argv) == 0
    shown = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [task["source"] for task in shown] == ["lines", "lines"]


def test_every_registry_entry_is_complete() -> None:
    """Each entry holds something (tasks, episodes, or both by generating them), and a flag that
    names files belongs to a source that loads them; the assertion names the entry and the piece."""
    from tasks.sources import SOURCES

    for name, kind in SOURCES.items():
        assert kind.name == name, f"SOURCES[{name!r}] is an entry named {kind.name!r}"
        assert kind.holds_tasks or kind.holds_episodes, (
            f"source {name!r} has no load (tasks), no load_episodes (episodes) and is not generated: "
            "it would never be drawn"
        )
        loads = kind.load is not None or kind.load_episodes is not None
        assert (kind.path_flag is not None) == loads, (
            f"source {name!r}: a file flag ({kind.path_flag}) and a loader go together"
        )
        assert not kind.required or kind.path_flag, f"source {name!r} requires a file but names no flag"


def test_a_new_episode_source_is_one_registry_entry(
    fixtures: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """An entry with ``load_episodes`` is all an episode source needs: its share in the one
    ``--tasks.sources`` string, its files' flag, loading, drawing (``python -m tasks sample
    --episodes``), and the validator's task source (``LibraryTasks.episodes``)."""
    from subnet import tasks_cli as cli
    from subnet.validator.task_source import LibraryTasks
    from tasks import sources
    from tasks.episodes import generate_episodes

    seen: list[Any] = []

    def load_recorded(paths: Any) -> tuple[Any, ...]:  # a stand-in: builtin episodes, "read" from files
        seen.append(paths)
        return tuple(replace(episode, source="recorded") for episode in generate_episodes(b"recorded", 4))

    kind = sources.SourceKind(
        "recorded", path_flag="recorded", required="recording", load_episodes=load_recorded
    )
    monkeypatch.setitem(sources.SOURCES, "recorded", kind)
    monkeypatch.setattr(cli, "PATH_FLAGS", {**sources.PATH_FLAGS, "recorded": kind})
    with pytest.raises(TaskConfigError, match=r"no recording file was given: name it with --tasks\.recorded"):
        load_episode_sources({"recorded": 1.0})
    argv = ["sample", "--episodes", "3", "--tasks.sources", "recorded=1", "--tasks.recorded", "a.json"]
    assert cli.main(argv) == 0
    assert capsys.readouterr().out.count("recorded-episode-") == 3 and seen == [["a.json"]]
    source = LibraryTasks.from_flag("builtin=0.5,recorded=0.5", {"recorded": ["b.json"]})
    drawn = source.episodes(b"round", 6)
    assert sorted(episode.source for episode in drawn) == ["builtin"] * 3 + ["recorded"] * 3
    assert [source.name for source in source.sources or ()] == ["builtin"]
