"""Health: workout logging, BMI, doctor appointments and medication reminders."""

from __future__ import annotations

from tasks.library.common import choices, enum_req, opt, req
from tasks.spec import ToolSpec
from tasks.value_generators import ClockTime, Date, Decimal, Integer, ListOf, Quoted, words

TOOLS: tuple[ToolSpec, ...] = (
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

__all__ = ["TOOLS"]
