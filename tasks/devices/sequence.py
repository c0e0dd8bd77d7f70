"""A value picked by when it was chosen: "this morning I went with Lisbon, an hour ago I switched
to Porto ... book what I had originally". The candidates are said with time markers, in any order
in the text, and the request asks for the first, the last or the one in between, so neither the
last value written nor the one after "switched to" is the answer."""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from tasks.devices import Scene, Worked
from tasks.devices._choice import candidates, fits, ordered, pick, sentence
from tasks.devices._words import filled, number_word, phrase
from tasks.spec import Param

# Time markers, earliest first.
_MARKERS = (
    ("two weeks ago", "last weekend", "earlier today"),
    ("in the spring", "over the summer", "a few days ago"),
    ("this morning", "around lunchtime", "an hour ago"),
    ("when we started talking", "after the second meeting", "just now"),
    ("originally", "after that", "most recently"),
    ("last year", "a month ago", "yesterday"),
)
_PICKED = (
    "{when} I went with {x}",
    "{when} it was {x}",
    "{when} I settled on {x}",
    "{when} we picked {x}",
    "{x} was the plan {when}",
    "{when} I switched to {x}",
)
_FIRST = ("what I had originally", "my opening choice", "the one I started with", "the original pick")
_LAST = ("my latest choice", "the one I ended up with", "the most recent pick", "where I landed")
_MIDDLE = ("the one in between", "my second choice", "the pick before the last one")


@dataclass(frozen=True, slots=True)
class Sequence:
    name: str = "sequence"
    weight: float = 0.5
    role: str = "value"

    def fits(self, param: Param) -> bool:
        return fits(param)

    def work(self, param: Param, rng: Random, scene: Scene) -> Worked | None:
        if ordered(param) in scene.holders:
            return None  # another request chooses between values of this kind by place
        drawn = candidates(param, rng, scene)
        if drawn is None:
            return None
        random = rng.random
        markers = pick_markers(rng, len(drawn))
        # Where the value stands in time: first, last, or (of three) in between.
        slot = int(random() * len(drawn))
        refs = _FIRST if slot == 0 else _LAST if slot == len(drawn) - 1 else _MIDDLE
        # The candidates in time order: the value at its slot, the decoys around it.
        timeline = [*drawn[1:]]
        timeline.insert(slot, drawn[0])
        facts = [
            sentence(
                filled(pick(rng, _PICKED), when=when, x=value.text), value, (phrase(when),), value is drawn[0]
            )
            for when, value in zip(markers, timeline, strict=True)
        ]
        if random() < 0.5:
            facts.reverse()
        said = pick(rng, refs)
        scene.hold("ordered", ordered(param))
        return Worked(said, drawn[0].accepted, (phrase(said),), (), tuple(facts))


# Ages in days and the ways to say them, in mixed units, for markers whose order must be worked
# out ("a fortnight ago" is before "nine days ago", which is before "last Friday"... by arithmetic).
_AGES: tuple[tuple[int, str], ...] = (
    (0, "earlier today"),
    (1, "yesterday"),
    *((days, f"{number_word(days)} days ago") for days in range(2, 13)),
    (14, "a fortnight ago"),
    *((7 * weeks, f"{number_word(weeks)} weeks ago") for weeks in range(3, 7)),
    (7, "a week ago"),
)


def pick_markers(rng: Random, count: int) -> tuple[str, ...]:
    """Time markers, earliest first: a row of fixed markers, or (half the time) ages in mixed
    units whose order takes arithmetic."""
    if rng.random() < 0.5:
        chosen: list[tuple[int, str]] = []
        for _ in range(4 * count):
            days, said = _AGES[int(rng.random() * len(_AGES))]
            if all(abs(days - other) >= 2 for other, _ in chosen):
                chosen.append((days, said))
            if len(chosen) == count:
                return tuple(said for _, said in sorted(chosen, reverse=True))
    row = _MARKERS[int(rng.random() * len(_MARKERS))]
    return row if count == 3 else (row[0], row[2]) if rng.random() < 0.5 else row[:2]


DEVICE = Sequence()
