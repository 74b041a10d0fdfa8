"""Derived attributes through the binding: a migration computes them for the migrated rows and the
destination carries Core Data's Z_DA_ triggers (docs/store-layout.md, Derived attributes)."""

from __future__ import annotations

import json
import sqlite3

import cdmigrate


def model(derived):
    folder = [{"name": "name", "type": "string", "optional": True}]
    if derived:
        folder += [{"name": "postCount", "type": "int64", "optional": True, "derivationExpression": "posts.@count"},
                   {"name": "searchName", "type": "string", "optional": True, "derivationExpression": "canonical:(name)"}]
    return {"name": "Blog", "entities": [
        {"name": "Folder", "attributes": folder,
         "relationships": [{"name": "posts", "destination": "Post", "inverse": "folder", "toMany": True}]},
        {"name": "Post", "attributes": [{"name": "title", "type": "string", "optional": True}],
         "relationships": [{"name": "folder", "destination": "Folder", "inverse": "posts", "toMany": False, "optional": True}]}]}


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
            ("Boîte", 3, "boite"), ("Empty", 0, "empty")]
        triggers = {name for (name,) in database.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
        assert triggers == {"Z_DA_ZPOST_Folder_postCount_PARAMETER_INSERT", "Z_DA_ZPOST_Folder_postCount_PARAMETER_UPDATE_INCREMENT",
                            "Z_DA_ZPOST_Folder_postCount_PARAMETER_UPDATE_DECREMENT", "Z_DA_ZPOST_Folder_postCount_PARAMETER_DELETE",
                            "Z_DA_ZFOLDER_Folder_postCount_SOURCE_INSERT",
                            "Z_DA_ZFOLDER_Folder_searchName_INSERT", "Z_DA_ZFOLDER_Folder_searchName_UPDATE"}
    finally:
        database.close()
