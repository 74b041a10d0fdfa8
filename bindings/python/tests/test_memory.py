"""A thousand migrations in one process do not grow its memory: every registration, instance
handle and run state is released."""

from __future__ import annotations

import gc
import os

from conftest import copy_mapping

import cdmigrate
from cdmigrate import _run


def rss_kib() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


class Touching(cdmigrate.EntityMigrationPolicy):
    """Reads and writes through the binding on every row, so instance handles come and go."""

    def create_destination_instances(self, source, mapping, manager):
        destination = super().create_destination_instances(source, mapping, manager)
        destination["str"] = f"{source['str']}/{source['i64']}"
        manager.user_info.setdefault("rows", []).append(source["i64"])
        # The policy-service paths too: bulk read and write, a fetch, an object ID kept in user info.
        row = source.to_dict()
        destination.set_values({"i32": row["i32"], "unknown": 1})
        if source["i64"] % 10 == 0:
            manager.user_info.setdefault("ids", {})[source.object_id] = destination.uri
            manager.user_info["payload"] = bytearray(64 * 1024)  # released when the run ends
            assert manager.count_destination("Item", "i64 == %@", source["i64"]) == 1
            assert manager.instance_for_uri(destination.uri) == destination
        return destination


def test_a_thousand_migrations_in_one_process(tmp_path, kitchen_models, kitchen_store):
    v1, v2 = kitchen_models

    def once(i: int) -> None:
        destination = str(tmp_path / f"out-{i % 2}.sqlite")
        with cdmigrate.MappingModel.from_json(copy_mapping(item_policy="Touching")) as mapping, cdmigrate.Migration(
            v1, v2, mapping
        ) as migration:
            migration.run(
                kitchen_store,
                destination,
                policies={"Touching": Touching},
                functions={("F", "f:"): lambda x: x},
                progress=lambda p: True,
            )
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(destination + suffix):
                os.remove(destination + suffix)

    for i in range(100):  # warm up: caches, allocator arenas
        once(i)
    gc.collect()
    before = rss_kib()
    for i in range(1000):
        once(i)
    gc.collect()
    growth = rss_kib() - before
    print(f"\nRSS growth over 1000 migrations: {growth} KiB ({before} KiB before)")
    assert _run.registry == {}
    assert growth < 64 * 1024, f"RSS grew by {growth} KiB"
