"""scripts/corpus.py, the runner that tries cdmigrate on real projects' Xcode models: it seeds a
store at the oldest version, migrates it through the command line to the current one and compares
the values of every attribute every version keeps (following renaming identifiers). Here it runs
on Apple's renames fixture (five versions, the one attribute renamed in each), and its comparison
on stores that lost an instance or a value."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys

import pytest
from conftest import ROOT

CLI = os.environ.get("CDMIGRATE_CLI") or os.path.join(ROOT, ".build", "debug", "cdmigrate")
RUNNER = os.path.join(ROOT, "scripts", "corpus.py")


def corpus(*arguments):
    if not os.path.exists(CLI):
        pytest.fail(f"the cdmigrate command is needed at {CLI} (swift build, or CDMIGRATE_CLI)")
    return subprocess.run(
        [sys.executable, RUNNER, "--cdmigrate", CLI, *arguments], capture_output=True, text=True, check=True
    )


def test_renamed_attributes_reach_the_current_version_with_their_values(tmp_path):
    shutil.copytree(
        os.path.join(ROOT, "Tests", "Fixtures", "apple-stores", "renames", "Model.xcdatamodeld"),
        tmp_path / "Model.xcdatamodeld",
    )
    done = corpus("--json", str(tmp_path / "results.jsonl"), str(tmp_path))
    assert done.stdout.splitlines()[-1] == "1 bundles: 1 import, 1 seed, 1 migrate, 1 compare"
    result = json.loads((tmp_path / "results.jsonl").read_text().splitlines()[0])
    assert result["versions"] == 5 and result["failed"] is None


def test_compare_reports_lost_instances_and_changed_values(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import corpus as runner

    model = {
        "name": "Notes",
        "entities": [
            {
                "name": "Note",
                "attributes": [
                    {"name": "title", "type": "string", "optional": True},
                    {"name": "rank", "type": "integer32", "optional": True},
                ],
            }
        ],
    }
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(model))
    versions = [runner.load_version(str(path))] * 2
    seed, out = str(tmp_path / "seed.sqlite"), str(tmp_path / "out.sqlite")
    runner.seed(str(path), versions[0], seed, 5)
    shutil.copy(seed, out)
    assert runner.compare(seed, out, versions) == []
    db = sqlite3.connect(out)
    db.execute("UPDATE ZNOTE SET ZTITLE = 'changed' WHERE Z_PK = 1")
    db.commit()
    assert runner.compare(seed, out, versions) == ["Note: values changed in title"]
    db.execute("DELETE FROM ZNOTE WHERE Z_PK = 2")
    db.commit()
    db.close()
    assert runner.compare(seed, out, versions) == ["Note: 5 instances before, 4 after"]


def test_seed_gives_each_required_one_to_one_its_own_destination_and_fills_what_a_later_version_requires(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import corpus as runner

    # Book and Playlist inherit a required one-to-one `theme` from Item: six items need six themes
    # where only three are seeded; `title` is optional here and required by a later version.
    model = {
        "name": "Library",
        "entities": [
            {
                "name": "Item",
                "abstract": True,
                "attributes": [{"name": "title", "type": "string", "optional": True}],
                "relationships": [{"name": "theme", "destination": "Theme", "inverse": "item", "optional": False}],
            },
            {"name": "Book", "parent": "Item"},
            {"name": "Playlist", "parent": "Item"},
            {
                "name": "Theme",
                "attributes": [{"name": "hex", "type": "string", "optional": True}],
                "relationships": [{"name": "item", "destination": "Item", "inverse": "theme", "optional": True}],
            },
        ],
    }
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(model))
    version = runner.load_version(str(path))
    seed = str(tmp_path / "seed.sqlite")
    runner.seed(str(path), version, seed, 3, frozenset({("Book", "title"), ("Playlist", "title")}))
    db = sqlite3.connect(seed)
    themes = [row[0] for row in db.execute("SELECT ZTHEME FROM ZITEM")]
    assert len(themes) == 6 and None not in themes and len(set(themes)) == 6
    assert db.execute("SELECT COUNT(*) FROM ZITEM WHERE ZTITLE IS NULL").fetchone()[0] == 0
    db.close()


UNCLOUDNOTES_POLICIES = """
import sqlite3
import cdmigrate


