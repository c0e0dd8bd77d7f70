"""One source of truth for the categories: the single-turn registry (tasks.categories) and the
episodes' (tasks.episodes), read for order, titles and labels by the dashboard, the localnet
leaderboard and the validator's score state; and the scorer's own table
(scoring.category_rules.CATEGORY_RULES, as scoring never imports tasks) knows every scoring category
the registry names."""

from __future__ import annotations

import json
import subprocess
import sys

from scoring.category_rules import CATEGORY_RULES
from subnet import tasks_cli as cli
from subnet.localnet import leaderboard
from subnet.validator import dashboard, state
from tasks.catalog import (
    category_label,
    category_title,
    episode_category_names,
    order_categories,
    ordered_categories,
)
from tasks.categories import CATEGORIES
from tasks.episodes import EPISODE_CATEGORIES
from tasks.sources import BFCL_DEFAULT_FILES
from tests.support.imports import LIGHT_SCORING

# What the dashboard (title) and the localnet leaderboard (label) have shown for each category,
# in the order they list them: the registry must keep showing the same.
SHOWN = [
    ("simple", "simple", "simple"),
    ("multiple", "multiple", "multi"),
    ("parallel", "parallel", "par"),
    ("parallel_multiple", "parallel_multiple", "par-multi"),
    ("irrelevance", "irrelevance", "irrel"),
    ("missing_param", "missing_param", "miss-param"),
    ("multi_turn_base", "multi-turn", "mt-base"),
    ("multi_turn_miss_param", "multi-turn: missing param", "mt-miss-param"),
    ("multi_turn_miss_func", "multi-turn: missing function", "mt-miss-func"),
    ("multi_turn_long_context", "multi-turn: long context", "mt-long"),
    ("agent_step", "agent step", "agent-step"),
]


def test_every_scoring_category_the_tasks_name_is_in_the_scorers_table() -> None:
    for entry in CATEGORIES.values():
        assert entry.scoring_category in CATEGORY_RULES, entry.name
    # A BFCL task's category is its scoring category (tasks.model.Task.scoring_category).
    assert set(BFCL_DEFAULT_FILES) <= set(CATEGORY_RULES)


def test_single_turn_categories_come_first_then_the_episodes_each_in_registry_order() -> None:
    listed = ordered_categories()
    assert [info.name for info in listed] == [*CATEGORIES, *EPISODE_CATEGORIES]
    assert [info.episode for info in listed] == [False] * len(CATEGORIES) + [True] * len(EPISODE_CATEGORIES)
    assert not set(CATEGORIES) & set(EPISODE_CATEGORIES)
    for info in listed:
        entry = EPISODE_CATEGORIES[info.name] if info.episode else CATEGORIES[info.name]
        assert (info.title, info.label) == (entry.title, entry.label)


def test_titles_and_labels_are_those_shown_until_now() -> None:
    assert [(info.name, info.title, info.label) for info in ordered_categories()] == SHOWN
    for name, title, label in SHOWN:
        assert category_title(name) == title and category_label(name) == label
    assert len({label for _, _, label in SHOWN}) == len(SHOWN), "labels tell columns apart"
    assert len({title for _, title, _ in SHOWN}) == len(SHOWN)


def test_a_category_the_registries_do_not_know_shows_as_named() -> None:
    assert category_title("live_simple") == category_label("live_simple") == "live_simple"
    assert category_title("") == ""


def test_order_puts_unknown_single_turn_categories_after_the_known_ones_before_any_episode() -> None:
    names = ["agent_step", "multi_turn_base", "live_simple", "missing_param", "aaa", "simple", "simple"]
    expected = ["simple", "missing_param", "aaa", "live_simple", "multi_turn_base", "agent_step"]
    assert order_categories(names) == expected
    assert order_categories(iter(names)) == expected
    assert order_categories([]) == []
    every = [name for name, _, _ in SHOWN]
    assert order_categories(reversed(every)) == every


def test_the_dashboard_and_the_leaderboard_read_the_registry() -> None:
    assert dashboard.order_categories is order_categories
    assert dashboard.category_title is category_title
    shown = {name: label for name, _, label in SHOWN if name in EPISODE_CATEGORIES}
    # The leaderboard's legend explains the episodes' labels: "mt-*" and each other one by name.
    for label in shown.values():
        assert label.startswith("mt-") or label in leaderboard.LEGEND, label


def test_the_score_states_episode_categories_are_the_registrys() -> None:
    assert state.EPISODE_CATEGORIES == episode_category_names() == frozenset(EPISODE_CATEGORIES)
    assert isinstance(state.EPISODE_CATEGORIES, frozenset)


def test_the_score_state_imports_no_environment_nor_bfcl_nor_scorer() -> None:
    """subnet.validator.state reads the episodes' registry: that costs the task generator's own
    modules (and the scorer's light value types and schema tables), never an environment's
    simulation, BFCL's loader or package, the decoder or checker, or a database."""
    script = "import json, sys, subnet.validator.state; print(json.dumps(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    loaded = json.loads(result.stdout)
    heavy = [
        name
        for name in loaded
        if name.startswith(("tasks.episodes.environments.", "bfcl_eval", "sqlalchemy"))
        or (name.startswith("scoring") and name not in LIGHT_SCORING)
        or name in ("tasks.episodes.bfcl", "tasks.phrasing", "subnet.db")
    ]
    assert heavy == []


def test_the_cli_has_a_no_call_reply_for_each_no_call_category() -> None:
    no_call = {
        name for name, entry in CATEGORIES.items() if not CATEGORY_RULES[entry.scoring_category].expects_calls
    }
    assert set(cli._NO_CALL_REPLIES) == no_call
