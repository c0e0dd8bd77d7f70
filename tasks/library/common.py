"""Value generators shared by several domains of the tool library (places, people, ids, ...)."""

from __future__ import annotations

from dataclasses import dataclass
from random import Random

from tasks.rand import below
from tasks.spec import NO_DEFAULT, Param
from tasks.value_generators import (
    Composed,
    Date,
    Drawn,
    Integer,
    Option,
    Pick,
    Quoted,
    ValueGen,
    clock_mentions,
    option,
    words,
)

_CITIES = (
    ("Paris", "France"),
    ("Tokyo", "Japan"),
    ("Lima", "Peru"),
    ("Nairobi", "Kenya"),
    ("Toronto", "Canada"),
    ("Berlin", "Germany"),
    ("Madrid", "Spain"),
    ("Lisbon", "Portugal"),
    ("Oslo", "Norway"),
    ("Seoul", "South Korea"),
    ("Mumbai", "India"),
    ("Cairo", "Egypt"),
    ("Sydney", "Australia"),
    ("Denver", "USA"),
    ("Chicago", "USA"),
    ("Austin", "USA"),
    ("Boston", "USA"),
    ("Seattle", "USA"),
    ("Dublin", "Ireland"),
    ("Prague", "Czech Republic"),
    ("Vienna", "Austria"),
    ("Warsaw", "Poland"),
    ("Athens", "Greece"),
    ("Istanbul", "Turkey"),
    ("Bangkok", "Thailand"),
    ("Hanoi", "Vietnam"),
    ("Manila", "Philippines"),
    ("Jakarta", "Indonesia"),
    ("Santiago", "Chile"),
    ("Bogota", "Colombia"),
    ("Montreal", "Canada"),
    ("Zurich", "Switzerland"),
    ("Helsinki", "Finland"),
    ("Reykjavik", "Iceland"),
    ("Marrakesh", "Morocco"),
    ("Accra", "Ghana"),
    ("Auckland", "New Zealand"),
    ("Osaka", "Japan"),
    ("Kyoto", "Japan"),
    ("Porto", "Portugal"),
    ("Edinburgh", "United Kingdom"),
    ("Manchester", "United Kingdom"),
    ("Lyon", "France"),
    ("Munich", "Germany"),
    ("Valencia", "Spain"),
    ("Florence", "Italy"),
    ("Naples", "Italy"),
    ("Krakow", "Poland"),
    ("Budapest", "Hungary"),
    ("Copenhagen", "Denmark"),
)

# Towns composed from parts (thousands of them, none on a list a pattern could enumerate).
_TOWN_PREFIXES = (
    "", "", "", "", "Port ", "Lake ", "Mount ", "New ", "Fort ", "Glen ", "Saint ", "Upper ", "East ",
)  # fmt: skip
_TOWN_STEMS = (
    "Ash",
    "Brook",
    "Cold",
    "Elm",
    "Fair",
    "Green",
    "High",
    "Kings",
    "Lang",
    "Mill",
    "Nor",
    "Oak",
    "Red",
    "Rock",
    "Salt",
    "Silver",
    "Stone",
    "Thorn",
    "Wester",
    "Wood",
    "Alder",
    "Birch",
    "Clay",
    "Dun",
    "Hazel",
    "Marsh",
    "Pine",
    "Raven",
    "Swan",
    "Amber",
)
_TOWN_SUFFIXES = (
    "ton",
    "bury",
    "field",
    "ford",
    "haven",
    "mouth",
    "wick",
    "stead",
    "dale",
    "port",
    "ville",
    "borough",
    "mere",
    "ley",
    "gate",
)
_TOWN_COUNTRIES = (
    "Canada",
    "Australia",
    "New Zealand",
    "Ireland",
    "United Kingdom",
    "USA",
    "South Africa",
    "Norway",
    "Denmark",
    "Netherlands",
    "Scotland",
    "Wales",
)


@dataclass(frozen=True, slots=True)
class Place:
    """A city: one of the listed ones (``options``, which a withheld city must not name) or,
    more often, a town composed from parts in a country."""

    options: tuple[Option, ...]
    vague: tuple[str, ...] = ()
    listed_share: float = 0.35

    def draw(self, rng: Random) -> Drawn:
        random = rng.random
        if random() < self.listed_share:
            chosen = self.options[int(random() * len(self.options))]
            says = chosen.says
            text = says[int(random() * len(says))]
            return Drawn(text, chosen.accepted, (("text", _place_forms(chosen.says, chosen.accepted)),))
        town = (
            _TOWN_PREFIXES[int(random() * len(_TOWN_PREFIXES))]
            + _TOWN_STEMS[int(random() * len(_TOWN_STEMS))]
            + _TOWN_SUFFIXES[int(random() * len(_TOWN_SUFFIXES))]
        )
        full = f"{town}, {_TOWN_COUNTRIES[int(random() * len(_TOWN_COUNTRIES))]}"
        text = full if random() < 0.5 else town
        return Drawn(text, (full, town), (("text", (full, town) if text == full else (town, full)),))