class AttachmentToImageAttachmentMigrationPolicyV3toV4(cdmigrate.EntityMigrationPolicy):
    def create_destination_instances(self, source, mapping, manager):
        attachment = manager.create("ImageAttachment")
        manager.apply_attribute_mappings(source, attachment)
        attachment["caption"] = (source.get("note.body") or "")[:80]
        manager.associate(source, attachment)
        return attachment


POLICIES = {"AttachmentToImageAttachmentMigrationPolicyV3toV4": AttachmentToImageAttachmentMigrationPolicyV3toV4}
CHECKED_BY_POLICY = {"Attachment"}


def prepare(seed_path):
    with sqlite3.connect(seed_path) as seed:
        seed.execute("UPDATE ZNOTE SET ZBODY = 'body of note ' || Z_PK || ' ' || substr(hex(randomblob(60)), 1, 90)")
        seed.execute("UPDATE ZATTACHMENT SET ZNOTE = 1 + (Z_PK % (SELECT COUNT(*) FROM ZNOTE))")


def check(seed_path, out_path):
    with sqlite3.connect(seed_path) as seed, sqlite3.connect(out_path) as out:
        expected = sorted(row[0][:80] for row in seed.execute(
            "SELECT n.ZBODY FROM ZATTACHMENT a JOIN ZNOTE n ON a.ZNOTE = n.Z_PK"))
        got = sorted(row[0] for row in out.execute(
            "SELECT ZCAPTION FROM ZATTACHMENT "
            "WHERE Z_ENT = (SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'ImageAttachment')"))
    return [] if expected == got else [f"captions {got} where {expected} were expected"]
