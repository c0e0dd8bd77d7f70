"""Course providers: enrolling students and passing a seat from one student to another."""

from __future__ import annotations

from tasks.library.common import DAY, EMAIL, PERSON, choices, enum_opt, req
from tasks.synth.common import compose
from tasks.synth.model import THING, Action, Family

_PLAN = choices(
    ("full", ("paying in full", "in one payment")),
    ("monthly", ("monthly instalments", "paying monthly")),
)

FAMILY = Family(
    "courses",
    compose(
        ("evening", "weekend", "online", "intensive", "beginner"),
        (
            "pottery course",
            "coding bootcamp",
            "Spanish class",
            "first-aid course",
            "photography workshop",
            "sailing course",
        ),
    ),
    (
        Action(
            f"enroll_in_{THING}",
            f"Signs a student up for the {THING}.",
            (
                req("student", "string", "Full name of the student.", PERSON),
                req("email", "string", "Student's email address.", EMAIL),
                req("start_date", "string", "First session day, YYYY-MM-DD.", DAY),
                enum_opt("payment_plan", "How the fee is paid.", _PLAN, default="full"),
            ),
            (
                f"sign {{student}} ({{email}}) up for the {THING} starting {{start_date}}",
                f"put {{student}} on the {THING} from {{start_date}}, email {{email}}, {{payment_plan}}",
                f"{{student}} wants a place on the {THING} beginning {{start_date}}; reach them at {{email}}",
                f"register {{email}} - that's {{student}} - for the {THING}, first day {{start_date}}",
            ),
        ),
        Action(
            f"transfer_{THING}_seat",
            f"Moves a student's place on the {THING} to another student.",
            (
                req("from_student", "string", "Full name of the student giving up the place.", PERSON),
                req("to_student", "string", "Full name of the student taking the place.", PERSON),
            ),
            (
                f"give {{from_student}}'s spot on the {THING} to {{to_student}}",
                f"{{to_student}} is taking over the {THING} place that {{from_student}} had",
                f"{{from_student}} can't do the {THING} anymore, pass the seat to {{to_student}}",
                f"swap the {THING} seat: out goes {{from_student}}, in comes {{to_student}}",
            ),
        ),
    ),
)