def _place_forms(says: tuple[str, ...], accepted: tuple[object, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys([*says, *(value for value in accepted if isinstance(value, str))]))


CITY = Place(
    tuple(option(f"{city}, {country}", city, say=(city, f"{city}, {country}")) for city, country in _CITIES),
    vague=("my hometown", "where my sister lives", "the city I'm flying to", "our usual spot"),
)

FIRST_NAMES = (
    "Maria",
    "James",
    "Aisha",
    "Kenji",
    "Sofia",
    "Liam",
    "Priya",
    "Diego",
    "Chloe",
    "Omar",
    "Hannah",
    "Mateo",
    "Yuki",
    "Noah",
    "Fatima",
    "Lucas",
    "Ingrid",
    "Tariq",
    "Elena",
    "Ravi",
    "Grace",
    "Ivan",
    "Zara",
    "Felix",
    "Amara",
    "Jonas",
    "Leila",
    "Marco",
    "Nadia",
    "Oscar",
)
LAST_NAMES = (
    "Lopez",
    "Chen",
    "Okafor",
    "Tanaka",
    "Rossi",
    "Murphy",
    "Patel",
    "Novak",
    "Silva",
    "Berg",
    "Haddad",
    "Kim",
    "Schmidt",
    "Dubois",
    "Nguyen",
    "Costa",
    "Larsen",
    "Mensah",
    "Ortiz",
    "Walsh",
)

# Names composed from syllables and parts: thousands of first names, hundreds of surnames.
_NAME_HEADS = (
    "Ka", "Lo", "Mi", "Ta", "Ro", "Se", "Vi", "Na", "Da", "Ela", "Ari", "Be", "Co", "Fe", "Ga",
    "Ha", "Jo", "Le", "Ma", "Ni", "Pa", "Sa", "Te", "Va", "Za", "Ol", "Ine", "Au", "Yo", "Rha",
)  # fmt: skip
_NAME_MIDDLES = ("la", "ri", "no", "ve", "si", "da", "me", "lo")
_NAME_TAILS = (
    "ri", "na", "len", "mo", "vi", "sha", "ko", "ra", "dan", "lia",
    "nor", "bel", "ren", "sa", "tan", "mir", "ella", "ian", "to", "via",
)  # fmt: skip
_SURNAME_HEADS = (
    "Ash", "Berg", "Hol", "Mar", "Wil", "Lind", "Cor", "Fair", "Hart", "Kel",
    "Mor", "Nor", "Os", "Pem", "Rad", "Stan", "Thorn", "Vance", "Wester", "Yar",
)  # fmt: skip
_SURNAME_TAILS = (
    "strom", "son", "wood", "ley", "ton", "field", "ridge", "mann", "ez", "ova",
    "sky", "er", "ling", "worth", "berg", "dale", "ford", "ini", "escu", "oglu",
)  # fmt: skip
_MAIL_HOSTS = ("acme", "northwind", "mailhub", "bluefin", "orbit", "kestrel", "tandem", "lumen", "contoso")
_MAIL_ENDS = (".com", ".io", ".net", ".dev", ".org", ".co")


def first_name(rng: Random) -> str:
    """A first name: one of the listed ones or, more often, one composed from syllables."""
    random = rng.random
    if random() < 0.25:
        return FIRST_NAMES[int(random() * len(FIRST_NAMES))]
    head = _NAME_HEADS[int(random() * len(_NAME_HEADS))]
    middle = _NAME_MIDDLES[int(random() * len(_NAME_MIDDLES))] if random() < 0.4 else ""
    return head + middle + _NAME_TAILS[int(random() * len(_NAME_TAILS))]


def last_name(rng: Random) -> str:
    """A surname: one of the listed ones or one composed from two parts."""
    random = rng.random
    if random() < 0.25:
        return LAST_NAMES[int(random() * len(LAST_NAMES))]
    head = _SURNAME_HEADS[int(random() * len(_SURNAME_HEADS))]
    return head + _SURNAME_TAILS[int(random() * len(_SURNAME_TAILS))]


@dataclass(frozen=True, slots=True)
class PersonName:
    """A full name (millions of them), said as written."""

    vague: tuple[str, ...] = ()

    def draw(self, rng: Random) -> Drawn:
        value = f"{first_name(rng)} {last_name(rng)}"
        return Drawn(value, (value,), (("text", (value,)),))


@dataclass(frozen=True, slots=True)
class EmailAddress:
    """first.last@host.tld from the open name parts."""

    vague: tuple[str, ...] = ()

    def draw(self, rng: Random) -> Drawn:
        random = rng.random
        host = _MAIL_HOSTS[int(random() * len(_MAIL_HOSTS))] + _MAIL_ENDS[int(random() * len(_MAIL_ENDS))]
        value = f"{first_name(rng).lower()}.{last_name(rng).lower()}@{host}"
        return Drawn(value, (value,), (("text", (value,)),))


@dataclass(frozen=True, slots=True)
class Handle:
    """@name with a team suffix, from the open first names."""

    vague: tuple[str, ...] = ()

    def draw(self, rng: Random) -> Drawn:
        suffixes = ("", ".dev", "_ops", "42", ".pm", "_qa", "-eng", "_x", ".io", "7")
        value = "@" + first_name(rng).lower() + suffixes[int(rng.random() * len(suffixes))]
        return Drawn(value, (value,), (("text", (value,)),))


PERSON = PersonName(vague=("my boss", "my landlord", "the new hire", "my colleague"))
EMAIL = EmailAddress(vague=("my boss", "the client", "my manager", "the person from yesterday"))
HANDLE = Handle(vague=("the on-call person", "my teammate", "whoever owns that service"))
PHONE = Composed(
    (
        ("415", "212", "646", "312", "617", "206", "512", "303"),
        tuple(f"{n:04d}" for n in range(100, 10000, 97)),
    ),
    "+1 {0} 555 {1}",
    vague=("my mom", "the plumber", "my neighbour"),
)

CURRENCY = Pick(
    (
        option("USD", say=("US dollars", "USD", "dollars")),
        option("EUR", say=("euros", "EUR")),
        option("GBP", say=("British pounds", "GBP", "pounds sterling")),
        option("JPY", say=("Japanese yen", "JPY", "yen")),
        option("CHF", say=("Swiss francs", "CHF")),
        option("CAD", say=("Canadian dollars", "CAD")),
        option("AUD", say=("Australian dollars", "AUD")),
        option("INR", say=("Indian rupees", "INR", "rupees")),
        option("MXN", say=("Mexican pesos", "MXN")),
        option("SEK", say=("Swedish kronor", "SEK")),
    ),
    vague=("my local currency", "the other currency"),
)

_STREETS = (
    "Oak",
    "Maple",
    "Cedar",
    "Elm",
    "Pine",
    "Harbor",
    "Mill",
    "Lake",
    "Hill",
    "River",
    "Park",
    "Sunset",
)
STREET_ADDRESS = Composed(
    (tuple(str(n) for n in range(1, 400, 7)), _STREETS, ("Street", "Avenue", "Road", "Lane", "Boulevard")),
    "{0} {1} {2}",
    vague=("the place we met", "my friend's house", "that address I sent you"),
)

_DIRS = (
    "src",
    "src/utils",
    "lib",
    "app/models",
    "app/api",
    "services/billing",
    "pkg/core",
    "scripts",
    "tools",
)
_STEMS = (
    "parser",
    "config",
    "client",
    "handlers",
    "schema",
    "routes",
    "cache",
    "auth",
    "retry",
    "metrics",
    "loader",
)
SOURCE_PATH = Composed(
    (_DIRS, _STEMS, (".py", ".ts", ".go", ".rs", ".yaml", ".json")),
    "{0}/{1}{2}",
    vague=("that file", "the file I was editing", "the broken module"),
)
DIRECTORY = Composed(
    (
        ("src", "lib", "app", "services", "pkg", "docs", "deploy", "infra"),
        ("", "/api", "/models", "/utils", "/billing", "/auth", "/jobs", "/web"),
    ),
    "{0}{1}",
    vague=("that folder", "the folder I mentioned", "the other folder"),
)
TEST_PATH = Composed(
    (("tests", "tests/unit", "tests/integration", "test", "spec"), _STEMS),
    "{0}/test_{1}.py",
    vague=("those tests", "the flaky tests", "the suite we talked about"),
)
ROOM = words(
    "living room",
    "kitchen",
    "bedroom",
    "bathroom",
    "office",
    "hallway",
    "garage",
    "nursery",
    "dining room",
    "basement",
    "guest room",
    "patio",
    vague=("that room", "the room we talked about"),
)
DAY = Date()
NOTE = Quoted(
    (
        "running 10 minutes late",
        "call me when you land",
        "the build is green again",
        "lunch at noon?",
        "can you review my PR today",
        "meeting moved to 3pm",
        "don't forget the keys",
        "server is back up",
        "I'll bring the slides",
        "happy birthday!",
    ),
    ("", " - thanks", ", see you soon", " :)"),
)


def ident(prefix: str, digits: int, vague: tuple[str, ...]) -> Composed:
    """An identifier like ``ORD-48213``: a fixed prefix and random digits (said as written)."""
    digit = tuple("0123456789")
    return Composed((digit,) * digits, prefix + "{}" * digits, vague=vague)


def choices(*pairs: tuple[str, str | tuple[str, ...]], vague: tuple[str, ...] = ()) -> Pick:
    """An enum: each value with the words people use for it."""
    return Pick(tuple(option(value, say=say) for value, say in pairs), vague)


@dataclass(frozen=True, slots=True)
class Coordinates:
    """A (latitude, longitude) pair with four decimals, said as "48.8566, 2.3522"."""

    vague: tuple[str, ...] = ("my current spot", "where I parked")

    def draw(self, rng: Random) -> Drawn:
        lat = float(round(rng.uniform(-60.0, 70.0), 4))
        lon = float(round(rng.uniform(-179.0, 179.0), 4))
        return Drawn(
            f"{lat:.4f}, {lon:.4f}", ([lat, lon],), (("number", (f"{lat:.4f}",)), ("number", (f"{lon:.4f}",)))
        )


_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


@dataclass(frozen=True, slots=True)
class CronSchedule:
    """A recurring schedule said in words ("every weekday at 9:30") and written as a cron expression."""

    vague: tuple[str, ...] = ("on the usual schedule", "whenever we agreed")

    def draw(self, rng: Random) -> Drawn:
        hour = below(rng, 24)
        minute = 5 * below(rng, 12)
        clock = f"{hour:02d}:{minute:02d}"
        at = clock_mentions(hour, minute)
        kind = below(rng, 4)
        if kind == 0:
            return Drawn(
                f"every day at {clock}", (f"{minute} {hour} * * *",), (("flag", ("every day", "daily")), *at)
            )
        if kind == 1:
            return Drawn(
                f"every weekday at {clock}",
                (f"{minute} {hour} * * 1-5", f"{minute} {hour} * * MON-FRI"),
                (("flag", ("every weekday", "weekdays")), *at),
            )
        if kind == 2:
            day = below(rng, 7)
            cron_day = (day + 1) % 7
            return Drawn(
                f"every {_WEEKDAYS[day]} at {clock}",
                (f"{minute} {hour} * * {cron_day}", f"{minute} {hour} * * {_WEEKDAYS[day][:3].upper()}"),
                (("text", (_WEEKDAYS[day],)), *at),
            )
        return Drawn(
            f"every hour at {minute} minutes past",
            (f"{minute} * * * *",),
            (("flag", ("every hour", "hourly")), ("number", (str(minute),))),
        )


def req(name: str, type_: str, description: str, gen: ValueGen, **schema: object) -> Param:
    """A required parameter."""
    return Param(name, type_, description, gen, required=True, schema=dict(schema))


def opt(
    name: str, type_: str, description: str, gen: ValueGen, default: object = NO_DEFAULT, **schema: object
) -> Param:
    """An optional parameter, with a default when the tool has one."""
    return Param(name, type_, description, gen, required=False, default=default, schema=dict(schema))


def enum_req(name: str, description: str, gen: Pick) -> Param:
    """A required string enum whose allowed values are the pick's reference values."""
    return Param(name, "string", description, gen, enum=_enum_values(gen.options))


def enum_opt(name: str, description: str, gen: Pick, default: object = NO_DEFAULT) -> Param:
    """An optional string enum."""
    return Param(
        name, "string", description, gen, required=False, default=default, enum=_enum_values(gen.options)
    )


def _enum_values(options: tuple[Option, ...]) -> tuple[str, ...]:
    return tuple(str(o.accepted[0]) for o in options)


__all__ = [
    "CITY",
    "CURRENCY",
    "DAY",
    "DIRECTORY",
    "EMAIL",
    "HANDLE",
    "NOTE",
    "PERSON",
    "PHONE",
    "ROOM",
    "SOURCE_PATH",
    "STREET_ADDRESS",
    "TEST_PATH",
    "Coordinates",
    "CronSchedule",
    "Integer",
    "Place",
    "choices",
    "enum_opt",
    "enum_req",
    "first_name",
    "ident",
    "last_name",
    "opt",
    "req",
]
