"""A value picked by two steps at once, who and when: "Dana, who is covering the bill, first wanted
Lisbon but has since switched to Porto; Omar, who is behind the wheel, wanted Faro, now Braga ...
what the person paying wanted originally". Four candidates, each tied to a person and a time: the
person (named through a role in other words) and the time (first or latest) both decide."""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from tasks.devices import Fact, Scene, Worked
from tasks.devices._choice import CHOICE, candidates, fits, people, pick
from tasks.devices._words import filled, of_whom, phrase
from tasks.devices.attributed import _ROLES
from tasks.spec import Param

_FACTS = (
    "{name}, who {role}, originally wanted {a} but has since switched to {b}",
    "{name} ({role}) started out with {a} and now wants {b}",
    "{name} {role}; they asked for {a} initially, then changed to {b}",
)
_FIRST = ("what {ref} wanted originally", "{ref}'s initial idea", "the one {ref} started out with")
_LAST = ("what {ref} wants now", "{ref}'s current pick", "the one {ref} switched to")


@dataclass(frozen=True, slots=True)
class Revised:
    name: str = "revised"
    weight: float = 1.0
    role: str = "value"

    def fits(self, param: Param) -> bool:
        return fits(param)

    def work(self, param: Param, rng: Random, scene: Scene) -> Worked | None:
        drawn = candidates(param, rng, scene, exactly=4)
        if drawn is None:
            return None
        random = rng.random
        start = int(random() * len(_ROLES))
        roles = (_ROLES[start], _ROLES[(start + 1 + int(random() * (len(_ROLES) - 1))) % len(_ROLES)])
        first = random() < 0.5
        # The value is the first or the latest pick of the person asked about; the rest are decoys.
        pairs = ((drawn[0], drawn[1]) if first else (drawn[1], drawn[0]), (drawn[2], drawn[3]))
        names = people(rng, 2, drawn, scene)
        if names is None:
            return None
        facts = []
        for index, ((a, b), (role, _), name) in enumerate(zip(pairs, roles, names, strict=True)):
            said = filled(pick(rng, _FACTS), name=name, role=role, a=a.text, b=b.text)
            mentions = (*a.stated(), *b.stated(), ("text", (name,)), phrase(role))
            facts.append(Fact(said, mentions, "fact" if index == 0 else "decoy", CHOICE))
        if not scene.hold("role", *(role for role, _ in roles)):
            return None  # another request's person already has one of the roles
        if random() < 0.5:
            facts.reverse()
        said = of_whom(pick(rng, _FIRST if first else _LAST), roles[0][1])
        return Worked(said, drawn[0].accepted, (phrase(said),), (), tuple(facts))


DEVICE = Revised()
