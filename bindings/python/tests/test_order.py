"""The order of things from Python: an ordered to-many keeps the source's order through Xcode's
generated expressions (with the members' mapping first, and with a Python policy calling the
default), and several mapping models for one step are named, in the order they run, in the
model set's and the plan's warnings."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest

import cdmigrate


def model(version: int) -> dict:
    note = [{"name": "note", "type": "string", "optional": True}] if version > 1 else []
    return {
        "name": "Lists",
        "entities": [
            {
                "name": "List",
                "attributes": [{"name": "name", "type": "string"}, *note],
                "relationships": [
                    {"name": "items", "destination": "Item", "inverse": "list", "toMany": True, "ordered": True},
                    {"name": "tags", "destination": "Tag", "inverse": "lists", "toMany": True, "ordered": True},
                ],
            },
            {
                "name": "Item",
                "attributes": [{"name": "name", "type": "string"}],
                "relationships": [{"name": "list", "destination": "List", "inverse": "items"}],
            },
            {
                "name": "Tag",
                "attributes": [{"name": "name", "type": "string"}],
                "relationships": [
                    {"name": "lists", "destination": "List", "inverse": "tags", "toMany": True, "ordered": True}
                ],
            },
        ],
    }


def look_up(mapping: str, key: str) -> str:
    return f'FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "{mapping}", {key})'


def mapping(policy: str | None = None) -> dict:
    """Xcode's mapping model with the members' mappings first (the order that used to lose the lists' order)."""
    extra = {"policy": policy} if policy else {}
    return {
        "sourceModel": "v1",
        "destinationModel": "v2",
        "entityMappings": [
            dict(
                name="ItemToItem",
                sourceEntity="Item",
                destinationEntity="Item",
                predicate="TRUEPREDICATE",
                attributeMappings={"name": "$source.name"},
                relationshipMappings={"list": look_up("ListToList", "$source.list")},
                **extra,
            ),
            dict(
                name="TagToTag",
                sourceEntity="Tag",
                destinationEntity="Tag",
                predicate="TRUEPREDICATE",
                attributeMappings={"name": "$source.name"},
                relationshipMappings={"lists": look_up("ListToList", "$source.lists")},
                **extra,
            ),
            dict(
                name="ListToList",
                sourceEntity="List",
                destinationEntity="List",
                predicate="TRUEPREDICATE",
                attributeMappings={"name": "$source.name"},
                relationshipMappings={
                    "items": look_up("ItemToItem", "$source.items"),
                    "tags": look_up("TagToTag", "$source.tags"),
                },
                **extra,
            ),
        ],
    }


ITEMS = ["I2", "I0", "I3", "I1"]
TAGS = ["T2", "T0", "T1"]


@pytest.fixture
def source(tmp_path):
    path = str(tmp_path / "lists.sqlite")
    with cdmigrate.Model.from_json(json.dumps(model(1))) as v1, cdmigrate.Store.create(v1, path) as store:
        lst = store.insert("List", {"name": "L0"})
        items = {f"I{i}": store.insert("Item", {"name": f"I{i}"}) for i in range(4)}
        tags = {f"T{i}": store.insert("Tag", {"name": f"T{i}"}) for i in range(3)}
        lst.add("items", *[items[name] for name in ITEMS])
        lst.add("tags", *[tags[name] for name in TAGS])
        store.save()
    return path


def lists(path):
    """L0's items and tags, in the order the store keeps them (its ordering columns: docs/store-layout.md)."""
    with sqlite3.connect(path) as db:
        items = [
            r[0]
            for r in db.execute("SELECT i.ZNAME FROM ZITEM i JOIN ZLIST l ON l.Z_PK = i.ZLIST ORDER BY i.Z_FOK_LIST")
        ]
        rows = db.execute(
            "SELECT t.ZNAME, j.Z_FOK_2LISTS FROM Z_2TAGS j JOIN ZTAG t ON t.Z_PK = j.Z_3TAGS ORDER BY j.Z_FOK_2LISTS"
        ).fetchall()
        assert len({place for _, place in rows}) == len(rows), rows  # places that decide the order
        tags = [name for name, _ in rows]
    return items, tags


def migrate(tmp_path, source, policies=None, policy_name=None, name="out.sqlite"):
    destination = str(tmp_path / name)
    with cdmigrate.Model.from_json(json.dumps(model(1))) as v1, cdmigrate.Model.from_json(
        json.dumps(model(2))
    ) as v2, cdmigrate.MappingModel.from_json(json.dumps(mapping(policy_name))) as m, cdmigrate.Migration(
        v1, v2, m
    ) as migration:
        migration.run(source, destination, policies=policies or {})
    return destination


def test_the_source_holds_the_lists_in_an_order_unlike_the_keys(source):
    assert lists(source) == (ITEMS, TAGS)


def test_generated_expressions_keep_the_source_order(tmp_path, source):
    assert lists(migrate(tmp_path, source)) == (ITEMS, TAGS)


def test_a_python_policy_calling_the_default_keeps_the_source_order(tmp_path, source):
    calls = []

    class Passing(cdmigrate.EntityMigrationPolicy):
        def create_relationships(self, destination, mapping, manager):
            calls.append(mapping.name)
            super().create_relationships(destination, mapping, manager)

    assert lists(migrate(tmp_path, source, {"Passing": Passing}, "Passing")) == (ITEMS, TAGS)
    assert "ListToList" in calls


def test_several_mapping_models_for_a_step_are_named_in_the_order_they_run(tmp_path, source):
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "v1.json").write_text(json.dumps(model(1)))
    (folder / "v2.json").write_text(json.dumps(model(2)))
    (folder / "lists.mapping.json").write_text(json.dumps(mapping()))
    (folder / "extra.mapping.json").write_text(
        json.dumps({"sourceModel": "v1", "destinationModel": "v2", "entityMappings": []})
    )
    expected = (
        "v1 → v2: 2 mapping models match and no 'migration-passes.json' orders them, "
        "so they run as passes in file-name order: 1. 'extra'"
    )
    models = cdmigrate.ModelSet(str(folder))
    set_warnings = models.json_files().warnings
    assert any(w.startswith(expected) for w in set_warnings), set_warnings
    plan = models.plan(source)
    assert plan.steps[0].mapping_models == ["extra", "lists"]
    assert any(w.startswith(expected) for w in plan.warnings), plan.warnings

    (folder / "migration-passes.json").write_text(
        json.dumps({"steps": [{"from": "v1", "to": "v2", "passes": ["lists", "extra"]}]})
    )
    plan = cdmigrate.ModelSet(str(folder)).plan(source)
    assert plan.steps[0].mapping_models == ["lists", "extra"]
    assert not any("file-name order" in w for w in plan.warnings)


