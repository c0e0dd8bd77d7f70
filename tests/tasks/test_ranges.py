"""Generated requests make sense: over every library tool, every request template and many draws,
the ends of a range are in order (a start never after its end), periods are as long as such
periods are, and two parameters that must differ (origin and destination, from and to) do."""

from __future__ import annotations

import datetime as dt
import re
from random import Random
from typing import Any

import pytest

from tasks.builtin import instantiate
from tasks.library import tools
from tasks.library.ranges import date_range
from tasks.spec import ToolSpec

DRAWS_PER_TEMPLATE = 40
# The longest period any range of the library may span, in days (a statement: about a quarter).
LONGEST_PERIOD_DAYS = 92

# Parameter pairs that are the two ends of one range: by name, so a new tool with a range is
# held to the same rule without being listed here.
_PAIRS = (
    (re.compile(r"^start_(\w+)$"), r"end_\1"),
    (re.compile(r"^(\w+)_start$"), r"\1_end"),
    (re.compile(r"^min_(\w+)$"), r"max_\1"),
    (re.compile(r"^(\w+)_min$"), r"\1_max"),
    (re.compile(r"^from_date$"), "to_date"),
    (re.compile(r"^check_in$"), "check_out"),
    (re.compile(r"^pickup_date$"), "return_date"),
    (re.compile(r"^departure_date$"), "return_date"),
)


def range_pairs(spec: ToolSpec) -> list[tuple[str, str]]:
    names = {param.name for param in spec.params}
    pairs = []
    for name in sorted(names):
        for pattern, partner in _PAIRS:
            match = pattern.match(name)
            if match and match.expand(partner) in names:
                pairs.append((name, match.expand(partner)))
    return pairs


def _value(accepted: list[Any]) -> Any:
    """The reference value (ISO dates become dates, so they compare as days)."""
    value = accepted[0]
    if isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", value):
        return dt.date.fromisoformat(value)
    return value


def _calls(spec: ToolSpec) -> list[tuple[str, dict[str, list[Any]]]]:
    """(request, arguments) of every template of ``spec``, drawn DRAWS_PER_TEMPLATE times each."""
    drawn = []
    for index, template in enumerate(spec.templates):
        for seed in range(DRAWS_PER_TEMPLATE):
            instance = instantiate(spec, Random(f"{spec.name}/{index}/{seed}"), template)
            drawn.append((instance.text, instance.call[spec.name]))
    return drawn


RANGED = [spec for spec in tools() if range_pairs(spec)]


def test_the_library_has_ranges_to_check() -> None:
    names = {spec.name for spec in RANGED}
    assert {"set_out_of_office", "list_transactions", "rent_car"} <= names


@pytest.mark.parametrize("spec", RANGED, ids=[spec.name for spec in RANGED])
def test_every_range_starts_before_it_ends(spec: ToolSpec) -> None:
    for text, arguments in _calls(spec):
        for first, last in range_pairs(spec):
            if first not in arguments or last not in arguments or not arguments[first][0]:
                continue  # an end left out (optional) or only alluded to
            start, end = _value(arguments[first]), _value(arguments[last])
            if start in ("", None) or end in ("", None):
                continue
            assert start <= end, f"{spec.name}: {first} {start} after {last} {end} in {text!r}"
            if isinstance(start, dt.date):
                assert (end - start).days <= LONGEST_PERIOD_DAYS, f"{spec.name}: {text!r}"


def shared_generators(spec: ToolSpec) -> list[list[str]]:
    """The groups of parameters that draw from one generator."""
    shared: dict[int, list[str]] = {}
    for param in spec.params:
        shared.setdefault(id(param.gen), []).append(param.name)
    return [names for names in shared.values() if len(names) > 1]


SHARING = [spec for spec in tools() if shared_generators(spec)]


@pytest.mark.parametrize("spec", SHARING, ids=[spec.name for spec in SHARING])
def test_no_request_contradicts_itself(spec: ToolSpec) -> None:
    """Two parameters drawn from one generator (origin and destination, from and to currency)
    never get the same value: "convert euros to euros" is no request."""
    groups = shared_generators(spec)
    for text, arguments in _calls(spec):
        for names in groups:
            values = [str(arguments[name][0]) for name in names if name in arguments and arguments[name][0]]
            assert len(values) == len(set(values)), f"{spec.name}: {names} repeat a value in {text!r}"


def test_the_reported_request_is_in_order_now() -> None:
    """`python -m tasks sample --seed 7 --n 2` (now --tasks.count) wrote "I'm off from April 6, 2027
    to 11 June 2026"."""
    from tasks.task_sets import generate

    for task in generate("7", 200):
        for call in task.expected:
            for name, arguments in call.items():
                days = {key: _value(values) for key, values in arguments.items() if values and values[0]}
                dates = [value for value in days.values() if isinstance(value, dt.date)]
                if len(dates) == 2 and "office" in name.lower():
                    assert dates[0] <= dates[1], task.request


@pytest.mark.parametrize("spec", RANGED, ids=[spec.name for spec in RANGED])
def test_every_template_states_the_start_before_the_end(spec: ToolSpec) -> None:
    """The end takes the day its start left waiting: a template naming the end first would draw
    two unrelated days (tasks.library.ranges)."""
    for template in spec.templates:
        for first, last in range_pairs(spec):
            if "{" + first + "}" in template and "{" + last + "}" in template:
                assert template.index("{" + first + "}") < template.index("{" + last + "}"), template


def test_a_range_alone_is_ordered_and_plausible() -> None:
    start_gen, end_gen = date_range(2, 9)
    for seed in range(300):
        rng = Random(seed)
        start, end = start_gen.draw(rng), end_gen.draw(rng)
        days = (dt.date.fromisoformat(end.accepted[0]) - dt.date.fromisoformat(start.accepted[0])).days
        assert 2 <= days <= 9
    # An end with no start before it (the start only alluded to) is a day of its own period.
    alone = end_gen.draw(Random(5))
    assert dt.date.fromisoformat(alone.accepted[0]) >= dt.date(2026, 1, 3)
    with pytest.raises(ValueError):
        date_range(5, 2)
