"""Library tools: finance and payments, weather, travel and maps."""

from __future__ import annotations

from tasks.library.common import (
    CITY,
    CURRENCY,
    PERSON,
    STREET_ADDRESS,
    Coordinates,
    choices,
    enum_opt,
    enum_req,
    opt,
    req,
)
from tasks.spec import ToolSpec
from tasks.values import Date, Decimal, Integer, Pick, Quoted, option

_TICKER = Pick(
    tuple(
        option(symbol, say=(name, symbol))
        for symbol, name in (
            ("AAPL", "Apple"),
            ("MSFT", "Microsoft"),
            ("NVDA", "Nvidia"),
            ("TSLA", "Tesla"),
            ("AMZN", "Amazon"),
            ("GOOGL", "Alphabet"),
            ("META", "Meta"),
            ("NFLX", "Netflix"),
            ("KO", "Coca-Cola"),
            ("DIS", "Disney"),
            ("NKE", "Nike"),
            ("INTC", "Intel"),
            ("AMD", "AMD"),
            ("SBUX", "Starbucks"),
            ("PFE", "Pfizer"),
            ("UBER", "Uber"),
            ("SHOP", "Shopify"),
            ("SONY", "Sony"),
            ("BA", "Boeing"),
            ("JPM", "JPMorgan"),
        )
    ),
    vague=("that stock I bought", "my company's stock", "the ticker from the news"),
)
_AMOUNT = Decimal(5, 4000, 2, vague=("the usual amount", "what I owe", "enough"))
_ACCOUNT = choices(
    ("checking", ("checking", "everyday")),
    ("savings", "savings"),
    ("credit", ("credit card", "credit")),
    ("brokerage", ("brokerage", "investment")),
)
_SPEND = choices(
    ("groceries", ("groceries", "supermarket")),
    ("dining", ("eating out", "restaurant")),
    ("travel", "travel"),
    ("utilities", ("utility", "bills")),
    ("entertainment", "entertainment"),
)
_UNIT = choices(("celsius", ("Celsius", "metric")), ("fahrenheit", ("Fahrenheit", "imperial")))
_DAY = Date()

FINANCE = (
    ToolSpec(
        "get_stock_price",
        "finance",
        "Returns the latest trading price of a listed stock.",
        (
            req("symbol", "string", "Ticker symbol, e.g. AAPL.", _TICKER),
            enum_opt("currency", "Currency to quote the price in.", CURRENCY, default="USD"),
        ),
        (
            "how's {symbol} trading right now?",
            "what are {symbol} shares going for today",
            "price check on {symbol} please",
            "is {symbol} up or down? I want the latest quote",
            "how much is one {symbol} share worth in {currency} right now?",
        ),
    ),
    ToolSpec(
        "convert_currency",
        "finance",
        "Converts an amount of money from one currency to another.",
        (
            req("amount", "float", "Amount to convert.", _AMOUNT),
            enum_req("from_currency", "ISO code of the currency held.", CURRENCY),
            enum_req("to_currency", "ISO code of the currency wanted.", CURRENCY),
        ),
        (
            "how much is {amount} {from_currency} in {to_currency}?",
            "I've got {amount} {from_currency}, what would that come to in {to_currency}",
            "change {amount} {from_currency} into {to_currency} for me",
            "if I swap {amount} {from_currency} for {to_currency}, how much do I end up with?",
        ),
    ),
    ToolSpec(
        "send_payment",
        "finance",
        "Sends money to a person from the user's account.",
        (
            req("recipient", "string", "Full name of the person to pay.", PERSON),
            req("amount", "float", "Amount to send.", _AMOUNT),
            enum_opt("currency", "Currency of the amount.", CURRENCY, default="USD"),
            opt(
                "note",
                "string",
                "Message shown with the payment.",
                Quoted(
                    (
                        "dinner last night",
                        "rent share",
                        "concert tickets",
                        "thanks for the ride",
                        "gift from all of us",
                        "half of the taxi",
                    ),
                    ("", " :)", "!"),
                ),
            ),
        ),
        (
            "pay {recipient} back {amount} bucks",
            "send {amount} {currency} over to {recipient}",
            "I owe {recipient} {amount} dollars, transfer it with the note {note}",
            "can you move {amount} {currency} to {recipient}? label it {note}",
            "settle up with {recipient}: {amount} dollars",
        ),
        conflicts=("move_money",),
    ),
    ToolSpec(
        "get_account_balance",
        "finance",
        "Returns the current balance of one of the user's bank accounts.",
        (
            enum_req("account", "Which account to look at.", _ACCOUNT),
            opt("as_of_date", "string", "Date of the balance, YYYY-MM-DD; today when left out.", _DAY),
        ),
        (
            "how much is left in my {account} account?",
            "what was my {account} balance on {as_of_date}",
            "check how much money I have sitting in {account}",
            "did my {account} account go negative? give me the figure",
            "tell me what my {account} account held as of {as_of_date}",
        ),
    ),
    ToolSpec(
        "calculate_loan_payment",
        "finance",
        "Computes the fixed monthly payment of an amortised loan.",
        (
            req("principal", "float", "Amount borrowed.", Decimal(1000, 900000, 0, "${}")),
            req("annual_rate", "float", "Yearly interest rate in percent.", Decimal(1.5, 12.0, 2, "{}%")),
            req("years", "integer", "Length of the loan in years.", Integer(1, 30, "{} years")),
        ),
        (
            "if I borrow {principal} at {annual_rate} over {years}, what's the monthly hit?",
            "mortgage math: {principal}, {annual_rate} interest, {years}. what do I pay each month",
            "what would a {years} loan of {principal} at {annual_rate} cost me per month?",
            "the bank offers {annual_rate} on {principal} for {years} - how big are the monthly installments",
        ),
    ),
    ToolSpec(
        "list_transactions",
        "finance",
        "Lists card and account transactions in a date range.",
        (
            req("start_date", "string", "First day, YYYY-MM-DD.", _DAY),
            req("end_date", "string", "Last day, YYYY-MM-DD.", _DAY),
            enum_opt("category", "Only this spending category.", _SPEND),
            opt("min_amount", "float", "Only transactions at least this large.", Decimal(10, 500, 0, "${}")),
        ),
        (
            "what did I spend on {category} between {start_date} and {end_date}?",
            "show me my card activity from {start_date} to {end_date}",
            "pull up every purchase over {min_amount} from {start_date} until {end_date}",
            "list my {category} charges from {start_date} through {end_date}",
        ),
    ),
)

