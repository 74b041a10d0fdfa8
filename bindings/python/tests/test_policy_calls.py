"""Policy methods called from value expressions (FUNCTION($entityPolicy, "selector:", …)) and
sorted fetches with format specifiers, through the Python binding."""

from __future__ import annotations

import json
import os

import pytest

import cdmigrate
from cdmigrate._policy_methods import method_names

PEOPLE = {
    "name": "People",
    "versionIdentifier": "1",
    "entities": [
        {
            "name": "Person",
            "attributes": [{"name": "name", "type": "string"}, {"name": "age", "type": "integer64"}],
            "relationships": [{"name": "friend", "destination": "Person"}],
        }
    ],
}
COPIES = {
    "name": "People",
    "versionIdentifier": "2",
    "entities": [
        {
            "name": "Copy",
            "attributes": [
                {"name": "name", "type": "string"},
                {"name": "label", "type": "string"},
                {"name": "age", "type": "integer64"},
            ],
        }
    ],
}
# Z_PK order; primary-key, case-sensitive and case-insensitive orders all differ.
ROWS = [("bob", 30), ("Anna", 30), (None, 20), ("Cecil", 40), ("anna", 10)]


def mapping(label: str) -> str:
    return json.dumps(
        {
            "entityMappings": [
                {
                    "name": "PersonToCopy",
                    "sourceEntity": "Person",
                    "destinationEntity": "Copy",
                    "predicate": "TRUEPREDICATE",
                    "policy": "CopyPolicy",
                    "attributeMappings": {"name": "$source.name", "age": "$source.age", "label": label},
                }
            ]
        }
    )


@pytest.fixture
def source(tmp_path):
    path = str(tmp_path / "people.sqlite")
    with cdmigrate.Model.from_json(json.dumps(PEOPLE)) as model, cdmigrate.Store.create(model, path) as store:
        for name, age in ROWS:
            store.insert("Person", {"name": name, "age": age})
        store.save()
    return path


def migrate(tmp_path, source, label, policy, name="out.sqlite"):
    destination = str(tmp_path / name)
    with cdmigrate.Model.from_json(json.dumps(PEOPLE)) as v1, cdmigrate.Model.from_json(
        json.dumps(COPIES)
    ) as v2, cdmigrate.MappingModel.from_json(mapping(label)) as m, cdmigrate.Migration(v1, v2, m) as migration:
        migration.run(source, destination, policies={"CopyPolicy": policy})
    return destination


def labels(path):
    import sqlite3

    with sqlite3.connect(path) as db:
        return [row[0] for row in db.execute("SELECT ZLABEL FROM ZCOPY ORDER BY Z_PK")]


# -- policy methods ----------------------------------------------------------------------------


def test_method_names_follow_pyobjc_then_plain_then_snake_case():
    assert method_names("labelFor:age:") == ["labelFor_age_", "labelFor_age", "label_for_age"]
    assert method_names("shout") == ["shout"]
    assert method_names("initialOf:") == ["initialOf_", "initialOf", "initial_of"]


def test_entity_policy_calls_the_pyobjc_named_method_with_python_values(tmp_path, source):
    class CopyPolicy(cdmigrate.EntityMigrationPolicy):
        def __init__(self):
            self.calls = 0

        def labelFor_age_(self, name, age):
            self.calls += 1
            assert isinstance(age, int)
            return None if name is None else f"{name}/{age}"

    shared = CopyPolicy()
    out = migrate(tmp_path, source, 'FUNCTION($entityPolicy, "labelFor:age:", $source.name, $source.age)', shared)
    assert labels(out) == ["bob/30", "Anna/30", None, "Cecil/40", "anna/10"]
    assert shared.calls == 5


def test_entity_policy_accepts_plain_and_snake_case_names(tmp_path, source):
    class Plain(cdmigrate.EntityMigrationPolicy):
        def labelFor_age(self, name, age):
            return "plain"

    class Snake(cdmigrate.EntityMigrationPolicy):
        def label_for_age(self, name, age):
            return "snake"

    class Both(Snake):
        def labelFor_age_(self, name, age):
            return "pyobjc"

    expression = 'FUNCTION($entityPolicy, "labelFor:age:", $source.name, $source.age)'
    assert set(labels(migrate(tmp_path, source, expression, Plain, "plain.sqlite"))) == {"plain"}
    assert set(labels(migrate(tmp_path, source, expression, Snake, "snake.sqlite"))) == {"snake"}
    assert set(labels(migrate(tmp_path, source, expression, Both, "both.sqlite"))) == {"pyobjc"}


def test_a_method_keeps_state_of_its_policy_object_across_hooks(tmp_path, source):
    class CopyPolicy(cdmigrate.EntityMigrationPolicy):
        def begin_entity_mapping(self, mapping, manager):
            self.prefix = mapping.name

        def shout(self):
            return self.prefix + "!"

    assert set(labels(migrate(tmp_path, source, 'FUNCTION($entityPolicy, "shout")', CopyPolicy))) == {"PersonToCopy!"}


