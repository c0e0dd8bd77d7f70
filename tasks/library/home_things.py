"""Library tools: math and units, shopping, health, smart home, vehicles and drones, data and databases."""

from __future__ import annotations

from tasks.library.common import ROOM, choices, enum_opt, enum_req, ident, opt, req
from tasks.spec import ToolSpec
from tasks.values import (
    ClockTime,
    Composed,
    Date,
    Decimal,
    Flag,
    Integer,
    ListOf,
    Pick,
    Quoted,
    Record,
    Records,
    option,
    words,
)

_LENGTH = Pick(
    (
        option("km", "kilometers", "kilometer", "kilometres", say=("kilometers", "km")),
        option("miles", "mile", "mi", say=("miles",)),
        option("meters", "m", "meter", "metres", say=("meters",)),
        option("feet", "ft", "foot", say=("feet",)),
        option("inches", "in", "inch", say=("inches",)),
        option("centimeters", "cm", "centimeter", "centimetres", say=("centimeters", "cm")),
    ),
)
_SCALE = Pick(
    (
        option("celsius", "C", say=("Celsius", "degrees C")),
        option("fahrenheit", "F", say=("Fahrenheit", "degrees F")),
        option("kelvin", "K", say=("Kelvin",)),
    ),
)

MATH = (
    ToolSpec(
        "convert_units",
        "math",
        "Converts a length from one unit to another.",
        (
            req("value", "float", "The quantity.", Decimal(0.5, 5000, 2)),
            req("from_unit", "string", "Unit of the quantity.", _LENGTH),
            req("to_unit", "string", "Unit wanted.", _LENGTH),
        ),
        (
            "how many {to_unit} is {value} {from_unit}?",
            "turn {value} {from_unit} into {to_unit}",
            "{value} {from_unit} - what's that in {to_unit}",
            "I measured {value} {from_unit}; express it in {to_unit}",
        ),
    ),
    ToolSpec(
        "convert_temperature",
        "math",
        "Converts a temperature between scales.",
        (
            req("value", "float", "The temperature.", Decimal(-40, 250, 1)),
            req("from_scale", "string", "Scale of the value.", _SCALE),
            req("to_scale", "string", "Scale wanted.", _SCALE),
        ),
        (
            "the recipe says {value} {from_scale}, what's that in {to_scale}?",
            "{value} degrees {from_scale} to {to_scale} please",
            "how hot is {value} {from_scale} when you put it in {to_scale}",
            "translate a reading of {value} {from_scale} into {to_scale}",
        ),
    ),
    ToolSpec(
        "calculate_tip",
        "math",
        "Computes the tip and each person's share of a bill.",
        (
            req("bill_amount", "float", "Total of the bill.", Decimal(8, 900, 2, "${}")),
            req("tip_percent", "integer", "Tip in percent.", Integer(5, 30, "{}%")),
            opt("split", "integer", "Number of people paying.", Integer(2, 8, "{} ways"), default=1),
        ),
        (
            "our check came to {bill_amount}, what's a {tip_percent} tip?",
            "dinner was {bill_amount}; add {tip_percent} and divide it {split}",
            "how much should I leave on {bill_amount} if I want to give {tip_percent}",
            "work out {tip_percent} on top of {bill_amount}, split {split}",
        ),
    ),
    ToolSpec(
        "solve_quadratic",
        "math",
        "Finds the real roots of a*x^2 + b*x + c = 0.",
        (
            req("a", "integer", "Coefficient of x squared.", Integer(1, 12)),
            req("b", "integer", "Coefficient of x.", Integer(-30, 30)),
            req("c", "integer", "Constant term.", Integer(-60, 60)),
        ),
        (
            "where does {a}x^2 + ({b})x + ({c}) cross zero?",
            "find x when {a}x² + {b}x + {c} = 0",
            "roots of the polynomial with a={a}, b={b}, c={c}?",
            "my homework: {a}x^2 plus {b}x plus {c} equals zero, what's x",
        ),
    ),
    ToolSpec(
        "compute_statistics",
        "math",
        "Computes one summary statistic of a list of numbers.",
        (
            req("numbers", "array", "The data.", ListOf(Decimal(0, 500, 1), 3, 6), items={"type": "number"}),
            enum_req(
                "statistic",
                "Which statistic.",
                choices(
                    ("mean", ("average", "mean")),
                    ("median", ("median", "middle value")),
                    ("stdev", ("standard deviation", "spread")),
                    ("max", ("largest value", "maximum")),
                    ("min", ("smallest value", "minimum")),
                ),
            ),
        ),
        (
            "what's the {statistic} of {numbers}?",
            "here are my readings: {numbers}. give me the {statistic}",
            "figure out the {statistic} for {numbers}",
            "{numbers} - {statistic} please",
        ),
    ),
    ToolSpec(
        "greatest_common_divisor",
        "math",
        "Finds the largest integer dividing all the given integers.",
        (
            req(
                "numbers",
                "array",
                "Whole numbers.",
                ListOf(Integer(2, 5000), 2, 4),
                items={"type": "integer"},
            ),
        ),
        (
            "what's the biggest number that goes evenly into {numbers}?",
            "highest common factor of {numbers}?",
            "I need to simplify a ratio of {numbers} - what do they share as a divisor",
            "largest whole number dividing {numbers} with no remainder",
        ),
    ),
)

