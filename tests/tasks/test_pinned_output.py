"""Pinned output: the generator's tasks and variants stay byte-identical across refactors.

The digests were computed from the committed generator (GENERATOR_VERSION "1") before any
performance work and re-pinned for version "2" (one Random per task set instead of one seeding
per task; tool_shuffle unchanged) and for version "3" (the two ends of a date range drawn as one
period; devices: a system line with today, values worked out, decoys, open name and place spaces;
reworded, synthesised and lookalike tools) and for version "4" (no-call tasks that need
understanding: irrelevance asking for a lookalike's action or offering the asked thing's other
actions, missing_param beside a stated value of the withheld type; values stated as facts about
someone else; more ways to ask for a lookalike's action; values picked among written candidates by
meaning: who wanted one, when, which is left, how they compare; a second worked value in half the
requests) and for version "5" (a second worked value in every request with two placeholders a
device fits, a decoy in every request with one, device weights moved towards the ones a lexical
miner reads worst, devices drawing their own values keep apart from the request's other values and
decoys, and the subjects of facts about someone else apart from the choice devices' roles) and for
version "6" (a decoy apart from the words of the task's other values, the choice devices' people
apart from its values, and a parallel task within the phrasing verification's length bound) and
for version "7" (one person per role, relation, dated event and purpose in a task, one choice by
place per kind of value, stated values drawn apart from the task's decoys and written words in one
loop of redraws, no "the the" where a placeholder's text starts with the template's word) and
for version "8" (no template determiner before a text with its own: "a our host's initial idea";
"the choice of whoever drives", not "whoever drives's choice") and for version "9" (no word said
twice across a seam: "asked for, for Priya", "they asked for 5 people", no "please please" at an
opener or closer, "whatever suits whoever drives") and for version "10" (a placeholder the
template writes "'s" after takes its value as drawn: no "the one the surveyor flagged's lens")
and for version "11" (no second stop after a request that ends a sentence: "in degrees F? Then",
not "F?. Then"; "flagged? Ana flagged WH-B2", not "flagged?; Ana") and for version "12" (up to
three worked values in the request of a single-request task, from one of its tool's templates
with the most placeholders a device fits, its tool drawn by that number; the mixed round
changes through its builtin half).
A change in output must be deliberate: bump
GENERATOR_VERSION and re-pin.
The JSON keeps dict order (no sort_keys): the order of tools, properties and enums is part of
what miners see.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from random import Random
from typing import Any

from tasks import GENERATOR_VERSION, Source, generate, variant
from tasks.lexicon import PREFIXES, SUFFIXES, synonym_index
from tasks.model import Task
from tasks.shuffle import shuffle_surface
from tasks.sources import load_bfcl_dir, load_xlam

_PINNED_VERSION = "12"
_BUILTIN_DIGEST = "560284d36aca6b254aea1605ff6750a9445f396edadde055b325eeced4e74a4b"
_SOURCED_DIGEST = "629dec370747ecd5bacbd1664a58eb14047edede4932f7a8481c5ef3d6b7728d"
_ADVERSARIAL_SHUFFLE_DIGEST = "c140444a6a537c4529a20ac1d6d534c7ed4b23e47f3ebdc14503384db89035a9"


def _pinned_fields(task: Task) -> dict[str, Any]:
    """The task as pinned: everything but the validator-side intent and phrasing record (added
    later; they describe the request, they do not change it)."""
    data = task.to_dict()
    data.pop("intent", None)
    data.pop("phrasing", None)
    return data


def _ordered_digest(task_list: list[Task]) -> str:
    blob = json.dumps([_pinned_fields(task) for task in task_list], ensure_ascii=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def test_generator_version_matches_the_pinned_digests() -> None:
    assert GENERATOR_VERSION == _PINNED_VERSION, "re-pin the digests below when bumping the version"


def test_builtin_tasks_and_variants_of_variants_are_byte_identical() -> None:
    generated = generate(b"pin", 200)
    variants = [variant(task, b"pin-miner") for task in generated]
    second = [variant(task, b"pin-miner-2") for task in variants]
    assert _ordered_digest(generated + variants + second) == _BUILTIN_DIGEST


def test_external_source_tasks_and_variants_are_byte_identical(fixtures: Path) -> None:
    pool = (
        *load_bfcl_dir(fixtures / "bfcl", ["simple_python", "parallel_multiple", "irrelevance"]),
        *load_xlam(fixtures / "xlam.json"),
    )
    mixed = generate(b"pin-ext", 60, sources=[Source("builtin", 0.5), Source("ext", 0.5, pool)])
    assert _ordered_digest(mixed + [variant(task, b"pin-miner") for task in mixed]) == _SOURCED_DIGEST


def _adversarial_tool_lists() -> list[list[dict[str, Any]]]:
    """Awkward tool lists: odd separators and cases, keywords, digits, duplicate names, missing
    keys, non-dict schemas, and crowded lists whose renames exhaust their draws and fall back."""
    words = [*sorted(synonym_index())[:300], "x", "2d", "from", "class", "none", "true", "v2", "über", "a1b2"]
    words += ["HTTP", "", *PREFIXES, *SUFFIXES]
    gen = Random(1234)

    def name() -> str:
        parts = [gen.choice(words) for _ in range(gen.randint(0, 4))]
        separator = gen.choice(["_", "", ".", "-", "__"])
        return separator.join(part if gen.random() < 0.5 else part.capitalize() for part in parts)

    def tool() -> dict[str, Any]:
        properties: dict[str, Any] = {}
        for _ in range(gen.randint(0, 6)):
            schema: Any = {"type": "string", "description": gen.choice(["", "Gets a thing", "x"])}
            if gen.random() < 0.3:
                schema["enum"] = [name() for _ in range(gen.randint(0, 5))]
            if gen.random() < 0.2:
                items_enum = gen.random() < 0.5
                schema["items"] = (
                    {"type": "string", "enum": ["a", "b", "c"]} if items_enum else {"type": "integer"}
                )
            if gen.random() < 0.05:
                schema = "not a schema"
            properties[name()] = schema
        descriptions = ["", "Gets the weather.", "Sends money", "Looks up stuff", "lower case", "Works out y"]
        function: dict[str, Any] = {
            "name": name(),
            "description": gen.choice(descriptions),
            "parameters": {
                "type": "object",
                "properties": properties,
                "required": [key for key in properties if gen.random() < 0.5],
            },
        }
        if gen.random() < 0.05:
            del function["parameters"]
        elif gen.random() < 0.05:
            del function["parameters"]["properties"]
        if gen.random() < 0.05:
            del function["description"]
        return {"type": "function", "function": function}

    lists = []
    for _ in range(800):
        tools = [tool() for _ in range(gen.randint(1, 6))]
        if gen.random() < 0.3 and len(tools) > 1:
            tools[1]["function"]["name"] = tools[0]["function"]["name"]
        lists.append(tools)
    crowded: dict[str, Any] = {"x": {}, "x_2": {}, "X": {}, "x_3": {}, "": {}, "from": {}}
    for count in (12, 40):
        lists.append(
            [
                {
                    "type": "function",
                    "function": {
                        "name": gen.choice(["x", "fn", "q", "apiX"]),
                        "description": "",
                        "parameters": {"properties": dict(crowded)},
                    },
                }
                for _ in range(count)
            ]
        )
    return lists


def test_shuffle_of_adversarial_tool_lists_is_byte_identical() -> None:
    digest = hashlib.sha256()
    for tools in _adversarial_tool_lists():
        expected = []
        for tool in tools[:2]:
            properties = (tool["function"].get("parameters") or {}).get("properties", {})
            expected.append({tool["function"]["name"]: {key: [1] for key in properties}})
        for seed in range(2):
            surface = shuffle_surface(tools, expected, Random(seed))
            blob = [surface.tools, surface.expected, surface.function_names, surface.parameter_names]
            digest.update(json.dumps(blob).encode())
    assert digest.hexdigest() == _ADVERSARIAL_SHUFFLE_DIGEST
