"""The smart home's parts: rooms picked by what the status shows (the brightest light that is on,
the rooms whose light is off), settings worked out from the current ones ("two degrees warmer
than it is set now", "the same brightness as the hall"), corrections and conditions on the
temperature, the doors and the lights."""

from __future__ import annotations

from typing import Any

from tasks.episodes.environments.home import SmartHome
from tasks.episodes.goals import Abandon, Context, Part, Probe, Withhold, condition, goal
from tasks.episodes.scenario import stated
from tasks.rand import between, choose

_WORDS = ("zero", "one", "two", "three", "four", "five")


def _home(ctx: Context) -> SmartHome:
    env = ctx.env
    assert isinstance(env, SmartHome)
    return env


def _room_value(room: str, about: str = "which room") -> dict[str, Any]:
    return stated("room", about, room)


def _unit(step: int) -> str:
    return "degree" if step == 1 else "degrees"


def _degrees(value: float) -> str:
    return f"{value:g}"


@goal("home", 1.2)
def warmer_by(ctx: Context) -> Part | None:
    """The target raised (or lowered) by a stated step from what it is set to now; a later turn
    may change the step ("actually, only one degree")."""
    rng = ctx.rng
    step = between(rng, 1, 3)
    warmer = rng.random() < 0.6
    old = ctx.run("get_status")["thermostat"]["target"]
    new = old + step if warmer else old - step
    if not 10 <= new <= 30:
        raise Abandon("out of range")
    ctx.run("set_thermostat", target=new)
    word = "warmer" if warmer else "cooler"
    value = stated("step", "how many degrees", _WORDS[step], str(step), kind="number")
    text = f"set the heating {_WORDS[step]} {_unit(step)} {word} than it's set to now"

    def correct(ctx: Context) -> Part | None:
        other = choose(ctx.rng, [n for n in (1, 2, 3) if n != step])
        target = old + other if warmer else old - other
        if not 10 <= target <= 30:
            return None
        ctx.run("set_thermostat", target=target)
        fixed = stated("step", "how many degrees", _WORDS[other], str(other), kind="number")
        return Part(
            f"actually, make that {_WORDS[other]} {_unit(other)} {word} than it was",
            [fixed],
            purpose="fix it",
        )

    return Part(text, [value], purpose="change the temperature", correction=correct)


@goal("home")
def brightest_off(ctx: Context) -> Part | None:
    """Switch off the brightest light that is on: the status read, the lights compared."""
    env = _home(ctx)
    shown = ctx.run("get_status")["lights"]
    lit = [
        (int(state.split()[1].rstrip("%")), room) for room, state in shown.items() if state.startswith("on")
    ]
    if not lit:
        raise Abandon("no light on")
    lit.sort(reverse=True)
    if len(lit) > 1 and lit[0][0] == lit[1][0]:
        raise Abandon("a tie")
    del env
    ctx.run("set_light", room=lit[0][1], on=False)
    return Part("switch off whichever light that's on is the brightest", [], purpose="save power")


@goal("home")
def vacuum_dark_rooms(ctx: Context) -> Part | None:
    """Vacuum the rooms whose light is off (nobody is there): the rooms read off the status."""
    env = _home(ctx)
    status = ctx.run("get_status")
    dark = [room for room, state in status["lights"].items() if state.startswith("off")]
    if not dark or len(dark) > 8 or env.vacuum["battery"] < 20:
        raise Abandon("no dark room or no battery")
    ctx.run("start_vacuum", rooms=dark)
    return Part("send the vacuum to every room whose light is off", [], purpose="clean where nobody is")


