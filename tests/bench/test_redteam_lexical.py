"""bench/redteam_kit/lexical: the model-free lexical miner keeps working on today's tasks.

It is the red team's measure of issue 27 (tasks only a model can solve): these tests keep it from
rotting as the generator changes. They pin that it runs and beats refusing everything on template
text; how far it should fall is the generator's business, measured by bench/integrity.py.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest

from tasks import CATEGORIES, Task, generate, variant
from tasks.library import tools as library_tools
from tasks.spec import openai_tool

NO_CALL = {"irrelevance", "missing_param"}


@pytest.fixture(scope="module")
def redteam(load_bench: Callable[[str], ModuleType]) -> ModuleType:
    return load_bench("redteam")


@pytest.fixture(scope="module")
def round_tasks() -> list[Task]:
    return generate(seed="lexical-test", n=240, mix=dict.fromkeys(CATEGORIES, 1.0))


def test_the_lexical_miner_is_registered(redteam: ModuleType) -> None:
    assert "lexical" in redteam._MINERS and redteam.LexicalMiner in redteam._MINERS.values()


def test_it_beats_never_calling_on_template_text(redteam: ModuleType, round_tasks: list[Task]) -> None:
    lexical = redteam.evaluate_miner(redteam.LexicalMiner(), round_tasks, "lexical-test")
    never = redteam.evaluate_miner(redteam.NeverCalls(), round_tasks, "lexical-test")
    # Only "above never-call": the generator is meant to make it weaker, not to break this test.
    assert sum(v for v, _ in lexical.values()) > sum(v for v, _ in never.values())
    assert sum(lexical[c][0] for c in CATEGORIES if c not in NO_CALL) > 0


def test_it_answers_in_the_offered_names(redteam: ModuleType, round_tasks: list[Task]) -> None:
    miner = redteam.LexicalMiner()
    for task in round_tasks[:60]:
        shown = variant(task, "names")
        offered = {tool["function"]["name"]: tool["function"] for tool in shown.tools}
        for name, arguments in miner.answer(shown.messages, shown.tools):
            assert name in offered
            assert set(arguments) <= set(offered[name]["parameters"]["properties"])


def test_no_text_or_no_tools_is_no_call(redteam: ModuleType) -> None:
    tool = openai_tool(library_tools()[0])
    miner = redteam.LexicalMiner()
    assert miner.answer([{"role": "user", "content": ""}], [tool]) == []
    assert miner.answer([{"role": "user", "content": "what's the weather in Paris, France?"}], []) == []
    assert miner.answer([], [tool]) == []


@pytest.fixture(scope="module")
def lexical(lexical_kit: Any) -> Any:
    return lexical_kit


@pytest.mark.parametrize(
    ("said", "written"),
    [
        ("see a cardiologist on the Monday after next", "see a cardiologist on 2027-02-22"),
        ("put it in this Sunday coming at 4", "put it in 2027-02-14 at 4"),
        ("in ten days", "2027-02-19"),
        ("two weeks from now", "2027-02-23"),
        ("the third of next month", "2027-03-03"),
        ('text "see you tomorrow" to her', 'text "see you tomorrow" to her'),  # quoted: as said
    ],
)
def test_dates_relative_to_the_stated_today(lexical: Any, said: str, written: str) -> None:
    assert lexical._resolved_dates(said, dt.date(2027, 2, 9)) == written  # a Tuesday


@pytest.mark.parametrize(
    ("said", "unit", "value"),
    [
        ("two hours and a half", "minute", 150),
        ("a quarter of an hour", "minute", 15),
        ("a fortnight", "day", 14),
    ],
)
def test_lengths_of_time_in_another_unit(lexical: Any, said: str, unit: str, value: int) -> None:
    assert [f.value for f in lexical._durations(said, unit)] == [value]


def test_worked_out_values_and_references(lexical: Any) -> None:
    assert lexical._worked_out("move 122.83 plus 52.23 USD") == "move 175.06 USD"
    assert lexical._worked_out("a table for me and three friends") == "a table for 4"
    assert lexical._worked_out("7x^2 plus 26x plus 4") == "7x^2 plus 26x plus 4"  # template text stays
    text = "my sister Ana lives in Porto, Portugal. (my cousin Omar lives in Lyon, France)"
    text += " fly from where my sister lives"
    assert lexical._resolved_references(text).endswith("fly from Porto, Portugal")
    assert "Lyon" not in lexical._resolved_references(text)  # the decoy relation's value is gone
    anchored = lexical._resolved_anchors(
        "the car service got moved to 2026-04-09 - book the day after the car service"
    )
    assert anchored.endswith("book 2026-04-10")
    assert lexical._resolved_anchors("at half past seven in the evening") == "at 19:30"


def test_values_taken_back_and_example_shapes(lexical: Any) -> None:
    text = "price check on NKE please (not NFLX, that was the old plan)"
    assert lexical._taken_back(text, text.index("NFLX"), text.index("NFLX") + 4)
    assert not lexical._taken_back(text, text.index("NKE"), text.index("NKE") + 3)
    for text in ("Note: 3207.41 doesn't apply here.", "For context, scrap 3207.41."):  # plain English
        assert lexical._taken_back(text, text.index("3207.41"), text.index("3207.41") + 7)
    shaped = lexical._shape_of("Sample reference, e.g. SMP-K48213.")
    assert [f.value for f in lexical._finder(shaped)("log SMP-A12345 and SMP-12345")] == ["SMP-A12345"]


@pytest.fixture
def choice_tables(kit: Callable[[str], ModuleType], monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """redteam_kit.lexical.choices reading hand-written tables shaped like the choice devices'."""
    choices = kit("lexical.choices")
    scale = SimpleNamespace(
        facts=("{x} got {n} votes",), low=("the least popular one",), high=("the most popular one",)
    )
    tables = {
        "eliminated": SimpleNamespace(
            _KEPT=("nobody objected to {x}",),
            _OUT=("{x} fell through",),
            _EXCEPT=("{others} fell through, {x} didn't",),
            _REFS=("whichever is left",),
        ),
        "attributed": SimpleNamespace(
            _ROLES=(("is covering the bill", "the person paying"), ("is behind the wheel", "whoever drives")),
            _WANTS=("wants {x}", "prefers {x}"),
            _FACTS=("{name}, who {role}, {want}",),
            _NOT=("{name} is not the one who {role}",),
            _REFS=("{ref}'s choice",),
        ),
        "sequence": SimpleNamespace(
            _MARKERS=(("this morning", "around lunchtime", "an hour ago"),),
            _PICKED=("{when} I went with {x}",),
            _FIRST=("my opening choice",),
            _LAST=("my latest choice",),
            _MIDDLE=("the one in between",),
        ),
        "compared": SimpleNamespace(_SCALES=(scale,), _PLACES=None),
        "revised": SimpleNamespace(
            _FACTS=("{name}, who {role}, originally wanted {a} but has since switched to {b}",),
            _FIRST=("what {ref} wanted originally",),
            _LAST=("what {ref} wants now",),
        ),
    }
    monkeypatch.setattr(choices, "_module", tables.get)
    choices._tables.cache_clear()
    choices._role_of_ref.cache_clear()
    yield choices
    choices._tables.cache_clear()
    choices._role_of_ref.cache_clear()


