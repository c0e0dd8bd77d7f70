"""A value picked by how the candidates compare on a stated figure: "Lisbon got 7 votes, Porto 12
... the most popular one". The figures are numbers of their own (declared as context), the ask
says which end of the scale it wants in words, and the end asked for is either, so neither the
largest number nor the first candidate is the answer."""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from tasks.devices import Scene, Worked
from tasks.devices._choice import candidates, fits, numeric, ordered, pick, sentence
from tasks.devices._words import filled, number_word, phrase
from tasks.library.common import Place
from tasks.spec import Param
from tasks.value_generators import Mention


@dataclass(frozen=True, slots=True)
class _Scale:
    facts: tuple[str, ...]  # {x}, {n}
    low: tuple[str, ...]  # refs to the candidate with the smallest figure
    high: tuple[str, ...]
    span: tuple[int, int]


_SCALES = (
    _Scale(
        ("{x} got {n} votes", "{n} people voted for {x}"),
        ("the least popular one", "the one with the fewest votes"),
        ("the one that won the vote", "the most popular one"),
        (2, 40),
    ),
    _Scale(
        ("{x} came up {n} days ago", "we last used {x} {n} days ago"),
        ("the most recent one", "the one we used last"),
        ("the one from longest ago", "the oldest of them"),
        (2, 60),
    ),
    _Scale(
        ("{x} has {n} thumbs-up", "{x} collected {n} likes"),
        ("the least liked one", "the one nobody much liked"),
        ("the favourite", "the best-liked one"),
        (3, 90),
    ),
    _Scale(
        ("{x} drew {n} complaints", "there were {n} complaints about {x}"),
        ("the one with the fewest complaints", "the least complained-about one"),
        ("the most complained-about one", "the one people grumbled about most"),
        (2, 50),
    ),
)
_PLACES = _Scale(
    ("{x} is a {n}-minute drive from here", "{x} takes {n} minutes to reach"),
    ("the nearest one", "the closest of them"),
    ("the farthest one", "the most distant of them"),
    (5, 900),
)


@dataclass(frozen=True, slots=True)
class Compared:
    name: str = "compared"
    weight: float = 0.4
    role: str = "value"

    def fits(self, param: Param) -> bool:
        return fits(param) and not numeric(param)

    def work(self, param: Param, rng: Random, scene: Scene) -> Worked | None:
        if ordered(param) in scene.holders:
            return None  # another request chooses between values of this kind by place
        drawn = candidates(param, rng, scene)
        if drawn is None:
            return None
        random = rng.random
        scales = (*_SCALES, _PLACES) if isinstance(param.gen, Place) else _SCALES
        scale = scales[int(random() * len(scales))]
        low, high = scale.span
        figures: list[int] = []
        while len(figures) < len(drawn):
            figure = low + int(random() * (high - low + 1))
            if figure not in figures:
                figures.append(figure)
        figures.sort()
        want_low = random() < 0.5
        # The value gets the end asked for, the decoys the rest in any order.
        rest = figures[1:] if want_low else figures[:-1]
        rest.sort(key=lambda _: random())
        assigned = [figures[0] if want_low else figures[-1], *rest]
        facts = []
        for index, (value, figure) in enumerate(zip(drawn, assigned, strict=True)):
            # Figures in mixed notation: digits, words, dozens (comparing them takes reading them).
            said_figure, mention = _figure(figure, rng)
            facts.append(
                sentence(
                    filled(pick(rng, scale.facts), x=value.text, n=said_figure), value, (mention,), index == 0
                )
            )
        order = sorted(range(len(facts)), key=lambda _: random())
        said = pick(rng, scale.low if want_low else scale.high)
        scene.hold("ordered", ordered(param))
        return Worked(said, drawn[0].accepted, (phrase(said),), (), tuple(facts[i] for i in order))


_DOZENS = {12: "a dozen", 24: "two dozen", 36: "three dozen", 48: "four dozen", 6: "half a dozen"}


def _figure(figure: int, rng: Random) -> tuple[str, Mention]:
    """A figure said in digits, in words, or by the dozen, and the mention that keeps it."""
    draw = rng.random()
    if figure in _DOZENS and draw < 0.6:
        return _DOZENS[figure], phrase(_DOZENS[figure])
    if figure <= 20 and draw < 0.6:
        return number_word(figure), phrase(number_word(figure))
    return str(figure), ("number", (str(figure),))


DEVICE = Compared()