_PRODUCT = Composed(
    (
        (
            "wireless",
            "waterproof",
            "ergonomic",
            "compact",
            "stainless steel",
            "kids'",
            "noise-cancelling",
            "vintage",
        ),
        (
            "headphones",
            "backpack",
            "desk chair",
            "water bottle",
            "running shoes",
            "coffee grinder",
            "keyboard",
            "tent",
            "lamp",
            "blender",
        ),
    ),
    "{0} {1}",
    quote=True,
    vague=("that thing I liked", "the usual"),
)
_SKU = ident("SKU-", 6, ("the one in my wishlist", "that item"))
_ORDER_LINE = Record(
    (("product_id", _SKU), ("quantity", Integer(1, 5))),
    "{quantity} of {product_id}",
)

SHOPPING = (
    ToolSpec(
        "search_products",
        "shopping",
        "Searches the store catalogue.",
        (
            req("query", "string", "What to look for.", _PRODUCT),
            opt("max_price", "float", "Highest acceptable price.", Decimal(10, 800, 0, "${}")),
            enum_opt(
                "sort_by",
                "Ordering of the results.",
                choices(
                    ("price_low", "cheapest first"),
                    ("rating", "best reviewed first"),
                    ("newest", "newest first"),
                    ("relevance", "best match first"),
                ),
                default="relevance",
            ),
        ),
        (
            "I'm looking for {query}",
            "any {query} under {max_price}?",
            "show me {query}, {sort_by}",
            "does the shop have {query} for at most {max_price}",
        ),
    ),
    ToolSpec(
        "add_to_cart",
        "shopping",
        "Puts a product in the shopping basket.",
        (
            req("product_id", "string", "Product identifier, e.g. SKU-123456.", _SKU),
            opt("quantity", "integer", "How many.", Integer(2, 9), default=1),
        ),
        (
            "throw {product_id} in my basket",
            "I'll take {quantity} of {product_id}",
            "stick {product_id} in the cart for later",
            "grab {quantity} units of {product_id}, I'll check out later",
        ),
    ),
    ToolSpec(
        "place_order",
        "shopping",
        "Orders several products at once and ships them.",
        (
            req(
                "items",
                "array",
                "Order lines.",
                Records(_ORDER_LINE, 1, 3),
                items={
                    "type": "object",
                    "properties": {
                        "product_id": {"type": "string", "description": "Product identifier."},
                        "quantity": {"type": "integer", "description": "How many."},
                    },
                    "required": ["product_id", "quantity"],
                },
            ),
            enum_opt(
                "shipping_speed",
                "Delivery speed.",
                choices(
                    ("express", ("express", "fast")),
                    ("overnight", ("overnight", "next-day")),
                    ("standard", "standard"),
                ),
                default="standard",
            ),
            opt("gift_wrap", "boolean", "Wrap as a gift.", Flag(("gift-wrapped",)), default=False),
        ),
        (
            "buy {items} for me",
            "check out with {items}, {shipping_speed} shipping",
            "order {items} and have it {gift_wrap}",
            "I want {items} delivered, {shipping_speed} please",
        ),
    ),
    ToolSpec(
        "track_package",
        "shopping",
        "Reports where a shipment is.",
        (
            req(
                "tracking_number",
                "string",
                "Carrier tracking number.",
                Composed(
                    (
                        ("1Z", "94", "JD", "TBA"),
                        tuple(str(n) for n in range(100000, 999999, 7919)),
                        tuple(str(n) for n in range(1000, 9999, 613)),
                    ),
                    "{0}{1}{2}",
                    vague=("my package", "the delivery"),
                ),
            ),
        ),
        (
            "where's my parcel {tracking_number}?",
            "has {tracking_number} shipped yet",
            "when will {tracking_number} show up",
            "any news on shipment {tracking_number}?",
        ),
    ),
    ToolSpec(
        "return_item",
        "shopping",
        "Starts a return for an order.",
        (
            req(
                "order_id",
                "string",
                "Order identifier, e.g. ORD-12345.",
                ident("ORD-", 5, ("my last order", "the thing I bought")),
            ),
            enum_req(
                "reason",
                "Why it goes back.",
                choices(
                    ("damaged", ("it arrived broken", "it came damaged")),
                    ("wrong_item", "they sent the wrong thing"),
                    ("no_longer_needed", "I don't need it anymore"),
                    ("defective", "it stopped working"),
                ),
            ),
            enum_opt(
                "refund_method",
                "How to refund.",
                choices(
                    ("store_credit", "store credit"),
                    ("original_payment", ("my card", "the original payment")),
                ),
                default="original_payment",
            ),
        ),
        (
            "I want to send back {order_id}, {reason}",
            "{order_id}: {reason}. refund me as {refund_method}",
            "{reason} - can I return {order_id}?",
            "start a return on {order_id} because {reason}",
        ),
    ),
)