def test_an_unknown_selector_names_the_policy_and_the_selector(tmp_path, source):
    class CopyPolicy(cdmigrate.EntityMigrationPolicy):
        def _private(self):  # never called from an expression
            return "no"

    with pytest.raises(cdmigrate.ExpressionEvaluationError) as info:
        migrate(tmp_path, source, 'FUNCTION($entityPolicy, "nope:", $source.name)', CopyPolicy)
    assert "CopyPolicy" in str(info.value) and "'nope:'" in str(info.value)
    with pytest.raises(cdmigrate.ExpressionEvaluationError, match="'_private'"):
        migrate(tmp_path, source, 'FUNCTION($entityPolicy, "_private")', CopyPolicy, "private.sqlite")
    # Hooks of EntityMigrationPolicy are not methods for expressions.
    with pytest.raises(cdmigrate.ExpressionEvaluationError, match="end_entity_mapping"):
        migrate(tmp_path, source, 'FUNCTION($entityPolicy, "end_entity_mapping")', CopyPolicy, "hook.sqlite")
    assert not os.path.exists(tmp_path / "out.sqlite")


def test_an_exception_in_a_method_is_reraised_by_run(tmp_path, source):
    class CopyPolicy(cdmigrate.EntityMigrationPolicy):
        def labelFor_age_(self, name, age):
            raise LookupError(f"no label for {name}")

    with pytest.raises(LookupError, match="no label for bob"):
        migrate(tmp_path, source, 'FUNCTION($entityPolicy, "labelFor:age:", $source.name, $source.age)', CopyPolicy)


# -- sorted fetches and format specifiers ------------------------------------------------------


def names(instances):
    return [i["name"] for i in instances]


def run_checks(tmp_path, source, checks):
    seen = []

    class CopyPolicy(cdmigrate.EntityMigrationPolicy):
        def end_instance_creation(self, mapping, manager):
            checks(manager)
            seen.append(True)

    migrate(tmp_path, source, "$source.name", CopyPolicy)
    assert seen == [True]


def test_fetches_sort_in_sql_with_primary_key_order_by_default(tmp_path, source):
    def checks(manager):
        assert names(manager.fetch_source("Person")) == ["bob", "Anna", None, "Cecil", "anna"]
        assert names(manager.fetch_destination("Copy"))[-1] == "anna"  # lastObject is the last made
        assert names(manager.fetch_source("Person", sort=[("name", True)])) == [None, "Anna", "Cecil", "anna", "bob"]
        assert names(manager.fetch_source("Person", sort=["name"])) == [None, "Anna", "Cecil", "anna", "bob"]
        assert names(manager.fetch_source("Person", sort=[("name", False)])) == ["bob", "anna", "Cecil", "Anna", None]
        assert names(manager.fetch_source("Person", sort=[("age", False)])) == ["Cecil", "bob", "Anna", None, "anna"]
        assert names(manager.fetch_destination("Copy", sort=[("age", True), ("name", True)], limit=3)) == [
            "anna",
            None,
            "Anna",
        ]
        assert names(manager.fetch_source("Person", "age >= %d", 30, sort=[("name", False)])) == [
            "bob",
            "Cecil",
            "Anna",
        ]

    run_checks(tmp_path, source, checks)


def test_format_specifiers_substitute_as_object_arguments(tmp_path, source):
    def checks(manager):
        assert names(manager.fetch_source("Person", "%K > %d AND age < %f", "age", 25, 35.5, sort=["name"])) == [
            "Anna",
            "bob",
        ]
        assert manager.count_source("Person", "age == %i", 30) == 2
        assert names(manager.fetch_destination("Copy", "%K BEGINSWITH %@", "name", "a")) == ["anna"]

    run_checks(tmp_path, source, checks)


def test_argument_and_sort_errors_name_the_position(tmp_path, source):
    def checks(manager):
        with pytest.raises(
            cdmigrate.ExpressionSyntaxError, match=r"format argument 2 for '%d' \(only 1 given\)"
        ) as info:
            manager.fetch_source("Person", "%K > %d", "age")
        assert info.value.offset == 5
        assert info.value.byte_offset == 5
        predicate = "name != 'Ünïcødé ☃' AND %K > %d"
        with pytest.raises(cdmigrate.ExpressionSyntaxError, match="format argument 2") as info:
            manager.count_source("Person", predicate, "age")
        assert info.value.offset == predicate.index("%d")
        assert info.value.byte_offset == len(predicate[: predicate.index("%d")].encode("utf-8"))
        expression = "'ß☃' + +"
        with pytest.raises(cdmigrate.ExpressionSyntaxError) as info:
            manager.evaluate(expression)
        assert info.value.byte_offset == len(expression[: info.value.offset].encode("utf-8"))
        assert info.value.offset == len(expression) and info.value.byte_offset == len(expression) + 3
        with pytest.raises(
            cdmigrate.ExpressionSyntaxError, match="a number as format argument 2 for '%d', not string 'old'"
        ):
            manager.fetch_source("Person", "%K > %d", "age", "old")
        with pytest.raises(cdmigrate.ExpressionSyntaxError, match="format argument 2 of 2 is left over"):
            manager.fetch_source("Person", "name == %@", "x", 3)
        with pytest.raises(cdmigrate.InvalidArgumentError, match=r"sort descriptor 2 \('nmae'\).*did you mean 'name'"):
            manager.fetch_source("Person", sort=["age", ("nmae", True)])
        with pytest.raises(cdmigrate.InvalidArgumentError, match="'friend' is a relationship"):
            manager.fetch_source("Person", sort=["friend"])
        with pytest.raises(TypeError, match="sort descriptor 1 must be a key or a"):
            manager.fetch_source("Person", sort=[("name", "up")])
        with pytest.raises(TypeError, match="list of descriptors"):
            manager.fetch_source("Person", sort="name")

    run_checks(tmp_path, source, checks)