@pytest.mark.parametrize(
    ("said", "value", "decoys"),
    [
        (
            "Lisbon, Portugal fell through; book whichever is left. nobody objected to Porto",
            "Porto",
            ["Lisbon"],
        ),
        (
            "Dana, who is covering the bill, wants CAR-1234; Omar, who is behind the wheel, prefers CAR-9876."
            " check the person paying's choice",
            "CAR-1234",
            ["CAR-9876"],
        ),
        (
            "an hour ago I went with ana.silva@lumen.dev. invite my opening choice (this morning I went with"
            " bo.li@lumen.dev), around lunchtime I went with cy.ray@lumen.dev",
            "bo.li@lumen.dev",
            ["ana.silva", "cy.ray"],
        ),
        (
            "tools/a.yaml got 37 votes, scripts/b.json got 8 votes, so edit the least popular one",
            "scripts/b.json",
            [],
        ),
        (
            "Dana, who is covering the bill, originally wanted Lisbon but has since switched to Faro;"
            " Omar, who is behind the wheel, originally wanted Porto but has since switched to Braga."
            " fly to what the person paying wanted originally",
            "Lisbon",
            ["Faro", "Porto", "Braga"],
        ),
        ("Lisbon and Faro fell through, Porto didn't. fly to whichever is left", "fly to Porto", ["Faro"]),
        (
            "a.yaml got two dozen votes, b.json got nine votes, so edit the most popular one",
            "a.yaml",
            ["b.json"],
        ),
        (
            "Kako prefers 62 hours. mute it for the person paying's choice. Ausa is not the one who is"
            " covering the bill; Ausa wants 33 hours",
            "for 62 hours",
            ["33"],
        ),
        (
            "an hour ago I went with a run. log my opening choice: this morning I went with a bike ride",
            "log a bike ride",
            ["a run"],
        ),
    ],
)
def test_a_choice_among_written_candidates_is_read_with_the_devices_tables(
    choice_tables: ModuleType, said: str, value: str, decoys: list[str]
) -> None:
    resolved = choice_tables.resolved_choices(said)
    assert value in resolved
    assert not [decoy for decoy in decoys if decoy in resolved]
    assert choice_tables.resolved_choices("nothing to choose here") == "nothing to choose here"


