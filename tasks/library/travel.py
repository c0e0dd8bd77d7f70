"""Travel and maps: flights, hotels, directions, nearby places, distances and car rental."""

from __future__ import annotations

from tasks.library.common import CITY, DAY, STREET_ADDRESS, Coordinates, choices, enum_opt, enum_req, opt, req
from tasks.library.ranges import date_range
from tasks.spec import ToolSpec
from tasks.value_generators import Integer

_CABIN = choices(
    ("economy", ("economy", "coach")),
    ("premium_economy", "premium economy"),
    ("business", "business class"),
    ("first", "first class"),
)
_MODE = choices(
    ("walking", ("on foot", "walking")),
    ("bicycling", ("by bike", "cycling")),
    ("transit", ("on the bus", "by public transport")),
    ("driving", ("by car", "driving")),
)
_PLACE_KIND = choices(
    ("restaurant", ("restaurant", "place to eat")),
    ("cafe", ("coffee shop", "cafe")),
    ("pharmacy", ("pharmacy", "drugstore")),
    ("gas_station", ("gas station", "place to fill up")),
    ("atm", ("ATM", "cash machine")),
    ("hospital", ("hospital", "emergency room")),
)
_DISTANCE_UNIT = choices(("km", ("kilometers", "km")), ("miles", ("miles",)))

# A rental: returned 1..28 days after pick-up.
_RENTAL = date_range(1, 28, vague=("the pick-up day we talked about", "the return day we talked about"))

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "search_flights",
        "travel",
        "Searches scheduled flights between two cities on a date.",
        (
            req("origin", "string", "Departure city.", CITY),
            req("destination", "string", "Arrival city.", CITY),
            req("departure_date", "string", "Day of departure, YYYY-MM-DD.", DAY),
            opt("passengers", "integer", "Number of travellers.", Integer(2, 6, "for {} people"), default=1),
            enum_opt("cabin", "Cabin class.", _CABIN, default="economy"),
        ),
        (
            "find me a way to fly from {origin} to {destination} on {departure_date}",
            "I need to get {origin} -> {destination} by plane, leaving {departure_date}, {passengers}",
            "any {cabin} seats from {origin} to {destination} on {departure_date}?",
            "get me out of {origin} and into {destination} on {departure_date}, air travel please",
            "{destination} is where I need to land on {departure_date}; I'd be flying out of {origin}",
            "I'm heading to {destination} on {departure_date}, starting from {origin} - any flights?",
        ),
    ),
    ToolSpec(
        "book_hotel",
        "travel",
        "Reserves a hotel room in a city.",
        (
            req("city", "string", "City of the stay.", CITY),
            req("check_in", "string", "Arrival day, YYYY-MM-DD.", DAY),
            req("nights", "integer", "Number of nights.", Integer(2, 21, "{} nights")),
            opt("guests", "integer", "Number of guests.", Integer(1, 6, "{} guests"), default=2),
        ),
        (
            "sort me out somewhere to stay in {city} from {check_in} for {nights}",
            "I need a room in {city}, arriving {check_in}, staying {nights}, {guests}",
            "reserve accommodation in {city} checking in {check_in} for {nights}",
            "find a place to sleep in {city}, {nights} starting {check_in}",
        ),
    ),
    ToolSpec(
        "get_directions",
        "travel",
        "Gives turn-by-turn directions between two street addresses.",
        (
            req("origin", "string", "Start address.", STREET_ADDRESS),
            req("destination", "string", "End address.", STREET_ADDRESS),
            enum_opt("mode", "How the user travels.", _MODE, default="driving"),
        ),
        (
            "how do I get from {origin} to {destination}?",
            "what's the best way to {destination} from {origin} {mode}",
            "walk me through the route from {origin} to {destination}",
            "I'm at {origin} and need to reach {destination} {mode}",
            "I have to end up at {destination}; I'm setting off from {origin}",
        ),
    ),
    ToolSpec(
        "find_nearby_places",
        "travel",
        "Finds points of interest of one kind around coordinates.",
        (
            req(
                "location",
                "tuple",
                "Latitude and longitude.",
                Coordinates(),
                items={"type": "number"},
                minItems=2,
                maxItems=2,
            ),
            enum_req("category", "Kind of place.", _PLACE_KIND),
            opt(
                "radius_m",
                "integer",
                "Search radius in meters.",
                Integer(200, 5000, "{} meters", 100),
                default=1000,
            ),
        ),
        (
            "I'm standing at {location}, is there a {category} close by?",
            "find a {category} within {radius_m} of {location}",
            "what {category} options are around {location}",
            "where's the closest {category} to {location}?",
        ),
    ),
    ToolSpec(
        "get_distance",
        "travel",
        "Computes the straight-line distance between two cities.",
        (
            req("origin", "string", "First city.", CITY),
            req("destination", "string", "Second city.", CITY),
            enum_opt("unit", "Distance unit.", _DISTANCE_UNIT, default="km"),
        ),
        (
            "how far apart are {origin} and {destination}?",
            "as the crow flies, {origin} to {destination} in {unit}?",
            "how many {unit} separate {origin} from {destination}",
            "is {destination} far from {origin}?",
        ),
    ),
    ToolSpec(
        "book_train",
        "travel",
        "Books a train ticket between two cities on a date.",
        (
            req("from_city", "string", "City the train leaves from.", CITY),
            req("to_city", "string", "City the train arrives in.", CITY),
            req("travel_date", "string", "Day of travel, YYYY-MM-DD.", DAY),
            opt("seats", "integer", "Number of seats.", Integer(2, 6, "for {} people"), default=1),
        ),
        (
            "get me a train seat from {from_city} to {to_city} on {travel_date}",
            "I want to arrive in {to_city} by rail on {travel_date}, boarding in {from_city}",
            "rail tickets {seats}: {to_city} is the destination, {from_city} the start, {travel_date}",
            "on {travel_date} I'm taking the train back home to {to_city} from {from_city}",
            "book the {from_city} - {to_city} train for {travel_date}",
        ),
    ),
    ToolSpec(
        "rent_car",
        "travel",
        "Books a rental car for pick-up and return in one city.",
        (
            req("pickup_city", "string", "City of pick-up and return.", CITY),
            req("pickup_date", "string", "Pick-up day, YYYY-MM-DD.", _RENTAL[0]),
            req("return_date", "string", "Return day, YYYY-MM-DD.", _RENTAL[1]),
            enum_opt(
                "car_class",
                "Size of car.",
                choices(
                    ("compact", ("compact", "small")),
                    ("suv", "SUV"),
                    ("van", ("van", "minivan")),
                    ("luxury", ("luxury", "fancy")),
                ),
                default="compact",
            ),
        ),
        (
            "I need wheels in {pickup_city} from {pickup_date} until {return_date}",
            "sort out a {car_class} car for me in {pickup_city}, {pickup_date} to {return_date}",
            "get me a car at {pickup_city}, collecting {pickup_date} and dropping off {return_date}",
            "can I grab a {car_class} rental in {pickup_city} between {pickup_date} and {return_date}?",
        ),
    ),
)

__all__ = ["TOOLS"]