@goal("home")
def match_brightness(ctx: Context) -> Part | None:
    """One room's light on at another's brightness (read off the status)."""
    env, rng = _home(ctx), ctx.rng
    rooms = list(env.lights)
    first, second = choose(rng, rooms), choose(rng, rooms)
    if first == second:
        return None
    brightness = ctx.run("get_status", room=second)["light"]["brightness"]
    ctx.run("set_light", room=first, on=True, brightness=brightness)
    values = [_room_value(first, "room to set"), _room_value(second, "room to copy")]
    text = f"turn on the {first} light at the same brightness as the {second} light"
    return Part(text, values, purpose="match the lights")


@goal("home")
def dim_by(ctx: Context) -> Part | None:
    """A light dimmed by stated points from its current brightness (worked out)."""
    env, rng = _home(ctx), ctx.rng
    room = choose(rng, list(env.lights))
    points = choose(rng, (10, 20, 30))
    now = ctx.run("get_status", room=room)["light"]["brightness"]
    if now - points < 10:
        raise Abandon("too dim already")
    ctx.run("set_light", room=room, on=True, brightness=now - points)
    values = [_room_value(room), stated("points", "how much dimmer", f"{points} points", kind="text")]
    return Part(f"dim the {room} light by {points} points and leave it on", values, purpose="dim a light")


@goal("home", longest=5)
def lock_up_and_leave(ctx: Context) -> Part | None:
    """Lock whatever door is unlocked, then arm away (the doors read off the status)."""
    env = _home(ctx)
    status = ctx.run("get_status")
    unlocked = [door for door, state in status["doors"].items() if not state["locked"]]
    if len(unlocked) > 3 or env.security == "away":
        raise Abandon("too many doors")
    for door in unlocked:
        ctx.run("lock_door", door=door, locked=True)
    ctx.run("arm_security", mode="away")
    return Part("lock any door that's unlocked and arm the alarm for when I'm away", [], purpose="leave")


@goal("home", 0.7)
def tell_temperature(ctx: Context) -> Part | None:
    current = ctx.run("get_status")["thermostat"]["current"]
    return Part("tell me how warm it is inside right now", [], [current], "know the temperature")


# -- conditions ---------------------------------------------------------------------------


@condition("home")
def colder_than(ctx: Context) -> Probe | None:
    rng = ctx.rng
    current = ctx.run("get_status")["thermostat"]["current"]
    limit = float(round(current) + choose(rng, (-1, 1)))
    value = stated("limit", "a temperature", _degrees(limit), kind="number")
    return Probe(f"it's colder than {_degrees(limit)} degrees inside", [value], current < limit)


@condition("home")
def door_unlocked(ctx: Context) -> Probe | None:
    env, rng = _home(ctx), ctx.rng
    door = choose(rng, list(env.doors))
    locked = ctx.run("get_status")["doors"][door]["locked"]
    return Probe(f"the {door} is unlocked", [stated("door", "which door", door)], not locked)


@condition("home")
def light_on(ctx: Context) -> Probe | None:
    env, rng = _home(ctx), ctx.rng
    room = choose(rng, list(env.lights))
    on = ctx.run("get_status", room=room)["light"]["on"]
    return Probe(f"the {room} light is on", [_room_value(room, "room tested")], bool(on))


@goal("home", 1.0, withholds=True)
def light_at(ctx: Context) -> Part | None:
    """A light on at a stated brightness (the brightness can be withheld and supplied next turn)."""
    env, rng = _home(ctx), ctx.rng
    room = choose(rng, list(env.lights))
    brightness = 10 * between(rng, 2, 9)
    ctx.run("set_light", room=room, on=True, brightness=brightness)
    slot = ctx.slot("brightness")
    value = stated(slot, "brightness", f"{brightness}%", f"{brightness} percent", kind="number")
    held = {
        "slot": slot,
        "about": "brightness",
        "said": "a comfortable level",
        "forbidden": [str(brightness)],
    }
    return Part(
        f"turn the {room} light on at {brightness}%",
        [_room_value(room), value],
        purpose="light a room",
        withhold=Withhold(
            f"turn the {room} light on at a comfortable level", held, f"Make it {brightness}%.", [value]
        ),
    )
