"""Decoys (tasks.episodes.decoys): near duplicates planted in every generated environment but the
house, drawn from streams of their own (the rest of the state is what ``build`` drew), each told
apart from its model by one attribute; a first match by shape picks the wrong one."""

from __future__ import annotations

from random import Random

import pytest

from tasks.episodes.decoys import near_name, near_word
from tasks.episodes.environments import environment_class

SEEDS = [f"decoys-{index}".encode() for index in range(40)]


def _one_letter_apart(first: str, second: str) -> bool:
    if first == second:
        return False
    if len(first) == len(second):
        return sum(a != b for a, b in zip(first, second, strict=True)) == 1
    short, long = sorted((first, second), key=len)
    return len(long) == len(short) + 1 and any(long[:i] + long[i + 1 :] == short for i in range(len(long)))


def _base(name: str) -> str:
    return next((name.removesuffix(v) for v in (" Pro", " Mini", " XL", " Lite") if name.endswith(v)), name)


def test_near_names_are_one_letter_away_and_never_taken() -> None:
    rng = Random(5)
    for name in ("Maria Lopez", "Oscar Nguyen", "Li Wu", "Anna Smith"):
        for _ in range(30):
            near = near_name(name, rng, ["Maria Lopes"])
            assert near is not None and near.lower() not in ("maria lopes", name.lower())
            assert _one_letter_apart(name, near), (name, near)
    assert near_word("Lopez", rng) != "Lopez"


@pytest.mark.parametrize("name", ["bank", "shop", "mail_calendar", "workspace"])
def test_decoys_leave_the_drawn_state_as_it_was(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    cls = environment_class(name)
    planted = [cls(seed, 2) for seed in SEEDS[:10]]
    monkeypatch.setattr(cls, "decoys", ())
    plain = [cls(seed, 2) for seed in SEEDS[:10]]
    for with_decoys, without in zip(planted, plain, strict=True):
        assert with_decoys.fingerprint() != without.fingerprint()
        for attribute in without.observable:
            before, after = getattr(without, attribute), getattr(with_decoys, attribute)
            if isinstance(before, list) and attribute != "transactions":  # rows renumbered there
                assert all(item in after for item in before), attribute
            elif isinstance(before, dict):
                assert all(after[key] == value for key, value in before.items()), attribute


def test_every_bank_has_two_payees_one_letter_apart() -> None:
    for seed in SEEDS:
        names = [payee["name"] for payee in environment_class("bank")(seed, 1).payees]
        assert any(_one_letter_apart(a, b) for a in names for b in names), names


def test_shops_hold_siblings_and_a_search_for_one_can_list_the_other_first() -> None:
    shop = environment_class("shop")
    first_is_other = 0
    for seed in SEEDS:
        env = shop(seed, 1)
        names = [product["name"] for product in env.catalogue]
        bases = [_base(name) for name in names]
        assert any(bases.count(base) > 1 for base in bases), names
        for base in set(bases):
            if base in names and bases.count(base) > 1:  # "Acme kettle" beside "Acme kettle Mini"
                first_is_other += env.search_products(base)["results"][0]["name"] != base
    assert first_is_other >= 3


def test_mailboxes_hold_two_threads_with_one_subject_and_two_events_with_one_title() -> None:
    for seed in SEEDS:
        env = environment_class("mail_calendar")(seed, 1)
        threads: dict[str, set[tuple[str, str]]] = {}
        for mail in env.inbox:
            threads.setdefault(mail["subject"].removeprefix("Re: "), set()).add(
                (mail["thread"], mail["from"])
            )
        assert any(len({sender for _, sender in pairs}) > 1 and len(pairs) > 1 for pairs in threads.values())
        titles: dict[str, set[str]] = {}
        for event in env.events:
            titles.setdefault(event["title"], set()).add(event["date"])
        assert any(len(days) > 1 for days in titles.values())


def test_workspaces_hold_a_module_at_a_near_path_that_defines_nothing() -> None:
    for seed in SEEDS:
        env = environment_class("workspace")(seed, 1)
        defining = set(env.functions.values())
        twins = [
            path
            for path in env.files
            if path not in defining and any(_one_letter_apart(path, real) for real in defining)
        ]
        assert twins, sorted(env.files)
        assert all("def " not in env.files[twin] for twin in twins)
        assert all(env.committed[twin] == env.files[twin] for twin in twins)  # not an uncommitted change
