"""cdmigrate.migrate_many: many stores in worker processes, one result per store, never an
exception for one store's failure."""

from __future__ import annotations

import os
import sqlite3

import pytest
from conftest import sha256
from reference_migrations import users
from reference_migrations.common import path as example_path

import cdmigrate
from cdmigrate.errors import MIGRATION_MANAGER_SOURCE_STORE, MIGRATION_MISSING_SOURCE_MODEL

ONE_STEP = {
    "source_model": example_path(users.DIRECTORY, "UsersV1.model.json"),
    "destination_model": example_path(users.DIRECTORY, "UsersV2.model.json"),
    "mappings": [example_path(users.DIRECTORY, "UsersV1ToV2.mapping.json")],
}


def make_users(path, names, country="Finland"):
    with cdmigrate.Model.from_file(ONE_STEP["source_model"]) as model, cdmigrate.Store.create(
        model, str(path)
    ) as store:
        for name in names:
            store.insert("InternationalUser", name=name, city="Turku", country=country)
        store.save()


def finns(path):
    """The Finnish users of a migrated store: (name, city), sorted."""
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
        return sorted(db.execute("SELECT ZNAME, ZCITY FROM ZFINLANDUSER").fetchall())


def test_good_stores_migrate_and_each_bad_one_is_its_own_result(tmp_path):
    sources = tmp_path / "stores"
    sources.mkdir()
    good = []
    for i in range(4):
        store = sources / f"user{i}.sqlite"
        users.generate_source(str(store), count=30 + i, seed=i)
        good.append(store)
    corrupt = sources / "corrupt.sqlite"
    corrupt.write_bytes(bytes((i * 31 + 7) % 256 for i in range(4096)))
    other_version = sources / "v2.sqlite"
    with cdmigrate.Model.from_file(ONE_STEP["destination_model"]) as v2, cdmigrate.Store.create(
        v2, str(other_version)
    ) as store:
        store.save()
    raising = sources / "raising.sqlite"
    make_users(raising, ["Aino", "raise"])
    stores = [good[0], corrupt, good[1], other_version, good[2], raising, good[3]]
    before = {p.name: sha256(str(p)) for p in sources.iterdir()}
    seen = []

    results = cdmigrate.migrate_many(
        stores, tmp_path / "out", policies_module="fleet_policies", jobs=2, on_result=seen.append, **ONE_STEP
    )

    assert [r.store for r in results] == [str(s) for s in stores]
    assert sorted(r.store for r in seen) == sorted(str(s) for s in stores)
    by_name = {os.path.basename(r.store): r for r in results}
    for i, store in enumerate(good):
        result = by_name[store.name]
        assert result.ok and result.code is None and result.message == ""
        assert result.destination == str(tmp_path / "out" / store.name)
        assert result.duration > 0
        # The same rows as one migration of the store by itself.
        alone = tmp_path / f"alone{i}.sqlite"
        report = users.migrate(str(store), str(alone))
        assert result.counts == report.destination_counts
        assert finns(result.destination) == finns(alone)
    assert not by_name["corrupt.sqlite"].ok
    assert by_name["corrupt.sqlite"].code == MIGRATION_MANAGER_SOURCE_STORE
    assert by_name["v2.sqlite"].code == MIGRATION_MISSING_SOURCE_MODEL
    assert by_name["v2.sqlite"].error_type == "MissingSourceModelError"
    assert not by_name["raising.sqlite"].ok
    assert by_name["raising.sqlite"].error_type == "RuntimeError"
    assert "cannot be migrated" in by_name["raising.sqlite"].message
    # Nothing written for the failures; the sources byte-identical, nothing beside them.
    assert sorted(p.name for p in (tmp_path / "out").iterdir() if not p.name.endswith(("-wal", "-shm"))) == sorted(
        s.name for s in good
    )
    assert {p.name: sha256(str(p)) for p in sources.iterdir()} == before


def test_a_worker_that_dies_fails_only_its_own_store(tmp_path):
    stores = []
    for i in range(4):
        store = tmp_path / f"s{i}.sqlite"
        make_users(store, ["Aino", "die" if i == 1 else "Mikko"])
        stores.append(store)
    results = cdmigrate.migrate_many(stores, tmp_path / "out", policies_module="fleet_policies", jobs=2, **ONE_STEP)
    assert [r.ok for r in results] == [True, False, True, True], results
    assert results[1].error_type == "BrokenProcessPool"
    assert "died" in results[1].message
    for i in (0, 2, 3):
        assert finns(results[i].destination) == sorted([("Aino", "Åbo"), ("Mikko", "Åbo")])


