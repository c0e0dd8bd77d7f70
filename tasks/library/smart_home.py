"""Smart home: thermostat, lights, door locks, robot vacuum and the security alarm."""

from __future__ import annotations

from tasks.library.common import ROOM, choices, enum_opt, enum_req, opt, req
from tasks.spec import ToolSpec
from tasks.value_generators import Decimal, Flag, Integer, ListOf

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "set_thermostat",
        "smart_home",
        "Sets the target temperature of the heating and cooling.",
        (
            req("temperature", "float", "Target temperature.", Decimal(15, 28, 1, "{} degrees")),
            opt("room", "string", "Room to set; whole house when left out.", ROOM),
            enum_opt(
                "unit",
                "Temperature unit.",
                choices(("celsius", "Celsius"), ("fahrenheit", "Fahrenheit")),
                default="celsius",
            ),
        ),
        (
            "it's freezing, bump the heat up to {temperature}",
            "make the {room} {temperature}",
            "I'd like the {room} at {temperature} {unit}",
            "keep the house at {temperature}",
        ),
    ),
    ToolSpec(
        "control_lights",
        "smart_home",
        "Switches or dims the lights in a room.",
        (
            req("room", "string", "Room name.", ROOM),
            enum_req(
                "action",
                "What to do.",
                choices(
                    ("on", ("turn on", "switch on")),
                    ("off", ("turn off", "kill")),
                    ("dim", ("dim", "lower")),
                ),
            ),
            opt("brightness", "integer", "Brightness in percent.", Integer(5, 100, "{}%", 5)),
        ),
        (
            "{action} the lights in the {room}",
            "{action} the {room} lamps, {brightness}",
            "could you {action} the lighting in the {room}?",
            "{room}: {action} the lights to {brightness}",
        ),
    ),
    ToolSpec(
        "set_door_lock",
        "smart_home",
        "Locks or unlocks a door.",
        (
            enum_req(
                "door",
                "Which door.",
                choices(
                    ("front", "front"),
                    ("back", "back"),
                    ("garage", "garage"),
                    ("side", "side"),
                ),
            ),
            req("locked", "boolean", "True to lock, false to unlock.", Flag(("lock",), ("unlock",))),
        ),
        (
            "{locked} the {door} door",
            "can you {locked} the {door} door for me?",
            "please {locked} our {door} entrance",
            "I'm away - {locked} the {door} door",
        ),
    ),
    ToolSpec(
        "start_robot_vacuum",
        "smart_home",
        "Sends the robot vacuum to clean some rooms.",
        (
            req("rooms", "array", "Rooms to clean.", ListOf(ROOM, 1, 3), items={"type": "string"}),
            enum_opt(
                "mode",
                "Suction mode.",
                choices(
                    ("quiet", "quiet"),
                    ("turbo", ("turbo", "max power")),
                    ("standard", "normal"),
                ),
                default="standard",
            ),
        ),
        (
            "the floors are a mess, get the {rooms} cleaned",
            "send the little robot through the {rooms} on {mode}",
            "vacuum the {rooms} please",
            "hoover {rooms} in {mode} mode",
        ),
    ),
    ToolSpec(
        "arm_security_system",
        "smart_home",
        "Arms the home alarm in a mode.",
        (
            enum_req(
                "mode",
                "Arming mode.",
                choices(
                    ("away", ("away", "leaving the house")),
                    ("home", ("home", "staying in")),
                    ("night", ("night", "bedtime")),
                ),
            ),
            opt(
                "delay_seconds",
                "integer",
                "Exit delay in seconds.",
                Integer(10, 120, "{} seconds", 10),
                default=30,
            ),
        ),
        (
            "turn the alarm on, {mode} mode",
            "we're {mode} - protect the house",
            "set the burglar alarm to {mode} with {delay_seconds} to get out",
            "secure the place for {mode}, give me {delay_seconds}",
        ),
    ),
)

__all__ = ["TOOLS"]
