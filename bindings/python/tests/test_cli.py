"""``python -m cdmigrate``: the command line through the binding — migrate, validate and inspect
with the flags and exit codes of docs/cli.md, and policies from a Python module."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import rows

import cdmigrate

PEOPLE = {
    "name": "People",
    "versionIdentifier": "1",
    "entities": [
        {
            "name": "Person",
            "attributes": [
                {"name": "name", "type": "string"},
                {"name": "country", "type": "string"},
                {"name": "age", "type": "integer64"},
            ],
        }
    ],
}
SPLIT = {
    "name": "People",
    "versionIdentifier": "2",
    "entities": [
        {
            "name": "Swede",
            "attributes": [{"name": "name", "type": "string", "optional": False}, {"name": "age", "type": "integer16"}],
        },
        {
            "name": "Finn",
            "attributes": [{"name": "name", "type": "string", "optional": False}, {"name": "age", "type": "integer16"}],
        },
    ],
}


def mapping(swede_policy=None):
    swede = {
        "name": "PersonToSwede",
        "sourceEntity": "Person",
        "destinationEntity": "Swede",
        "predicate": "country == 'Sweden'",
        "attributeMappings": {"name": "$source.name", "age": "$source.age"},
    }
    if swede_policy:
        swede["policy"] = swede_policy
    finn = {
        "name": "PersonToFinn",
        "sourceEntity": "Person",
        "destinationEntity": "Finn",
        "predicate": "country == 'Finland'",
        "attributeMappings": {"name": "$source.name", "age": "$source.age"},
    }
    return {"entityMappings": [swede, finn]}


POLICY_MODULE = '''
import cdmigrate

class OlderSwedes(cdmigrate.EntityMigrationPolicy):
    """Core Data's default, then every Swede is 99."""
    def create_destination_instances(self, source, mapping, manager):
        swede = super().create_destination_instances(source, mapping, manager)
        swede["age"] = 99
        return swede

class NotAPolicy:
    pass