HEALTH = (
    ToolSpec(
        "log_workout",
        "health",
        "Records an exercise session in the fitness diary.",
        (
            enum_req(
                "activity",
                "Kind of exercise.",
                choices(
                    ("running", ("a run", "jogging")),
                    ("cycling", ("a bike ride", "cycling")),
                    ("swimming", ("swimming", "laps in the pool")),
                    ("yoga", "yoga"),
                    ("weights", "lifting"),
                ),
            ),
            req("duration_minutes", "integer", "Length in minutes.", Integer(10, 180, "{} minutes")),
            opt("calories", "integer", "Energy burned.", Integer(50, 1500, "{} calories")),
            opt("date", "string", "Day of the session, YYYY-MM-DD; today when left out.", Date()),
        ),
        (
            "just did {duration_minutes} of {activity}, put it in my diary",
            "note down {activity} for {duration_minutes}, burned {calories}",
            "I did {activity} on {date} for {duration_minutes}, save that",
            "add {duration_minutes} of {activity} to my fitness log",
        ),
    ),
    ToolSpec(
        "calculate_bmi",
        "health",
        "Computes body-mass index from weight and height.",
        (
            req("weight_kg", "float", "Body weight in kilograms.", Decimal(35, 160, 1, "{} kg")),
            req("height_cm", "float", "Height in centimeters.", Decimal(120, 210, 1, "{} cm")),
        ),
        (
            "I weigh {weight_kg} and I'm {height_cm} tall, am I in a healthy range?",
            "body mass index for {height_cm} and {weight_kg}?",
            "is {weight_kg} ok for someone who's {height_cm}",
            "{height_cm}, {weight_kg} - where does that put me on the scale",
        ),
    ),
    ToolSpec(
        "book_doctor_appointment",
        "health",
        "Books a visit with a clinician.",
        (
            enum_req(
                "specialty",
                "Kind of doctor.",
                choices(
                    ("dermatology", ("skin doctor", "dermatologist")),
                    ("cardiology", ("heart specialist", "cardiologist")),
                    ("pediatrics", ("pediatrician", "kids' doctor")),
                    ("general_practice", ("GP", "family doctor")),
                    ("dentistry", ("dentist",)),
                ),
            ),
            req("date", "string", "Day wanted, YYYY-MM-DD.", Date()),
            opt("time", "string", "Preferred time, HH:MM.", ClockTime()),
            opt(
                "reason",
                "string",
                "Why the visit is needed.",
                Quoted(
                    (
                        "rash on my arm",
                        "chest tightness",
                        "annual checkup",
                        "toothache",
                        "fever for three days",
                    )
                ),
            ),
        ),
        (
            "I need to see a {specialty} on {date}",
            "get me in with a {specialty} on {date} around {time}",
            "book a {specialty} for {date}, it's about {reason}",
            "can I visit the {specialty} on {date}?",
        ),
    ),
    ToolSpec(
        "set_medication_reminder",
        "health",
        "Reminds the user to take a medication at given times.",
        (
            req(
                "medication",
                "string",
                "Name of the medicine.",
                words(
                    "ibuprofen",
                    "amoxicillin",
                    "metformin",
                    "vitamin D",
                    "loratadine",
                    "omeprazole",
                    vague=("my pills", "the new prescription"),
                ),
            ),
            req("dosage_mg", "integer", "Dose in milligrams.", Integer(5, 1000, "{} mg", 5)),
            req(
                "times", "array", "Times of day, HH:MM.", ListOf(ClockTime(), 1, 3), items={"type": "string"}
            ),
        ),
        (
            "nudge me to take {dosage_mg} of {medication} at {times}",
            "I keep forgetting my {medication} ({dosage_mg}) - alert me at {times}",
            "make sure I don't miss {medication}, {dosage_mg}, at {times}",
            "daily pill alarm: {medication} {dosage_mg} at {times}",
        ),
        conflicts=("reminder",),
    ),
)

