#!/usr/bin/env python3
"""A one-step lightweight (inferred) migration at file-copy speed: the step done as schema
changes on a copy of the source (cdmigrate's default), the same step by the general path
(``Migration.schema_changes = False``), and the limits — ``cp`` of the store alone, and ``cp``
plus the same change by hand in the ``sqlite3`` shell.

Shapes (1M rows of reference-1's notes by default, made by bench/run.py's make_stores):

  rename     ``Nota.contenido`` renamed ``texto`` (one ALTER TABLE … RENAME COLUMN)
  add        a new optional attribute and one with a default (two ADD COLUMN)
  drop       ``Nota.etiquetas`` dropped (DROP COLUMN, which rewrites the table in SQLite)
  entity     a new entity ``Adjunto``, which takes entity number 1 (CREATE TABLE, and every note's
             ``Z_ENT`` moves from 1 to 2: an UPDATE of every row, by hand as well)
  index      ``Nota.fecha`` indexed (CREATE INDEX)

Each path runs in its own process, in interleaved rounds; printed: seconds as median (min–max)
and the paired ratio to ``cp`` + DDL. Every result is checked against the general path's rows.
For a new destination and in place (the in-place runs work on a fresh copy of the source each time,
made outside the timing).

    python3 bench/schema_step.py                  # 1M rows, every shape, 3 rounds
    python3 bench/schema_step.py --rows 100k --shapes rename
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as bench

V2 = os.path.join(bench.NOTAS, "NotasV2.model.json")

SHAPES = {
    "rename": (
        {"contenido": {"renamingIdentifier": "contenido", "name": "texto"}},
        [],
        ["ALTER TABLE ZNOTA RENAME COLUMN ZCONTENIDO TO ZTEXTO"],
    ),
    "add": (
        {},
        [{"name": "extra", "type": "string"}, {"name": "prioridad", "type": "integer16", "default": 3}],
        ["ALTER TABLE ZNOTA ADD COLUMN ZPRIORIDAD INTEGER DEFAULT 3", "ALTER TABLE ZNOTA ADD COLUMN ZEXTRA VARCHAR"],
    ),
    "drop": ({"etiquetas": None}, [], ["ALTER TABLE ZNOTA DROP COLUMN ZETIQUETAS"]),
    "entity": (
        {},
        [],
        [
            "CREATE TABLE ZADJUNTO ( Z_PK INTEGER PRIMARY KEY, Z_ENT INTEGER, Z_OPT INTEGER, ZNOMBRE VARCHAR )",
            "UPDATE ZNOTA SET Z_ENT = 2",
        ],
    ),
    "index": ({"fecha": {"indexed": True}}, [], ["CREATE INDEX ZNOTA_ZFECHA_INDEX ON ZNOTA (ZFECHA)"]),
}
# Entities a shape adds to the destination model.
NEW_ENTITIES = {"entity": [{"name": "Adjunto", "attributes": [{"name": "nombre", "type": "string"}]}]}
PATHS = ["cp", "cp+ddl", "schema-step", "general", "schema-step-in-place", "general-in-place"]


def destination_model(work: str, shape: str) -> str:
    """NotasV2 with the shape's change to Nota (a new version identifier)."""
    changes, added, _ = SHAPES[shape]
    with open(V2) as f:
        document = json.load(f)
    document["versionIdentifier"] = f"{document.get('versionIdentifier', '2')}-{shape}"
    for entity in document["entities"]:
        if entity["name"] != "Nota":
            continue
        attributes = []
        for attribute in entity["attributes"]:
            if attribute["name"] in changes:
                change = changes[attribute["name"]]
                if change is None:
                    continue
                attribute = dict(attribute, **change)
            attributes.append(attribute)
        entity["attributes"] = attributes + added
    document["entities"] = NEW_ENTITIES.get(shape, []) + document["entities"]
    path = os.path.join(work, f"schema-step-{shape}.model.json")
    with open(path, "w") as f:
        json.dump(document, f)
    return path


