"""How much a Python policy costs per row, in microseconds: python examples/python/benchmark.py
[--rows N]. Prints figures and asserts nothing.

Each run migrates the same generated store (N rows of six attributes) with one entity mapping:

  declarative        no policy: the mapping's value expressions only (the engine alone)
  super()            a policy calling the default and changing one value afterwards
  per value          a policy reading and writing value by value (one C call per value)
  bulk               source.to_dict() and manager.create(values=..., source=source): two C calls
  bulk + fetch       the bulk policy plus a find-or-create of a shared Tag by a destination
                     fetch per row ("name == %@", limit 1; 500 distinct tags)
  bulk + fetch*      the same with a new Tag for every row (N tags at the end): about the same
                     cost per row shows that the fetch does not scan the destination

The Python cost of a policy is its time minus the declarative time, per row.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bindings", "python"))

import cdmigrate

ATTRIBUTES = [
    {"name": "name", "type": "string"},
    {"name": "count", "type": "integer64"},
    {"name": "score", "type": "double"},
    {"name": "when", "type": "date"},
    {"name": "note", "type": "string"},
    {"name": "flag", "type": "boolean"},
]
V1 = {
    "name": "BenchV1",
    "entities": [{"name": "Entry", "attributes": [*ATTRIBUTES, {"name": "group", "type": "string"}]}],
}
V2 = {
    "name": "BenchV2",
    "entities": [
        {"name": "Entry", "attributes": ATTRIBUTES},
        {"name": "Tag", "attributes": [{"name": "name", "type": "string"}]},
    ],
}


def mapping(policy=None) -> str:
    entry = {
        "name": "EntryToEntry",
        "sourceEntity": "Entry",
        "destinationEntity": "Entry",
        "predicate": "TRUEPREDICATE",
        "attributeMappings": [{"name": a["name"], "valueExpression": f"$source.{a['name']}"} for a in ATTRIBUTES],
    }
    if policy:
        entry.update(type="custom", policy=policy)
    return json.dumps({"name": "Bench", "entityMappings": [entry]})


class Super(cdmigrate.EntityMigrationPolicy):
    def create_destination_instances(self, source, mapping, manager):
        made = super().create_destination_instances(source, mapping, manager)
        made["count"] = source["count"] + 1
        return made


class PerValue(cdmigrate.EntityMigrationPolicy):
    def create_destination_instances(self, source, mapping, manager):
        made = manager.create("Entry")
        for key in ("name", "count", "score", "when", "note", "flag"):
            made[key] = source[key]
        made["count"] += 1
        manager.associate(source, made)
        return made


class Bulk(cdmigrate.EntityMigrationPolicy):
    def create_destination_instances(self, source, mapping, manager):
        row = source.to_dict()
        row["count"] += 1
        del row["group"]
        return manager.create(values=row, source=source)


class BulkFetch(cdmigrate.EntityMigrationPolicy):
    def create_destination_instances(self, source, mapping, manager):
        row = source.to_dict()
        group = row.pop("group")
        row["count"] += 1
        made = manager.create(values=row, source=source)
        if not manager.fetch_destination("Tag", "name == %@", group, limit=1):
            manager.create("Tag", {"name": group})
        return made


class BulkFetchUnique(cdmigrate.EntityMigrationPolicy):
    """A lookup that never finds: the Tags grow to one per row, so a fetch that scanned the
    destination would make the cost per row grow with the row number."""

    def create_destination_instances(self, source, mapping, manager):
        row = source.to_dict()
        del row["group"]
        made = manager.create(values=row, source=source)
        if not manager.fetch_destination("Tag", "name == %@", row["name"], limit=1):
            manager.create("Tag", {"name": row["name"]})
        return made


CASES = [
    ("declarative", None, None),
    ("super()", "Super", Super),
    ("per value", "PerValue", PerValue),
    ("bulk", "Bulk", Bulk),
    ("bulk + fetch", "BulkFetch", BulkFetch),
    ("bulk + fetch*", "BulkFetchUnique", BulkFetchUnique),
]


def generate(path: str, rows: int) -> None:
    start = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)
    with cdmigrate.Model.from_json(json.dumps(V1)) as v1, cdmigrate.Store.create(v1, path) as store:
        for i in range(rows):
            store.insert(
                "Entry",
                name=f"entry {i}",
                count=i,
                score=i / 7,
                when=start + dt.timedelta(minutes=i),
                note="x" * (i % 40),
                flag=i % 2 == 0,
                group=f"group {i % 500}",
            )
        store.save()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3, help="runs per case; the fastest counts")
    options = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="cdmigrate-bench-") as directory:
        source = os.path.join(directory, "source.sqlite")
        began = time.perf_counter()
        generate(source, options.rows)
        print(
            f"{options.rows} rows generated through Store.insert in {time.perf_counter() - began:.2f} s "
            f"({(time.perf_counter() - began) / options.rows * 1e6:.1f} µs per row)"
        )
        print(f"libcdmigrate {cdmigrate.library_version()}, SQLite {cdmigrate.sqlite_version()}")
        baseline = None
        with cdmigrate.Model.from_json(json.dumps(V1)) as v1, cdmigrate.Model.from_json(json.dumps(V2)) as v2:
            for label, name, policy in CASES:
                best = float("inf")
                for attempt in range(options.repeat):
                    destination = os.path.join(directory, f"out-{attempt}.sqlite")
                    with cdmigrate.MappingModel.from_json(mapping(name)) as m, cdmigrate.Migration(
                        v1, v2, m
                    ) as migration:
                        began = time.perf_counter()
                        report = migration.run(source, destination, policies={name: policy} if name else None)
                        best = min(best, time.perf_counter() - began)
                    for suffix in ("", "-wal", "-shm"):
                        if os.path.exists(destination + suffix):
                            os.remove(destination + suffix)
                per_row = best / options.rows * 1e6
                if baseline is None:
                    baseline = per_row
                extra = "" if name is None else f"   Python policy: {per_row - baseline:6.1f} µs per row"
                counts = ", ".join(f"{k} {v}" for k, v in sorted(report.destination_counts.items()))
                print(f"{label:14s} {best:6.2f} s  {per_row:6.1f} µs per row{extra}   ({counts})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