SMART_HOME = (
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

VEHICLES = (
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

_DATABASE = words(
    "analytics", "billing", "inventory", "crm", "users", "orders", vague=("the database", "our db")
)
_TABLE = Composed(
    (
        ("customers", "invoices", "events", "sessions", "products", "payments", "shipments"),
        ("", "_2025", "_archive"),
    ),
    "{0}{1}",
    vague=("that table", "the big table"),
)

DATA = (
    ToolSpec(
        "run_sql_query",
        "data",
        "Runs a read-only SQL query against a database.",
        (
            req("database", "string", "Database name.", _DATABASE),
            req(
                "query",
                "string",
                "SQL SELECT statement.",
                Composed(
                    (
                        ("SELECT COUNT(*) FROM", "SELECT * FROM", "SELECT id, total FROM"),
                        ("customers", "invoices", "events", "orders", "payments"),
                        ("", " WHERE status = 'open'", " LIMIT 10", " WHERE created_at > '2026-01-01'"),
                    ),
                    "{0} {1}{2}",
                    quote=True,
                ),
            ),
        ),
        (
            "against {database}, run {query}",
            "what comes back from {query} on the {database} db?",
            "hit {database} with {query}",
            "I need the results of {query} from {database}",
        ),
        conflicts=("sql_schema",),
    ),
    ToolSpec(
        "export_table",
        "data",
        "Exports a database table to a file.",
        (
            req("table", "string", "Table name.", _TABLE),
            enum_req(
                "format",
                "File format.",
                choices(
                    ("csv", ("CSV", "a spreadsheet-friendly CSV")),
                    ("json", "JSON"),
                    ("parquet", "Parquet"),
                    ("xlsx", ("Excel", "xlsx")),
                ),
            ),
            opt(
                "destination",
                "string",
                "Where to write the file.",
                Composed(
                    (("exports", "/tmp", "reports", "s3-bucket/dumps"), ("jan", "q1", "weekly", "audit")),
                    "{0}/{1}",
                ),
            ),
        ),
        (
            "dump {table} as {format}",
            "I need {table} in {format} saved to {destination}",
            "get {table} out into a {format} file",
            "save a copy of {table} as {format} at {destination}",
        ),
    ),
    ToolSpec(
        "create_database_backup",
        "data",
        "Takes a snapshot backup of a database.",
        (
            req("database", "string", "Database name.", _DATABASE),
            opt(
                "retention_days",
                "integer",
                "Days to keep the snapshot.",
                Integer(1, 90, "{} days"),
                default=7,
            ),
            opt("compress", "boolean", "Compress the snapshot.", Flag(("compressed",)), default=True),
        ),
        (
            "snapshot {database} before the migration",
            "make a safety copy of {database} and keep it {retention_days}",
            "back {database} up, {compress}",
            "I want a restore point for {database} that sticks around for {retention_days}",
        ),
    ),
    ToolSpec(
        "get_table_schema",
        "data",
        "Describes the columns and types of a table.",
        (
            req("table", "string", "Table name.", _TABLE),
            opt("database", "string", "Database name.", _DATABASE),
        ),
        (
            "what columns does {table} have?",
            "describe the layout of {table} in {database}",
            "which fields and types are in {table}",
            "I forgot how {table} is structured in {database}, remind me",
        ),
        conflicts=("sql_schema",),
    ),
)

__all__ = ["DATA", "HEALTH", "MATH", "SHOPPING", "SMART_HOME", "VEHICLES"]
