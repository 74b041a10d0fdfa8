"""Progressive migration from Python: ModelSet.plan and migrate_store over Apple's own stores
(one per version of a model whose versions rename the attribute) and the UnCloudNotes example."""

from __future__ import annotations

import os
import shutil
import sqlite3

import pytest

import cdmigrate

from conftest import EXAMPLES, ROOT

RENAMES = os.path.join(ROOT, "Tests", "Fixtures", "apple-stores", "renames")
RENAMES_MODELS = os.path.join(RENAMES, "Model.xcdatamodeld")
UNCLOUDNOTES = os.path.join(EXAMPLES, "4-uncloudnotes")


def copy_store(tmp_path, version: str) -> str:
    """A writable copy of a fixture store with its -wal and -shm."""
    folder = tmp_path / f"store-{version}"
    folder.mkdir()
    target = folder / f"Example_v{version}.sqlite"
    for suffix in ("", "-wal", "-shm"):
        source = os.path.join(RENAMES, f"Example_v{version}.sqlite{suffix}")
        if os.path.exists(source):
            shutil.copyfile(source, str(target) + suffix)
    return str(target)


def test_plan_names_every_inferred_step_from_the_stores_version(tmp_path):
    store = copy_store(tmp_path, "1.1.0")
    plan = cdmigrate.ModelSet(RENAMES_MODELS).plan(store)
    assert plan.store_version == "v1.1.0"
    assert plan.target_version == plan.current_version == "v2.0.0"
    assert [(s.source_version, s.destination_version) for s in plan.steps] == [("v1.1.0", "v1.1.2"), ("v1.1.2", "v1.2.0"), ("v1.2.0", "v2.0.0")]
    assert all(s.inferred and s.mapping_models == ["inferred"] for s in plan.steps)
    short = cdmigrate.ModelSet(RENAMES_MODELS).plan(store, to_version="v1.1.2")
    assert len(short.steps) == 1


def test_migrate_store_reaches_the_current_version_and_leaves_only_the_result(tmp_path):
    store = copy_store(tmp_path, "1.0.0")
    before = open(store, "rb").read()
    destination = str(tmp_path / "current.sqlite")
    report = cdmigrate.migrate_store(store, RENAMES_MODELS, to=destination)
    assert report.store_version == "v1.0.0" and len(report.steps) == 4
    assert all(step.inferred for step in report.steps)
    assert report.steps[-1].destination_counts == {"BasicEntity": 1}
    with sqlite3.connect(destination) as db:
        assert db.execute("SELECT ZV2_0_0_NAME FROM ZBASICENTITY").fetchall() == [("A Known Value",)]
    assert open(store, "rb").read() == before
    assert sorted(os.listdir(tmp_path)) == ["current.sqlite", "store-1.0.0"]


def test_a_store_at_the_target_is_copied_or_left_alone_in_place(tmp_path):
    store = copy_store(tmp_path, "2.0.0")
    report = cdmigrate.migrate_store(store, cdmigrate.ModelSet(RENAMES_MODELS), to=str(tmp_path / "copy.sqlite"))
    assert report.already_at_target and report.copied and report.steps == []
    assert os.path.exists(tmp_path / "copy.sqlite")
    assert cdmigrate.migrate_store(store, RENAMES_MODELS, in_place=True).already_at_target


def test_in_place_replaces_the_store(tmp_path):
    store = copy_store(tmp_path, "1.2.0")
    cdmigrate.migrate_store(store, RENAMES_MODELS, in_place=True)
    assert cdmigrate.ModelSet(RENAMES_MODELS).plan(store).is_at_target


def test_a_store_no_version_matches_is_missing_source_model_with_its_hashes(tmp_path):
    store = copy_store(tmp_path, "1.0.0")
    with pytest.raises(cdmigrate.MissingSourceModelError) as caught:
        cdmigrate.ModelSet(UNCLOUDNOTES).plan(store)
    assert caught.value.code == 134130
    assert "BasicEntity" in str(caught.value)


def test_a_step_naming_a_policy_is_refused_before_anything_runs(tmp_path):
    # A v3 UnCloudNotes store needs the v3 -> v4 policy, which C chains cannot register.
    db = str(tmp_path / "v3.sqlite")
    model = cdmigrate.Model.from_file(os.path.join(UNCLOUDNOTES, "UnCloudNotes_v3.model.json"))
    with cdmigrate.Store.create(model, db) as store:
        store.save()
    plan = cdmigrate.ModelSet(UNCLOUDNOTES).plan(db)
    assert [s.mapping_models for s in plan.steps] == [["UnCloudNotes_v3_to_v4"]]
    assert plan.steps[0].policies == ["AttachmentToImageAttachmentMigrationPolicyV3toV4"]
    with pytest.raises(cdmigrate.EntityMigrationPolicyError):
        cdmigrate.migrate_store(db, UNCLOUDNOTES, to=str(tmp_path / "v4.sqlite"))
    assert sorted(os.listdir(tmp_path)) == ["v3.sqlite"]


def test_arguments_are_checked():
    with pytest.raises(ValueError):
        cdmigrate.migrate_store("a.sqlite", RENAMES_MODELS)
    with pytest.raises(ValueError):
        cdmigrate.migrate_store("a.sqlite", RENAMES_MODELS, to="b.sqlite", in_place=True)