@pytest.fixture
def aside_tables(kit: Callable[[str], ModuleType], monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    """redteam_kit.lexical.asides reading hand-written tables shaped like tasks/devices/aside's
    and tasks/distractors' (a reminder kind)."""
    asides = kit("lexical.asides")
    event = SimpleNamespace(states=("{subj} flies in on {x}",), refers=("the day {subj} lands",))
    place = SimpleNamespace(states=("{subj} grew up in {x}",), refers=("{subj}'s hometown",))
    aside = SimpleNamespace(SUBJECTS=("my sister", "my cousin"), EVENTS={"date": (event,), "place": (place,)})
    kind = SimpleNamespace(
        name="reminder",
        asks=("remind me later to deal with this: {request}",),
        keeps=("remind me", "reminder"),
        derive=lambda gold: SimpleNamespace(
            name=f"remind_to_{gold.name}",
            description=f"Creates a reminder to do this later: {gold.description}",
        ),
    )
    library = SimpleNamespace(
        tools=lambda: [SimpleNamespace(name="book_table", description="Books a table.")]
    )
    modules = {
        "tasks.devices.aside": aside,
        "tasks.distractors": SimpleNamespace(KINDS=(kind,)),
        "tasks.library": library,
    }
    monkeypatch.setattr(asides, "_module", modules.get)
    asides._events.cache_clear()
    asides._kinds.cache_clear()
    asides._keeps.cache_clear()
    yield asides
    asides._events.cache_clear()
    asides._kinds.cache_clear()
    asides._keeps.cache_clear()


def test_a_value_stated_about_someone_else_is_read_with_the_devices_tables(aside_tables: ModuleType) -> None:
    said = (
        "my sister flies in on May 12, 2026. my cousin flies in on May 3, 2026. book the day my sister lands"
    )
    resolved, missing = aside_tables.resolved_events(said)
    assert not missing and "May 12, 2026" in resolved and "May 3" not in resolved
    resolved, missing = aside_tables.resolved_events(
        "my sister grew up in Porto, Portugal; go to my sister's hometown"
    )
    assert not missing and resolved.endswith("go to Porto, Portugal")
    # The event referred to is not stated (only another person's is): the request lacks the value.
    assert aside_tables.resolved_events("my cousin flies in on May 3, 2026. book the day my sister lands")[1]


def test_a_request_for_a_lookalikes_action_is_told_by_the_kinds_phrases(aside_tables: ModuleType) -> None:
    (signature,) = aside_tables.asked_kinds("remind me later to deal with this: book a table for two")
    assert "remind" in signature
    assert aside_tables.kind_words(frozenset({"remind", "creat", "later", "book"}), signature)
    assert not aside_tables.kind_words(frozenset({"book", "table"}), signature)
    assert aside_tables.asked_kinds('text Ana "remind me to call" and book a table') == []  # quoted: hers


def test_a_date_shifted_from_a_dated_event_is_worked_out_and_the_decoy_blanked(
    kit: Callable[[str], ModuleType],
) -> None:
    choices = kit("lexical.choices")
    said = (
        "(the vet appointment is on 2027-04-16) my sister's wedding is on Apr 12 2027 - did it rain"
        " on one week after my sister's wedding?"
    )
    assert choices.resolved_anchored(said) == "((noted)) (noted) - did it rain on 2027-04-19?"
    said = "see a cardiologist five days past the team offsite - the team offsite falls on October 8, 2026!"
    assert choices.resolved_anchored(said) == "see a cardiologist 2026-10-13 - (noted)!"


def test_an_identifier_picked_by_what_its_thing_is_for_is_read_with_the_labelled_tables(
    kit: Callable[[str], ModuleType],
) -> None:
    choices = kit("lexical.choices")
    said = (
        "the red wool scarf is DRN-261 - film on the one for the garden - DRN-138 is the white hedge trimmer"
    )
    assert choices.resolved_labelled(said) == "(noted) - film on DRN-138 - (noted)"


def test_a_lookalike_of_the_asked_kind_made_from_another_action_is_no_answer(redteam: ModuleType) -> None:
    from random import Random

    from tasks.builtin import instantiate
    from tasks.distractors.kinds.reminder import KIND

    specs = {spec.name: spec for spec in library_tools()}
    hotel, email = specs["book_hotel"], next(s for s in specs.values() if "email" in s.name)
    said = "remind me later to deal with this: " + instantiate(hotel, Random(3)).text
    messages = [{"role": "user", "content": said}]
    miner = redteam.LexicalMiner()
    own, other = KIND.derive(hotel), KIND.derive(email)
    assert own is not None and other is not None
    answer = miner.answer(messages, [openai_tool(hotel), openai_tool(own)])
    assert [name for name, _ in answer] == [own.name]
    # Only a reminder made from another action is offered beside the action itself: no call.
    assert miner.answer(messages, [openai_tool(hotel), openai_tool(other)]) == []


# Choices read by general English cues (redteam_kit.lexical.generic): facts a model reworded, so
# that no frame of the generator's tables matches them.


def _cities(text: str) -> list[Any]:
    import re

    words = re.finditer(r"\b(?:Lisbon|Porto|Faro|Braga)\b", text)
    return [SimpleNamespace(start=m.start(), end=m.end(), value=m.group(), strength=2.0) for m in words]


@pytest.mark.parametrize(
    ("clause", "sign"),
    [
        ("is now off the table", -1),
        ("has been dropepd", -1),  # a typo of "dropped"
        ("we scrapped", -1),
        ("nobody objected to", 1),
        ("I can't see a problem with", 1),
        ("still looks fine", 1),
        ("didn't", None),  # elliptic: the clause before says what
    ],
)
def test_a_clause_keeps_or_rules_out_its_value_by_general_words(
    kit: Any, clause: str, sign: int | None
) -> None:
    assert kit("lexical.generic").polarity(clause) == sign


def test_candidates_are_picked_by_polarity_time_role_and_figure(kit: Any) -> None:
    generic = kit("lexical.generic")
    found = generic.candidates(
        "We've scrapped Lisbon. Nobody had an issue with Porto. Faro is a bust.", _cities, []
    )
    assert generic.pick_eliminated(found).said == "Porto"
    found = generic.candidates("Lisbon fell apart on us, Porto didn't.", _cities, [])
    assert generic.pick_eliminated(found).said == "Porto"
    said = "Back in the spring we chose Faro. A fortnight back I moved to Braga. Just now I went for Porto."
    found = generic.candidates(said, _cities, [])
    assert [generic.pick_in_time(found, want).said for want in ("first", "middle", "last")] == [
        "Faro",
        "Braga",
        "Porto",
    ]
    said = "Dana, who is paying for everything, would like Lisbon. Ezra is driving and fancies Porto."
    role = generic._role_stems("is covering the bill") | generic._role_stems("the person paying")
    assert generic.pick_by_role(generic.candidates(said, _cities, []), role, said).said == "Lisbon"
    found = generic.candidates("Braga got a dozen votes. Faro got 7 votes.", _cities, [])
    assert generic.pick_by_figure(found, "high").said == "Braga"
    assert generic.pick_by_figure(found, "low").said == "Faro"


def test_an_event_about_someone_is_matched_by_its_words(kit: Any) -> None:
    generic = kit("lexical.generic")
    event = next(e for e, states, _ in generic._event_words()["date"] if "fly" in states)
    said = "My sister is flying in on 2026-05-12. My sister has jury duty on 2026-05-20. Book it then."
    value, spans = generic.stated_event(said, "my sister", event, (len(said) - 12, len(said)))
    assert value == "2026-05-12" and len(spans) == 2
    value, _ = generic.stated_event(
        "My sister has jury duty on 2026-05-20. Book.", "my sister", event, (40, 44)
    )
    assert value is None  # only another event is dated: the request lacks the value


@pytest.mark.parametrize(
    ("said", "device", "want"),
    [
        ("room name should be the one with the fewest grumbles.", "compared", "low"),
        ("what to do: my newest choice / room", "sequence", "last"),
        ("the command line: the fisrt pick.", "sequence", "first"),  # a typo of "first"
        ("litres: the one I finally went with.", "sequence", "last"),
        ("the command line: what the person paying would rather have, kill", "attributed", None),
        ("the one the customer switched to for the name", "revised", "last"),
        ("warehouse code should be the one still in the running", None, None),  # not said: no guess
    ],
)
def test_a_reference_said_in_other_words_is_read_by_its_cue_words(
    kit: Any, said: str, device: str | None, want: str | None
) -> None:
    generic = kit("lexical.generic")
    found = generic.refs_in(said)
    if device is None:
        assert all(r.device != "sequence" for r in found)
        return
    assert [(r.device, r.want) for r in found] == [(device, want)]


def test_a_reference_to_an_event_in_other_words_finds_its_reworded_fact(kit: Any) -> None:
    asides = kit("lexical.asides")
    said = (
        "Oh, and 2027-08-08 is the surveyor's move-in date. The surveyor is called for jury duty on"
        " June 23, 2027. Book it for the date the surveyor gets the keys."
    )
    resolved, missing = asides.resolved_events(said)
    assert not missing and resolved.endswith("Book it for 2027-08-08.") and "June 23" not in resolved


def test_context_said_before_the_request_is_no_call_of_its_own(redteam: ModuleType) -> None:
    specs = {spec.name: spec for spec in library_tools()}
    hotel = specs["book_hotel"]
    said = (
        "Also: Lisbon, Portugal is off the list. Looking to reserve a hotel room in a city. the details:"
        " city of the stay: Porto, Portugal / arrival day 2026-05-04 / number of nights 3."
    )
    messages = [{"role": "user", "content": said}]
    miner = redteam.LexicalMiner()
    answer = miner.answer(messages, [openai_tool(hotel)])
    assert [(name, args.get("city")) for name, args in answer] == [("book_hotel", "Porto, Portugal")]
    miner.LEADING = False  # as before: the leading sentence read as a call that lacks values
    assert miner.answer(messages, [openai_tool(hotel)]) == []


def test_a_request_worded_as_a_lookalikes_description_asks_for_that_kind(kit: Any) -> None:
    asides = kit("lexical.asides")
    said = (
        "Let's check only whether a request of this kind, one that reports where a shipment is, would be"
        " accepted with these details; it does not carry it out or return its result."
    )
    (signature,) = asides.asked_kinds(said)
    assert {"check", "whether", "accept"} <= signature
    assert asides.asked_kinds("Let's report where a shipment is: 1Z4959508356.") == []


def test_a_parameter_named_after_its_value_takes_it(redteam: ModuleType) -> None:
    specs = {spec.name: spec for spec in library_tools()}
    convert = next(s for s in specs.values() if {p.name for p in s.params} >= {"from_scale", "to_scale"})
    said = (
        "What I need: convert a temperature between scales. here is what matters: the temperature should"
        " be -9.5 - fahrenheit for the scale wanted - scale of the value Celsius."
    )
    ((_, arguments),) = redteam.LexicalMiner().answer(
        [{"role": "user", "content": said}], [openai_tool(convert)]
    )
    assert (arguments["from_scale"], arguments["to_scale"]) == ("celsius", "fahrenheit")


def test_a_date_shifted_from_an_event_in_other_words_is_worked_out(kit: Any) -> None:
    choices = kit("lexical.choices")
    said = (
        "Just so you know, 21 December 2026 is the date of the vet appointment - and the plumber's visit was"
        " rescheduled to December 14, 2026. Book it for five days following the vet appointment."
    )
    out = choices.resolved_anchored_worded(said)
    assert out.endswith("Book it for 2026-12-26.") and "December 14" not in out


def test_a_persons_role_said_in_another_piece_of_the_sentence_still_counts(kit: Any) -> None:
    import re

    generic = kit("lexical.generic")

    def litres(text: str) -> list[Any]:
        found = re.finditer(r"\b\d+ litres\b", text)
        return [SimpleNamespace(start=m.start(), end=m.end(), value=m.group(), strength=2.0) for m in found]

    said = (
        "There's Lucas, who joined us this week - 25 litres is what they're after. There's Elarito, who"
        " will present it - 11 litres is what they're after."
    )
    role = generic._role_stems("will present it") | generic._role_stems("the presenter")
    assert generic.pick_by_role(generic.candidates(said, litres, []), role, said).said == "11 litres"


@pytest.mark.parametrize(
    "said",
    [
        "For context, August 8, 2027 is off the list.",
        "19 March 2026 is out of the picture.",
        "SKU-616669 belongs to another plan.",
        "unlike 2026-03-19",
    ],
)
def test_a_value_set_aside_in_general_english_is_taken_back(kit: Any, said: str) -> None:
    finders = kit("lexical.finders")
    import re

    m = re.search(r"August 8, 2027|19 March 2026|SKU-616669|2026-03-19", said)
    assert m is not None and finders._taken_back(said, m.start(), m.end())


def test_an_elliptic_contrast_keeps_and_an_unknown_age_sits_by_text_order(kit: Any) -> None:
    import re

    generic = kit("lexical.generic")

    def doses(text: str) -> list[Any]:
        found = re.finditer(r"\b\d+ mg\b|\b\d+ [A-Z][a-z]+ (?:Street|Lane)\b", text)
        return [SimpleNamespace(start=m.start(), end=m.end(), value=m.group(), strength=2.0) for m in found]

    found = generic.candidates("880 mg and 265 mg didn't work out, but 475 mg did.", doses, [])
    assert generic.pick_eliminated(found).said == "475 mg"
    said = "Hasa began with 211 Elm Street and then switched over to 120 Maple Street."
    found = generic.candidates(said, doses, [])
    assert generic.pick_in_time(found, "last").said == "120 Maple Street"
    assert generic.pick_in_time(found, "first").said == "211 Elm Street"


def test_a_number_word_is_no_typo_and_a_quote_is_one_sentence(kit: Any) -> None:
    generic = kit("lexical.generic")
    assert generic.age("and eight days ago the pick was") == 8 * 24.0  # not "night days ago"
    said = 'Ingrid went from "Working from home - ping if urgent" to "In meetings". Book it.'
    assert len(generic.sentences(said)) == 2