def cli(*arguments):
    return subprocess.run(
        [sys.executable, "-m", "cdmigrate", *arguments],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
    )


def test_the_command_line_names_the_passes_in_plan_migrate_check_and_validate(tmp_path, source):
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "v1.json").write_text(json.dumps(model(1)))
    (folder / "v2.json").write_text(json.dumps(model(2)))
    (folder / "lists.mapping.json").write_text(json.dumps(mapping()))
    (folder / "extra.mapping.json").write_text(
        json.dumps({"sourceModel": "v1", "destinationModel": "v2", "entityMappings": []})
    )
    order = "file-name order: 1. 'extra'"

    plan = cli("plan", source, "--models", str(folder))
    assert plan.returncode == 0, plan.stderr
    assert order in plan.stderr
    migrated = cli("migrate", source, "--models", str(folder), "--to", str(tmp_path / "out.sqlite"), "--json")
    assert migrated.returncode == 0, migrated.stderr
    assert any(order in w for w in json.loads(migrated.stdout)["warnings"])
    assert lists(str(tmp_path / "out.sqlite")) == (ITEMS, TAGS)
    stores = tmp_path / "stores"
    stores.mkdir()
    shutil.copyfile(source, stores / "v1.sqlite")
    checked = cli("check", str(stores), "--models", str(folder), "--json")
    assert checked.returncode == 0, checked.stderr
    assert any(order in w for w in json.loads(checked.stdout)["warnings"])

    # Two passes given by hand: the first maps the lists' items through the source relationship,
    # but only the second maps the items, so the first's look-up would find nothing.
    first = {
        "entityMappings": [
            {
                "name": "ListToList",
                "sourceEntity": "List",
                "destinationEntity": "List",
                "predicate": "TRUEPREDICATE",
                "attributeMappings": {"name": "$source.name"},
                "relationshipMappings": {
                    "items": 'FUNCTION($manager, "destinationInstancesForSourceRelationshipNamed:sourceInstances:", '
                    '"items", $source.items)'
                },
            }
        ]
    }
    second = {
        "entityMappings": [
            {
                "name": "ItemToItem",
                "sourceEntity": "Item",
                "destinationEntity": "Item",
                "predicate": "TRUEPREDICATE",
                "attributeMappings": {"name": "$source.name"},
            }
        ]
    }
    (tmp_path / "first.json").write_text(json.dumps(first))
    (tmp_path / "second.json").write_text(json.dumps(second))
    validated = cli(
        "validate",
        "--source-model",
        str(folder / "v1.json"),
        "--destination-model",
        str(folder / "v2.json"),
        "--mapping",
        str(tmp_path / "first.json"),
        "--mapping",
        str(tmp_path / "second.json"),
        "--json",
    )
    assert validated.returncode == 0, validated.stderr
    warnings = json.loads(validated.stdout)["warnings"]
    assert any("relationship 'items'" in w and "only the later pass 2" in w for w in warnings), warnings
