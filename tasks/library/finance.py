"""Finance and payments: stock quotes, currency conversion, payments, account balances, loan
payments and transaction history.
"""

from __future__ import annotations

from tasks.library.common import CURRENCY, DAY, PERSON, choices, enum_opt, enum_req, opt, req
from tasks.library.ranges import date_range
from tasks.spec import ToolSpec
from tasks.value_generators import Decimal, Integer, Pick, Quoted, option

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

# A statement period: 1..92 days, the end never before the start.
_STATEMENT = date_range(1, 92, vague=("the start of that period", "the end of that period"))

TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "get_stock_price",
        "finance",
        "Returns the latest trading price of a listed stock.",
        (
            req("symbol", "string", "Ticker symbol, e.g. ACME.", _TICKER),
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
            opt("as_of_date", "string", "Date of the balance, YYYY-MM-DD; today when left out.", DAY),
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
        "transfer_between_accounts",
        "finance",
        "Moves money between two of the user's own accounts.",
        (
            enum_req("from_account", "Account the money leaves.", _ACCOUNT),
            enum_req("to_account", "Account the money arrives in.", _ACCOUNT),
            req("amount", "float", "Amount to move.", _AMOUNT),
        ),
        (
            "move {amount} out of {from_account} into {to_account}",
            "top up my {to_account} account with {amount} taken from {from_account}",
            "my {to_account} account needs {amount}; pull it from {from_account}",
            "shift {amount} over to {to_account}, out of the {from_account} account",
            "drain {amount} from {from_account} and park it in {to_account}",
        ),
    ),
    ToolSpec(
        "list_transactions",
        "finance",
        "Lists card and account transactions in a date range.",
        (
            req("start_date", "string", "First day, YYYY-MM-DD.", _STATEMENT[0]),
            req("end_date", "string", "Last day, YYYY-MM-DD.", _STATEMENT[1]),
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

__all__ = ["TOOLS"]
