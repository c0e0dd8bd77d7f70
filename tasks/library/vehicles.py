"""Vehicles and drones: drone autopilot, camera, sensor calibration and missions; car cruise
control and telemetry.
"""

from __future__ import annotations

from tasks.library.common import choices, enum_req, ident, opt, req
from tasks.spec import ToolSpec
from tasks.value_generators import Decimal, Flag, Integer, ListOf, Record, Records

_DRONE = ident("DRN-", 3, ("the drone", "my quadcopter"))
_CAR = ident("CAR-", 4, ("my car", "the company car"))
_SENSORS = choices(
    ("imu", ("IMU", "gyro")),
    ("compass", "compass"),
    ("barometer", ("barometer", "altimeter")),
    ("gps", "GPS"),
    ("lidar", "lidar"),
)
_WAYPOINT = Record(
    (
        ("lat", Decimal(-60, 70, 4)),
        ("lon", Decimal(-179, 179, 4)),
        ("altitude_m", Integer(20, 120, "{} m", 5)),
    ),
    "({lat}, {lon}) at {altitude_m}",
)

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "set_autopilot",
        "vehicles",
        "Engages autonomous flight in a mode at a given altitude.",
        (
            req("vehicle_id", "string", "Drone identifier, e.g. DRN-123.", _DRONE),
            enum_req(
                "mode",
                "Autonomous behaviour.",
                choices(
                    ("hold", ("hold position", "hover in place")),
                    ("loiter", ("circle around", "loiter")),
                    ("return_to_base", ("come back home", "head back to base")),
                ),
            ),
            req("altitude_m", "integer", "Altitude in meters.", Integer(10, 400, "{} meters", 5)),
        ),
        (
            "let {vehicle_id} fly itself: {mode} at {altitude_m}",
            "I'm letting go of the sticks, {vehicle_id} should {mode} at {altitude_m}",
            "hands-free for {vehicle_id} please, {mode}, {altitude_m} up",
            "have {vehicle_id} {mode} on its own at {altitude_m}",
        ),
    ),
    ToolSpec(
        "control_camera",
        "vehicles",
        "Operates a drone's gimbal camera.",
        (
            req("vehicle_id", "string", "Drone identifier, e.g. DRN-123.", _DRONE),
            enum_req(
                "action",
                "Camera action.",
                choices(
                    ("take_photo", ("snap a picture", "grab a still")),
                    ("start_recording", ("start filming", "roll video")),
                    ("stop_recording", ("stop filming", "cut the video")),
                ),
            ),
            opt(
                "tilt_deg",
                "integer",
                "Gimbal tilt in degrees, negative is down.",
                Integer(-90, 30, "{} degrees", 5),
            ),
            opt("zoom", "float", "Zoom factor.", Decimal(1, 8, 1, "{}x"), default=1.0),
        ),
        (
            "on {vehicle_id}, {action}",
            "point {vehicle_id}'s lens to {tilt_deg} and {action}",
            "{vehicle_id}: zoom {zoom} and {action}",
            "I want {vehicle_id} to {action} right now",
        ),
    ),
    ToolSpec(
        "calibrate_sensors",
        "vehicles",
        "Recalibrates a drone's onboard sensors.",
        (
            req("vehicle_id", "string", "Drone identifier, e.g. DRN-123.", _DRONE),
            req(
                "sensors",
                "array",
                "Sensors to recalibrate.",
                ListOf(_SENSORS, 1, 3),
                items={"type": "string", "enum": ["imu", "compass", "barometer", "gps", "lidar"]},
            ),
            opt(
                "full",
                "boolean",
                "Run the long procedure.",
                Flag(("do the thorough version",)),
                default=False,
            ),
        ),
        (
            "the {sensors} on {vehicle_id} are out of whack, can you reset them?",
            "{vehicle_id} keeps drifting; fix its {sensors} readings",
            "tune up the {sensors} on {vehicle_id}, {full}",
            "{vehicle_id}'s {sensors} seem off, get them back to true",
        ),
    ),
    ToolSpec(
        "set_cruise_control",
        "vehicles",
        "Holds a car at a steady speed.",
        (
            req("vehicle_id", "string", "Car identifier, e.g. CAR-1234.", _CAR),
            req("speed_kmh", "integer", "Speed in km/h.", Integer(30, 130, "{} km/h", 5)),
            opt(
                "adaptive",
                "boolean",
                "Keep distance to the car ahead.",
                Flag(("keeping a safe gap to the car in front",)),
                default=False,
            ),
        ),
        (
            "keep {vehicle_id} at {speed_kmh}",
            "my foot's tired, hold {vehicle_id} steady at {speed_kmh} {adaptive}",
            "lock {vehicle_id} to {speed_kmh} on the highway",
            "{vehicle_id} should just sit at {speed_kmh}",
        ),
    ),
    ToolSpec(
        "get_vehicle_status",
        "vehicles",
        "Reports a car's telemetry.",
        (
            req("vehicle_id", "string", "Car identifier, e.g. CAR-1234.", _CAR),
            opt(
                "fields",
                "array",
                "Readings wanted.",
                ListOf(
                    choices(
                        ("battery", "battery"),
                        ("tire_pressure", "tire pressure"),
                        ("odometer", "mileage"),
                        ("location", ("location", "position")),
                    ),
                    1,
                    3,
                ),
                items={"type": "string", "enum": ["battery", "tire_pressure", "odometer", "location"]},
            ),
        ),
        (
            "how's {vehicle_id} doing?",
            "what are the {fields} on {vehicle_id}",
            "give me a health report for {vehicle_id}",
            "check {fields} for {vehicle_id}",
        ),
    ),
    ToolSpec(
        "plan_drone_mission",
        "vehicles",
        "Uploads a waypoint route to a drone.",
        (
            req("vehicle_id", "string", "Drone identifier, e.g. DRN-123.", _DRONE),
            req(
                "waypoints",
                "array",
                "Points to visit in order.",
                Records(_WAYPOINT, 2, 3),
                items={
                    "type": "object",
                    "properties": {
                        "lat": {"type": "number", "description": "Latitude."},
                        "lon": {"type": "number", "description": "Longitude."},
                        "altitude_m": {"type": "integer", "description": "Altitude in meters."},
                    },
                    "required": ["lat", "lon", "altitude_m"],
                },
            ),
            opt(
                "return_home",
                "boolean",
                "Fly back after the last point.",
                Flag(("and bring it back afterwards",), ("and let it stay at the end",)),
                default=True,
            ),
        ),
        (
            "send {vehicle_id} through {waypoints}",
            "route for {vehicle_id}: {waypoints} {return_home}",
            "I want {vehicle_id} to visit {waypoints}",
            "fly {vehicle_id} over {waypoints} in that order",
        ),
    ),
)

__all__ = ["TOOLS"]