WEATHER = (
    ToolSpec(
        "get_current_weather",
        "weather",
        "Gets the weather conditions right now at a place.",
        (
            req("location", "string", "City and country, e.g. Paris, France.", CITY),
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
            req("location", "string", "City and country, e.g. Paris, France.", CITY),
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
            req("location", "string", "City and country, e.g. Paris, France.", CITY),
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
            req("location", "string", "City and country, e.g. Paris, France.", CITY),
            req("date", "string", "The day, YYYY-MM-DD.", _DAY),
        ),
        (
            "what was the weather like in {location} on {date}?",
            "how cold did it get in {location} on {date}",
            "did it rain in {location} back on {date}?",
            "I need the recorded conditions for {location} from {date}",
        ),
    ),
)

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

TRAVEL = (
    ToolSpec(
        "search_flights",
        "travel",
        "Searches scheduled flights between two cities on a date.",
        (
            req("origin", "string", "Departure city.", CITY),
            req("destination", "string", "Arrival city.", CITY),
            req("departure_date", "string", "Day of departure, YYYY-MM-DD.", _DAY),
            opt("passengers", "integer", "Number of travellers.", Integer(2, 6, "for {} people"), default=1),
            enum_opt("cabin", "Cabin class.", _CABIN, default="economy"),
        ),
        (
            "find me a way to fly from {origin} to {destination} on {departure_date}",
            "I need to get {origin} -> {destination} by plane, leaving {departure_date}, {passengers}",
            "any {cabin} seats from {origin} to {destination} on {departure_date}?",
            "get me out of {origin} and into {destination} on {departure_date}, air travel please",
        ),
    ),
    ToolSpec(
        "book_hotel",
        "travel",
        "Reserves a hotel room in a city.",
        (
            req("city", "string", "City of the stay.", CITY),
            req("check_in", "string", "Arrival day, YYYY-MM-DD.", _DAY),
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
        "rent_car",
        "travel",
        "Books a rental car for pick-up and return in one city.",
        (
            req("pickup_city", "string", "City of pick-up and return.", CITY),
            req("pickup_date", "string", "Pick-up day, YYYY-MM-DD.", _DAY),
            req("return_date", "string", "Return day, YYYY-MM-DD.", _DAY),
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

__all__ = ["FINANCE", "TRAVEL", "WEATHER"]
