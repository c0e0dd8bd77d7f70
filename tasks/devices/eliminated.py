"""A value picked as the one still standing: "Lisbon fell through, and I can't see a problem with
Porto ... book the one that still works". Decoys are ruled out and the value is kept, each in
words whose polarity is not their surface: ruling out without a negation ("Lisbon is history"),
keeping with one ("nobody objected to Porto"), so a list of negative words does not sort them."""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from tasks.devices import Fact, Scene, Worked
from tasks.devices._choice import CHOICE, candidates, fits, ordered, pick, sentence
from tasks.devices._words import filled, phrase
from tasks.spec import Param

_OUT = (
    "{x} fell through",
    "{x} is history",
    "{x} got vetoed",
    "we're done with {x}",
    "{x} has been dropped",
    "{x} had its chance",
    "I've given up on {x}",
    "{x} is out",
    "{x} is a no-go",
    "{x} is not an option any more",
)
_KEPT = (
    "nobody objected to {x}",
    "I can't see a problem with {x}",
    "{x} is still fine",
    "there's nothing wrong with {x}",
    "{x} is still on",
    "{x} didn't get ruled out",
    "no one minds {x}",
    "{x} checks out",
)
_EXCEPT = (
    "{others} fell through, {x} didn't",
    "everything but {x} got vetoed: {others}",
    "we're done with {others}, not with {x}",
    "apart from {x}, all of it is history ({others})",
)
_REFS = (
    "the one that still works",
    "whichever is left",
    "the remaining option",
    "the one still standing",
    "the option nobody ruled out",
    "whatever survived",
)


@dataclass(frozen=True, slots=True)
class Eliminated:
    name: str = "eliminated"
    weight: float = 0.3
    role: str = "value"

    def fits(self, param: Param) -> bool:
        return fits(param)

    def work(self, param: Param, rng: Random, scene: Scene) -> Worked | None:
        if ordered(param) in scene.holders:
            return None  # another request chooses between values of this kind by place
        drawn = candidates(param, rng, scene)
        if drawn is None:
            return None
        if rng.random() < 0.35:
            # One sentence for all: the ruled-out ones listed together, the kept one by exception.
            others = " and ".join(value.text for value in drawn[1:])
            said = filled(pick(rng, _EXCEPT), x=drawn[0].text, others=others)
            mentions = tuple(mention for value in drawn for mention in value.stated())
            ref = pick(rng, _REFS)
            scene.hold("ordered", ordered(param))
            return Worked(ref, drawn[0].accepted, (phrase(ref),), (), (Fact(said, mentions, "fact", CHOICE),))
        facts = [
            sentence(filled(pick(rng, _KEPT if index == 0 else _OUT), x=value.text), value, (), index == 0)
            for index, value in enumerate(drawn)
        ]
        order = sorted(range(len(facts)), key=lambda _: rng.random())
        said = pick(rng, _REFS)
        scene.hold("ordered", ordered(param))
        return Worked(said, drawn[0].accepted, (phrase(said),), (), tuple(facts[i] for i in order))


DEVICE = Eliminated()
