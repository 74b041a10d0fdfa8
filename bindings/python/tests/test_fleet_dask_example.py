"""examples/fleet: a few hundred small stores of mixed versions migrated on a Dask LocalCluster of
several worker processes; every row of the result checked against what was generated. Skipped
when dask's distributed is not installed (pip install ./bindings/python[fleet]), unless
CDMIGRATE_FLEET=required (scripts/test.sh), which makes that a failure."""

from __future__ import annotations

import os
import signal
import sqlite3
import sys

import pytest

if os.environ.get("CDMIGRATE_FLEET") == "required":  # scripts/test.sh: fail, never skip
    import distributed
else:
    distributed = pytest.importorskip("distributed")

from conftest import EXAMPLES, sha256

import cdmigrate

sys.path.insert(0, os.path.join(EXAMPLES, "fleet"))
import fleet_dask

STORES = 300


def test_a_dask_cluster_migrates_every_store_of_mixed_versions(tmp_path):
    sources = tmp_path / "stores"
    expected = fleet_dask.generate(str(sources), STORES)
    corrupt = sources / "corrupt.sqlite"
    corrupt.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 8)
    stores = [*sorted(expected), str(corrupt)]
    before = {name: sha256(str(sources / name)) for name in os.listdir(sources)}
    plan = cdmigrate.FleetPlan(models=os.path.join(EXAMPLES, "4-uncloudnotes"), to_version="UnCloudNotes_v3")
    out = tmp_path / "out"

    # distributed installs a SIGINT handler of its own and leaves it: put Python's back for the
    # tests that follow (the binding turns Ctrl-C into KeyboardInterrupt only under Python's own).
    sigint = signal.getsignal(signal.SIGINT)
    try:
        with distributed.LocalCluster(
            n_workers=3, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster, distributed.Client(cluster) as client:
            assert len(client.scheduler_info()["workers"]) == 3
            results = fleet_dask.run_fleet(client, stores, str(out), plan)
    finally:
        signal.signal(signal.SIGINT, sigint)

    assert [r.store for r in results] == stores
    for result in results[:-1]:
        want = expected[result.store]
        assert result.ok, (result.store, result.message)
        assert (result.version, result.target_version) == (want["version"], "UnCloudNotes_v3")
        assert result.destination == str(out / os.path.basename(result.store))
        if want["version"] == "UnCloudNotes_v3":
            assert result.counts == {}  # already at the target: copied, no step ran
        else:
            assert result.counts == {"Note": len(want["titles"]), "Attachment": want["attachments"]}, result.store
        with sqlite3.connect(f"file:{result.destination}?mode=ro", uri=True) as db:
            assert sorted(t for (t,) in db.execute("SELECT ZTITLE FROM ZNOTE")) == want["titles"]
            assert db.execute("SELECT COUNT(*) FROM ZATTACHMENT").fetchone()[0] == want["attachments"]
    bad = results[-1]
    assert not bad.ok and bad.code is not None and bad.message
    assert not os.path.exists(bad.destination)
    # The table has a row per store, and the sources are byte-identical.
    text = fleet_dask.table(results)
    assert len(text.splitlines()) == len(stores) + 1
    assert text.splitlines()[-1].split()[:2] == ["corrupt.sqlite", "FAILED"]
    assert {name: sha256(str(sources / name)) for name in os.listdir(sources)} == before
