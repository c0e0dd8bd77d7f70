"""One table of schema type names (scoring.schema) and its views, read by the other layers."""

from __future__ import annotations

from scoring.schema import JSON_SCHEMA_TYPES, SCHEMA_TYPE_ALIASES, SCHEMA_TYPES
from tests.support.imports import LIGHT_SCORING, modules_loaded_by


def test_json_schema_types_are_the_tables_json_names_with_ints_for_numbers() -> None:
    assert {
        "string": (str,),
        "integer": (int,),
        "number": (int, float),
        "boolean": (bool,),
        "array": (list,),
        "object": (dict,),
    } == JSON_SCHEMA_TYPES
    assert set(JSON_SCHEMA_TYPES) == {
        name for name, py_type in SCHEMA_TYPES.items() if py_type is not None
    } - set(SCHEMA_TYPE_ALIASES)


def test_every_alias_names_a_json_schema_type_of_the_same_python_type() -> None:
    for alias, name in SCHEMA_TYPE_ALIASES.items():
        assert name in JSON_SCHEMA_TYPES, alias
        if alias in SCHEMA_TYPES:  # BFCL's own names: the scorer types them alike
            assert SCHEMA_TYPES[alias] is SCHEMA_TYPES[name], alias


def test_a_bfcl_schema_is_written_with_the_one_alias_table() -> None:
    from tasks.files import openai_schema

    schema = {
        "type": "dict",
        "properties": {alias: {"type": alias} for alias in SCHEMA_TYPE_ALIASES} | {"x": {"type": "any"}},
    }
    written = openai_schema(schema)
    assert written["type"] == "object"
    assert {key: prop.get("type") for key, prop in written["properties"].items()} == {
        **SCHEMA_TYPE_ALIASES,
        "x": None,
    }


def scoring_modules_loaded_by(statement: str) -> list[str]:
    return [name for name in modules_loaded_by(statement) if name.split(".")[0] == "scoring"]


def test_the_scoring_package_is_light() -> None:
    assert set(scoring_modules_loaded_by("import scoring")) == LIGHT_SCORING


def test_task_generation_imports_no_scorer() -> None:
    """The tasks read the schema tables (light) at the top of their modules: importing the
    generators costs no decoder nor checker."""
    assert set(scoring_modules_loaded_by("import tasks, tasks.episodes")) <= LIGHT_SCORING
