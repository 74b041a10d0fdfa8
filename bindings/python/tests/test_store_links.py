"""Stores reached through symbolic links, and reads of a store that leave nothing beside it."""

import os
import shutil
import sqlite3

from conftest import copy_mapping, rows

import cdmigrate


def _listing(folder):
    return {name: open(os.path.join(folder, name), "rb").read() for name in sorted(os.listdir(folder))}


def test_model_from_store_and_metadata_leave_no_file_beside_a_wal_store(kitchen_store):
    folder = os.path.dirname(kitchen_store)
    before = _listing(folder)
    assert not any(name.endswith(("-wal", "-shm")) for name in before)
    cdmigrate.Model.from_store(kitchen_store).close()
    cdmigrate.StoreMetadata.read(kitchen_store).close()
    assert _listing(folder) == before


def test_a_symlinked_source_is_migrated_with_the_committed_rows_of_its_targets_log(
    tmp_path, kitchen_store, kitchen_models
):
    # The target's -wal holds committed rows (a writer killed before its checkpoint).
    real = tmp_path / "real"
    real.mkdir()
    writer = sqlite3.connect(kitchen_store)
    writer.execute("PRAGMA wal_autocheckpoint = 0")
    writer.execute("INSERT INTO ZBOX (Z_PK, Z_ENT, Z_OPT, ZLABEL) SELECT Z_PK + 100, Z_ENT, 1, 'logged' FROM ZBOX")
    writer.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = Z_MAX + 100 WHERE Z_NAME = 'Box'")
    writer.commit()
    shutil.copy(kitchen_store, real / "store.sqlite")
    shutil.copy(kitchen_store + "-wal", real / "store.sqlite-wal")
    writer.close()
    assert os.path.getsize(real / "store.sqlite-wal") > 0
    link = tmp_path / "link.sqlite"
    link.symlink_to("real/store.sqlite")
    before = _listing(real)
    v1, v2 = kitchen_models
    with cdmigrate.MappingModel.from_json(copy_mapping()) as mapping, cdmigrate.Migration(
        v1, v2, [mapping]
    ) as migration:
        migration.run(str(link), str(tmp_path / "out.sqlite"))
    assert rows(str(tmp_path / "out.sqlite"), "SELECT COUNT(*) FROM ZBOX") == [(6,)]
    assert _listing(real) == before
    assert not [name for name in os.listdir(tmp_path) if ".cdmigrate-" in name or name.startswith("link.sqlite-")]


def test_in_place_through_a_symlink_migrates_the_target_and_keeps_the_link(tmp_path, kitchen_store, kitchen_models):
    link = tmp_path / "link.sqlite"
    link.symlink_to("kitchen.sqlite")
    os.chmod(kitchen_store, 0o664)
    v1, v2 = kitchen_models
    with cdmigrate.MappingModel.from_json(copy_mapping()) as mapping, cdmigrate.Migration(
        v1, v2, [mapping]
    ) as migration:
        migration.run_in_place(str(link))
    assert os.path.islink(link) and os.readlink(link) == "kitchen.sqlite"
    assert oct(os.stat(kitchen_store).st_mode & 0o777) == oct(0o664), "in place keeps the store's mode"
    assert sorted(os.listdir(tmp_path)) == ["kitchen.sqlite", "link.sqlite"]
    assert rows(kitchen_store, "SELECT COUNT(*) FROM ZBOX") == [(3,)]
