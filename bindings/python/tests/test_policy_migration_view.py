"""What a policy sees of its migration through the Python binding, as Core Data's policies do:
the manager's source and destination models (version identifiers, entities), its mapping model,
the entity mapping's type and property mappings (userInfo, a settable value expression that
applies to every instance of that run only)."""

from __future__ import annotations

import json
import sqlite3

import pytest

import cdmigrate

V1 = {
    "name": "Notes",
    "versionIdentifier": "1",
    "entities": [
        {
            "name": "Note",
            "attributes": [{"name": "title", "type": "string"}, {"name": "body", "type": "string", "optional": True}],
        }
    ],
}
V2 = dict(V1, versionIdentifier="2")
MAPPING = {
    "name": "Notes1to2",
    "entityMappings": [
        {
            "name": "NoteToNote",
            "type": "custom",
            "sourceEntity": "Note",
            "destinationEntity": "Note",
            "predicate": "TRUEPREDICATE",
            "policy": "NotePolicy",
            "attributeMappings": [
                {"name": "title", "valueExpression": "$source.title", "userInfo": {"limit": 3}},
                {"name": "body", "valueExpression": "$source.body"},
            ],
        }
    ],
}


@pytest.fixture
def source(tmp_path):
    path = str(tmp_path / "notes.sqlite")
    with cdmigrate.Model.from_json(json.dumps(V1)) as model, cdmigrate.Store.create(model, path) as store:
        for title in ("beta", "alpha", "gamma"):
            store.insert("Note", {"title": title, "body": "b"})
        store.save()
    return path


def notes(path):
    with sqlite3.connect(path) as db:
        return [tuple(row) for row in db.execute("SELECT ZTITLE, ZBODY FROM ZNOTE ORDER BY ZTITLE")]


class NotePolicy(cdmigrate.EntityMigrationPolicy):
    """Branches on the source model's version, reads the entity's attributes, and (when `rewrite`)
    changes the title mapping before the default makes the instances."""

    def __init__(self, rewrite: bool, seen: list):
        self.rewrite = rewrite
        self.seen = seen

    def begin_entity_mapping(self, mapping, manager):
        source, destination = manager.source_model, manager.destination_model
        self.seen.append(("versions", source.version_identifiers, destination.version_identifiers))
        self.seen.append(("attributes", sorted(source.entity("Note").attributes)))
        model = manager.mapping_model
        self.seen.append(("mapping model", model.name, model.entity_mapping_names, mapping.mapping_type))
        title = mapping.attribute_mappings["title"]
        self.seen.append(
            ("title", title.value_expression, title.user_info, mapping.attribute_mappings["body"].user_info)
        )
        with pytest.raises(cdmigrate.ExpressionSyntaxError):
            title.value_expression = "$source.title +"
        assert title.value_expression == "$source.title"
        if self.rewrite and "1" in source.version_identifiers:
            title.value_expression = 'FUNCTION($source.title, "uppercaseString")'
            mapping.attribute_mappings["body"].value_expression = None
            self.seen.append(("set", mapping.attribute_mappings["title"].value_expression))


def test_a_policy_branching_on_the_source_version_changes_a_property_mapping_for_that_run_only(tmp_path, source):
    seen: list = []
    with cdmigrate.Model.from_json(json.dumps(V1)) as v1, cdmigrate.Model.from_json(
        json.dumps(V2)
    ) as v2, cdmigrate.MappingModel.from_json(json.dumps(MAPPING)) as m, cdmigrate.Migration(v1, v2, m) as migration:
        migration.run(source, str(tmp_path / "first.sqlite"), policies={"NotePolicy": lambda: NotePolicy(True, seen)})
        assert notes(str(tmp_path / "first.sqlite")) == [("ALPHA", None), ("BETA", None), ("GAMMA", None)]
        assert seen == [
            ("versions", {"1"}, {"2"}),
            ("attributes", ["body", "title"]),
            ("mapping model", "Notes1to2", ["NoteToNote"], "custom"),
            ("title", "$source.title", {"limit": 3}, {}),
            ("set", 'FUNCTION($source.title, "uppercaseString")'),
        ]
        # The same migration again, without the change: the declared expressions.
        seen.clear()
        migration.run(source, str(tmp_path / "second.sqlite"), policies={"NotePolicy": lambda: NotePolicy(False, seen)})
        assert seen[3] == ("title", "$source.title", {"limit": 3}, {})
        assert notes(str(tmp_path / "second.sqlite")) == [("alpha", "b"), ("beta", "b"), ("gamma", "b")]


def test_model_version_identifiers_outside_a_run():
    with cdmigrate.Model.from_json(json.dumps(V1)) as model:
        assert model.version_identifier == "1" and model.version_identifiers == {"1"}
    unversioned = dict(V1)
    del unversioned["versionIdentifier"]
    with cdmigrate.Model.from_json(json.dumps(unversioned)) as model:
        assert model.version_identifier is None and model.version_identifiers == set()


def test_a_property_mapping_is_changed_only_from_its_own_callbacks(tmp_path, source):
    kept = {}

    class Keeper(cdmigrate.EntityMigrationPolicy):
        def begin_entity_mapping(self, mapping, manager):
            kept["title"] = mapping.attribute_mappings["title"]

    with cdmigrate.Model.from_json(json.dumps(V1)) as v1, cdmigrate.Model.from_json(
        json.dumps(V2)
    ) as v2, cdmigrate.MappingModel.from_json(json.dumps(MAPPING)) as m, cdmigrate.Migration(v1, v2, m) as migration:
        migration.run(source, str(tmp_path / "out.sqlite"), policies={"NotePolicy": Keeper})
    with pytest.raises(cdmigrate.MisuseError):
        kept["title"].value_expression = "$source.body"


def test_a_policy_reads_the_source_and_destination_entity_of_every_entity_mapping_of_its_mapping_model(
    tmp_path, source
):
    # Core Data: manager.mappingModel.entityMappings[i].sourceEntityName / destinationEntityName,
    # as a policy does to find the mapping that made another entity's instances.
    v2 = {
        "name": "Notes",
        "versionIdentifier": "2",
        "entities": V1["entities"]
        + [{"name": "Tag", "attributes": [{"name": "label", "type": "string", "optional": True}]}],
    }
    mapping = {
        "name": "Notes1to2",
        "entityMappings": [
            {"name": "TagAdded", "type": "add", "destinationEntity": "Tag"},
            MAPPING["entityMappings"][0],
        ],
    }
    seen = []

    class Reader(cdmigrate.EntityMigrationPolicy):
        def begin_entity_mapping(self, mapping, manager):
            seen.append(manager.mapping_model.entity_mappings)

    with cdmigrate.Model.from_json(json.dumps(V1)) as m1, cdmigrate.Model.from_json(
        json.dumps(v2)
    ) as m2, cdmigrate.MappingModel.from_json(json.dumps(mapping)) as m, cdmigrate.Migration(m1, m2, m) as migration:
        migration.run(source, str(tmp_path / "out.sqlite"), policies={"NotePolicy": Reader})
    assert [(e.name, e.source_entity_name, e.destination_entity_name) for e in seen[0]] == [
        ("TagAdded", None, "Tag"),
        ("NoteToNote", "Note", "Note"),
    ]
