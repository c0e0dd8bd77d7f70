"""An identifier picked by what it stands for: "ORD-48213 is the grey tent, ORD-90017 the blue
kettle ... cancel the one for camping". Both identifiers are written, so the pattern of an
identifier does not tell which one is meant, and the ask names a purpose, not the thing."""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from tasks.devices import Fact, Scene, Worked
from tasks.spec import Param
from tasks.value_generators import Composed

_COLOURS = (
    "grey", "blue", "green", "red", "yellow", "black", "white", "orange", "purple", "silver",
    "teal", "brown", "pink", "navy", "olive",
)  # fmt: skip
# Things by what they are for: the request names the thing beside each identifier and asks for
# one by its purpose, so matching words between the facts and the ask does not tell.
_USES = (
    ("the kitchen", ("kettle", "blender", "toaster", "frying pan")),
    ("camping", ("tent", "sleeping bag", "lantern", "camp stove")),
    ("the home office", ("monitor", "desk chair", "keyboard", "webcam")),
    ("the baby", ("stroller", "crib", "baby monitor", "high chair")),
    ("cycling", ("bike helmet", "bike lights", "saddle bag", "tyre pump")),
    ("the garden", ("hose", "lawn mower", "hedge trimmer", "watering can")),
    ("winter", ("parka", "snow boots", "wool scarf", "thermal gloves")),
)
_FACTS = ("{value} is the {label}", "the {label} is {value}", "{value} goes with the {label}")
_REFS = ("the one for {use}", "the {use} one", "whichever is for {use}")


def _label(rng: Random, use: int) -> str:
    things = _USES[use][1]
    return _COLOURS[int(rng.random() * len(_COLOURS))] + " " + things[int(rng.random() * len(things))]


@dataclass(frozen=True, slots=True)
class Labelled:
    name: str = "labelled"
    weight: float = 1.0
    role: str = "value"

    def fits(self, param: Param) -> bool:
        gen = param.gen
        # Identifiers made of a prefix and digits (``tasks.library.common.ident``).
        return (
            isinstance(gen, Composed)
            and param.type == "string"
            and len(gen.parts) >= 3
            and all(part == tuple("0123456789") for part in gen.parts)
        )

    def work(self, param: Param, rng: Random, scene: Scene) -> Worked | None:
        value = param.gen.draw(rng)
        decoy = param.gen.draw(rng)
        use = int(rng.random() * len(_USES))
        other_use = (use + 1 + int(rng.random() * (len(_USES) - 1))) % len(_USES)
        label, other = _label(rng, use), _label(rng, other_use)
        if any(form in value.accepted for form in decoy.accepted) or not scene.unused(
            value.accepted, decoy.accepted
        ):
            return None
        if not scene.hold("use", _USES[use][0], _USES[other_use][0]):
            return None  # another request's identifier is "the one for" this purpose already
        facts = []
        for drawn, said_label, role in ((value, label, "fact"), (decoy, other, "decoy")):
            frame = _FACTS[int(rng.random() * len(_FACTS))]
            facts.append(
                Fact(
                    frame.format(value=drawn.text, label=said_label),
                    (*drawn.stated(), ("text", (said_label,))),
                    role,
                )
            )
        if rng.random() < 0.5:
            facts.reverse()
        # Held at once: the request's other devices must not state the decoy as their value.
        scene.decoys.extend(decoy.accepted)
        words = _USES[use][0]
        # "the {use} one" of "the kitchen" is "the kitchen one"
        said = _REFS[int(rng.random() * len(_REFS))].format(use=words).replace("the the ", "the ")
        return Worked(said, value.accepted, (("text", (words,)),), (), tuple(facts))


DEVICE = Labelled()
