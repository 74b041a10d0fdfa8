"""Migration.warnings: the silent traps named before a run, and the report's warnings after one."""

from __future__ import annotations

import json

import cdmigrate

MODEL = {
    "name": "Notes",
    "entities": [
        {
            "name": "Note",
            "attributes": [
                {"name": "title", "type": "string", "optional": True},
                {"name": "body", "type": "string", "optional": True},
            ],
        }
    ],
}


def mapping(predicate="TRUEPREDICATE"):
    return cdmigrate.MappingModel.from_json(
        json.dumps(
            {
                "entityMappings": [
                    {
                        "name": "NoteToNote",
                        "sourceEntity": "Note",
                        "destinationEntity": "Note",
                        "predicate": predicate,
                        "attributeMappings": {"title": "$source.title"},
                    }
                ]
            }
        )
    )


def test_unfilled_destination_attribute_is_named_before_a_run_and_in_the_report(tmp_path):
    model = cdmigrate.Model.from_json(json.dumps(MODEL))
    source = str(tmp_path / "notes.sqlite")
    with cdmigrate.Store.create(model, source) as store:
        store.insert("Note", title="a", body="b")
        store.save()
    with mapping("title == 'nothing'") as m, cdmigrate.Migration(model, model, m) as migration:
        expected = (
            "entity mapping 'NoteToNote': destination attribute 'body' is filled by no mapping "
            "while the source entity 'Note' has a property of that name"
        )
        assert migration.warnings == [expected]
        report = migration.run(source, str(tmp_path / "out.sqlite"))
        assert report.warnings[0] == expected
        assert (
            "entity mapping 'NoteToNote' took no source instances: its source expression matched none "
            "of the store's 1 'Note' instances"
        ) in report.warnings
        assert report.untaken == {"Note": 1}
