"""A step done as schema changes on a copy of the source file (Migration.schema_changes,
report.by_schema_changes): the same store and loss report as the general path."""

from __future__ import annotations

import json
import sqlite3

import pytest

import cdmigrate


def model(version, attributes):
    return {"name": "Blog", "versionIdentifier": str(version), "entities": [{"name": "Post", "attributes": attributes}]}


V1 = model(1, [{"name": "title", "type": "string"}, {"name": "color", "type": "string"}])
V2 = model(
    2,
    [
        {"name": "heading", "type": "string", "renamingIdentifier": "title"},
        {"name": "stars", "type": "integer16", "default": 3},
    ],
)


def make_store(path, posts=50, then=None):
    """A blog of ``posts`` posts; ``then``: SQL run on its file afterwards, as an app never would."""
    with cdmigrate.Store.create(cdmigrate.Model.from_json(json.dumps(V1)), path) as store:
        for i in range(posts):
            store.insert("Post", title=f"Post {i}", color="red" if i % 2 else None)
        store.save()
    if then is not None:
        db = sqlite3.connect(path)
        db.execute(then)
        db.commit()
        db.close()


def rows(path):
    db = sqlite3.connect(path)
    try:
        return sorted(db.execute("SELECT Z_PK, Z_ENT, Z_OPT, ZHEADING, ZSTARS FROM ZPOST").fetchall())
    finally:
        db.close()


def migrate(source, destination, schema_changes):
    v1, v2 = cdmigrate.Model.from_json(json.dumps(V1)), cdmigrate.Model.from_json(json.dumps(V2))
    with cdmigrate.Migration(v1, v2, cdmigrate.MappingModel.infer(v1, v2)) as migration:
        assert migration.schema_changes is True
        migration.schema_changes = schema_changes
        return migration.run(source, destination)


def test_an_inferred_step_is_done_as_schema_changes_with_the_general_paths_result(tmp_path):
    source = str(tmp_path / "blog.sqlite")
    make_store(source)
    fast = migrate(source, str(tmp_path / "fast.sqlite"), True)
    general = migrate(source, str(tmp_path / "general.sqlite"), False)
    assert fast.by_schema_changes is True and general.by_schema_changes is False
    assert fast.raw["bySchemaChanges"] is True
    assert "renamed column ZPOST.ZTITLE to ZHEADING" in fast.schema_changes
    assert "dropped column ZPOST.ZCOLOR" in fast.schema_changes
    assert "added column ZPOST.ZSTARS (default 3)" in fast.schema_changes
    assert fast.schema_changes_not_done is None and general.schema_changes == []
    assert rows(str(tmp_path / "fast.sqlite")) == rows(str(tmp_path / "general.sqlite"))
    assert rows(str(tmp_path / "fast.sqlite"))[0] == (1, 1, 1, "Post 0", 3)
    # The dropped attribute's values are reported alike.
    assert (
        fast.losses
        == general.losses
        == [
            cdmigrate.Loss(
                "attribute", "Post", 25, False, property="color", entity_mapping="IEM_Transform_Post", pass_index=0
            )
        ]
    )


def test_a_step_sent_to_the_general_path_says_why(tmp_path):
    source = str(tmp_path / "blog.sqlite")
    make_store(source, then="UPDATE ZPOST SET Z_ENT = 7 WHERE Z_PK = 4")
    with pytest.raises(cdmigrate.MigrationError):
        migrate(source, str(tmp_path / "out.sqlite"), True)  # the general path refuses the row, as it always did


def test_a_column_the_change_does_not_touch_is_carried_as_it_is(tmp_path):
    # A blob in the String column `title` (renamed, its rules unchanged): never written by Core
    # Data. The step carries it unread, storage class and all; the general path converts it.
    source = str(tmp_path / "blog.sqlite")
    make_store(source, then="UPDATE ZPOST SET ZTITLE = X'00FF' WHERE Z_PK = 4")
    fast = migrate(source, str(tmp_path / "fast.sqlite"), True)
    general = migrate(source, str(tmp_path / "general.sqlite"), False)
    assert fast.by_schema_changes is True and general.by_schema_changes is False
    assert fast.schema_changes_not_done is None and fast.losses == general.losses

    def heading(path):
        db = sqlite3.connect(path)
        try:
            return db.execute("SELECT typeof(ZHEADING), hex(ZHEADING) FROM ZPOST WHERE Z_PK = 4").fetchone()
        finally:
            db.close()

    assert heading(str(tmp_path / "fast.sqlite")) == ("blob", "00FF")
    assert heading(str(tmp_path / "general.sqlite"))[0] == "text"
    # Every other row is the general path's.
    other = [r for r in rows(str(tmp_path / "fast.sqlite")) if r[0] != 4]
    assert other == [r for r in rows(str(tmp_path / "general.sqlite")) if r[0] != 4]


def test_a_step_done_as_schema_changes_reports_the_rows_it_carries_and_checks(tmp_path):
    source = str(tmp_path / "blog.sqlite")
    make_store(source, posts=50)
    v1, v2 = cdmigrate.Model.from_json(json.dumps(V1)), cdmigrate.Model.from_json(json.dumps(V2))
    seen: list[cdmigrate.Progress] = []
    with cdmigrate.Migration(v1, v2, cdmigrate.MappingModel.infer(v1, v2), progress=seen.append) as migration:
        report = migration.run(source, str(tmp_path / "fast.sqlite"))
    assert report.by_schema_changes is True
    # 50 posts through the three stages, known before the copy and done at the end.
    assert {p.run_total for p in seen} == {150}
    assert seen[0].run_processed == 0 and seen[-1].run_processed == 150
    done = [p.run_processed for p in seen]
    assert done == sorted(done) and any(0 < d < 150 for d in done)
    assert {p.stage for p in seen if p.total == 50} == {1, 2, 3}
