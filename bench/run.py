#!/usr/bin/env python3
"""cdmigrate's benchmark: reference migration 1's shape (notes copied; the free-text
``categoria`` becomes one ``Categoria`` per distinct name, many-to-many) at several sizes, every
path side by side in one run, each migration in a process of its own.

Paths (each reads the same source store and writes a fresh copy of the same empty destination):

  raw-copy       ATTACH + INSERT … SELECT of the notes' attributes: the limit for a copy
  declarative    cdmigrate with a mapping that copies the notes' attributes (bench/notas-copy.mapping.json)
  raw-sql        the whole migration as SQL (notes, DISTINCT categories, join rows): the limit
  script         a straightforward hand-written Python sqlite3 script of the whole migration: the peer
  c-policy       cdmigrate with the C policy of examples/c/notas_categorias.c (bench/c_policy.c)
  python-policy  cdmigrate with the Python policy of examples/python/reference_migrations/notas.py

Rounds are interleaved (every path once per round). Printed per path and size: rows/s (median,
min, max), the paired ratio to its reference path in the same round (median, min, max), and the
migration's own peak RSS (its process's, not this one's). The figures are this machine's at this
moment: nothing is asserted about speed. Every result is checked for the same rows as raw SQL.

    python3 bench/run.py                      # 100k and 1M rows, 3 rounds
    python3 bench/run.py --sizes 10000000     # 10M rows (about 1.5 GB of stores)
    python3 bench/run.py --quick              # a small run that only checks every path works
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
NOTAS = os.path.join(EXAMPLES, "1-notas-categorias")
CATEGORIES = ["Trabajo", "Personal", "Compras", "Ideas", "Viajes", "Salud", "Recetas", "Estudios", "Finanzas", "Música",
              "Películas", "Libros", "Cumpleaños", "Año nuevo"]
PATHS = ["raw-copy", "declarative", "raw-sql", "script", "c-policy", "python-policy"]
REFERENCE = {"declarative": "raw-copy", "c-policy": "raw-sql", "python-policy": "script"}


def sh(*command: str, **kwargs) -> None:
    subprocess.run(command, check=True, **kwargs)


# -- building --------------------------------------------------------------------------------------

def build(work: str) -> dict:
    """The Python package's library, an install prefix and the C policy program."""
    sh("make", "--no-print-directory", "-C", os.path.join(ROOT, "bindings", "python"), "python-package", stdout=subprocess.DEVNULL)
    prefix = os.path.join(work, "prefix")
    sh("make", "--no-print-directory", "-C", ROOT, "install", f"PREFIX={prefix}", stdout=subprocess.DEVNULL)
    c_policy = os.path.join(work, "c_policy")
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    flags = subprocess.run(["pkg-config", "--cflags", "--libs", "cdmigrate"], env=env, check=True, capture_output=True, text=True).stdout.split()
    sh(os.environ.get("CC", "cc"), "-O2", "-o", c_policy, os.path.join(ROOT, "bench", "c_policy.c"), *flags)
    return {"c_policy": c_policy}


def python_env() -> dict:
    return dict(os.environ, PYTHONPATH=os.pathsep.join([os.path.join(ROOT, "bindings", "python"), os.path.join(EXAMPLES, "python")]))


def make_stores(work: str, rows: int) -> tuple:
    """The source (v2, `rows` notes) and an empty v3 destination, both laid out by cdmigrate
    itself, the notes bulk-inserted with sqlite3."""
    source = os.path.join(work, f"notas-v2-{rows}.sqlite")
    empty = os.path.join(work, "notas-v3-empty.sqlite")
    if not os.path.exists(empty):
        subprocess.run([sys.executable, __file__, "--child", "empty-stores", work], env=python_env(), check=True)
    if os.path.exists(source):
        return source, empty
    shutil.copy(os.path.join(work, "notas-v2-empty.sqlite"), source)
    generator = random.Random(rows)
    db = sqlite3.connect(source)
    nota = db.execute("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Nota'").fetchone()[0]

    def notes():
        for pk in range(1, rows + 1):
            roll = generator.random()
            categoria = None if roll < 0.2 else "" if roll < 0.23 else CATEGORIES[int(generator.random() ** 2 * len(CATEGORIES))]
            etiquetas = "urgente, casa" if generator.random() < 0.6 else None
            yield (pk, nota, 1, f"Nota {pk}: llamar a mamá y comprar pan", 441_763_200.0 + pk, etiquetas, categoria)

    db.execute("BEGIN")
    db.executemany("INSERT INTO ZNOTA (Z_PK, Z_ENT, Z_OPT, ZCONTENIDO, ZFECHA, ZETIQUETAS, ZCATEGORIA) VALUES (?, ?, ?, ?, ?, ?, ?)", notes())
    db.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?", (rows, nota))
    db.commit()
    db.close()
    return source, empty


# -- the paths, each run in a child process ---------------------------------------------------------

