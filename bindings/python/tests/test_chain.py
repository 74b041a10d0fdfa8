"""Progressive migration from Python: ModelSet.plan and migrate_store over Apple's own stores
(one per version of a model whose versions rename the attribute) and the UnCloudNotes example."""

from __future__ import annotations

import ctypes
import json
import os
import sqlite3
import subprocess
import sys

import pytest
from conftest import EXAMPLES, RENAMES_MODELS, ROOT, renames_store

import cdmigrate
from cdmigrate._lib import lib as _lib_
from cdmigrate._lib import take_string
from cdmigrate.errors import check

UNCLOUDNOTES = os.path.join(EXAMPLES, "4-uncloudnotes")


def test_plan_names_every_inferred_step_from_the_stores_version(tmp_path):
    store = renames_store(tmp_path, "1.1.0")
    plan = cdmigrate.ModelSet(RENAMES_MODELS).plan(store)
    assert plan.store_version == "v1.1.0"
    assert plan.target_version == plan.current_version == "v2.0.0"
    assert [(s.source_version, s.destination_version) for s in plan.steps] == [
        ("v1.1.0", "v1.1.2"),
        ("v1.1.2", "v1.2.0"),
        ("v1.2.0", "v2.0.0"),
    ]
    assert all(s.inferred and s.mapping_models == ["inferred"] for s in plan.steps)
    short = cdmigrate.ModelSet(RENAMES_MODELS).plan(store, to_version="v1.1.2")
    assert len(short.steps) == 1


def test_migrate_store_reaches_the_current_version_and_leaves_only_the_result(tmp_path):
    store = renames_store(tmp_path, "1.0.0")
    with open(store, "rb") as file:
        before = file.read()
    destination = str(tmp_path / "current.sqlite")
    report = cdmigrate.migrate_store(store, RENAMES_MODELS, to=destination)
    # The four inferred steps ran fused into one pass.
    assert report.store_version == "v1.0.0" and len(report.steps) == 1
    assert len(report.steps[0].fused_steps) == 4
    assert all(step.inferred for step in report.steps)
    assert report.steps[-1].destination_counts == {"BasicEntity": 1}
    assert sorted(os.listdir(tmp_path)) == ["current.sqlite", "store-1.0.0"]
    with open(store, "rb") as file:
        assert file.read() == before
    with sqlite3.connect(destination) as db:
        assert db.execute("SELECT ZV2_0_0_NAME FROM ZBASICENTITY").fetchall() == [("A Known Value",)]


def test_a_store_at_the_target_is_copied_or_left_alone_in_place(tmp_path):
    store = renames_store(tmp_path, "2.0.0")
    report = cdmigrate.migrate_store(store, cdmigrate.ModelSet(RENAMES_MODELS), to=str(tmp_path / "copy.sqlite"))
    assert report.already_at_target and report.copied and report.steps == []
    assert os.path.exists(tmp_path / "copy.sqlite")
    assert cdmigrate.migrate_store(store, RENAMES_MODELS, in_place=True).already_at_target


def test_in_place_replaces_the_store(tmp_path):
    store = renames_store(tmp_path, "1.2.0")
    cdmigrate.migrate_store(store, RENAMES_MODELS, in_place=True)
    assert cdmigrate.ModelSet(RENAMES_MODELS).plan(store).is_at_target


def test_a_store_no_version_matches_is_missing_source_model_with_its_hashes(tmp_path):
    store = renames_store(tmp_path, "1.0.0")
    with pytest.raises(cdmigrate.MissingSourceModelError) as caught:
        cdmigrate.ModelSet(UNCLOUDNOTES).plan(store)
    assert caught.value.code == 134130
    assert "BasicEntity" in str(caught.value)


def test_a_step_naming_a_policy_is_refused_before_anything_runs(tmp_path):
    # A v3 UnCloudNotes store needs the v3 -> v4 policy, and none is given.
    db = str(tmp_path / "v3.sqlite")
    model = cdmigrate.Model.from_file(os.path.join(UNCLOUDNOTES, "UnCloudNotes_v3.model.json"))
    with cdmigrate.Store.create(model, db) as store:
        store.save()
    plan = cdmigrate.ModelSet(UNCLOUDNOTES).plan(db)
    assert [s.mapping_models for s in plan.steps] == [["UnCloudNotes_v3_to_v4"]]
    assert plan.steps[0].policies == ["AttachmentToImageAttachmentMigrationPolicyV3toV4"]
    with pytest.raises(cdmigrate.EntityMigrationPolicyError) as caught:
        cdmigrate.migrate_store(db, UNCLOUDNOTES, to=str(tmp_path / "v4.sqlite"))
    assert caught.value.code == 134170
    assert "AttachmentToImageAttachmentMigrationPolicyV3toV4" in str(caught.value)
    assert sorted(os.listdir(tmp_path)) == ["v3.sqlite"]


