"""Migrates a fleet of stores on a Dask cluster with cdmigrate's Python binding.

Each store is one Dask task running ``cdmigrate.migrate_one`` on a worker (which imports
cdmigrate and, for one-step migrations with code, the policies module); the results come back as
one row per store. Nothing here is specific to a local machine: give ``--scheduler
tcp://scheduler:8786`` (or pass your own ``Client``) and the same tasks run on the cluster, as long
as every worker sees the stores and the destination folder (a shared file system) and has
``cdmigrate`` installed (``pip install ./bindings/python[fleet]``).

    python examples/fleet/fleet_dask.py --generate 300 stores/      # stores of mixed versions
    python examples/fleet/fleet_dask.py stores/*.sqlite --out-dir migrated/ \\
        --models examples/4-uncloudnotes --to-version UnCloudNotes_v3 --workers 4
"""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any, Sequence

from cdmigrate import FleetPlan, StoreResult, migrate_one

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.dirname(HERE)


def run_fleet(client: Any, stores: Sequence[str], out_dir: str | None, plan: FleetPlan) -> list[StoreResult]:
    """One Dask task per store; one StoreResult per store, in the order given. A task that fails
    as a whole (its worker died more often than the scheduler allows) becomes a failed row."""
    from distributed import as_completed

    if out_dir is not None:
        os.makedirs(out_dir, exist_ok=True)
    destinations = [store if out_dir is None else os.path.join(out_dir, os.path.basename(store)) for store in stores]
    futures = client.map(migrate_one, list(stores), destinations, plan=plan, pure=False)
    index = {future.key: i for i, future in enumerate(futures)}
    results: list[StoreResult | None] = [None] * len(futures)
    for future in as_completed(futures):
        i = index[future.key]
        if future.status == "finished":
            results[i] = future.result()
        else:
            error = future.exception()
            results[i] = StoreResult(
                stores[i], destinations[i], False, message=f"the task failed: {error}", error_type=type(error).__name__
            )
    return [r for r in results if r is not None]


def table(results: Sequence[StoreResult]) -> str:
    """The results as a text table: store, status, versions, instances written ("copied" for a
    store already at the target), seconds, error."""
    rows = [("store", "status", "version", "to", "instances", "seconds", "error")]
    for r in results:
        rows.append(
            (
                os.path.basename(r.store),
                "ok" if r.ok else "FAILED",
                r.version or "",
                r.target_version or "",
                str(sum(r.counts.values())) if r.counts or not r.ok else "copied",
                f"{r.duration:.3f}",
                "" if r.ok else f"{r.code or ''} {r.error_type or ''}: {r.message}".strip(),
            )
        )
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]) - 1)]
    return "\n".join("  ".join(cell.ljust(w) for cell, w in zip(row, widths)) + "  " + row[-1] for row in rows)


def generate(folder: str, count: int) -> dict[str, dict[str, Any]]:
    """``count`` small UnCloudNotes stores at versions 1, 2 and 3 in turn (with the reference
    migrations' generator), and what each holds: version, titles, attachments expected at v3."""
    sys.path.insert(0, os.path.join(EXAMPLES, "python"))
    from reference_migrations import uncloudnotes

    os.makedirs(folder, exist_ok=True)
    expected: dict[str, dict[str, Any]] = {}
    for i in range(count):
        version = 1 + i % 3
        path = os.path.join(folder, f"user{i:04d}-v{version}.sqlite")
        notes = uncloudnotes.generate_source(version, path, count=1 + i % 5, seed=i)
        attachments = {1: 0, 2: sum(1 for n in notes if n.images), 3: sum(len(n.images) for n in notes) + 2}[version]
        expected[path] = {
            "version": f"UnCloudNotes_v{version}",
            "titles": sorted(n.title for n in notes),
            "attachments": attachments,
        }
    return expected


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("stores", nargs="*", help="the stores (or, with --generate, the folder to make them in)")
    parser.add_argument(
        "--generate", type=int, metavar="N", help="make N small stores of mixed versions in the folder given and stop"
    )
    parser.add_argument("--out-dir", help="where the migrated stores go (under their own names)")
    parser.add_argument("--in-place", action="store_true", help="replace each store with its migrated version")
    parser.add_argument(
        "--models",
        default=os.path.join(EXAMPLES, "4-uncloudnotes"),
        help="a model set (default: examples/4-uncloudnotes)",
    )
    parser.add_argument(
        "--to-version", default="UnCloudNotes_v3", help="the version to reach (default: UnCloudNotes_v3)"
    )
    parser.add_argument(
        "--policies-module",
        help="an importable module with POLICIES (and FUNCTIONS) for steps that name "
        "policies, e.g. reference_migrations.uncloudnotes with --to-version UnCloudNotes_v4",
    )
    parser.add_argument(
        "--scheduler", help="a Dask scheduler's address (tcp://scheduler:8786); default: a LocalCluster"
    )
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1, help="LocalCluster worker processes")
    args = parser.parse_args(argv)
    if args.generate is not None:
        if len(args.stores) != 1:
            parser.error("--generate N takes one folder")
        generate(args.stores[0], args.generate)
        return 0
    if args.in_place == (args.out_dir is not None):
        parser.error("give either --out-dir or --in-place")

    from distributed import Client, LocalCluster

    plan = FleetPlan(
        models=args.models, to_version=args.to_version, in_place=args.in_place, policies_module=args.policies_module
    )
    if args.scheduler:
        client = Client(args.scheduler)
        cluster = None
    else:
        cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True)
        client = Client(cluster)
    try:
        results = run_fleet(client, args.stores, None if args.in_place else args.out_dir, plan)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    print(table(results))
    failed = sum(1 for r in results if not r.ok)
    print(f"{len(results) - failed} of {len(results)} stores migrated, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