def test_in_place_replaces_each_store_only_when_it_migrated(tmp_path):
    good, bad = tmp_path / "good.sqlite", tmp_path / "bad.sqlite"
    make_users(good, ["Aino"])
    make_users(bad, ["raise"])
    bad_before = sha256(str(bad))
    results = cdmigrate.migrate_many(
        [good, bad], None, in_place=True, policies_module="fleet_policies", jobs=1, **ONE_STEP
    )
    assert [r.ok for r in results] == [True, False]
    assert results[0].destination == str(good)
    assert finns(good) == [("Aino", "Åbo")]
    assert sha256(str(bad)) == bad_before


def test_what_would_fail_every_store_raises_before_any_starts(tmp_path):
    store = tmp_path / "a" / "people.sqlite"
    store.parent.mkdir()
    make_users(store, ["Aino"])
    other = tmp_path / "b" / "people.sqlite"
    other.parent.mkdir()
    make_users(other, ["Aino"])
    out = tmp_path / "out"
    with pytest.raises(ValueError, match="would both be written"):
        cdmigrate.migrate_many([store, other], out, **ONE_STEP)
    with pytest.raises(cdmigrate.InvalidJSONError):
        cdmigrate.migrate_many(
            [store],
            out,
            source_model=ONE_STEP["source_model"],
            destination_model=ONE_STEP["destination_model"],
            mappings=[str(store)],
        )
    with pytest.raises(ImportError):
        cdmigrate.migrate_many([store], out, policies_module="no_such_policies_module", **ONE_STEP)
    with pytest.raises(ValueError):
        cdmigrate.migrate_many([store], out, models="somewhere", **ONE_STEP)
    with pytest.raises(ValueError):
        cdmigrate.migrate_many([store], None, **ONE_STEP)
    assert not out.exists()
    assert cdmigrate.migrate_many([], out, **ONE_STEP) == []


def test_a_model_set_runs_each_stores_chain_from_the_version_it_is_at(tmp_path):
    from reference_migrations import uncloudnotes

    stores, expected = [], []
    for i, version in enumerate([1, 2, 3, 2, 1]):
        store = tmp_path / f"notes{i}.sqlite"
        notes = uncloudnotes.generate_source(version, str(store), count=4 + i, seed=i + 1)
        stores.append(store)
        expected.append((f"UnCloudNotes_v{version}", len(notes)))
    # To v3: no step names a policy.
    results = cdmigrate.migrate_many(
        stores, tmp_path / "out", models=example_path(uncloudnotes.DIRECTORY, ""), to_version="UnCloudNotes_v3", jobs=2
    )
    assert [(r.ok, r.version, r.target_version) for r in results] == [(True, v, "UnCloudNotes_v3") for v, _ in expected]
    for result, (version, notes) in zip(results, expected):
        # A store already at the target is copied: no step ran, so no counts.
        assert result.counts == (
            {} if version == "UnCloudNotes_v3" else {"Note": notes, "Attachment": result.counts.get("Attachment")}
        )
        with sqlite3.connect(f"file:{result.destination}?mode=ro", uri=True) as db:
            assert db.execute("SELECT COUNT(*) FROM ZNOTE").fetchone()[0] == notes
    # To the current version: v3 → v4 runs the reference migration's policy, imported by each worker.
    results = cdmigrate.migrate_many(
        stores,
        tmp_path / "out2",
        models=example_path(uncloudnotes.DIRECTORY, ""),
        policies_module="reference_migrations.uncloudnotes",
        jobs=2,
    )
    assert [(r.ok, r.version, r.target_version) for r in results] == [
        (True, v, "UnCloudNotes_v4") for v, _ in expected
    ], results
    for result, (_version, notes) in zip(results, expected):
        with sqlite3.connect(f"file:{result.destination}?mode=ro", uri=True) as db:
            assert db.execute("SELECT COUNT(*) FROM ZNOTE").fetchone()[0] == notes
    # Without the policies module the v3 → v4 step is refused before anything runs, store by store.
    results = cdmigrate.migrate_many(stores, tmp_path / "out3", models=example_path(uncloudnotes.DIRECTORY, ""), jobs=2)
    assert not any(r.ok for r in results) and all("AttachmentToImageAttachment" in r.message for r in results)
