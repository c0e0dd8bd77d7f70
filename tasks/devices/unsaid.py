"""A withheld value whose type is written anyway: the request refers to an event the context
does not state, beside one it states ("my sister flies in on May 12, 2026 ... a table for two
the day she heads back home").

For missing_param requests (role "withheld", drawn by ``tasks.builtin.instantiate`` for the
withheld parameter): the date, city, time or name in the text is a fact about something else,
so "a value of the slot's type is there -> call" fails; the same sentences state the value in
call requests (``tasks.devices.aside``), so "values in context sentences are never arguments"
fails too. Either the subject differs ("the day my cousin lands" beside "my sister flies in on
...") or the event does ("the day my sister heads back home").
"""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from tasks.devices import Scene, Worked
from tasks.devices.aside import EVENTS as _EVENTS
from tasks.devices.aside import (
    SAME_EVENT_ONLY,
    SUBJECTS,
    about,
    claim,
    draw_value,
    event_kind,
    fact,
    reference,
    two,
)
from tasks.spec import Param


@dataclass(frozen=True, slots=True)
class Unsaid:
    name: str = "unsaid"
    weight: float = 1.0
    role: str = "withheld"

    def fits(self, param: Param) -> bool:
        return event_kind(param, calendar=True) is not None

    def work(self, param: Param, rng: Random, scene: Scene) -> Worked | None:
        """``text``: the reference to the unstated event; ``accepted``: the stated value (a decoy,
        never an answer); ``context``: the sentence stating it."""
        kind = event_kind(param, calendar=True)
        if kind is None:
            return None
        events = _EVENTS()[kind]
        random = rng.random
        asked, stated = two(rng, len(events))
        subject, other = two(rng, len(SUBJECTS))
        if random() < 0.5 or kind in SAME_EVENT_ONLY:
            # The same event, of someone else.
            stated, said_of = asked, SUBJECTS[other]
        else:
            said_of = SUBJECTS[subject]
        if not scene.hold("subject", said_of, SUBJECTS[subject], shared=True):
            return None  # a relation another device gave a name ("my sister Ana lives in ...")
        # The stated event and the one referred to stay this task's only facts about either.
        if not claim(scene, about(events[stated], said_of), about(events[asked], SUBJECTS[subject])):
            return None
        decoy = draw_value(kind, param, rng, scene)
        sentence = fact(events[stated], said_of, decoy, "decoy", rng)
        said, mentions = reference(events[asked], SUBJECTS[subject], rng)
        return Worked(said, decoy.accepted, mentions, (), (sentence,))


DEVICE = Unsaid()