def destination_schema(db: sqlite3.Connection) -> dict:
    ents = dict(db.execute("SELECT Z_NAME, Z_ENT FROM Z_PRIMARYKEY"))
    join = db.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\' "
                      "AND name NOT IN ('Z_PRIMARYKEY', 'Z_METADATA', 'Z_MODELCACHE')").fetchone()[0]
    columns = [row[1] for row in db.execute(f"PRAGMA table_info({join})")]
    return {"nota": ents["Nota"], "categoria": ents["Categoria"], "join": join,
            "join_categoria": next(c for c in columns if c.endswith("CATEGORIAS")),
            "join_nota": next(c for c in columns if c.endswith("NOTAS"))}


def raw(source: str, destination: str, whole: bool) -> None:
    db = sqlite3.connect(destination, isolation_level=None)
    s = destination_schema(db)
    db.execute("ATTACH DATABASE ? AS s", (source,))
    db.execute("BEGIN")
    db.execute("INSERT INTO ZNOTA (Z_PK, Z_ENT, Z_OPT, ZCONTENIDO, ZFECHA, ZETIQUETAS) "
               "SELECT Z_PK, ?, 1, ZCONTENIDO, ZFECHA, ZETIQUETAS FROM s.ZNOTA", (s["nota"],))
    db.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT COALESCE(MAX(Z_PK), 0) FROM ZNOTA) WHERE Z_ENT = ?", (s["nota"],))
    if whole:
        db.execute("INSERT INTO ZCATEGORIA (Z_PK, Z_ENT, Z_OPT, ZNOMBRE) SELECT ROW_NUMBER() OVER (ORDER BY ZCATEGORIA), ?, 1, ZCATEGORIA "
                   "FROM (SELECT DISTINCT ZCATEGORIA FROM s.ZNOTA WHERE ZCATEGORIA <> '')", (s["categoria"],))
        db.execute(f"INSERT INTO {s['join']} ({s['join_categoria']}, {s['join_nota']}) "
                   "SELECT c.Z_PK, n.Z_PK FROM s.ZNOTA n JOIN ZCATEGORIA c ON c.ZNOMBRE = n.ZCATEGORIA")
        db.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT COALESCE(MAX(Z_PK), 0) FROM ZCATEGORIA) WHERE Z_ENT = ?", (s["categoria"],))
    db.execute("COMMIT")
    db.execute("DETACH DATABASE s")
    db.close()


def script(source: str, destination: str) -> None:
    """What a Core Data developer would write by hand: read each note, insert it, find or make its
    category, link them."""
    src = sqlite3.connect(source)
    dst = sqlite3.connect(destination)
    s = destination_schema(dst)
    categories = {}
    for pk, contenido, fecha, etiquetas, categoria in src.execute(
            "SELECT Z_PK, ZCONTENIDO, ZFECHA, ZETIQUETAS, ZCATEGORIA FROM ZNOTA ORDER BY Z_PK"):
        dst.execute("INSERT INTO ZNOTA (Z_PK, Z_ENT, Z_OPT, ZCONTENIDO, ZFECHA, ZETIQUETAS) VALUES (?, ?, 1, ?, ?, ?)",
                    (pk, s["nota"], contenido, fecha, etiquetas))
        if categoria:
            category = categories.get(categoria)
            if category is None:
                category = categories[categoria] = len(categories) + 1
                dst.execute("INSERT INTO ZCATEGORIA (Z_PK, Z_ENT, Z_OPT, ZNOMBRE) VALUES (?, ?, 1, ?)", (category, s["categoria"], categoria))
            dst.execute(f"INSERT INTO {s['join']} ({s['join_categoria']}, {s['join_nota']}) VALUES (?, ?)", (category, pk))
    dst.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT COALESCE(MAX(Z_PK), 0) FROM ZNOTA) WHERE Z_ENT = ?", (s["nota"],))
    dst.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?", (len(categories), s["categoria"]))
    dst.commit()
    dst.close()
    src.close()


def cdmigrate_run(source: str, destination: str, mapping_file: str, policies: dict) -> None:
    import cdmigrate
    with cdmigrate.Model.from_file(os.path.join(NOTAS, "NotasV2.model.json")) as v2, \
            cdmigrate.Model.from_file(os.path.join(NOTAS, "NotasV3.model.json")) as v3, \
            cdmigrate.MappingModel.from_file(mapping_file) as mapping, cdmigrate.Migration(v2, v3, mapping) as migration:
        migration.run(source, destination, policies=policies)