"""


def test_a_project_with_ported_policies_runs_them_and_their_checks(tmp_path):
    # UnCloudNotes from its v3 on: the v3 → v4 mapping model names a policy class for its
    # AttachmentToImageAttachment mapping (and keeps every Attachment too, with AttachmentToAttachment).
    project = tmp_path / "UnCloudNotes"
    source = os.path.join(ROOT, "Tests", "Fixtures", "xcode", "UnCloudNotes")
    shutil.copytree(source, project)
    bundle = project / "UnCloudNotesDataModel.xcdatamodeld"
    for old in ("UnCloudNotesDataModel.xcdatamodel", "UnCloudNotesDataModel_v2.xcdatamodel"):
        shutil.rmtree(bundle / old)
    shutil.rmtree(project / "UnCloudNotesMappingModel_v2_to_v3.xcmappingmodel")
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "UnCloudNotes.py").write_text(UNCLOUDNOTES_POLICIES)
    done = corpus("--policies", str(policies), "--json", str(tmp_path / "results.jsonl"), str(project))
    result = json.loads((tmp_path / "results.jsonl").read_text().splitlines()[0])
    assert result["failed"] is None, result
    assert result["policies"] == "UnCloudNotes.py"
    assert done.stdout.splitlines()[-1] == "1 bundles: 1 import, 1 seed, 1 migrate, 1 compare"
    # The module's check is what decides: a wrong caption fails the bundle at compare.
    wrong = tmp_path / "wrong-policies"
    wrong.mkdir()
    (wrong / "UnCloudNotes.py").write_text(UNCLOUDNOTES_POLICIES.replace('or "")[:80]', 'or "")[:79]'))
    corpus("--policies", str(wrong), "--json", str(tmp_path / "again.jsonl"), str(project))
    again = json.loads((tmp_path / "again.jsonl").read_text().splitlines()[0])
    assert again["failed"] == "compare" and "captions" in again["message"]


def test_seeds_fill_transformable_attributes_and_keep_unique_values_across_sub_entities(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import corpus as runner

    model = {
        "name": "Cars",
        "entities": [
            {
                "name": "Car",
                "uniquenessConstraints": [["plate"]],
                "attributes": [
                    {"name": "plate", "type": "string"},
                    {"name": "kind", "type": "transformable", "optional": False},
                    {
                        "name": "icon",
                        "type": "transformable",
                        "optional": True,
                        "valueTransformerName": "IconTransformer",
                    },
                ],
            },
            {
                "name": "SportCar",
                "parent": "Car",
                "attributes": [{"name": "speed", "type": "integer32", "optional": True}],
            },
        ],
    }
    path = tmp_path / "v1.json"
    path.write_text(json.dumps(model))
    versions = [runner.load_version(str(path))] * 2
    seed = str(tmp_path / "seed.sqlite")
    runner.seed(str(path), versions[0], seed, 3)  # Car and SportCar share ZCAR and its unique plates
    with sqlite3.connect(seed) as db:
        rows = db.execute("SELECT ZPLATE, ZKIND, ZICON FROM ZCAR").fetchall()
    plates = [plate for plate, _, _ in rows if plate is not None]
    assert len(rows) == 6 and len(set(plates)) == len(plates)
    assert all(kind[:8] == b"bplist00" for _, kind, _ in rows), "the default transformer's keyed archive"
    assert all(icon is None or icon[:8] != b"bplist00" for _, _, icon in rows), "the app's transformer: bytes"
    out = str(tmp_path / "out.sqlite")
    shutil.copy(seed, out)
    with sqlite3.connect(out) as db:
        db.execute("UPDATE ZCAR SET ZKIND = X'00' WHERE Z_PK = 1")
    assert runner.compare(seed, out, versions) == ["Car: values changed in kind"]


def test_a_bundle_whose_current_version_is_its_oldest_is_skipped_not_passed(tmp_path):
    bundle = tmp_path / "Model.xcdatamodeld"
    shutil.copytree(os.path.join(ROOT, "Tests", "Fixtures", "apple-stores", "renames", "Model.xcdatamodeld"), bundle)
    oldest = sorted(p.name for p in bundle.iterdir() if p.suffix == ".xcdatamodel")[0]
    (bundle / ".xccurrentversion").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>_XCCurrentVersionName</key>'
        f"<string>{oldest}</string></dict></plist>\n"
    )
    done = corpus(str(tmp_path))
    assert "skipped: the current version" in done.stdout
    assert (
        done.stdout.splitlines()[-1]
        == "1 bundles: 1 import, 0 seed, 0 migrate, 0 compare (1 skipped: nothing to migrate)"
    )


def runner_module():
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import corpus as runner

    return runner


def test_versions_of_a_renamed_model_come_before_the_current_versions_name():
    runner = runner_module()
    # HM_iOS_ARC_Core: mHealth, mHealth 2, mHealth 3, then the current arc 3.
    assert runner.ordered_versions(["arc 3", "mHealth 3", "mHealth", "mHealth 2"], "arc 3") == [
        "mHealth",
        "mHealth 2",
        "mHealth 3",
        "arc 3",
    ]
    # Artsy Folio: ArtsyPartner … ArtsyPartner 5, then ArtsyFolio v1.4 … v2.5.1 (the current one).
    names = ["ArtsyFolio v2.5", "ArtsyPartner 2", "ArtsyFolio v1.4", "ArtsyPartner", "ArtsyFolio v2.5.1"]
    assert runner.ordered_versions(names, "ArtsyFolio v2.5.1") == [
        "ArtsyPartner",
        "ArtsyPartner 2",
        "ArtsyFolio v1.4",
        "ArtsyFolio v2.5",
        "ArtsyFolio v2.5.1",
    ]
    # One name: the order of the names, the current version wherever it falls.
    assert runner.ordered_versions(["Model 10", "Model", "Model 2"], "Model") == ["Model", "Model 2", "Model 10"]
    # A number that is part of the name (CoreDataPlus's SampleModel3 bundle) is one name too.
    assert runner.ordered_versions(["SampleModel3_v2", "SampleModel3"], "SampleModel3") == [
        "SampleModel3",
        "SampleModel3_v2",
    ]


def test_each_bundle_gets_the_mapping_folders_nearest_to_it(tmp_path):
    runner = runner_module()
    # Threema's shape: a copy of one mapping model beside each of two bundles with the same version names.
    for name in ("Plain", "Encrypted"):
        for version in ("Data", "DataV5"):
            (tmp_path / "Model" / name / f"{name}.xcdatamodeld" / f"{version}.xcdatamodel").mkdir(parents=True)
        (tmp_path / "Model" / name / "Data_to_DataV5.xcmappingmodel").mkdir()
    (tmp_path / "Shared" / "Common.xcmappingmodel").mkdir(parents=True)  # as near to both: both get it
    plain = str(tmp_path / "Model" / "Plain" / "Plain.xcdatamodeld")
    encrypted = str(tmp_path / "Model" / "Encrypted" / "Encrypted.xcdatamodeld")
    assert runner.own_mapping_folders(plain, str(tmp_path)) == [
        str(tmp_path / "Model" / "Plain"),
        str(tmp_path / "Shared"),
    ]
    assert runner.own_mapping_folders(encrypted, str(tmp_path)) == [
        str(tmp_path / "Model" / "Encrypted"),
        str(tmp_path / "Shared"),
    ]


def test_seeded_values_keep_to_the_attributes_range():
    import random

    runner = runner_module()
    rng = random.Random(1)
    rating = {"name": "rating", "type": "integer16", "optional": False, "minValue": 1, "maxValue": 5}
    price = {"name": "price", "type": "double", "optional": False, "minValue": -2.5, "maxValue": 2.5}
    code = {"name": "code", "type": "string", "optional": False, "minValue": 40, "maxValue": 40}
    for row in range(200):
        assert 1 <= runner.sample(rating, rng, row) <= 5
        assert -2.5 <= runner.sample(price, rng, row) <= 2.5
        assert len(runner.sample(code, rng, row)) == 40
    # Without a range, as before: integers from 0 to 30000.
    plain = {"name": "count", "type": "integer32", "optional": False}
    assert max(runner.sample(plain, rng, row) for row in range(200)) > 5


def test_a_port_can_seed_at_a_later_version(tmp_path):
    # UnCloudNotes with every version: the port seeds at v3, where attachments first exist.
    project = tmp_path / "UnCloudNotes"
    shutil.copytree(os.path.join(ROOT, "Tests", "Fixtures", "xcode", "UnCloudNotes"), project)
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "UnCloudNotes.py").write_text(UNCLOUDNOTES_POLICIES + '\nSEED_VERSION = "UnCloudNotesDataModel_v3"\n')
    corpus("--policies", str(policies), "--json", str(tmp_path / "results.jsonl"), str(project))
    result = json.loads((tmp_path / "results.jsonl").read_text().splitlines()[0])
    assert result["failed"] is None and result["seed_version"] == "UnCloudNotesDataModel_v3", result
    (policies / "UnCloudNotes.py").write_text(UNCLOUDNOTES_POLICIES + '\nSEED_VERSION = "v9"\n')
    corpus("--policies", str(policies), "--json", str(tmp_path / "again.jsonl"), str(project))
    again = json.loads((tmp_path / "again.jsonl").read_text().splitlines()[0])
    assert again["failed"] == "seed" and "'v9' is not a version" in again["message"]


def test_a_ports_pass_order_and_current_version_reach_the_migration(tmp_path, monkeypatch):
    runner = runner_module()
    bundle = tmp_path / "Model.xcdatamodeld"
    shutil.copytree(os.path.join(ROOT, "Tests", "Fixtures", "apple-stores", "renames", "Model.xcdatamodeld"), bundle)
    names = sorted((p.stem for p in bundle.iterdir() if p.suffix == ".xcdatamodel"), key=runner.natural_key)
    (bundle / ".xccurrentversion").write_text(
        '<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0"><dict><key>_XCCurrentVersionName</key>'
        f"<string>{names[0]}.xcdatamodel</string></dict></plist>\n"
    )
    module = tmp_path / "port.py"
    module.write_text(
        "import cdmigrate\nPOLICIES = {}\nCURRENT_IS_NEWEST = True\n"
        f"PASSES = [{{'from': {names[1]!r}, 'to': {names[0]!r}, 'passes': ['B', 'A']}}]\n"
    )
    seen = {}
    real_run = runner.run

    def fake_run(command, timeout=600, environment=None):
        if "migrate" in command and "--to" in command:
            manifest = command[command.index("--mappings", len(command) - 2) + 1]
            with open(os.path.join(manifest, "migration-passes.json"), encoding="utf-8") as handle:
                seen["manifest"] = json.load(handle)
            return 1, "", "stopped by the test"
        return real_run(command, timeout, environment)

    monkeypatch.setattr(runner, "run", fake_run)
    if not os.path.exists(CLI):
        pytest.fail(f"the cdmigrate command is needed at {CLI} (swift build, or CDMIGRATE_CLI)")
    result = runner.try_bundle(str(bundle), [str(tmp_path)], CLI, 2, True, str(module))
    assert not result.get("skipped"), result  # the current version is taken as the newest
    assert result["passed"] == ["import", "seed"] and result["failed"] == "migrate"
    assert seen["manifest"] == {"steps": [{"from": names[1], "to": names[0], "passes": ["B", "A"]}]}
