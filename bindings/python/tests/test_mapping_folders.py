"""Model sets whose mapping models are kept in another folder (``ModelSet(path, mappings=…)``,
``--mappings DIR``), name a version renamed since, or whose first version is in Xcode 3's format."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from conftest import ROOT

import cdmigrate

FIXTURES = os.path.join(ROOT, "Tests", "Fixtures")
UNCLOUDNOTES = os.path.join(FIXTURES, "xcode", "UnCloudNotes")
BOOKS = os.path.join(FIXTURES, "xcode3", "CoreDataBooks")
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}


def project(tmp_path) -> tuple:
    """The UnCloudNotes model with its v2 renamed v2b, and its Xcode mapping models (which name
    v2 in their model paths) kept in Migrations/Xcode/."""
    bundle = tmp_path / "UnCloudNotesDataModel.xcdatamodeld"
    shutil.copytree(os.path.join(UNCLOUDNOTES, "UnCloudNotesDataModel.xcdatamodeld"), bundle)
    os.rename(bundle / "UnCloudNotesDataModel_v2.xcdatamodel", bundle / "UnCloudNotesDataModel_v2b.xcdatamodel")
    mappings = tmp_path / "Migrations"
    for name in ("UnCloudNotesMappingModel_v2_to_v3", "UnCloudNotesMappingModel_v3_to_v4"):
        shutil.copytree(
            os.path.join(UNCLOUDNOTES, name + ".xcmappingmodel"), mappings / "Xcode" / (name + ".xcmappingmodel")
        )
    return str(bundle), str(mappings)


def test_mapping_models_in_a_folder_are_found_and_matched_by_their_embedded_models(tmp_path):
    bundle, mappings = project(tmp_path)
    alone = cdmigrate.ModelSet(bundle).json_files()
    assert alone.mapping_models == {}
    assert any("no mapping model found" in w and "found 0 mapping models" in w for w in alone.warnings), alone.warnings
    files = cdmigrate.ModelSet(bundle, mappings=[mappings]).json_files()
    assert files.mapping_models == {
        "UnCloudNotesMappingModel_v2_to_v3": ("UnCloudNotesDataModel_v2b", "UnCloudNotesDataModel_v3"),
        "UnCloudNotesMappingModel_v3_to_v4": ("UnCloudNotesDataModel_v3", "UnCloudNotesDataModel_v4"),
    }
    assert any("names version 'UnCloudNotesDataModel_v2'" in w for w in files.warnings), files.warnings
    assert "mappings=" in repr(cdmigrate.ModelSet(bundle, mappings))


def test_an_xcode3_model_matches_apples_store(tmp_path):
    store = str(tmp_path / "books.sqlite")
    shutil.copyfile(os.path.join(BOOKS, "CoreDataBooks.CDBStore"), store)
    plan = cdmigrate.ModelSet(os.path.join(BOOKS, "CoreDataBooks.xcdatamodeld")).plan(store)
    assert plan.store_version == "CoreDataBooks" and plan.is_at_target


def test_the_command_line_imports_with_mapping_folders(tmp_path):
    bundle, mappings = project(tmp_path)
    out = tmp_path / "json"
    result = subprocess.run(
        [sys.executable, "-m", "cdmigrate", "import", bundle, "-o", str(out), "--mappings", mappings, "--json"],
        capture_output=True,
        text=True,
        env=ENV,
    )
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert sorted(document["mappingModels"]) == [
        "UnCloudNotesMappingModel_v2_to_v3",
        "UnCloudNotesMappingModel_v3_to_v4",
    ]
    assert (out / "UnCloudNotesMappingModel_v2_to_v3.mapping.json").exists()
    again = cdmigrate.ModelSet(str(out)).json_files()
    assert again.versions == [
        "UnCloudNotesDataModel",
        "UnCloudNotesDataModel_v2b",
        "UnCloudNotesDataModel_v3",
        "UnCloudNotesDataModel_v4",
    ]
    refused = subprocess.run(
        [
            sys.executable,
            "-m",
            "cdmigrate",
            "plan",
            "x.sqlite",
            "--models",
            bundle,
            "--mappings",
            str(tmp_path / "none"),
        ],
        capture_output=True,
        text=True,
        env=ENV,
    )
    assert refused.returncode != 0 and "none" in refused.stderr