def test_the_library_and_the_command_line_give_the_plan_in_one_json_form(tmp_path):
    db = str(tmp_path / "v3.sqlite")
    model = cdmigrate.Model.from_file(os.path.join(UNCLOUDNOTES, "UnCloudNotes_v3.model.json"))
    with cdmigrate.Store.create(model, db) as store:
        store.save()
    plan = cdmigrate.ModelSet(UNCLOUDNOTES).plan(db)
    assert plan.steps[0].entity_mappings[:2] == ["AttachmentToAttachment", "NoteToNote"]
    done = subprocess.run(
        [sys.executable, "-m", "cdmigrate", "plan", db, "--models", UNCLOUDNOTES, "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    printed = json.loads(done.stdout)
    assert printed.pop("ok") is True
    ctypes_text = ctypes.c_void_p()
    check(_lib_.cdm_chain_plan(UNCLOUDNOTES.encode(), db.encode(), None, ctypes.byref(ctypes_text)))
    assert json.loads(take_string(ctypes_text.value)) == printed


def test_arguments_are_checked():
    with pytest.raises(ValueError):
        cdmigrate.migrate_store("a.sqlite", RENAMES_MODELS)
    with pytest.raises(ValueError):
        cdmigrate.migrate_store("a.sqlite", RENAMES_MODELS, to="b.sqlite", in_place=True)


# -- chains with policies ---------------------------------------------------------------------

SWIFT_RUNNER = os.environ.get("CDMIGRATE_EXAMPLES_RUNNER") or os.path.join(
    ROOT, ".build", "debug", "cdmigrate-examples"
)


def rows(path: str) -> dict:
    """Every table's rows (sorted), all columns but Z_OPT; Z_METADATA without its UUID and plist."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        result = {}
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").fetchall():
            columns = [
                c[1]
                for c in db.execute(f'PRAGMA table_info("{table}")')
                if c[1] != "Z_OPT" and not (table == "Z_METADATA" and c[1] in ("Z_UUID", "Z_PLIST"))
            ]
            select = ", ".join(f'"{c}"' for c in columns)
            result[table] = sorted(db.execute(f'SELECT {select} FROM "{table}"').fetchall(), key=repr)
        return result
    finally:
        db.close()


def swift_rows(source: str, destination: str):
    """The Swift runner's result for the same store (None when it is not built)."""
    if not os.access(SWIFT_RUNNER, os.X_OK):
        return None
    import subprocess

    done = subprocess.run(
        [SWIFT_RUNNER, "--scenario", "4", "--source", source, "--destination", destination],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return rows(destination)


@pytest.mark.parametrize("version", [1, 2, 3])
def test_stores_at_v1_v2_v3_reach_v4_in_one_call_with_the_python_policy(tmp_path, version):
    from reference_migrations import uncloudnotes

    source = str(tmp_path / f"v{version}.sqlite")
    uncloudnotes.generate_source(version, source, count=40)
    destination = str(tmp_path / "chain.sqlite")
    report = cdmigrate.migrate_store(source, UNCLOUDNOTES, to=destination, policies=uncloudnotes.POLICIES)
    # Nothing but the result is left (no intermediate store).
    assert sorted(n for n in os.listdir(tmp_path) if not n.endswith(("-wal", "-shm"))) == [
        "chain.sqlite",
        f"v{version}.sqlite",
    ]
    assert report.store_version == f"UnCloudNotes_v{version}" and report.target_version == "UnCloudNotes_v4"
    assert [s.source_version for s in report.steps] == [f"UnCloudNotes_v{v}" for v in range(version, 4)]
    result = rows(destination)
    assert result["ZATTACHMENT"] or version == 1
    # The same rows as the Python policy's step-by-step migration and as Swift's.
    uncloudnotes.migrate_to_v4(source, str(tmp_path / "steps.sqlite"))
    assert result == rows(str(tmp_path / "steps.sqlite"))
    swift = swift_rows(source, str(tmp_path / "swift.sqlite"))
    if swift is not None:
        assert result == swift


def test_a_chain_registers_a_module_once_for_every_run_and_step(tmp_path):
    from reference_migrations import uncloudnotes

    fractions, calls, seen = [], [], []

    def note(name):
        calls.append(name)
        return name

    with cdmigrate.MigrationChain(
        UNCLOUDNOTES, policies=uncloudnotes, progress=lambda p: (fractions.append(p.fraction), seen.append(p))
    ) as chain:
        assert isinstance(chain, cdmigrate.Migration)
        for version in (1, 3):
            source = str(tmp_path / f"v{version}.sqlite")
            uncloudnotes.generate_source(version, source, count=12)
            fractions.clear()
            seen.clear()
            report = chain.run(source, str(tmp_path / f"v{version}-v4.sqlite"))
            assert isinstance(report, cdmigrate.StagedMigrationReport) and chain.report is report
            assert len(report.steps) == 4 - version
            assert fractions == sorted(fractions) and fractions[-1] > 0.99
            # Each step named by its index, the chain's rows never going back.
            assert {p.step_count for p in seen} == {4 - version}
            assert sorted({p.step for p in seen}) == list(range(4 - version))
            done = [p.run_processed for p in seen]
            assert done == sorted(done) and seen[-1].run_processed == seen[-1].run_total
        # In place: the store is at v4 afterwards; again, nothing to do.
        in_place = str(tmp_path / "v2.sqlite")
        uncloudnotes.generate_source(2, in_place, count=12)
        assert chain.run_in_place(in_place).store_version == "UnCloudNotes_v2"
        assert chain.run_in_place(in_place).already_at_target
    assert cdmigrate.ModelSet(UNCLOUDNOTES).plan(in_place).is_at_target


def test_a_policy_exception_in_a_later_step_comes_back_and_leaves_nothing(tmp_path):
    from reference_migrations import uncloudnotes

    class Broken(uncloudnotes.AttachmentToImageAttachmentMigrationPolicyV3toV4):
        def create_destination_instances(self, source, mapping, manager):
            raise LookupError("no image today")

    source = str(tmp_path / "v1.sqlite")
    uncloudnotes.generate_source(1, source, count=5)
    uncloudnotes.generate_source(2, str(tmp_path / "v2.sqlite"), count=20)
    with pytest.raises(LookupError, match="no image today"):
        cdmigrate.migrate_store(
            str(tmp_path / "v2.sqlite"),
            UNCLOUDNOTES,
            to=str(tmp_path / "out.sqlite"),
            policies={"AttachmentToImageAttachmentMigrationPolicyV3toV4": Broken},
        )
    assert sorted(os.listdir(tmp_path)) == ["v1.sqlite", "v2.sqlite"]
    # A chain to v3 does not need the policy; an unknown target is refused when the chain is made.
    assert (
        cdmigrate.migrate_store(
            source, UNCLOUDNOTES, to=str(tmp_path / "v3.sqlite"), to_version="UnCloudNotes_v3"
        ).target_version
        == "UnCloudNotes_v3"
    )
    with pytest.raises(cdmigrate.InvalidArgumentError, match="UnCloudNotes_v9"):
        cdmigrate.MigrationChain(UNCLOUDNOTES, "UnCloudNotes_v9")


def _item_model(version: str, attributes: str) -> str:
    entities = f'[{{"name": "Item", "attributes": [{attributes}]}}]'
    return f'{{"name": "M", "versionIdentifier": "{version}", "entities": {entities}}}'


def test_a_plan_offers_core_datas_direct_step_and_takes_it_where_a_step_cannot_be_inferred(tmp_path):
    # Every step inferable: the direct step v1.0.0 → v2.0.0 is offered beside them.
    plan = cdmigrate.ModelSet(RENAMES_MODELS).plan(renames_store(tmp_path, "1.0.0"))
    assert not any(step.direct for step in plan.steps)
    assert plan.direct_step is not None
    assert (plan.direct_step.source_version, plan.direct_step.destination_version) == ("v1.0.0", "v2.0.0")
    assert plan.to_dict()["direct_step"]["source_version"] == "v1.0.0"

    # v2 turns Item.n into a date (not inferable) and v3 turns it back: one direct step v1 → v3.
    folder = tmp_path / "models"
    folder.mkdir()
    for version, kind in (("v1", "string"), ("v2", "date"), ("v3", "string")):
        (folder / f"{version}.model.json").write_text(_item_model(version, f'{{"name": "n", "type": "{kind}"}}'))
    store = str(tmp_path / "items.sqlite")
    with cdmigrate.Store.create(cdmigrate.Model.from_json((folder / "v1.model.json").read_text()), store) as s:
        s.insert("Item", n="kept")
        s.save()
    plan = cdmigrate.ModelSet(str(folder)).plan(store)
    assert [(s.source_version, s.destination_version, s.direct) for s in plan.steps] == [("v1", "v3", True)]
    assert "v1 → v2 cannot be inferred" in plan.steps[0].reason
    assert plan.direct_step is None
    report = cdmigrate.migrate_store(store, str(folder), to=str(tmp_path / "items-v3.sqlite"))
    assert [step.direct for step in report.steps] == [True]
    assert report.steps[0].destination_counts == {"Item": 1}


def test_becoming_non_optional_is_judged_by_the_stores_rows(tmp_path):
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "v1.model.json").write_text(_item_model("v1", '{"name": "title", "type": "string"}'))
    (folder / "v2.model.json").write_text(_item_model("v2", '{"name": "title", "type": "string", "optional": false}'))
    v1 = cdmigrate.Model.from_json((folder / "v1.model.json").read_text())
    full, holey = str(tmp_path / "full.sqlite"), str(tmp_path / "holey.sqlite")
    with cdmigrate.Store.create(v1, full) as s:
        s.insert("Item", title="a")
        s.save()
    with cdmigrate.Store.create(v1, holey) as s:
        s.insert("Item", title="a")
        s.insert("Item")
        s.save()
    plan = cdmigrate.ModelSet(str(folder)).plan(full)
    assert "every 'Item' instance of the store has a value for 'Item.title'" in plan.steps[0].reason
    with pytest.raises(cdmigrate.MigrationError) as caught:
        cdmigrate.ModelSet(str(folder)).plan(holey)
    assert caught.value.code == 134190
    assert "1 'Item' instance of the store has no value for 'Item.title'" in str(caught.value)
