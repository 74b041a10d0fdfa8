#!/usr/bin/env python3
"""Fleet scaling: many small stores migrated with 1 and 2 workers, side by side in one run.

The stores are reference migration 5's (InternationalUser v1 → SwedenUser/FinlandUser v2), each
of a few hundred users with its own seed. Paths:

  cli              cdmigrate migrate --jobs N STORES… --out-dir DIR, the no-code mapping
                   (a child process per store)
  python           cdmigrate.migrate_many(..., jobs=N), the no-code mapping (spawned workers, each
                   loading the models once)
  python-policies  cdmigrate.migrate_many(..., jobs=N, policies_module=…), the mapping with the
                   Python policies SwedenUserMapping and FinlandUserMapping

Rounds are interleaved (every path and worker count once per round, each into a fresh folder).
Printed per path and worker count: stores per hour (median of the rounds, min, max) and the
paired ratio of 2 workers to 1 in the same round (median, min, max). Wall time covers the whole
call: process start-up, loading models, every store. The figures are this machine's at this
moment (other work on it shows); nothing is asserted about speed. Every run's destination counts
are checked against the python path's first run, store by store.

    python3 bench/fleet.py                        # 48 stores of 300 users, 3 rounds
    python3 bench/fleet.py --stores 200 --users 100
    python3 bench/fleet.py --quick                # a small run that only checks every path works
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
USERS = os.path.join(EXAMPLES, "5-international-users")
PATHS = ["cli", "python", "python-policies"]
WORKERS = [1, 2]
sys.path.insert(0, os.path.join(EXAMPLES, "python"))
# The package from the repository (make -C bindings/python python-package puts the library in it)
# unless CDMIGRATE_BENCH_INSTALLED=1 asks for the installed one.
if os.environ.get("CDMIGRATE_BENCH_INSTALLED") != "1":
    sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))


def cli_binary(given: str | None) -> str:
    for candidate in [
        given,
        os.path.join(ROOT, ".build", "release", "cdmigrate"),
        os.path.join(ROOT, ".build", "debug", "cdmigrate"),
    ]:
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    sys.exit("no cdmigrate executable: swift build -c release --product cdmigrate (or --cli PATH)")


def run_cli(binary: str, stores: list, out: str, jobs: int) -> dict:
    command = [
        binary,
        "migrate",
        "--jobs",
        str(jobs),
        *stores,
        "--out-dir",
        out,
        "--json",
        "--source-model",
        os.path.join(USERS, "UsersV1.model.json"),
        "--destination-model",
        os.path.join(USERS, "UsersV2.model.json"),
        "--mapping",
        os.path.join(USERS, "UsersV1ToV2NoCode.mapping.json"),
    ]
    done = subprocess.run(command, capture_output=True, text=True)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    if done.returncode != 0:
        sys.exit(f"cli failed ({done.returncode}): {done.stdout[-2000:]} {done.stderr[-2000:]}")
    return {os.path.basename(o["store"]): o["counts"] for o in lines if "store" in o}


def run_python(stores: list, out: str, jobs: int, policies: bool) -> dict:
    import cdmigrate

    mapping = "UsersV1ToV2.mapping.json" if policies else "UsersV1ToV2NoCode.mapping.json"
    results = cdmigrate.migrate_many(
        stores,
        out,
        jobs=jobs,
        source_model=os.path.join(USERS, "UsersV1.model.json"),
        destination_model=os.path.join(USERS, "UsersV2.model.json"),
        mappings=[os.path.join(USERS, mapping)],
        policies_module="reference_migrations.users" if policies else None,
    )
    failed = [r for r in results if not r.ok]
    if failed:
        sys.exit(f"python failed: {failed[0]}")
    return {os.path.basename(r.store): r.counts for r in results}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stores", type=int, default=48)
    parser.add_argument("--users", type=int, default=300, help="users per store")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--cli", help="the cdmigrate executable (default: .build/release/cdmigrate, else .build/debug/cdmigrate)"
    )
    parser.add_argument("--quick", action="store_true", help="6 stores of 50 users, 1 round")
    args = parser.parse_args()
    if args.quick:
        args.stores, args.users, args.rounds = 6, 50, 1
    binary = cli_binary(args.cli)
    from reference_migrations import users

    import cdmigrate

    work = tempfile.mkdtemp(prefix="cdmigrate-fleet-bench-")
    try:
        folder = os.path.join(work, "stores")
        os.makedirs(folder)
        stores = []
        for i in range(args.stores):
            path = os.path.join(folder, f"user{i:04d}.sqlite")
            users.generate_source(path, count=args.users, seed=i + 1)
            stores.append(path)
        seconds = {(p, w): [] for p in PATHS for w in WORKERS}
        load_before = os.getloadavg()[0]
        reference = None
        for round_ in range(args.rounds):
            for path in PATHS:
                for workers in WORKERS:
                    out = os.path.join(work, f"out-{path}-{workers}-{round_}")
                    started = time.perf_counter()
                    if path == "cli":
                        counts = run_cli(binary, stores, out, workers)
                    else:
                        counts = run_python(stores, out, workers, policies=path == "python-policies")
                    seconds[(path, workers)].append(time.perf_counter() - started)
                    if reference is None:
                        reference = counts
                    elif counts != reference:
                        sys.exit(f"{path} with {workers} worker(s) gave other destination counts than the first run")
                    shutil.rmtree(out)
        load = os.getloadavg()[0]
        print(
            f"fleet: {args.stores} stores of {args.users} users (reference migration 5), {args.rounds} round(s), "
            f"{os.cpu_count()} cores, load average {load_before:.1f} before and {load:.1f} after; "
            f"cli: {os.path.relpath(binary, ROOT)}; cdmigrate {cdmigrate.library_version()}"
        )
        print(
            f"{'path':<16} {'workers':>7} {'stores/h median':>16} {'min':>10} {'max':>10}   "
            f"{'2 ÷ 1 workers (paired) median, min, max':<40}"
        )
        for path in PATHS:
            for workers in WORKERS:
                rates = [args.stores / s * 3600 for s in seconds[(path, workers)]]
                ratio = ""
                if workers == 2:
                    pairs = [one / two for one, two in zip(seconds[(path, 1)], seconds[(path, 2)])]
                    ratio = f"{statistics.median(pairs):.2f}×, {min(pairs):.2f}×, {max(pairs):.2f}×"
                print(
                    f"{path:<16} {workers:>7} {statistics.median(rates):>16,.0f} "
                    f"{min(rates):>10,.0f} {max(rates):>10,.0f}   {ratio}"
                )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
