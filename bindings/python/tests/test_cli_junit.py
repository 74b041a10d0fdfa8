"""``check`` and folder ``migrate`` through the Python entry points (the library's command line):
stores told by content, the other files skipped with the reason, ``check --to-version``, and
``--junit FILE`` read back with ``xml.etree``, a store name with XML's special characters and
non-ASCII letters included."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import xml.etree.ElementTree as ElementTree

import pytest
from test_cli import ENTRY_POINTS

import cdmigrate

V1 = {"entities": [{"name": "Person", "attributes": [{"name": "name", "type": "string", "optional": True}]}]}
V2 = {
    "entities": [
        {
            "name": "Person",
            "attributes": [
                {"name": "name", "type": "string", "optional": True},
                {"name": "age", "type": "integer32", "optional": True},
            ],
        }
    ]
}
ODD_NAME = "a&<>\"'é ü.sqlite"


def run(entry, *arguments):
    command = ENTRY_POINTS[entry]
    if not os.access(command[0], os.X_OK):
        if os.environ.get("CDMIGRATE_NO_CONSOLE_SCRIPT"):
            pytest.skip(f"{command[0]} is not installed")
        pytest.fail(f"{command[0]} is not installed: pip install the package (make -C bindings/python test)")
    return subprocess.run(
        [*command, *arguments],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
    )


@pytest.fixture
def folder(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    (models / "v1.json").write_text(json.dumps(V1))
    (models / "v2.json").write_text(json.dumps(V2))
    (models / "current-version").write_text("v2\n")
    stores = tmp_path / "stores"
    stores.mkdir()
    with cdmigrate.Model.from_file(str(models / "v1.json")) as model:
        for name in ("people", ODD_NAME):
            with cdmigrate.Store.create(model, str(stores / name)) as store:
                store.insert("Person", name="Ann")
                store.save()
    # A store of a version the models do not hold: it fails.
    stranger = {"entities": [{"name": "Other", "attributes": [{"name": "x", "type": "string"}]}]}
    (tmp_path / "stranger.json").write_text(json.dumps(stranger))
    with cdmigrate.Model.from_file(str(tmp_path / "stranger.json")) as model:
        cdmigrate.Store.create(model, str(stores / "stranger.sqlite")).close()
    database = sqlite3.connect(stores / "other.sqlite")
    database.execute("CREATE TABLE t (x)")
    database.commit()
    database.close()
    (stores / "notes.txt").write_text("notes\n")
    (stores / "nested").mkdir()
    os.symlink("people", stores / "link.sqlite")
    return tmp_path


SKIPPED = {
    "link.sqlite": "a symbolic link to 'people' (links in a folder are not followed; name the store itself)",
    "nested": "a folder (folders inside are not searched)",
    "notes.txt": "not an SQLite database",
    "other.sqlite": "an SQLite database without Core Data's tables (Z_METADATA, Z_PRIMARYKEY)",
}


def junit(path):
    root = ElementTree.parse(path).getroot()
    assert root.tag == "testsuites"
    (suite,) = root.findall("testsuite")
    return suite, {case.get("name"): case for case in suite.findall("testcase")}


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_check_writes_junit_and_skips_what_is_not_a_store(folder, entry):
    report = folder / "check.xml"
    done = run(entry, "check", str(folder / "stores"), "--models", str(folder / "models"), "--junit", str(report))
    assert done.returncode == 66, done.stdout + done.stderr  # the stranger's 134130
    assert done.stdout.startswith("target version v2 (current)\n"), done.stdout
    assert "2 of 3 stores reach version v2; 4 files skipped (not stores)" in done.stdout
    suite, cases = junit(report)
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("7", "1", "4")
    assert cases[ODD_NAME].get("file") == str(folder / "stores" / ODD_NAME)
    assert cases[ODD_NAME].find("failure") is None
    assert float(cases[ODD_NAME].get("time")) >= 0
    failure = cases["stranger.sqlite"].find("failure")
    assert failure is not None and failure.get("message").startswith("error 134130: ")
    assert {name: cases[name].find("skipped").get("message") for name in SKIPPED} == SKIPPED


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_check_to_version_and_folder_migrate_agree_on_the_stores(folder, entry):
    check = run(
        entry, "check", str(folder / "stores"), "--models", str(folder / "models"), "--to-version", "v1", "--json"
    )
    document = json.loads(check.stdout)
    assert (document["targetVersion"], document["currentVersion"]) == ("v1", "v2")
    checked = sorted(store["store"] for store in document["stores"])
    assert {os.path.basename(s["store"]): s["reason"] for s in document["skipped"]} == SKIPPED

    report = folder / "migrate.xml"
    out = folder / "out"
    done = run(
        entry,
        "migrate",
        str(folder / "stores"),
        "--out-dir",
        str(out),
        "--models",
        str(folder / "models"),
        "--junit",
        str(report),
        "--json",
    )
    assert done.returncode == 1, done.stdout + done.stderr  # the stranger fails
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    ran = sorted(line["store"] for line in lines if line.get("status") in ("migrated", "failed"))
    assert ran == checked
    assert {os.path.basename(line["store"]) for line in lines if line.get("notAStore")} == set(SKIPPED)
    suite, cases = junit(report)
    assert (suite.get("tests"), suite.get("failures"), suite.get("skipped")) == ("7", "1", "4")
    assert cases[str(folder / "stores" / ODD_NAME)].find("failure") is None
    assert {name for name in os.listdir(out) if not name.endswith(("-wal", "-shm"))} == {"people", ODD_NAME}
