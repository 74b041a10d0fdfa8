"""Store metadata without migrating (cdmigrate.store_metadata), model compatibility and version
detection on stores Apple's Core Data wrote; compiled mapping models (.cdm); the attribute types
Core Data keeps for transient attributes only."""

from __future__ import annotations

import base64
import json
import os
import shutil

import pytest
from conftest import ROOT

import cdmigrate

FIXTURES = os.environ.get("CDMIGRATE_FIXTURES", os.path.join(ROOT, "Tests", "Fixtures"))
RENAMES = os.path.join(FIXTURES, "apple-stores", "renames")
XCODE_SERVER = os.path.join(FIXTURES, "xcode", "XcodeServer")


def copied_store(tmp_path, version):
    name = f"Example_v{version}.sqlite"
    for suffix in ("", "-wal", "-shm"):
        source = os.path.join(RENAMES, name + suffix)
        if os.path.exists(source):
            shutil.copy(source, tmp_path / (name + suffix))
    return str(tmp_path / name)


def json_model(version):
    return cdmigrate.Model.from_file(os.path.join(FIXTURES, "json-models", f"renames-v{version}.json"))


def test_store_metadata_reads_hashes_identifiers_uuid_type_and_row_counts(tmp_path):
    with cdmigrate.store_metadata(copied_store(tmp_path, "1.0.0")) as metadata:
        assert metadata.store_type == "SQLite"
        assert len(metadata.uuid) == 36
        assert metadata.is_empty is False
        assert len(metadata.version_identifiers) == 1
        assert [e.name for e in metadata.entities] == ["BasicEntity"]
        entity = metadata.entities[0]
        assert (entity.superentity, entity.entity_number, entity.row_count) == (None, 1, 1)
        assert len(entity.version_hash) == 32
        assert metadata.version_hashes == {"BasicEntity": entity.version_hash}


def test_model_is_compatible_with_the_store_it_wrote_and_names_the_differences_of_another(tmp_path):
    store = copied_store(tmp_path, "1.0.0")
    with json_model("1.0.0") as v1, json_model("2.0.0") as v2, cdmigrate.store_metadata(store) as metadata:
        assert v1.is_compatible(store) is True
        assert v1.is_compatible(metadata) is True
        assert v1.version_differences(metadata) == []
        assert v2.is_compatible(metadata) is False
        [difference] = v2.version_differences(store)
        assert difference.entity == "BasicEntity"
        assert difference.store_hash == metadata.version_hashes["BasicEntity"]
        assert len(difference.model_hash) == 32 and difference.model_hash != difference.store_hash
        assert difference.store_hash.hex() in str(difference)


def test_model_version_set_finds_the_version_each_store_was_written_with(tmp_path):
    versions = cdmigrate.ModelVersionSet(os.path.join(RENAMES, "Model.xcdatamodeld"))
    for version in ("1.0.0", "1.1.0", "1.1.2", "1.2.0", "2.0.0"):
        assert versions.version_for_store(copied_store(tmp_path, version)) == "v" + version
    other = cdmigrate.ModelVersionSet(os.path.join(XCODE_SERVER, "1_0_0", "XcodeServer.xcdatamodeld"))
    with cdmigrate.store_metadata(copied_store(tmp_path, "1.0.0")) as metadata:
        assert other.version_for_store(metadata) is None
        with pytest.raises(cdmigrate.MigrationIOError):
            cdmigrate.ModelVersionSet(str(tmp_path / "missing.xcdatamodeld")).version_for_store(metadata)


def test_store_metadata_errors_name_the_file(tmp_path):
    missing = str(tmp_path / "missing.sqlite")
    with pytest.raises(cdmigrate.MigrationIOError) as error:
        cdmigrate.store_metadata(missing)
    assert missing in str(error.value)
    not_a_store = tmp_path / "text.sqlite"
    not_a_store.write_text("hello")
    with pytest.raises(cdmigrate.MigrationError):
        cdmigrate.store_metadata(str(not_a_store))
    metadata = cdmigrate.store_metadata(copied_store(tmp_path, "1.0.0"))
    metadata.close()
    with pytest.raises(cdmigrate.MisuseError):
        metadata.is_compatible(json_model("1.0.0"))