'''


@pytest.fixture
def people(tmp_path):
    """Models, mappings and a v1 store with two Swedes and a Finn, in tmp_path."""
    files = {}
    for name, document in (
        ("v1.json", PEOPLE),
        ("v2.json", SPLIT),
        ("map.json", mapping()),
        ("policy-map.json", mapping("OlderSwedes")),
    ):
        path = tmp_path / name
        path.write_text(json.dumps(document))
        files[name] = str(path)
    (tmp_path / "olderswedes.py").write_text(POLICY_MODULE)
    files["module"] = str(tmp_path / "olderswedes.py")
    store = str(tmp_path / "people.sqlite")
    with cdmigrate.Store.create(cdmigrate.Model.from_file(files["v1.json"]), store) as s:
        for name, country in (("Anna", "Sweden"), ("Matti", "Finland"), ("Ebba", "Sweden")):
            s.insert("Person", name=name, country=country, age=30)
        s.save()
    files["store"] = store
    files["dir"] = str(tmp_path)
    return files


# The two ways a Python installation runs the command line (both run the library's, the
# executable's code): the module, and the console script pip installs beside the interpreter.
# Both ways a user runs the command line: the module and the console script pip installs.
ENTRY_POINTS = {
    "python -m cdmigrate": [sys.executable, "-m", "cdmigrate"],
    "console script": [os.path.join(os.path.dirname(sys.executable), "cdmigrate")],
}
_entry = ENTRY_POINTS["python -m cdmigrate"]


@pytest.fixture(params=sorted(ENTRY_POINTS), autouse=True)
def entry_point(request):
    """Runs every test of this file through each entry point; the console script must be installed
    (make -C bindings/python test installs the package) unless CDMIGRATE_NO_CONSOLE_SCRIPT is set."""
    global _entry
    command = ENTRY_POINTS[request.param]
    if not os.access(command[0], os.X_OK):
        if os.environ.get("CDMIGRATE_NO_CONSOLE_SCRIPT"):
            pytest.skip(f"{command[0]} is not installed")
        pytest.fail(f"{command[0]} is not installed: pip install the package (make -C bindings/python test)")
    _entry = command
    yield request.param


def cli(*arguments, cwd=None):
    result = subprocess.run(
        [*_entry, *arguments],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
    )
    return result


def models(files, mapping_file="map.json"):
    return [
        "--source-model",
        files["v1.json"],
        "--destination-model",
        files["v2.json"],
        "--mapping",
        files[mapping_file],
    ]


def test_migrate_to_a_new_file_reports_as_json(people, tmp_path):
    destination = str(tmp_path / "out.sqlite")
    result = cli("migrate", people["store"], "--to", destination, "--json", *models(people))
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] is True
    assert report["report"]["destinationCounts"] == {"Swede": 2, "Finn": 1}
    assert rows(destination, "SELECT ZNAME FROM ZSWEDE ORDER BY ZNAME") == [("Anna",), ("Ebba",)]


def test_migrate_in_place_plain_and_quiet(people):
    result = cli("migrate", people["store"], "--in-place", "--quiet", *models(people))
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert rows(people["store"], "SELECT COUNT(*) FROM ZFINN") == [(1,)]


def test_policies_module_registers_its_classes_by_name(people, tmp_path):
    destination = str(tmp_path / "out.sqlite")
    # By file path.
    result = cli(
        "migrate",
        people["store"],
        "--to",
        destination,
        "--policies",
        people["module"],
        *models(people, "policy-map.json"),
    )
    assert result.returncode == 0, result.stderr
    assert "Swede: 2" in result.stdout
    assert rows(destination, "SELECT ZAGE FROM ZSWEDE") == [(99,), (99,)]
    assert rows(destination, "SELECT ZAGE FROM ZFINN") == [(30,)]
    # By module name, importable from the current folder.
    again = str(tmp_path / "again.sqlite")
    result = cli(
        "migrate",
        people["store"],
        "--to",
        again,
        "--policies",
        "olderswedes",
        *models(people, "policy-map.json"),
        cwd=people["dir"],
    )
    assert result.returncode == 0, result.stderr
    assert rows(again, "SELECT ZAGE FROM ZSWEDE") == [(99,), (99,)]
    # Without the module the policy is missing: the migration fails and writes nothing.
    missing = str(tmp_path / "missing.sqlite")
    result = cli("migrate", people["store"], "--to", missing, *models(people, "policy-map.json"))
    assert result.returncode == 1
    assert "OlderSwedes" in result.stderr
    assert not os.path.exists(missing)


def test_validate_checks_models_mappings_and_policies(people, tmp_path):
    result = cli("validate", "--json", *models(people))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["entityMappings"] == 2
    assert cli("validate", "--policies", people["module"], *models(people, "policy-map.json")).returncode == 0
    # A module registering another policy: the mapping's is missing, as migrate says it (134170, exit 1).
    other = tmp_path / "other.py"
    other.write_text("import cdmigrate\n\nclass SomethingElse(cdmigrate.EntityMigrationPolicy):\n    pass\n")
    unregistered = cli("validate", "--policies", str(other), *models(people, "policy-map.json"))
    assert unregistered.returncode == 1
    assert "OlderSwedes" in unregistered.stderr and "134170" in unregistered.stderr
    # A module registering nothing is refused up front, naming it.
    empty = tmp_path / "empty.py"
    empty.write_text("X = 1\n")
    nothing = cli("validate", "--policies", str(empty), *models(people, "policy-map.json"))
    assert nothing.returncode == 65
    assert "'empty'" in nothing.stderr and "registers nothing" in nothing.stderr
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"entityMappings": [{"name": "X", "sourceEntity": "Nobody"}]}))
    result = cli(
        "validate",
        "--json",
        "--source-model",
        people["v1.json"],
        "--destination-model",
        people["v2.json"],
        "--mapping",
        str(bad),
    )
    assert result.returncode == 65
    assert "Nobody" in json.dumps(json.loads(result.stdout)["error"])


def test_exit_codes_follow_the_command(people, tmp_path):
    # Usage: neither --to nor --in-place, and an unknown flag.
    assert cli("migrate", people["store"], *models(people)).returncode == 64
    assert cli("migrate", people["store"], "--bogus", *models(people)).returncode == 64
    # An existing destination is never overwritten.
    taken = tmp_path / "taken.sqlite"
    taken.write_bytes(b"")
    result = cli("migrate", people["store"], "--to", str(taken), "--json", *models(people))
    assert result.returncode == 74
    assert json.loads(result.stdout)["error"]["code"] == 134160
    # A store at another version.
    other = str(tmp_path / "other.sqlite")
    with cdmigrate.Store.create(cdmigrate.Model.from_file(people["v2.json"]), other) as s:
        s.save()
    assert cli("migrate", other, "--to", str(tmp_path / "x.sqlite"), *models(people)).returncode == 66
    # A missing model file, and a policy module that cannot be imported.
    assert (
        cli(
            "validate",
            "--source-model",
            str(tmp_path / "none.json"),
            "--destination-model",
            people["v2.json"],
            "--mapping",
            people["map.json"],
        ).returncode
        == 74
    )
    assert cli("validate", "--policies", "no_such_module_here", *models(people)).returncode == 74


def test_inspect_shows_entities_rows_and_hashes(people, tmp_path):
    result = cli("inspect", people["store"], "--json")
    assert result.returncode == 0, result.stderr
    info = json.loads(result.stdout)
    assert [(e["name"], e["rows"]) for e in info["entities"]] == [("Person", 3)]
    assert info["versionIdentifiers"] == ["1"]
    assert len(info["entities"][0]["versionHash"]) == 44  # 32 bytes in base64
    plain = cli("inspect", people["store"])
    assert "Person: 3 rows" in plain.stdout
    assert cli("inspect", str(tmp_path / "missing.sqlite")).returncode == 74


def test_help_lists_the_commands_and_exit_codes():
    result = cli("--help")
    assert result.returncode == 0
    for command in ("migrate", "validate", "inspect", "infer", "import"):
        assert command in result.stdout
    assert "Exit codes:" in result.stdout


def test_migrate_with_models_runs_the_chain_with_the_policy_modules(tmp_path):
    from reference_migrations import uncloudnotes
    from test_chain import UNCLOUDNOTES
    from test_chain import rows as all_rows

    store = str(tmp_path / "v1.sqlite")
    uncloudnotes.generate_source(1, store, count=20)
    destination = str(tmp_path / "v4.sqlite")
    result = cli(
        "migrate",
        store,
        "--to",
        destination,
        "--models",
        UNCLOUDNOTES,
        "--policies",
        "reference_migrations.uncloudnotes",
        "--json",
    )
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert (
        document["ok"]
        and document["storeVersion"] == "UnCloudNotes_v1"
        and document["targetVersion"] == "UnCloudNotes_v4"
    )
    assert [s["to"] for s in document["steps"]] == ["UnCloudNotes_v2", "UnCloudNotes_v3", "UnCloudNotes_v4"]
    uncloudnotes.migrate_to_v4(store, str(tmp_path / "steps.sqlite"))
    assert all_rows(destination) == all_rows(str(tmp_path / "steps.sqlite"))
    text = cli(
        "migrate",
        store,
        "--to",
        str(tmp_path / "again.sqlite"),
        "--models",
        UNCLOUDNOTES,
        "--to-version",
        "UnCloudNotes_v2",
    )
    assert text.returncode == 0, text.stderr
    assert "(UnCloudNotes_v1) → " in text.stdout and "in 1 step" in text.stdout
    # Without the module the v3 -> v4 step is refused before anything runs, naming the policy.
    without = cli("migrate", store, "--to", str(tmp_path / "without.sqlite"), "--models", UNCLOUDNOTES)
    assert without.returncode == 1
    assert "AttachmentToImageAttachmentMigrationPolicyV3toV4" in without.stderr
    assert not os.path.exists(tmp_path / "without.sqlite")
    # --models goes alone; --to-version only with it.
    assert (
        cli(
            "migrate", store, "--to", str(tmp_path / "x.sqlite"), "--models", UNCLOUDNOTES, "--source-model", "a.json"
        ).returncode
        == 64
    )
    assert cli("migrate", store, "--to", str(tmp_path / "x.sqlite"), "--to-version", "UnCloudNotes_v2").returncode == 64


def test_plan_and_check_with_models_and_policy_modules(tmp_path):
    from reference_migrations import uncloudnotes
    from test_chain import UNCLOUDNOTES

    folder = tmp_path / "released"
    folder.mkdir()
    for version in (1, 2, 3):
        uncloudnotes.generate_source(version, str(folder / f"v{version}.sqlite"), count=12)
    plan = cli("plan", str(folder / "v1.sqlite"), "--models", UNCLOUDNOTES)
    assert plan.returncode == 0, plan.stderr
    assert "is at version UnCloudNotes_v1\ntarget version UnCloudNotes_v4 (current)\n3 steps:" in plan.stdout
    assert "3. UnCloudNotes_v3 → UnCloudNotes_v4: UnCloudNotes_v3_to_v4" in plan.stdout
    assert "policies: AttachmentToImageAttachmentMigrationPolicyV3toV4" in plan.stdout
    document = json.loads(cli("plan", str(folder / "v2.sqlite"), "--models", UNCLOUDNOTES, "--json").stdout)
    assert document["storeVersion"] == "UnCloudNotes_v2" and [s["from"] for s in document["steps"]] == [
        "UnCloudNotes_v2",
        "UnCloudNotes_v3",
    ]
    before = sorted(os.listdir(folder))

    passing = cli("check", str(folder), "--models", UNCLOUDNOTES, "--policies", "reference_migrations.uncloudnotes")
    assert passing.returncode == 0, passing.stderr
    assert "3 of 3 stores reach version UnCloudNotes_v4" in passing.stdout
    assert (
        "ok    v3.sqlite: UnCloudNotes_v3: UnCloudNotes_v3 → UnCloudNotes_v4 (UnCloudNotes_v3_to_v4); "
        in passing.stdout
    )
    # Without the module every store needs the v3 -> v4 policy: each fails with 134170 (exit 1).
    failing = cli("check", str(folder), "--models", UNCLOUDNOTES, "--json")
    assert failing.returncode == 1
    result = json.loads(failing.stdout)
    assert not result["ok"] and [s["error"]["code"] for s in result["stores"]] == [134170] * 3
    assert sorted(os.listdir(folder)) == before
    assert cli("check", str(tmp_path / "none"), "--models", UNCLOUDNOTES).returncode == 74


def test_dry_run_checks_the_store_and_writes_nothing(people, tmp_path):
    destination = str(tmp_path / "out.sqlite")
    before = sorted(os.listdir(tmp_path))
    result = cli("migrate", people["store"], "--to", destination, "--dry-run", "--json", *models(people))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["dryRun"] is True
    assert sorted(os.listdir(tmp_path)) == before

    # A store at another version: 66.
    def dry_run_as_v2(mapping_path):
        """The store migrated, dry, as if it were at v2 (it is at v1)."""
        return cli(
            "migrate",
            people["store"],
            "--to",
            destination,
            "--dry-run",
            "--source-model",
            people["v2.json"],
            "--destination-model",
            people["v2.json"],
            "--mapping",
            mapping_path,
        )

    other = dry_run_as_v2(people["map.json"])
    assert other.returncode in (65, 66), other.stderr  # the mapping does not fit v2 → v2 (65) before the store is read
    identity = tmp_path / "identity.json"
    identity.write_text(
        json.dumps(
            {
                "entityMappings": [
                    {
                        "name": "SwedeToSwede",
                        "sourceEntity": "Swede",
                        "destinationEntity": "Swede",
                        "predicate": "TRUEPREDICATE",
                        "attributeMappings": {"name": "$source.name", "age": "$source.age"},
                    },
                    {
                        "name": "FinnToFinn",
                        "sourceEntity": "Finn",
                        "destinationEntity": "Finn",
                        "predicate": "TRUEPREDICATE",
                        "attributeMappings": {"name": "$source.name", "age": "$source.age"},
                    },
                ]
            }
        )
    )
    wrong = dry_run_as_v2(str(identity))
    assert wrong.returncode == 66, wrong.stderr
    assert "is not model 'People' version '2'" in wrong.stderr
    assert not os.path.exists(destination)


def test_infer_writes_a_mapping_that_loads_back_and_migrates(people, tmp_path):
    added = {
        **PEOPLE,
        "versionIdentifier": "1.1",
        "entities": [
            {
                "name": "Person",
                "attributes": PEOPLE["entities"][0]["attributes"] + [{"name": "email", "type": "string"}],
            }
        ],
    }
    (tmp_path / "v1.1.json").write_text(json.dumps(added))
    written = str(tmp_path / "inferred.json")
    result = cli(
        "infer", "--source-model", people["v1.json"], "--destination-model", str(tmp_path / "v1.1.json"), "-o", written
    )
    assert result.returncode == 0, result.stderr
    assert "1 entity mappings" in result.stderr
    migrated = str(tmp_path / "v1.1.sqlite")
    result = cli(
        "migrate",
        people["store"],
        "--to",
        migrated,
        "--source-model",
        people["v1.json"],
        "--destination-model",
        str(tmp_path / "v1.1.json"),
        "--mapping",
        written,
        "--json",
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["report"]["destinationCounts"] == {"Person": 3}
    # To standard output; and a change that cannot be inferred exits 65 naming the property.
    shown = cli("infer", "--source-model", people["v1.json"], "--destination-model", str(tmp_path / "v1.1.json"))
    assert json.loads(shown.stdout)["entityMappings"][0]["name"] == "IEM_Transform_Person"
    strict = {
        **PEOPLE,
        "versionIdentifier": "1.2",
        "entities": [
            {
                "name": "Person",
                "attributes": PEOPLE["entities"][0]["attributes"]
                + [{"name": "rank", "type": "integer32", "optional": False}],
            }
        ],
    }
    (tmp_path / "v1.2.json").write_text(json.dumps(strict))
    nothing = str(tmp_path / "nothing.json")
    refused = cli(
        "infer", "--source-model", people["v1.json"], "--destination-model", str(tmp_path / "v1.2.json"), "-o", nothing
    )
    assert refused.returncode == 65
    assert "rank" in refused.stderr
    assert not os.path.exists(nothing)
    refused = cli(
        "infer", "--source-model", people["v1.json"], "--destination-model", str(tmp_path / "v1.2.json"), "--json"
    )
    assert refused.returncode == 65
    assert json.loads(refused.stdout)["error"]["code"] == 134190
    assert cli("infer", "--source-model", people["v1.json"]).returncode == 64
    assert (
        cli("infer", "--source-model", str(tmp_path / "none.json"), "--destination-model", people["v2.json"]).returncode
        == 74
    )


def test_import_writes_model_json_and_mapping_json(tmp_path):
    from conftest import EXAMPLES, ROOT

    fixtures = os.environ.get("CDMIGRATE_FIXTURES", os.path.join(ROOT, "Tests", "Fixtures"))
    folder = os.path.join(fixtures, "xcode", "UnCloudNotes")
    xcode_model = os.path.join(folder, "UnCloudNotesDataModel.xcdatamodeld", "UnCloudNotesDataModel_v3.xcdatamodel")
    written = str(tmp_path / "v3.json")
    result = cli("import", xcode_model, "-o", written)
    assert result.returncode == 0, result.stderr
    with cdmigrate.Model.from_file(written) as imported, cdmigrate.Model.from_file(xcode_model) as original:
        assert imported.entity_names == original.entity_names
        assert imported.to_json() == original.to_json()
    # A model JSON is no Xcode file: nothing to import (docs/cli.md).
    assert cli("import", written).returncode == 64
    # A mapping model, compiled against its models.
    v3 = os.path.join(EXAMPLES, "4-uncloudnotes", "UnCloudNotes_v3.model.json")
    v4 = os.path.join(EXAMPLES, "4-uncloudnotes", "UnCloudNotes_v4.model.json")
    mapping_file = str(tmp_path / "v3-v4.json")
    result = cli(
        "import",
        os.path.join(folder, "UnCloudNotesMappingModel_v3_to_v4.xcmappingmodel"),
        "--source-model",
        v3,
        "--destination-model",
        v4,
        "-o",
        mapping_file,
    )
    assert result.returncode == 0, result.stderr
    with cdmigrate.Model.from_file(v3) as source, cdmigrate.Model.from_file(
        v4
    ) as destination, cdmigrate.MappingModel.from_file(mapping_file) as mapping:
        assert mapping.entity_mapping_names == ["AttachmentToAttachment", "NoteToNote", "AttachmentToImageAttachment"]
        mapping.validate(source, destination)
    # Usage: a mapping model without its models, a bundle without a folder, an unknown kind, models for a model.
    assert cli("import", os.path.join(folder, "UnCloudNotesMappingModel_v3_to_v4.xcmappingmodel")).returncode == 64
    assert (
        cli("import", os.path.join(folder, "UnCloudNotesDataModel.xcdatamodeld")).returncode == 64
    )  # a bundle needs -o DIR
    assert cli("import", str(tmp_path / "notes.txt")).returncode == 64
    assert cli("import", written, "--source-model", v3).returncode == 64
    # A missing model, and a malformed one.
    assert cli("import", str(tmp_path / "missing.xcdatamodel")).returncode == 74
    (tmp_path / "bad.xcdatamodel").mkdir()
    (tmp_path / "bad.xcdatamodel" / "contents").write_text("<model><entity")
    assert cli("import", str(tmp_path / "bad.xcdatamodel")).returncode == 65


def test_migrate_no_version_check_reads_a_store_of_another_hash(people, tmp_path):
    modified = {**PEOPLE, "entities": [{**PEOPLE["entities"][0], "versionHashModifier": "x"}]}
    (tmp_path / "v1x.json").write_text(json.dumps(modified))
    step = [
        "--source-model",
        str(tmp_path / "v1x.json"),
        "--destination-model",
        people["v2.json"],
        "--mapping",
        people["map.json"],
    ]
    assert cli("migrate", people["store"], "--to", str(tmp_path / "checked.sqlite"), *step).returncode == 66
    assert cli("migrate", people["store"], "--to", str(tmp_path / "dry.sqlite"), "--dry-run", *step).returncode == 66
    assert (
        cli(
            "migrate", people["store"], "--to", str(tmp_path / "dry.sqlite"), "--dry-run", "--no-version-check", *step
        ).returncode
        == 0
    )
    result = cli(
        "migrate", people["store"], "--to", str(tmp_path / "unchecked.sqlite"), "--no-version-check", "--json", *step
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["report"]["destinationCounts"] == {"Finn": 1, "Swede": 2}
    assert (
        cli(
            "migrate",
            people["store"],
            "--to",
            str(tmp_path / "c.sqlite"),
            "--models",
            people["dir"],
            "--no-version-check",
        ).returncode
        == 64
    )
