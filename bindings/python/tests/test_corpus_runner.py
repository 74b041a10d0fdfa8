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
    return subprocess.run([sys.executable, RUNNER, "--cdmigrate", CLI, *arguments], capture_output=True, text=True, check=True)


def test_renamed_attributes_reach_the_current_version_with_their_values(tmp_path):
    shutil.copytree(os.path.join(ROOT, "Tests", "Fixtures", "apple-stores", "renames", "Model.xcdatamodeld"),
                    tmp_path / "Model.xcdatamodeld")
    done = corpus("--json", str(tmp_path / "results.jsonl"), str(tmp_path))
    assert done.stdout.splitlines()[-1] == "1 bundles: 1 import, 1 seed, 1 migrate, 1 compare"
    result = json.loads((tmp_path / "results.jsonl").read_text().splitlines()[0])
    assert result["versions"] == 5 and result["failed"] is None


def test_compare_reports_lost_instances_and_changed_values(tmp_path):
    sys.path.insert(0, os.path.join(ROOT, "scripts"))
    import corpus as runner
    model = {"name": "Notes", "entities": [{"name": "Note", "attributes": [
        {"name": "title", "type": "string", "optional": True}, {"name": "rank", "type": "integer32", "optional": True}]}]}
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
