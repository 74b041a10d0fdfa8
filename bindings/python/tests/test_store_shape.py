"""The store a migration writes, from Python: the source's UUID and the app's metadata keys kept
(the model's version keys replaced by the destination's), incremental auto_vacuum, and the
schema of the store Core Data itself wrote for the same model version."""

from __future__ import annotations

import plistlib
import sqlite3
from contextlib import closing

from conftest import RENAMES_MODELS, renames_store

import cdmigrate


def read_plist(path: str) -> dict:
    with closing(sqlite3.connect(path)) as db, db:
        return plistlib.loads(db.execute("SELECT Z_PLIST FROM Z_METADATA").fetchone()[0])


def add_app_key(path: str) -> None:
    """What an app's NSPersistentStoreCoordinator.setMetadata would leave in the store."""
    plist = read_plist(path)
    plist["com.example.lastSync"] = "2026-11-26"
    with closing(sqlite3.connect(path)) as db, db:
        db.execute("UPDATE Z_METADATA SET Z_PLIST = ?", (plistlib.dumps(plist, fmt=plistlib.FMT_BINARY),))


def schema(path: str) -> dict:
    with closing(sqlite3.connect(path)) as db, db:
        return dict(db.execute("SELECT name, sql FROM sqlite_master WHERE sql IS NOT NULL").fetchall())


def auto_vacuum(path: str) -> int:
    with closing(sqlite3.connect(path)) as db, db:
        return db.execute("PRAGMA auto_vacuum").fetchone()[0]


def test_a_chain_keeps_the_uuid_and_app_metadata_and_writes_apples_schema(tmp_path):
    store = renames_store(tmp_path, "1.0.0")
    add_app_key(store)
    uuid = cdmigrate.store_metadata(store).uuid
    destination = str(tmp_path / "current.sqlite")
    cdmigrate.migrate_store(store, RENAMES_MODELS, to=destination)

    assert cdmigrate.store_metadata(destination).uuid == uuid
    ours = read_plist(destination)
    apple_path = renames_store(tmp_path, "2.0.0")
    apple = read_plist(apple_path)
    assert ours["com.example.lastSync"] == "2026-11-26"
    assert ours["NSStoreModelVersionHashes"] == apple["NSStoreModelVersionHashes"]
    assert ours["NSStoreModelVersionHashesDigest"] == apple["NSStoreModelVersionHashesDigest"]
    assert ours["NSPersistenceFrameworkVersion"] == 1048, "the source's framework version is kept"
    assert set(ours) == set(apple) | {"com.example.lastSync", "NSStoreModelVersionChecksumKey"}
    assert auto_vacuum(destination) == 2
    assert schema(destination) == schema(apple_path)


def test_in_place_keeps_the_uuid(tmp_path):
    store = renames_store(tmp_path, "1.1.0")
    add_app_key(store)
    uuid = cdmigrate.store_metadata(store).uuid
    cdmigrate.migrate_store(store, RENAMES_MODELS, in_place=True)
    assert cdmigrate.store_metadata(store).uuid == uuid
    assert read_plist(store)["com.example.lastSync"] == "2026-11-26"


def add_history(store: str) -> None:
    with closing(sqlite3.connect(store)) as db, db:
        db.executescript("""
            CREATE TABLE ACHANGE ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER,
                ZCHANGETYPE INTEGER, ZENTITY INTEGER, ZENTITYPK INTEGER, ZTRANSACTIONID INTEGER, ZCOLUMNS BLOB );
            CREATE TABLE ATRANSACTION ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER,
                ZAUTHORTS INTEGER, ZBUNDLEIDTS INTEGER, ZCONTEXTNAMETS INTEGER, ZPROCESSIDTS INTEGER,
                ZTIMESTAMP FLOAT, ZAUTHOR VARCHAR, ZBUNDLEID VARCHAR, ZCONTEXTNAME VARCHAR, ZPROCESSID VARCHAR,
                ZQUERYGEN BLOB );
            INSERT INTO Z_PRIMARYKEY VALUES (16001, 'CHANGE', 0, 3), (16002, 'TRANSACTION', 0, 1);
            INSERT INTO ATRANSACTION (Z_PK, Z_ENT, Z_OPT, ZTIMESTAMP) VALUES (1, 16002, 1, 786000000.0);
            INSERT INTO ACHANGE (Z_PK, Z_ENT, Z_OPT, ZCHANGETYPE, ZENTITY, ZENTITYPK, ZTRANSACTIONID)
                VALUES (1, 16001, 1, 0, 1, 1, 1), (2, 16001, 1, 1, 1, 1, 1), (3, 16001, 1, 1, 1, 1, 1);
        """)


def test_store_metadata_counts_the_persistent_history_tables(tmp_path):
    """Core Data's own entities (16001 CHANGE, 16002 TRANSACTION) keep their rows in A… tables,
    which the entity list counts."""
    store = renames_store(tmp_path, "2.0.0")
    add_history(store)
    counts = {e.name: (e.entity_number, e.row_count) for e in cdmigrate.store_metadata(store).entities}
    assert counts["CHANGE"] == (16001, 3)
    assert counts["TRANSACTION"] == (16002, 1)
    assert counts["BasicEntity"] == (1, 1)


def test_a_chain_of_inferred_steps_carries_the_history(tmp_path):
    store = renames_store(tmp_path, "1.0.0")
    add_history(store)
    destination = str(tmp_path / "current.sqlite")
    report = cdmigrate.migrate_store(store, RENAMES_MODELS, to=destination)
    assert "not carried" not in repr(report.raw)
    counts = {e.name: e.row_count for e in cdmigrate.store_metadata(destination).entities}
    assert counts["CHANGE"] == 3 and counts["TRANSACTION"] == 1
    with closing(sqlite3.connect(destination)) as db:
        assert db.execute("SELECT DISTINCT ZENTITY, ZENTITYPK FROM ACHANGE").fetchall() == [(1, 1)]