def child(argv: list) -> None:
    """``schema_step.py --child PATH SHAPE SOURCE DESTINATION MODEL``: one run; prints seconds and
    the report's bySchemaChanges."""
    path, shape, source, destination, model_path = argv
    if path in ("cp", "cp+ddl"):
        start = time.perf_counter()
        subprocess.run(["cp", source, destination], check=True)
        if path == "cp+ddl":
            subprocess.run(["sqlite3", destination, "; ".join(SHAPES[shape][2])], check=True)
        print(f"{time.perf_counter() - start:.6f} -")
        return
    import cdmigrate

    with cdmigrate.Model.from_file(V2) as v2, cdmigrate.Model.from_file(model_path) as v3, cdmigrate.MappingModel.infer(
        v2, v3
    ) as mapping, cdmigrate.Migration(v2, v3, mapping) as migration:
        migration.schema_changes = not path.startswith("general")
        start = time.perf_counter()
        report = (
            migration.run_in_place(destination) if path.endswith("in-place") else migration.run(source, destination)
        )
        seconds = time.perf_counter() - start
    print(f"{seconds:.6f} {report.by_schema_changes}")


def run_one(path: str, shape: str, source: str, model_path: str, work: str) -> tuple:
    destination = os.path.join(work, f"out-schema-step-{path}.sqlite")
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(destination + suffix):
            os.remove(destination + suffix)
    if path.endswith("in-place"):
        shutil.copy(source, destination)
    out = subprocess.run(
        [sys.executable, __file__, "--child", path, shape, source, destination, model_path],
        env=bench.python_env(),
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split()
    return float(out[0]), out[1], destination


def rows(destination: str) -> tuple:
    db = sqlite3.connect(destination)
    try:
        columns = sorted(r[1] for r in db.execute("PRAGMA table_info(ZNOTA)"))
        sums = ", ".join(f"COUNT({c}), TOTAL(length({c}))" for c in columns)
        tables = tuple(r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"))
        indexes = tuple(
            r[0]
            for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL ORDER BY 1")
        )
        entity = db.execute("SELECT MIN(Z_ENT), MAX(Z_ENT) FROM ZNOTA").fetchone()
        counts = db.execute(f"SELECT COUNT(*), TOTAL(Z_PK), {sums} FROM ZNOTA").fetchone()
        return tuple(columns), tables, indexes, entity, counts
    finally:
        db.close()


def main(argv=None) -> list:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        child(sys.argv[2:])
        return []
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rows", default="1M")
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--work", default=os.path.join(bench.ROOT, "build", "bench"))
    parser.add_argument("--no-build", action="store_true", help="use the Python package as it is built")
    args = parser.parse_args(argv)
    os.makedirs(args.work, exist_ok=True)
    if not args.no_build:
        bench.build_python_package()
    results = []
    for rows_wanted in [bench.parse_rows(r) for r in args.rows.split(",")]:
        source, _ = bench.make_stores(args.work, "reference-1", rows_wanted)
        print(
            f"\nreference-1 source, {rows_wanted:,} rows, {os.path.getsize(source) / 1e6:.0f} MB; "
            f"{args.rounds} interleaved rounds; "
            "seconds as median (min–max); ratio: paired, to cp+ddl"
        )
        for shape in args.shapes.split(","):
            model_path = destination_model(args.work, shape)
            times = {p: [] for p in PATHS}
            expected = None
            by_hand: tuple = ()
            for _ in range(args.rounds):
                for path in PATHS:
                    seconds, by_schema, destination = run_one(path, shape, source, model_path, args.work)
                    times[path].append(seconds)
                    if path.startswith("schema-step") and by_schema != "True":
                        raise SystemExit(f"{shape}: {path} did not run as schema changes")
                    if path not in ("cp",):
                        # By hand, only the notes' columns and values are compared (index and
                        # bookkeeping names are Core Data's in cdmigrate's stores).
                        got = rows(destination)
                        if path == "cp+ddl":
                            by_hand = (got[0], got[3], got[4])
                        elif expected is None:
                            expected = got
                        elif got != expected:
                            raise SystemExit(f"{shape}: {path} gave other rows: {got} != {expected}")
                        if expected is not None and by_hand != (expected[0], expected[3], expected[4]):
                            raise SystemExit(f"{shape}: cp+ddl gave other rows: {by_hand} != {expected}")
            print(f"\n{shape}")
            for path in PATHS:
                ratios = [t / r for t, r in zip(times[path], times["cp+ddl"])]
                print(
                    f"  {path:<22} {statistics.median(times[path]):.3f} s "
                    f"({min(times[path]):.3f}–{max(times[path]):.3f})"
                    f"   × cp+ddl {statistics.median(ratios):.2f} ({min(ratios):.2f}–{max(ratios):.2f})"
                )
                results.append(
                    {
                        "shape": f"schema-step-{shape}",
                        "rows": rows_wanted,
                        "path": path,
                        "seconds": times[path],
                        "ratios_to_cp_ddl": ratios,
                    }
                )
    return results


if __name__ == "__main__":
    main()
