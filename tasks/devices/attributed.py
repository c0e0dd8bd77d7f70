"""A value picked by who wanted it, that person named through what they do: "Dana, who is
covering the bill, wants Lisbon; Omar, who is driving, wants Porto ... somewhere the person paying
likes". Each candidate is tied to a person and each person to a role, and the request names the
role in other words than the fact does, so the value is two steps of meaning away from the ask."""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from tasks.devices import Fact, Scene, Worked
from tasks.devices._choice import CHOICE, candidates, fits, people, pick, sentence
from tasks.devices._words import filled, of_whom, phrase
from tasks.spec import Param

# (what the context says about a person, how the request refers to that person): different words
# on the two sides, so word overlap between the ask and a fact does not find the person.
_ROLES = (
    ("is covering the bill", "the person paying"),
    ("is behind the wheel", "whoever drives"),
    ("runs our team", "my boss"),
    ("has the final say", "the decision-maker"),
    ("owns the flat I rent", "my landlord"),
    ("is hosting everyone", "our host"),
    ("joined us this week", "the new hire"),
    ("controls the budget", "whoever approves the spending"),
    ("turns forty next week", "the birthday person"),
    ("lives next door to me", "my neighbour"),
    ("is on call this week", "whoever is on duty"),
    ("grew up around here", "the local"),
    ("is my daughter", "my kid"),
    ("owns the car", "the car's owner"),
    ("is the client", "the customer"),
    ("set up the whole project", "the project's founder"),
    ("will present it", "the presenter"),
    ("is allergic to everything", "our picky eater"),
)
_WANTS = (
    "wants {x}",
    "would go with {x}",
    "asked for {x}",
    "voted for {x}",
    "is pushing for {x}",
    "prefers {x}",
)
_FACTS = ("{name}, who {role}, {want}", "{name} {role} and {want}", "{name} ({role}) {want}")
_NOT = ("{name} is not the one who {role}", "it isn't {name} who {role}", "{name}? no, somebody else {role}")
_REFS = ("whatever {ref} wants", "the one {ref} asked for", "{ref}'s choice", "what {ref} prefers")


@dataclass(frozen=True, slots=True)
class Attributed:
    name: str = "attributed"
    weight: float = 0.3
    role: str = "value"

    def fits(self, param: Param) -> bool:
        return fits(param)

    def work(self, param: Param, rng: Random, scene: Scene) -> Worked | None:
        drawn = candidates(param, rng, scene)
        if drawn is None:
            return None
        random = rng.random
        start = int(random() * len(_ROLES))
        step = 1 + int(random() * (len(_ROLES) // len(drawn) - 1))
        roles = [_ROLES[(start + step * index) % len(_ROLES)] for index in range(len(drawn))]
        names = people(rng, len(drawn), drawn, scene)
        if names is None:
            return None
        facts = []
        if len(drawn) == 2 and random() < 0.5:
            # By elimination: the other person is said NOT to hold the role, so the role's words
            # stand beside the wrong name and the value's person has no role words at all.
            for index, (value, name) in enumerate(zip(drawn, names, strict=True)):
                said = f"{name} {filled(pick(rng, _WANTS), x=value.text)}"
                facts.append(sentence(said, value, (("text", (name,)),), index == 0))
            role = roles[0][0]
            said = pick(rng, _NOT).format(name=names[1], role=role)
            facts.append(Fact(said, (("text", (names[1],)), phrase(role)), "fact", CHOICE))
        else:
            for index, (value, (role, _), name) in enumerate(zip(drawn, roles, names, strict=True)):
                want = filled(pick(rng, _WANTS), x=value.text)
                said = pick(rng, _FACTS).format(name=name, role=role, want=want)
                facts.append(sentence(said, value, (("text", (name,)), phrase(role)), index == 0))
        if not scene.hold("role", *(role for role, _ in roles)):
            return None  # another request's person already has one of the roles
        order = sorted(range(len(facts)), key=lambda _: random())
        ref = roles[0][1]
        said = of_whom(pick(rng, _REFS), ref)
        return Worked(said, drawn[0].accepted, (phrase(ref),), (), tuple(facts[i] for i in order))


DEVICE = Attributed()
