"""External binary data (attributes with allowsExternalBinaryDataStorage) through the binding: a
Python policy reads the values' real bytes, inline or from their files; the migrated store holds
Core Data's bytes (0x01 + value, or 0x02 + UUID + NUL with the file in
.<name>_SUPPORT/_EXTERNAL_DATA); the report counts the missing file; the source's folder is
untouched. The store is Tests/Fixtures/external-data/photos.sqlite (see its README)."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
from typing import ClassVar

import pytest
from conftest import ROOT

import cdmigrate

FIXTURE = os.path.join(ROOT, "Tests", "Fixtures", "external-data")
IMAGE_UUID = "6F1C2A9E-3B7D-4E21-9A0C-5D8E7F6A1B2C"
MISSING_UUID = "0D4B8E2F-71A3-4C5E-8B9D-2E6F0A1C3D5E"


def pattern(count: int, seed: int) -> bytes:
    """The fixture's bytes (ExternalDataFixture.pattern in the Swift tests)."""
    return bytes(((i * 31 + (i >> 8) * 7) & 0xFF) ^ seed for i in range(count))


def copy_fixture(folder) -> str:
    os.makedirs(folder)
    shutil.copy(os.path.join(FIXTURE, "photos.sqlite"), folder)
    shutil.copytree(os.path.join(FIXTURE, ".photos_SUPPORT"), os.path.join(folder, ".photos_SUPPORT"))
    return os.path.join(folder, "photos.sqlite")


def folder_state(folder):
    state = {}
    for base, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(base, name)
            with open(path, "rb") as f:
                state[os.path.relpath(path, folder)] = f.read()
    return state


def raw_images(store):
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
        return dict(db.execute("SELECT ZNAME, ZIMAGE FROM ZPHOTO"))


class Sizes(cdmigrate.EntityMigrationPolicy):
    seen: ClassVar[dict] = {}

    def create_destination_instances(self, source, mapping, manager):
        Sizes.seen[source["name"]] = source["image"]
        return super().create_destination_instances(source, mapping, manager)


@pytest.mark.parametrize("in_place", [False, True])
def test_a_policy_reads_the_real_bytes_and_the_store_gets_core_datas(tmp_path, in_place):
    folder = tmp_path / "photos"
    source = copy_fixture(folder)
    before = folder_state(folder)
    v1 = cdmigrate.Model.from_file(os.path.join(FIXTURE, "photos-v1.json"))
    v2 = cdmigrate.Model.from_file(os.path.join(FIXTURE, "photos-v2.json"))
    document = json.loads(cdmigrate.MappingModel.infer(v1, v2).to_json())
    document["entityMappings"][0]["policy"] = "Sizes"
    mapping = cdmigrate.MappingModel.from_json(json.dumps(document))
    migration = cdmigrate.Migration(v1, v2, mapping)
    migration.register_policy("Sizes", Sizes)
    Sizes.seen = {}
    destination = source if in_place else str(tmp_path / "out.sqlite")
    report = migration.run_in_place(source) if in_place else migration.run(source, destination)

    assert Sizes.seen["inline"] == pattern(1000, 1)
    assert Sizes.seen["external"] == pattern(200_000, 2)
    assert Sizes.seen["missing"] is None
    assert report.missing_external_data_files == 1
    assert report.to_dict()["missing_external_data_files"] == 1
    assert any(MISSING_UUID in w for w in report.warnings)

    if not in_place:
        assert folder_state(folder) == before
        assert sorted(os.listdir(tmp_path)) == sorted([".out_SUPPORT", "out.sqlite", "photos"])
    raw = raw_images(destination)
    assert raw["inline"] == b"\x01" + pattern(1000, 1)
    assert raw["external"] == b"\x02" + IMAGE_UUID.encode() + b"\x00"
    assert raw["missing"] is None
    support = os.path.join(
        os.path.dirname(destination), "." + os.path.splitext(os.path.basename(destination))[0] + "_SUPPORT"
    )
    with open(os.path.join(support, "_EXTERNAL_DATA", IMAGE_UUID), "rb") as f:
        assert f.read() == pattern(200_000, 2)


def test_a_chain_carries_the_files_and_counts_the_missing_one_in_its_first_step(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    for version in ("v1", "v2", "v3"):
        shutil.copy(os.path.join(FIXTURE, f"photos-{version}.json"), models)
    source = copy_fixture(tmp_path / "photos")
    # Step by step, and fused into one pass (which counts the missing file once, in its one step).
    for fuse_steps, name, missing in ((False, "chained", [1, 0]), (True, "fused", [1])):
        destination = str(tmp_path / f"{name}.sqlite")
        report = cdmigrate.migrate_store(source, str(models), to=destination, fuse_steps=fuse_steps)
        assert [step.missing_external_data_files for step in report.steps] == missing
        assert raw_images(destination)["external"] == b"\x02" + IMAGE_UUID.encode() + b"\x00"
        with open(tmp_path / f".{name}_SUPPORT" / "_EXTERNAL_DATA" / IMAGE_UUID, "rb") as f:
            assert f.read() == pattern(200_000, 2)
        assert not [entry for entry in os.listdir(tmp_path) if "cdmigrate" in entry]
