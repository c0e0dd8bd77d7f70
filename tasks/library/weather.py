"""Weather: current conditions, forecasts, air quality and historical weather for a city."""

from __future__ import annotations

from tasks.library.common import CITY, DAY, choices, enum_opt, req
from tasks.spec import ToolSpec
from tasks.value_generators import Integer

_UNIT = choices(("celsius", ("Celsius", "metric")), ("fahrenheit", ("Fahrenheit", "imperial")))

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "get_current_weather",
        "weather",
        "Gets the weather conditions right now at a place.",
        (
            req("location", "string", "City and country, e.g. Quito, Ecuador.", CITY),
            enum_opt("unit", "Temperature unit.", _UNIT, default="celsius"),
        ),
        (
            "what's it like outside in {location} right now?",
            "is it raining in {location} at the moment?",
            "how warm is it in {location} currently? {unit} please",
            "I'm about to head out in {location}, what's the sky doing?",
            "current conditions for {location} in {unit}",
        ),
    ),
    ToolSpec(
        "get_weather_forecast",
        "weather",
        "Gets the day-by-day weather outlook for the coming days.",
        (
            req("location", "string", "City and country, e.g. Quito, Ecuador.", CITY),
            req("days", "integer", "Number of days ahead, 1 to 14.", Integer(2, 14, "{} days")),
            enum_opt("unit", "Temperature unit.", _UNIT, default="celsius"),
        ),
        (
            "will I need an umbrella in {location} over the next {days}?",
            "what's the outlook for {location} for the coming {days}",
            "give me a {days} outlook for {location} in {unit}",
            "planning a trip to {location} - what will it be like for the next {days}?",
        ),
    ),
    ToolSpec(
        "get_air_quality",
        "weather",
        "Reports air pollution levels at a place.",
        (
            req("location", "string", "City and country, e.g. Quito, Ecuador.", CITY),
            enum_opt(
                "pollutant",
                "Report only this pollutant.",
                choices(
                    ("pm25", ("fine particle", "PM2.5")),
                    ("pm10", "PM10"),
                    ("ozone", "ozone"),
                    ("no2", ("nitrogen dioxide", "NO2")),
                ),
            ),
        ),
        (
            "is the air safe to breathe in {location} today?",
            "how bad is the smog in {location}",
            "check the {pollutant} levels around {location}",
            "my asthma is acting up, how clean is the air in {location}?",
        ),
    ),
    ToolSpec(
        "get_historical_weather",
        "weather",
        "Gets the recorded weather at a place on a past date.",
        (
            req("location", "string", "City and country, e.g. Quito, Ecuador.", CITY),
            req("date", "string", "The day, YYYY-MM-DD.", DAY),
        ),
        (
            "what was the weather like in {location} on {date}?",
            "how cold did it get in {location} on {date}",
            "did it rain in {location} back on {date}?",
            "I need the recorded conditions for {location} from {date}",
        ),
    ),
)

__all__ = ["TOOLS"]