def child(argv: list) -> None:
    """`run.py --child PATH SOURCE DESTINATION`: one migration; prints its seconds."""
    path = argv[0]
    if path == "empty-stores":
        import cdmigrate
        work = argv[1]
        for version, name in (("NotasV2", "notas-v2-empty.sqlite"), ("NotasV3", "notas-v3-empty.sqlite")):
            with cdmigrate.Model.from_file(os.path.join(NOTAS, f"{version}.model.json")) as model, \
                    cdmigrate.Store.create(model, os.path.join(work, name)) as store:
                store.save()
        return
    source, destination = argv[1], argv[2]
    start = time.perf_counter()
    if path == "raw-copy":
        raw(source, destination, whole=False)
    elif path == "raw-sql":
        raw(source, destination, whole=True)
    elif path == "script":
        script(source, destination)
    elif path == "declarative":
        os.remove(destination)  # cdmigrate writes a new file
        cdmigrate_run(source, destination, os.path.join(ROOT, "bench", "notas-copy.mapping.json"), {})
    elif path == "python-policy":
        from reference_migrations.notas import POLICIES
        os.remove(destination)
        cdmigrate_run(source, destination, os.path.join(NOTAS, "NotasV2ToV3.mapping.json"), POLICIES)
    else:
        raise SystemExit(f"unknown path {path}")
    print(f"{time.perf_counter() - start:.6f}")


def run_one(path: str, source: str, empty: str, work: str, tools: dict) -> tuple:
    """Runs one path in its own process: (seconds, peak RSS in MiB, destination)."""
    destination = os.path.join(work, f"out-{path}.sqlite")
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(destination + suffix):
            os.remove(destination + suffix)
    if path == "c-policy":
        command = [tools["c_policy"], EXAMPLES, source, destination]
    else:
        shutil.copy(empty, destination)
        command = [sys.executable, __file__, "--child", path, source, destination]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, env=python_env())
    out = process.stdout.read() if process.stdout else b""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{path} failed with exit code {process.returncode}")
    return float(out.decode().strip().splitlines()[-1]), usage.ru_maxrss / 1024.0, destination


def rows_of(destination: str) -> tuple:
    db = sqlite3.connect(destination)
    s = destination_schema(db)
    notes = db.execute("SELECT COUNT(*), TOTAL(length(ZCONTENIDO)), TOTAL(ZFECHA), COUNT(ZETIQUETAS) FROM ZNOTA").fetchone()
    links = db.execute(f"SELECT COUNT(*) FROM {s['join']} j JOIN ZCATEGORIA c ON c.Z_PK = j.{s['join_categoria']}").fetchone()[0]
    names = tuple(r[0] for r in db.execute("SELECT ZNOMBRE FROM ZCATEGORIA ORDER BY ZNOMBRE"))
    db.close()
    return notes, links, names


def summary(values: list) -> str:
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}–{max(values):,.0f})"


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return child(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="100000,1000000", help="comma-separated row counts")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (the median is reported)")
    parser.add_argument("--paths", default=",".join(PATHS), help="comma-separated paths to run")
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "bench"), help="where stores are kept")
    parser.add_argument("--quick", action="store_true", help="2,000 rows, 3 rounds: checks that every path works")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    sizes = [2000] if args.quick else [int(s) for s in args.sizes.split(",")]
    paths = args.paths.split(",")
    os.makedirs(args.work, exist_ok=True)
    tools = build(args.work)
    results = []
    print(f"machine: {os.cpu_count()} cores; {args.rounds} interleaved rounds; rows/s as median (min–max)")
    for rows in sizes:
        source, empty = make_stores(args.work, rows)
        times = {p: [] for p in paths}
        rss = {p: [] for p in paths}
        expected = None
        for _ in range(args.rounds):
            for path in paths:
                seconds, peak, destination = run_one(path, source, empty, args.work, tools)
                times[path].append(seconds)
                rss[path].append(peak)
                if path in ("raw-sql", "script", "c-policy", "python-policy"):
                    got = rows_of(destination)
                    if expected is None:
                        expected = got
                    elif got != expected:
                        raise SystemExit(f"{path} at {rows} rows gave other rows than the first path: {got} != {expected}")
        print(f"\n{rows:,} notes")
        print(f"{'path':<14} {'rows/s':>28} {'ratio to':>10} {'paired ratio':>22} {'peak RSS MiB':>22}")
        for path in paths:
            rates = [rows / t for t in times[path]]
            line = f"{path:<14} {summary(rates):>28}"
            entry = {"rows": rows, "path": path, "seconds": times[path], "rows_per_second": rates, "peak_rss_mib": rss[path]}
            reference = REFERENCE.get(path)
            if reference in times:
                ratios = [r / t for r, t in zip(times[reference], times[path])]
                line += f" {reference:>10} {statistics.median(ratios):>8.3f} ({min(ratios):.3f}–{max(ratios):.3f})"
                entry["ratio_to"] = reference
                entry["ratios"] = ratios
            else:
                line += f" {'':>10} {'':>22}"
            line += f" {statistics.median(rss[path]):>8.1f} ({min(rss[path]):.1f}–{max(rss[path]):.1f})"
            print(line)
            results.append(entry)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    print(f"\nall paths gave the same rows: {len(sizes)} size(s), {args.rounds} round(s)")


if __name__ == "__main__":
    main()