def test_compiled_mapping_model_loads_through_from_file_and_from_xcode():
    cdm = os.path.join(XCODE_SERVER, "2_0_0", "MappingModel.cdm_precompiled")
    with cdmigrate.MappingModel.from_file(cdm) as mapping:
        names = mapping.entity_mapping_names
    assert len(names) == 23 and names[0] == "CommitContributorToManagedCommitContributor"
    source = cdmigrate.Model.from_file(os.path.join(XCODE_SERVER, "1_1_0", "XcodeServer.xcdatamodeld"))
    destination = cdmigrate.Model.from_file(os.path.join(XCODE_SERVER, "2_0_0", "XcodeServer.xcdatamodeld"))
    with source, destination:
        with cdmigrate.MappingModel.from_xcode(cdm, source, destination) as compiled, cdmigrate.MappingModel.from_xcode(
            os.path.join(XCODE_SERVER, "2_0_0", "MappingModel.xcmappingmodel"), source, destination
        ) as written:
            assert compiled.entity_mapping_names == written.entity_mapping_names


def test_transient_only_attribute_types_have_core_datas_values():
    assert (
        cdmigrate.AttributeType.UNDEFINED,
        cdmigrate.AttributeType.OBJECT_ID,
        cdmigrate.AttributeType.COMPOSITE,
    ) == (0, 2000, 2100)
    model = cdmigrate.Model.from_json(
        '{"name": "T", "entities": [{"name": "E", "attributes": ['
        '{"name": "scratch", "type": "undefined", "transient": true},'
        '{"name": "title", "type": "string"}]}]}'
    )
    with model:
        assert model.attribute_type("E", "scratch") is cdmigrate.AttributeType.UNDEFINED
        assert model.entity("E").attributes["scratch"].type is cdmigrate.AttributeType.UNDEFINED


def test_missing_source_model_error_names_hashes_in_hex_and_the_version_the_store_matches(tmp_path):
    store = copied_store(tmp_path, "1.0.0")
    with json_model("1.1.0") as v110, json_model("1.2.0") as v120, cdmigrate.store_metadata(store) as metadata:
        with cdmigrate.MappingModel.from_json('{"entityMappings": []}') as empty, cdmigrate.Migration(
            v110, v120, empty
        ) as migration:
            with pytest.raises(cdmigrate.MissingSourceModelError) as error:
                migration.run(store, str(tmp_path / "out.sqlite"))
            [difference] = v110.version_differences(metadata)
            assert (
                f"store hash {base64.b64encode(difference.store_hash).decode()}, "
                f"model hash {base64.b64encode(difference.model_hash).decode()}" in str(error.value)
            )
            migration.set_model_versions(os.path.join(RENAMES, "Model.xcdatamodeld"))
            with pytest.raises(cdmigrate.MissingSourceModelError) as error:
                migration.run(store, str(tmp_path / "out.sqlite"))
            assert "matches version 'v1.0.0'" in str(error.value)
            with pytest.raises(cdmigrate.MigrationIOError):
                migration.set_model_versions(str(tmp_path / "missing.xcdatamodeld"))


def test_model_from_store_gives_the_cached_model_which_opens_the_store(tmp_path):
    path = copied_store(tmp_path, "1.1.0")
    with cdmigrate.Model.from_store(path) as model:
        assert model.entity_names == ["BasicEntity"]
        assert "v1_1_0_name" in model.entity("BasicEntity").attributes
        assert model.warnings == []
        assert model.is_compatible(path)


def test_model_from_store_rebuilds_a_model_without_a_cache_and_says_so(tmp_path):
    notes = os.path.join(FIXTURES, "apple-stores", "macos-notes")
    for suffix in ("", "-wal", "-shm"):
        shutil.copy(os.path.join(notes, "NotesV7.storedata" + suffix), tmp_path / ("NotesV7.storedata" + suffix))
    with cdmigrate.Model.from_store(tmp_path / "NotesV7.storedata") as model:
        assert len(model.entity_names) == 22
        assert "username" in model.entity("Account").attributes
        assert any("rebuilt from the schema of the store" in w for w in model.warnings)


def test_model_from_store_errors_name_the_file(tmp_path):
    with pytest.raises(cdmigrate.MigrationIOError, match="no such file"):
        cdmigrate.Model.from_store(tmp_path / "missing.sqlite")
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database " * 64)
    with pytest.raises(cdmigrate.SQLiteError):
        cdmigrate.Model.from_store(garbage)
    import sqlite3

    plain = tmp_path / "plain.sqlite"
    connection = sqlite3.connect(plain)
    connection.execute("CREATE TABLE t (x)")
    connection.commit()
    connection.close()
    with pytest.raises(cdmigrate.InvalidModelError, match="not a Core Data SQLite store"):
        cdmigrate.Model.from_store(plain)
    with pytest.raises(TypeError):
        cdmigrate.Model.from_store(None)


