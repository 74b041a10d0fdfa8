"""Derived attributes through the binding: a migration computes them for the migrated rows (now()
the time of the migration), the destination carries Core Data's Z_DA_ triggers, and its model cache
keeps the derivations (docs/store-layout.md, Derived attributes)."""

from __future__ import annotations

import datetime
import json
import sqlite3
import time

import cdmigrate


def model(derived):
    folder = [{"name": "name", "type": "string", "optional": True}]
    if derived:
        folder += [
            {"name": "postCount", "type": "int64", "optional": True, "derivationExpression": "posts.@count"},
            {"name": "searchName", "type": "string", "optional": True, "derivationExpression": "canonical:(name)"},
        ]
    return {
        "name": "Blog",
        "entities": [
            {
                "name": "Folder",
                "attributes": folder,
                "relationships": [{"name": "posts", "destination": "Post", "inverse": "folder", "toMany": True}],
            },
            {
                "name": "Post",
                "attributes": [{"name": "title", "type": "string", "optional": True}],
                "relationships": [
                    {"name": "folder", "destination": "Folder", "inverse": "posts", "toMany": False, "optional": True}
                ],
            },
        ],
    }


def test_a_migration_computes_derived_attributes_and_installs_core_datas_triggers(tmp_path):
    source = str(tmp_path / "blog.sqlite")
    v1, v2 = cdmigrate.Model.from_json(json.dumps(model(False))), cdmigrate.Model.from_json(json.dumps(model(True)))
    with cdmigrate.Store.create(v1, source) as store:
        inbox = store.insert("Folder", name="Boîte")
        store.insert("Folder", name="Empty")
        for i in range(3):
            store.insert("Post", title=f"Post {i}", folder=inbox)
        store.save()
    out = str(tmp_path / "out.sqlite")
    with cdmigrate.MappingModel.infer(v1, v2) as mapping, cdmigrate.Migration(v1, v2, mapping) as migration:
        report = migration.run(source, out)
    assert report.losses == []
    database = sqlite3.connect(out)
    try:
        assert database.execute("SELECT ZNAME, ZPOSTCOUNT, ZSEARCHNAME FROM ZFOLDER ORDER BY ZNAME").fetchall() == [
            ("Boîte", 3, "boite"),
            ("Empty", 0, "empty"),
        ]
        triggers = {name for (name,) in database.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
        assert triggers == {
            "Z_DA_ZPOST_Folder_postCount_PARAMETER_INSERT",
            "Z_DA_ZPOST_Folder_postCount_PARAMETER_UPDATE_INCREMENT",
            "Z_DA_ZPOST_Folder_postCount_PARAMETER_UPDATE_DECREMENT",
            "Z_DA_ZPOST_Folder_postCount_PARAMETER_DELETE",
            "Z_DA_ZFOLDER_Folder_postCount_SOURCE_INSERT",
            "Z_DA_ZFOLDER_Folder_searchName_INSERT",
            "Z_DA_ZFOLDER_Folder_searchName_UPDATE",
        }
    finally:
        database.close()


def entity_hashes(model_json):
    return {entity["name"]: entity.get("versionHash") for entity in json.loads(model_json)["entities"]}


def test_the_migrated_stores_model_cache_keeps_the_derived_attributes(tmp_path):
    source = str(tmp_path / "blog.sqlite")
    v1, v2 = cdmigrate.Model.from_json(json.dumps(model(False))), cdmigrate.Model.from_json(json.dumps(model(True)))
    with cdmigrate.Store.create(v1, source) as store:
        store.insert("Folder", name="Inbox")
        store.save()
    out = str(tmp_path / "out.sqlite")
    with cdmigrate.MappingModel.infer(v1, v2) as mapping, cdmigrate.Migration(v1, v2, mapping) as migration:
        migration.run(source, out)
    cached = cdmigrate.Model.from_store(out)
    assert cached.warnings == []  # read from Z_MODELCACHE, not rebuilt from the schema
    folder = next(e for e in json.loads(cached.to_json())["entities"] if e["name"] == "Folder")
    derivations = {a["name"]: a.get("derivationExpression") for a in folder["attributes"]}
    # items.@count is kept as Core Data keeps it: the function count:(posts).
    assert derivations == {"name": None, "postCount": "count:(posts)", "searchName": "canonical:(name)"}
    assert entity_hashes(cached.to_json()) == entity_hashes(v2.to_json())


def test_now_stamps_every_migrated_row_with_the_time_of_the_migration(tmp_path):
    def notes(derived):
        stamp = {"name": "touched", "type": "date", "optional": True}
        if derived:
            stamp["derivationExpression"] = "now()"
        return cdmigrate.Model.from_json(
            json.dumps(
                {
                    "name": "Notes",
                    "entities": [
                        {"name": "Note", "attributes": [{"name": "title", "type": "string", "optional": True}, stamp]}
                    ],
                }
            )
        )

    v1, v2 = notes(False), notes(True)
    source = str(tmp_path / "notes.sqlite")
    with cdmigrate.Store.create(v1, source) as store:
        store.insert(
            "Note", title="old", touched=datetime.datetime(2001, 1, 1, 0, 16, 40, tzinfo=datetime.timezone.utc)
        )
        store.insert("Note", title="never")
        store.save()
    out = str(tmp_path / "out.sqlite")
    before = time.time() - 978307200 - 1
    with cdmigrate.MappingModel.infer(v1, v2) as mapping, cdmigrate.Migration(v1, v2, mapping) as migration:
        migration.run(source, out)
    after = time.time() - 978307200 + 1
    database = sqlite3.connect(out)
    try:
        stamps = [value for (value,) in database.execute("SELECT ZTOUCHED FROM ZNOTE")]
    finally:
        database.close()
    assert len(stamps) == 2 and all(before <= s <= after for s in stamps), stamps
