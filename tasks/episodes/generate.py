"""Episode sets: the categories of docs/episodes.md in a registry, ``generate_episodes``, ``variant``
and ``agent_step``.

Each category builds its episode from an environment's scenario (tasks.episodes.scenario):
``multi_turn_base`` plays it as written; ``multi_turn_miss_param`` first withholds a value the
scenario's first turn states (the reference plan of that turn is empty: ask for it) and supplies
it in the next turn; ``multi_turn_miss_func`` first holds back the tool the first call needs (say
so, change nothing) and offers it in the next turn; ``multi_turn_long_context`` grows the
environment to hundreds of items; ``agent_step`` cuts the reference trajectory at one call and
asks for that call alone (a single-turn task: ``agent_step(episode)``).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from random import Random
from types import MappingProxyType
from typing import Any

from scoring.schema import function_of
from tasks.episodes.arguments import schema_error
from tasks.episodes.designs import draw_design, translate_scenario
from tasks.episodes.environments import drawn_environments, environment_class, scenario_function
from tasks.episodes.model import Episode, Turn
from tasks.episodes.scenario import Scenario, TurnDraft
from tasks.errors import TaskConfigError
from tasks.model import Task
from tasks.rand import below, between, permute
from tasks.seeding import reseed, rng_from, seed_bytes, sub_seed, sub_seeder
from tasks.shuffle import shuffle_surface

__all__ = [
    "EPISODE_CATEGORIES",
    "EpisodeCategory",
    "EpisodeSource",
    "agent_step",
    "generate_episodes",
    "variant",
]


@dataclass(frozen=True)
class EpisodeSource:
    """An episode source and its share of a set; external sources carry their loaded pool
    (``tasks.sources.load_episode_sources`` builds these from the source registry)."""

    name: str
    share: float
    episodes: tuple[Episode, ...] = ()


#: The scripted follow-up of a miss_func episode, once the missing tool is offered.
_TOOL_NOW_OFFERED = "I've just given you access to what you need for that. Please go ahead now."


@dataclass(frozen=True)
class EpisodeCategory:
    """One registry entry: how its episodes are built, their share and their step cap, and how
    it is shown (``tasks.categories.ordered_categories`` lists these after the single-turn ones)."""

    name: str
    build: Callable[[Scenario, Episode], Episode | None]
    share: float
    step_cap: int
    size: tuple[int, int]
    description: str
    #: The category as a row or column title (the validator's dashboard).
    title: str
    #: A short column header (the localnet leaderboard's plain-text table).
    label: str


def _intent(
    draft_text: str, values: list[dict[str, Any]], purpose: str, withheld: list[dict[str, Any]]
) -> dict[str, Any]:
    ask = {"tool": "", "purpose": purpose, "example": draft_text, "values": values, "withheld": withheld}
    return {"asks": [ask], "example": draft_text}


def _turn(draft: TurnDraft, tools: list[str], plan: list[dict[str, Any]] | None = None) -> Turn:
    return Turn(
        user=draft.text,
        tools=list(tools),
        plan=copy.deepcopy(draft.plan if plan is None else plan),
        needed=list(draft.needed),
        intent=_intent(draft.text, draft.values, draft.purpose, []),
    )


def _base(scenario: Scenario, episode: Episode) -> Episode:
    episode.turns = [_turn(draft, scenario.tools) for draft in scenario.turns]
    return episode


def _miss_param(scenario: Scenario, episode: Episode) -> Episode | None:
    if scenario.withheld_text is None or scenario.withheld is None or scenario.supply_text is None:
        return None
    first = scenario.turns[0]
    asking = Turn(
        user=scenario.withheld_text,
        tools=list(scenario.tools),
        plan=[],
        intent=_intent(
            scenario.withheld_text,
            _without(first.values, scenario.withheld),
            first.purpose,
            [scenario.withheld],
        ),
    )
    supplied = Turn(
        user=scenario.supply_text,
        tools=list(scenario.tools),
        plan=copy.deepcopy(first.plan),
        needed=list(first.needed),
        intent=_intent(scenario.supply_text, scenario.supply_values, first.purpose, []),
    )
    episode.turns = [asking, supplied, *(_turn(draft, scenario.tools) for draft in scenario.turns[1:])]
    return episode


def _without(values: list[dict[str, Any]], withheld: dict[str, Any]) -> list[dict[str, Any]]:
    return [value for value in values if value.get("slot") != withheld.get("slot")]


def _miss_func(scenario: Scenario, episode: Episode) -> Episode | None:
    first = scenario.turns[0]
    if not first.plan:
        return None
    needed_tool = first.plan[0]["name"]
    without = [name for name in scenario.tools if name != needed_tool]
    if not without:
        return None
    held_back = Turn(
        user=first.text, tools=without, plan=[], intent=_intent(first.text, first.values, first.purpose, [])
    )
    offered = Turn(
        user=_TOOL_NOW_OFFERED,
        tools=list(scenario.tools),
        plan=copy.deepcopy(first.plan),
        needed=list(first.needed),
        intent=_intent(_TOOL_NOW_OFFERED, [], "go ahead now that the tool is there", []),
    )
    episode.turns = [held_back, offered, *(_turn(draft, scenario.tools) for draft in scenario.turns[1:])]
    return episode


def _agent_step(scenario: Scenario, episode: Episode) -> Episode | None:
    episode = _base(scenario, episode)
    calls = sum(len(turn.plan) for turn in episode.turns)
    if calls < 2:
        return None
    # Cut after at least one call: the next call depends on what the earlier ones observed. The
    # call to predict must fit the tools offered at that point (a design's listing may ask for
    # what the canonical one left out): the first cut from the drawn one on that does.
    first = below(Random(int.from_bytes(bytes.fromhex(episode.seed)[:8], "big")), calls - 1)
    for offset in range(calls - 1):
        episode.cut = 1 + (first + offset) % (calls - 1)
        if _fits_its_tools(agent_step(episode)):
            return episode
    return None


def _fits_its_tools(task: Task) -> bool:
    """Whether the expected call of an agent-step task fits the schema of the tool it names, in
    BFCL's answer form: an empty string there means "may be left out", so a call whose value is
    an empty string (a search for everything) cannot be asked for."""
    ((name, arguments),) = task.expected[0].items()
    tools = {tool["function"]["name"]: tool["function"] for tool in task.tools}
    plain = {key: values[0] for key, values in arguments.items()}
    if name not in tools or "" in plain.values():
        return False
    return schema_error(plain, tools[name].get("parameters", {})) is None


EPISODE_CATEGORIES: Mapping[str, EpisodeCategory] = MappingProxyType(
    {
        entry.name: entry
        for entry in (
            EpisodeCategory(
                "multi_turn_base",
                _base,
                0.35,
                8,
                (1, 1),
                "reach the goal over several dependent calls",
                title="multi-turn",
                label="mt-base",
            ),
            EpisodeCategory(
                "multi_turn_miss_param",
                _miss_param,
                0.15,
                8,
                (1, 1),
                "ask for the missing value, then act",
                title="multi-turn: missing param",
                label="mt-miss-param",
            ),
            EpisodeCategory(
                "multi_turn_miss_func",
                _miss_func,
                0.15,
                8,
                (1, 1),
                "say the tool is missing, then act once offered",
                title="multi-turn: missing function",
                label="mt-miss-func",
            ),
            EpisodeCategory(
                "multi_turn_long_context",
                _base,
                0.15,
                10,
                (20, 40),
                "the same with hundreds of items",
                title="multi-turn: long context",
                label="mt-long",
            ),
            EpisodeCategory(
                "agent_step",
                _agent_step,
                0.20,
                1,
                (1, 1),
                "predict the next call of a trajectory",
                title="agent step",
                label="agent-step",
            ),
        )
    }
)


def _allocate(mix: Mapping[str, float], n: int) -> list[str]:
    total = sum(mix.values())
    exact = [(name, share * n / total) for name, share in mix.items()]
    counts = {name: int(value) for name, value in exact}
    order = sorted(range(len(exact)), key=lambda i: (-(exact[i][1] - int(exact[i][1])), i))
    for index in order[: n - sum(counts.values())]:
        counts[exact[index][0]] += 1
    return [name for name, _ in exact for _ in range(counts[name])]


def _check_mix(mix: Mapping[str, float] | None) -> dict[str, float]:
    if mix is None:
        return {name: entry.share for name, entry in EPISODE_CATEGORIES.items()}
    unknown = sorted(set(mix) - set(EPISODE_CATEGORIES))
    if unknown:
        raise TaskConfigError(
            f"unknown episode categories: {', '.join(unknown)} (known: {', '.join(EPISODE_CATEGORIES)})"
        )
    checked = {name: float(share) for name, share in mix.items() if share and share > 0}
    if not checked:
        raise TaskConfigError("episode category shares must not all be zero")
    return checked


def generate_episodes(
    seed: bytes | str | int,
    n: int,
    mix: Mapping[str, float] | None = None,
    sources: list[EpisodeSource] | None = None,
    designs: Mapping[str, float] | None = None,
) -> list[Episode]:
    """``n`` episodes for a seed (the same seed, the same episodes on any machine).

    ``mix`` splits the builtin episodes among the categories; ``sources`` splits the set between
    the builtin generator and loaded external pools (``tasks.sources.load_episode_sources``); ``designs`` the
    builtin episodes among the tool designs (default ``tasks.episodes.designs.DESIGN_SHARES``)."""
    if n < 0:
        raise TaskConfigError(f"n must not be negative, got {n}")
    root = seed_bytes(seed)
    listed = sources or [EpisodeSource("builtin", 1.0)]
    for source in listed:
        if source.name != "builtin" and source.share > 0 and not source.episodes:
            raise TaskConfigError(f"episode source {source.name!r} has a share but no episodes were loaded")
    shares = {source.name: source.share for source in listed if source.share > 0}
    if not shares:
        raise TaskConfigError("episode source shares must not all be zero")
    pools = {source.name: source.episodes for source in listed}
    slots = _allocate(shares, n)
    builtin = iter(_allocate(_check_mix(mix), slots.count("builtin")))
    plan = [(name, next(builtin) if name == "builtin" else "") for name in slots]
    permute(rng_from(sub_seed(root, b"episode-plan")), plan)
    episode_seed = sub_seeder(root, b"episode")
    return [
        _build(episode_seed(index), category, designs)
        if name == "builtin"
        else _drawn(episode_seed(index), name, pools[name])
        for index, (name, category) in enumerate(plan)
    ]


def _drawn(seed: bytes, source: str, pool: tuple[Episode, ...]) -> Episode:
    """An episode of an external pool, under an id of its own in this set."""
    chosen = copy.copy(pool[below(rng_from(seed), len(pool))])
    chosen.id = f"{source}-{chosen.id}-{seed.hex()[:8]}"
    chosen.seed = seed.hex()
    return chosen


#: Environments drawn for one episode before giving up. A draw gives a missing-parameter episode
#: about 3 times in 10 (the others lack a withholdable value), so 16 draws failed about once in
#: 370 seeds: a round's generation would stop on a draw of the block hash. 64 leave about 5e-11,
#: and a seed that succeeded within 16 draws gives the same episode. A state no scenario applies
#: to (``first_applicable``'s ValueError) is one more failed draw, never a failed round.
DRAWS = 64


def _build(seed: bytes, category_name: str, designs: Mapping[str, float] | None = None) -> Episode:
    category = EPISODE_CATEGORIES[category_name]
    names = drawn_environments()
    for attempt in range(DRAWS):
        rng = rng_from(sub_seed(seed, b"attempt", attempt))
        environment = names[below(rng, len(names))]
        env_seed = sub_seed(seed, b"environment", attempt)
        size = between(rng, *category.size)
        cls = environment_class(environment)
        drawn_on = cls(env_seed, size)
        try:
            scenario = scenario_function(environment)(drawn_on, rng)
        except ValueError:  # no scenario applies to this state (first_applicable): draw again
            continue
        # The tool design from a stream of its own: the scenario's draws stay as they were. A
        # design under which the scenario gives no episode (a plan too long for a turn; a
        # missing-function episode where one tool does everything) yields to the environment's own.
        drawn = draw_design(rng_from(sub_seed(seed, b"design", attempt)), designs)
        for design in dict.fromkeys((drawn, "canonical")):
            offered = translate_scenario(drawn_on, design, scenario)
            if offered is None:
                continue
            episode = Episode(
                id=f"episode-{category_name}-{seed.hex()[:16]}",
                category=category_name,
                environment=environment,
                env_seed=env_seed.hex(),
                size=size,
                turns=[],
                seed=seed.hex(),
                step_cap=category.step_cap,
                forbidden=list(cls.FORBIDDEN),
                design=design,
            )
            built = category.build(offered, episode)
            if built is not None:
                return built
    raise TaskConfigError(f"no environment gave a {category_name} episode in {DRAWS} draws")


_SCRATCH = Random()


def variant(episode: Episode, seed: bytes | str | int) -> Episode:
    """The same episode with every tool renamed for one miner (tool_shuffle over the tools it offers)."""
    variant_seed = sub_seed(seed_bytes(seed), f"episode-variant|{episode.id}|{episode.seed}".encode())
    names = list(dict.fromkeys(name for turn in episode.turns for name in turn.tools))
    tools = (
        episode.make_environment() if episode.config is not None else episode.environment_type()
    ).openai_tools(names)
    surface = shuffle_surface(tools, [], reseed(_SCRATCH, variant_seed))
    by_new = {function_of(tool)["name"]: tool for tool in surface.tools}
    shaped = copy.copy(episode)
    shaped.surface = {
        "functions": dict(surface.function_names),
        "parameters": {new: dict(params) for new, params in surface.parameter_names.items()},
        "tools": {old: by_new[new] for old, new in surface.function_names.items()},
    }
    return shaped


def agent_step(episode: Episode, cut: int | None = None) -> Task:
    """The episode's reference trajectory cut before call number ``cut`` (default: the episode's
    own cut), as a single-step Task: the user turns, the prior calls and their observations as
    assistant and tool messages, and the next reference call as the expected answer."""
    cut = episode.cut if cut is None else cut
    if cut is None or cut < 0:
        raise ValueError("agent_step needs a cut: the index of the call to predict")
    env = episode.make_environment()
    messages: list[dict[str, Any]] = []
    index = 0
    for turn_index, turn in enumerate(episode.turns):
        env.begin_turn()
        messages.append({"role": "user", "content": turn.user})
        for call in turn.plan:
            name, arguments = episode.shown_call(call["name"], call["arguments"])
            if index == cut:
                expected = [{name: {key: [value] for key, value in arguments.items()}}]
                return Task(
                    id=f"{episode.id}-step{cut}",
                    category=episode.category,
                    messages=messages,
                    tools=episode.offered(turn_index),
                    expected=expected,
                    seed=episode.seed,
                    source=episode.source,
                )
            observation = env.dispatch(call["name"], call["arguments"])
            call_id = f"call_{index}"
            messages.append(
                {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {"name": name, "arguments": json.dumps(arguments)},
                        }
                    ],
                }
            )
            messages.append({"role": "tool", "tool_call_id": call_id, "content": json.dumps(observation)})
            index += 1
        messages.append({"role": "assistant", "content": "Done."})
    raise ValueError(f"agent_step cut {cut} is past the episode's {index} reference calls")
