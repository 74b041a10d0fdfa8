#!/usr/bin/env python3
"""A chain of four inferred steps run fused into one pass (cdmigrate's default) and step by step
(``fuse_steps=False``), beside one such step alone and ``cp`` of the store as the limit.

The chain (1M rows of reference-1's notes by default, made by bench/run.py's make_stores), each
step one version of a model set of JSON models, no mapping models (Core Data's inferred mapping):

  c0 → c1   ``Nota.contenido`` renamed ``texto``
  c1 → c2   a new optional attribute ``extra``
  c2 → c3   ``texto`` renamed ``cuerpo`` (a rename following a rename)
  c3 → c4   a new attribute ``prioridad`` with a default

"one step" is c0 → c1 alone, through the same chain call (``to_version="c1"``). Each path runs in
its own process, in interleaved rounds; printed: seconds as median (min–max) and the paired ratio
to one step. The fused and step-by-step results are compared row by row (every column of every
table).

    python3 bench/chain.py                  # 1M rows, 3 rounds
    python3 bench/chain.py --rows 100k --rounds 1
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sqlite3
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench

V2 = os.path.join(bench.NOTAS, "NotasV2.model.json")
PATHS = ["cp", "one-step", "four-steps", "four-fused"]


def model_set(work: str) -> str:
    """A folder of JSON models c0 (NotasV2) … c4, each changing Nota as the docstring lists."""
    folder = os.path.join(work, "chain-models")
    os.makedirs(folder, exist_ok=True)
    with open(V2) as f:
        base = json.load(f)

    def version(index: int, change) -> None:
        document = json.loads(json.dumps(base))
        document["versionIdentifier"] = f"c{index}"
        for entity in document["entities"]:
            if entity["name"] == "Nota":
                change(entity)
        with open(os.path.join(folder, f"c{index}.json"), "w") as f:
            json.dump(document, f)

    def rename(old: str, new: str):
        def apply(entity):
            for attribute in entity["attributes"]:
                if attribute["name"] == old:
                    attribute["name"] = new
                    attribute["renamingIdentifier"] = old

        return apply

    def add(attribute):
        return lambda entity: entity["attributes"].append(attribute)

    steps = [
        rename("contenido", "texto"),
        add({"name": "extra", "type": "string"}),
        rename("texto", "cuerpo"),
        add({"name": "prioridad", "type": "integer16", "default": 3}),
    ]
    version(0, lambda entity: None)
    for index in range(1, 5):
        # Each version carries the changes before it (renaming identifiers only on the step that renames).
        def cumulative(entity, upto=index):
            for step in steps[:upto]:
                step(entity)
            for attribute in entity["attributes"]:
                renamed_now = (upto == 1 and attribute["name"] == "texto") or (
                    upto == 3 and attribute["name"] == "cuerpo"
                )
                if not renamed_now:
                    attribute.pop("renamingIdentifier", None)

        version(index, cumulative)
    return folder


def child(argv: list) -> None:
    """``chain.py --child PATH SOURCE DESTINATION MODELS``: one run; prints seconds and the passes."""
    path, source, destination, models = argv
    if path == "cp":
        start = time.perf_counter()
        subprocess.run(["cp", source, destination], check=True)
        print(f"{time.perf_counter() - start:.6f} -")
        return
    import cdmigrate

    start = time.perf_counter()
    report = cdmigrate.migrate_store(
        source,
        models,
        to=destination,
        to_version="c1" if path == "one-step" else None,
        fuse_steps=path != "four-steps",
    )
    seconds = time.perf_counter() - start
    print(f"{seconds:.6f} {len(report.steps)}")


def run_one(path: str, source: str, models: str, work: str) -> tuple:
    destination = os.path.join(work, f"out-chain-{path}.sqlite")
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(destination + suffix):
            os.remove(destination + suffix)
    out = subprocess.run(
        [sys.executable, __file__, "--child", path, source, destination, models],
        env=bench.python_env(),
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return float(out[0]), out[1], destination


def rows(destination: str) -> dict:
    """Every table's columns and a digest of its rows in key order, columns by name (a step done
    as schema changes adds a column last); streamed, so 1M rows take no memory."""
    db = sqlite3.connect(destination)
    try:
        result = {}
        for (table,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"):
            columns = sorted(r[1] for r in db.execute(f'PRAGMA table_info("{table}")'))
            listed = ", ".join(f'"{c}"' for c in columns)
            digest = hashlib.sha256()
            for row in db.execute(f'SELECT {listed} FROM "{table}" ORDER BY {listed}'):
                digest.update(repr(row).encode())
            result[table] = (columns, digest.hexdigest())
        return result
    finally:
        db.close()


def main(argv=None) -> list:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2:])
        return []
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", default="1M")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", default=os.path.join(bench.ROOT, "build", "bench"))
    parser.add_argument("--no-build", action="store_true", help="use the Python package as it is built")
    args = parser.parse_args(argv)
    os.makedirs(args.work, exist_ok=True)
    if not args.no_build:
        bench.build_python_package()
    models = model_set(args.work)
    results = []
    for rows_wanted in [bench.parse_rows(r) for r in args.rows.split(",")]:
        source, _ = bench.make_stores(args.work, "reference-1", rows_wanted)
        print(
            f"\nreference-1 source, {rows_wanted:,} rows, {os.path.getsize(source) / 1e6:.0f} MB; "
            f"{args.rounds} interleaved rounds; seconds as median (min–max); ratio: paired, to one step"
        )
        times: dict = {p: [] for p in PATHS}
        for _ in range(args.rounds):
            outputs = {}
            for path in PATHS:
                seconds, passes, destination = run_one(path, source, models, args.work)
                times[path].append(seconds)
                expected_passes = {"one-step": "1", "four-steps": "4", "four-fused": "1"}.get(path, "-")
                if passes != expected_passes:
                    raise SystemExit(f"{path} ran {passes} passes, not {expected_passes}")
                outputs[path] = destination
            if rows(outputs["four-fused"]) != rows(outputs["four-steps"]):
                raise SystemExit("the fused chain's store is not the step-by-step chain's")
        for path in PATHS:
            ratios = [t / r for t, r in zip(times[path], times["one-step"])]
            print(
                f"  {path:<12} {statistics.median(times[path]):.3f} s "
                f"({min(times[path]):.3f}–{max(times[path]):.3f})"
                f"   × one step {statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})"
            )
            results.append(
                {
                    "shape": "chain-4-inferred",
                    "rows": rows_wanted,
                    "path": path,
                    "seconds": times[path],
                    "ratios_to_one_step": ratios,
                }
            )
    return results


if __name__ == "__main__":
    main()
