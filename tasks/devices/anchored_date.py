"""A date said relative to an event the request dates, beside another dated event (a decoy):
"the dentist is on May 3, 2026 and my haircut on May 9, 2026 ... two days after the dentist".
Both dates are written, neither is the answer."""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from tasks.devices import Fact, Scene, Worked
from tasks.devices._words import date_derived, number_word, phrase
from tasks.spec import Param
from tasks.value_generators import Date, date_accepted, date_drawn

_EVENTS = (
    "the dentist appointment",
    "my haircut",
    "the team offsite",
    "the plumber's visit",
    "the school play",
    "the car service",
    "my flight home",
    "the book club",
    "the quarterly review",
    "my sister's wedding",
    "the vet appointment",
    "the piano recital",
    "the street party",
    "the job interview",
)
_FACTS = ("{event} is on {date}", "{event} falls on {date}", "{event} got moved to {date}")


def _shift(rng: Random) -> tuple[int, tuple[str, ...]]:
    """(days after the event, the ways to say it with {event})."""
    kind = int(rng.random() * 4)
    if kind == 0:
        return 1, ("the day after {event}", "the day following {event}")
    if kind == 1:
        return -1, ("the day before {event}", "the day ahead of {event}")
    if kind == 2:
        days = 2 + int(rng.random() * 5)
        word = number_word(days)
        return days, (f"{word} days after {{event}}", f"{word} days past {{event}}")
    return 7, ("a week after {event}", "one week after {event}")


@dataclass(frozen=True, slots=True)
class AnchoredDate:
    name: str = "anchored_date"
    # Drawn twice as often as a date relative to today: two written dates, neither the answer.
    weight: float = 2.0
    role: str = "value"

    def fits(self, param: Param) -> bool:
        return isinstance(param.gen, Date)

    def work(self, param: Param, rng: Random, scene: Scene) -> Worked | None:
        random = rng.random
        first = int(random() * len(_EVENTS))
        second = (first + 1 + int(random() * (len(_EVENTS) - 1))) % len(_EVENTS)
        anchor = scene.today_offset + 2 + int(random() * 40)
        other = anchor + (1 + int(random() * 10)) * (1 if random() < 0.5 else -1)
        shift, says = _shift(rng)
        target = anchor + shift
        if target == other:
            return None
        facts = []
        for index, offset, role in ((first, anchor, "fact"), (second, other, "decoy")):
            event = _EVENTS[index]
            drawn = date_drawn(offset, rng)
            frame = _FACTS[int(random() * len(_FACTS))]
            said = frame.format(event=event, date=drawn.text)
            facts.append(Fact(said, (*drawn.stated(), ("text", (event,))), role, event))
        if not scene.hold("event", _EVENTS[first], _EVENTS[second]):
            return None  # dated by another request already: two dates for one event
        if random() < 0.5:
            facts.reverse()
        event = _EVENTS[first]
        forms = tuple(say.format(event=event) for say in says)
        shift_words = tuple(say.replace(" {event}", "").replace("{event}", "") for say in says)
        said = forms[int(random() * len(forms))]
        mentions = (("text", (event,)), phrase(*shift_words))
        return Worked(said, date_accepted(target), mentions, date_derived(target), tuple(facts))


DEVICE = AnchoredDate()