def test_a_migrated_store_gives_back_its_own_model_from_its_cache(tmp_path):
    # Stores cdmigrate creates keep their model in Z_MODELCACHE, as Core Data's stores do: the
    # store's own model is the destination model itself (names in their case, no "rebuilt" warning).
    v1 = cdmigrate.Model.from_json(
        '{"entities": [{"name": "Item", "attributes": [{"name": "camelName", "type": "string"}]}]}'
    )
    v2 = cdmigrate.Model.from_json(
        '{"entities": [{"name": "Item", "attributes": [{"name": "camelName", "type": "string"},'
        ' {"name": "addedCount", "type": "integer32", "optional": false, "default": 3}]}]}'
    )
    with cdmigrate.Store.create(v1, tmp_path / "v1.sqlite") as store:
        store.insert("Item", camelName="kept")
        store.save()
    with cdmigrate.MappingModel.infer(v1, v2) as mapping, cdmigrate.Migration(v1, v2, mapping) as migration:
        migration.run(tmp_path / "v1.sqlite", tmp_path / "v2.sqlite")
    for path, names in ((tmp_path / "v1.sqlite", {"camelName"}), (tmp_path / "v2.sqlite", {"camelName", "addedCount"})):
        with cdmigrate.Model.from_store(path) as own:
            assert own.entity_names == ["Item"]
            assert set(own.entity("Item").attributes) == names
            assert own.warnings == []
            assert own.is_compatible(path)
    import sqlite3

    connection = sqlite3.connect(tmp_path / "v2.sqlite")
    (blob,) = connection.execute("SELECT Z_CONTENT FROM Z_MODELCACHE").fetchone()
    connection.close()
    import plistlib
    import zlib

    archive = plistlib.loads(zlib.decompress(blob, -15))
    assert archive["$archiver"] == "NSKeyedArchiver"
    objects = archive["$objects"]
    root = objects[archive["$top"]["root"].data]
    assert objects[root["$class"].data]["$classname"] == "NSManagedObjectModel"


def test_model_entity_version_hashes_are_those_core_data_wrote_into_each_store(tmp_path):
    # Apple's Core Data wrote each renames store; its NSStoreModelVersionHashes are the hashes
    # Core Data computed for the Xcode model version, which cdmigrate computes anew here.
    seen = set()
    for version in ("1.0.0", "1.1.0", "1.1.2", "1.2.0", "2.0.0"):
        xcode_model = os.path.join(RENAMES, "Model.xcdatamodeld", f"v{version}.xcdatamodel")
        with cdmigrate.Model.from_file(xcode_model) as model, cdmigrate.store_metadata(
            copied_store(tmp_path, version)
        ) as metadata:
            hashes = model.entity_version_hashes
            assert hashes == metadata.version_hashes
            assert model.entity("BasicEntity").version_hash == hashes["BasicEntity"]
            assert isinstance(hashes["BasicEntity"], bytes) and len(hashes["BasicEntity"]) == 32
            seen.add(hashes["BasicEntity"])
    assert len(seen) == 5  # every version renames the attribute: five different hashes


def test_entity_version_hashes_are_each_entitys_own_in_a_model_with_inheritance():
    # The model JSON the C API writes carries each entity's hash: the same bytes, entity by entity.
    with cdmigrate.Model.from_file(os.path.join(FIXTURES, "json-models", "notes-v7.json")) as model:
        written = {e["name"]: _hash_bytes(e["versionHash"]) for e in json.loads(model.to_json())["entities"]}
        hashes = model.entity_version_hashes
        assert len(hashes) == 22 and hashes == written
        assert len(set(hashes.values())) == 22 and all(len(h) == 32 for h in hashes.values())
        for name in model.entity_names:
            assert model.entity(name).version_hash == written[name]
        with pytest.raises(cdmigrate.NotFoundError, match="NoSuchEntity"):
            model.entity("NoSuchEntity")


def _hash_bytes(text):
    return bytes.fromhex(text) if len(text) == 64 else base64.b64decode(text)


def test_metadata_of_a_store_path_is_read_and_metadata_already_read_is_itself(tmp_path):
    store = copied_store(tmp_path, "1.0.0")
    with cdmigrate.StoreMetadata.of(store) as metadata:
        assert cdmigrate.StoreMetadata.of(metadata) is metadata
        assert metadata.uuid == cdmigrate.store_metadata(store).uuid
        assert [entity.name for entity in metadata.entities] == ["BasicEntity"]


def test_metadata_read_for_a_with_block_is_closed_after_it_and_metadata_given_is_left_open(tmp_path):
    store = copied_store(tmp_path, "1.0.0")
    with cdmigrate.StoreMetadata.reading(store) as read:
        assert [entity.name for entity in read.entities] == ["BasicEntity"]
        assert not read.closed
    assert read.closed
    with cdmigrate.StoreMetadata.read(store) as given:
        with cdmigrate.StoreMetadata.reading(given) as same:
            assert same is given
        assert not given.closed
        assert json_model("1.0.0").is_compatible(given) is True
