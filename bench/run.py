#!/usr/bin/env python3
"""cdmigrate's benchmark: every path side by side at several sizes, in two shapes, each
migration in a process of its own.

Shapes:

  reference-1  reference migration 1 (examples/1-notas-categorias): notes copied; the free-text
               ``categoria`` becomes one ``Categoria`` per distinct name, many-to-many
  wide         one entity of 20 attributes of five types (bench/wide), copied whole

Paths (each reads the same source store and writes a fresh copy of the same empty destination):

  raw-copy       ATTACH + INSERT … SELECT of the notes' attributes: the limit for a copy
                 (for the wide shape, the whole migration). The raw paths write with journal and
                 sync off (PRAGMA journal_mode = OFF, synchronous = OFF), as cdmigrate writes its
                 private destination file; --raw-journal wal keeps the empty store's WAL mode
                 and SQLite's default synchronous = FULL instead
  declarative    cdmigrate with a declarative mapping that copies the attributes
                 (bench/notas-copy.mapping.json, bench/wide/WideCopy.mapping.json), run by bench/c_migrate.c
  raw-sql        the whole migration as SQL (notes, DISTINCT categories, join rows): the limit
  script         a straightforward hand-written Python sqlite3 script of the whole migration: the peer
  c-policy       cdmigrate with the C policy of examples/c/notas_categorias.c written with the batch
                 hook, the recommended way (crear_create_batch; bench/c_policy.c batch)
  c-policy-rows  the same policy with the single-row hooks, as Core Data has them (crear_create;
                 bench/c_policy.c rows)
  python-policy  cdmigrate with the Python policy of examples/python/reference_migrations/notas.py
                 (its batch hook, create_destination_instances_batch)
  python-rows    the same migration written the Core Data way, one create_destination_instances
                 call per note (bench/notas_per_row.py): source.to_dict(), manager.create(values=…,
                 source=…) and a dict of the categories made so far
  python-fetch   the same, with manager.create, apply_attribute_mappings, associate and a
                 fetch_destination by predicate per note to find its category
  python-rows-engine, python-fetch-engine
                 the same two policies with row_batches = False: the engine calls them row by row
                 (how they ran before the binding ran single-row hooks over batches; not run by
                 default, name them in --paths)

The wide shape has raw-copy, declarative and script. Rounds are interleaved (every path once per
round). Printed per shape, size and path: rows/s (median, min, max), the paired ratios to raw SQL
and to the script in the same round (median, min, max), and the migration's own peak RSS (its
process's, not this one's); then the same ratios in CPU time (user + system of the migration
alone, measured inside its process), which other work sharing the machine disturbs less than
wall-clock time. The figures are this machine's at this moment: nothing is asserted
about speed. Every result is checked for the same rows as the other paths of its shape.

    python3 bench/run.py                           # 100k and 1M rows, both shapes, 3 rounds
    python3 bench/run.py --rows 10M --shapes wide  # 10M rows (about 1.5 GB of stores per shape)
    python3 bench/run.py --quick                   # a small run that only checks every path works
    python3 bench/run.py --baseline PREFIX         # also declarative@base and c-policy@base: the same
                                                   # programs linked with another build's install
                                                   # (make install PREFIX=… in a checkout of main, say),
                                                   # in the same interleaved rounds
    python3 bench/run.py --baseline-python DIR     # also python-rows@base, …: the Python policy paths (and
                                                   # schema-step) with another checkout's bindings/python
                                                   # (its library built in)
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
CATEGORIES = [
    "Trabajo",
    "Personal",
    "Compras",
    "Ideas",
    "Viajes",
    "Salud",
    "Recetas",
    "Estudios",
    "Finanzas",
    "Música",
    "Películas",
    "Libros",
    "Cumpleaños",
    "Año nuevo",
]
WIDE = os.path.join(ROOT, "bench", "wide")
PATHS = [
    "raw-copy",
    "declarative",
    "raw-sql",
    "script",
    "c-policy",
    "c-policy-rows",
    "python-policy",
    "python-rows",
    "python-fetch",
    "schema-step",
    "cp",
    "cp+ddl",
]
# The inferred step renaming one attribute (bench/schema_step.py's `rename`), done as schema
# changes, beside its limits: `cp` of the source, and `cp` plus the `ALTER TABLE` in the sqlite3 shell.
SCHEMA_STEP_PATHS = ("schema-step", "cp", "cp+ddl")
# The Core Data-style Python policies of bench/notas_per_row.py, by path.
PER_ROW_POLICIES = {
    "python-rows": "TO_DICT",
    "python-fetch": "FETCH",
    "python-rows-engine": "TO_DICT_ENGINE",
    "python-fetch-engine": "FETCH_ENGINE",
}
# The C policy's two ways: the bench/c_policy.c mode each path runs.
C_POLICY_MODES = {"c-policy": "batch", "c-policy-rows": "rows"}
SHAPES = {
    "reference-1": {
        "paths": [*PATHS, "python-rows-engine", "python-fetch-engine"],
        "sql": "raw-sql",
        "script": "script",
        "models": (os.path.join(NOTAS, "NotasV2.model.json"), os.path.join(NOTAS, "NotasV3.model.json")),
        "copy": os.path.join(ROOT, "bench", "notas-copy.mapping.json"),
        "copy_limit": "raw-copy",
    },
    "wide": {
        "paths": ["raw-copy", "declarative", "script"],
        "sql": "raw-copy",
        "script": "script",
        "models": (os.path.join(WIDE, "WideV1.model.json"), os.path.join(WIDE, "WideV2.model.json")),
        "copy": os.path.join(WIDE, "WideCopy.mapping.json"),
    },
}
WIDE_COLUMNS = [f"ZCAMPO{i:02d}" for i in range(20)]


def parse_rows(text: str) -> int:
    """100000, 100k, 1M, 10M."""
    text = text.strip().lower().replace("_", "")
    factor = {"k": 1_000, "m": 1_000_000}.get(text[-1:], 1)
    return int(float(text[:-1] if factor > 1 else text) * factor)


def build_python_package() -> None:
    """Builds libcdmigrate.so into bindings/python (`make -C bindings/python python-package`)."""
    sh(
        "make",
        "--no-print-directory",
        "-C",
        os.path.join(ROOT, "bindings", "python"),
        "python-package",
        stdout=subprocess.DEVNULL,
    )


def sh(*command: str, **kwargs) -> None:
    subprocess.run(command, check=True, **kwargs)


# -- building --------------------------------------------------------------------------------------


def build(work: str, baseline: str = "") -> dict:
    """The Python package's library, an install prefix and the C programs (also linked with the
    ``baseline`` install prefix, when given)."""
    sh(
        "make",
        "--no-print-directory",
        "-C",
        os.path.join(ROOT, "bindings", "python"),
        "python-package",
        stdout=subprocess.DEVNULL,
    )
    prefix = os.path.join(work, "prefix")
    sh("make", "--no-print-directory", "-C", ROOT, "install", f"PREFIX={prefix}", stdout=subprocess.DEVNULL)
    c_policy = os.path.join(work, "c_policy")
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    flags = subprocess.run(
        ["pkg-config", "--cflags", "--libs", "cdmigrate"], env=env, check=True, capture_output=True, text=True
    ).stdout.split()
    sh(os.environ.get("CC", "cc"), "-O2", "-o", c_policy, os.path.join(ROOT, "bench", "c_policy.c"), *flags)
    c_migrate = os.path.join(work, "c_migrate")
    sh(os.environ.get("CC", "cc"), "-O2", "-o", c_migrate, os.path.join(ROOT, "bench", "c_migrate.c"), *flags)
    tools = {"c_policy": c_policy, "c_migrate": c_migrate}
    if baseline:
        env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(baseline, "lib", "pkgconfig"))
        flags = subprocess.run(
            ["pkg-config", "--cflags", "--libs", "cdmigrate"], env=env, check=True, capture_output=True, text=True
        ).stdout.split()
        for name in ("c_policy", "c_migrate"):
            tools[name + "@base"] = os.path.join(work, name + "-base")
            sh(
                os.environ.get("CC", "cc"),
                "-O2",
                "-o",
                tools[name + "@base"],
                os.path.join(ROOT, "bench", name + ".c"),
                *flags,
            )
    return tools


def python_env(package: str = "") -> dict:
    """The environment of a Python path: this checkout's package, or ``package`` (another
    checkout's bindings/python, its library built in) for a path@base."""
    return dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(
            [
                package or os.path.join(ROOT, "bindings", "python"),
                os.path.join(EXAMPLES, "python"),
                os.path.join(ROOT, "bench"),
            ]
        ),
    )


def make_stores(work: str, shape: str, rows: int) -> tuple:
    """The source (`rows` instances) and an empty destination, both laid out by cdmigrate itself,
    the rows bulk-inserted with sqlite3."""
    source = os.path.join(work, f"{shape}-source-{rows}.sqlite")
    empty = os.path.join(work, f"{shape}-destination-empty.sqlite")
    if not os.path.exists(empty):
        subprocess.run([sys.executable, __file__, "--child", "empty-stores", shape, work], env=python_env(), check=True)
    if os.path.exists(source):
        return source, empty
    partial = source + ".partial"
    shutil.copy(os.path.join(work, f"{shape}-source-empty.sqlite"), partial)
    generator = random.Random(rows)
    db = sqlite3.connect(partial)
    db.execute("BEGIN")
    if shape == "wide":
        entity = db.execute("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Registro'").fetchone()[0]

        def values(pk: int) -> tuple:
            row = []
            for i in range(20):
                kind = i % 5
                if generator.random() < 0.1:
                    row.append(None)
                elif kind == 0:
                    row.append(f"texto {pk}-{i} " + "x" * (pk % 17))
                elif kind == 1:
                    row.append(pk * 31 + i)
                elif kind == 2:
                    row.append(pk / 7.0 + i)
                elif kind == 3:
                    row.append(441_763_200.0 + pk + i)
                else:
                    row.append(pk % 2)
            return (pk, entity, 1, *row)

        columns = ", ".join(["Z_PK", "Z_ENT", "Z_OPT", *WIDE_COLUMNS])
        marks = ", ".join("?" * 23)
        db.executemany(f"INSERT INTO ZREGISTRO ({columns}) VALUES ({marks})", (values(pk) for pk in range(1, rows + 1)))
    else:
        entity = db.execute("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Nota'").fetchone()[0]

        def notes():
            for pk in range(1, rows + 1):
                roll = generator.random()
                categoria = (
                    None
                    if roll < 0.2
                    else ""
                    if roll < 0.23
                    else CATEGORIES[int(generator.random() ** 2 * len(CATEGORIES))]
                )
                etiquetas = "urgente, casa" if generator.random() < 0.6 else None
                yield (
                    pk,
                    entity,
                    1,
                    f"Nota {pk}: llamar a mamá y comprar pan",
                    441_763_200.0 + pk,
                    etiquetas,
                    categoria,
                )

        db.executemany(
            "INSERT INTO ZNOTA (Z_PK, Z_ENT, Z_OPT, ZCONTENIDO, ZFECHA, ZETIQUETAS, ZCATEGORIA) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            notes(),
        )
    db.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?", (rows, entity))
    db.commit()
    db.close()
    os.replace(partial, source)
    return source, empty


# -- the paths, each run in a child process ---------------------------------------------------------


def destination_schema(db: sqlite3.Connection) -> dict:
    ents = dict(db.execute("SELECT Z_NAME, Z_ENT FROM Z_PRIMARYKEY"))
    join = db.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\' "
        "AND name NOT IN ('Z_PRIMARYKEY', 'Z_METADATA', 'Z_MODELCACHE')"
    ).fetchone()[0]
    columns = [row[1] for row in db.execute(f"PRAGMA table_info({join})")]
    return {
        "nota": ents["Nota"],
        "categoria": ents["Categoria"],
        "join": join,
        "join_categoria": next(c for c in columns if c.endswith("CATEGORIAS")),
        "join_nota": next(c for c in columns if c.endswith("NOTAS")),
    }


def raw_connect(destination: str) -> sqlite3.Connection:
    """The raw paths' connection: journal and sync off (as cdmigrate's private destination file),
    unless CDM_BENCH_RAW_JOURNAL=wal."""
    db = sqlite3.connect(destination, isolation_level=None)
    if os.environ.get("CDM_BENCH_RAW_JOURNAL", "off") == "off":
        db.execute("PRAGMA journal_mode = OFF")
        db.execute("PRAGMA synchronous = OFF")
    return db


def raw(source: str, destination: str, whole: bool) -> None:
    db = raw_connect(destination)
    s = destination_schema(db)
    db.execute("ATTACH DATABASE ? AS s", (source,))
    db.execute("BEGIN")
    db.execute(
        "INSERT INTO ZNOTA (Z_PK, Z_ENT, Z_OPT, ZCONTENIDO, ZFECHA, ZETIQUETAS) "
        "SELECT Z_PK, ?, 1, ZCONTENIDO, ZFECHA, ZETIQUETAS FROM s.ZNOTA",
        (s["nota"],),
    )
    db.execute(
        "UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT COALESCE(MAX(Z_PK), 0) FROM ZNOTA) WHERE Z_ENT = ?", (s["nota"],)
    )
    if whole:
        db.execute(
            "INSERT INTO ZCATEGORIA (Z_PK, Z_ENT, Z_OPT, ZNOMBRE) "
            "SELECT ROW_NUMBER() OVER (ORDER BY ZCATEGORIA), ?, 1, ZCATEGORIA "
            "FROM (SELECT DISTINCT ZCATEGORIA FROM s.ZNOTA WHERE ZCATEGORIA <> '')",
            (s["categoria"],),
        )
        db.execute(
            f"INSERT INTO {s['join']} ({s['join_categoria']}, {s['join_nota']}) "
            "SELECT c.Z_PK, n.Z_PK FROM s.ZNOTA n JOIN ZCATEGORIA c ON c.ZNOMBRE = n.ZCATEGORIA"
        )
        db.execute(
            "UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT COALESCE(MAX(Z_PK), 0) FROM ZCATEGORIA) WHERE Z_ENT = ?",
            (s["categoria"],),
        )
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
        "SELECT Z_PK, ZCONTENIDO, ZFECHA, ZETIQUETAS, ZCATEGORIA FROM ZNOTA ORDER BY Z_PK"
    ):
        dst.execute(
            "INSERT INTO ZNOTA (Z_PK, Z_ENT, Z_OPT, ZCONTENIDO, ZFECHA, ZETIQUETAS) VALUES (?, ?, 1, ?, ?, ?)",
            (pk, s["nota"], contenido, fecha, etiquetas),
        )
        if categoria:
            category = categories.get(categoria)
            if category is None:
                category = categories[categoria] = len(categories) + 1
                dst.execute(
                    "INSERT INTO ZCATEGORIA (Z_PK, Z_ENT, Z_OPT, ZNOMBRE) VALUES (?, ?, 1, ?)",
                    (category, s["categoria"], categoria),
                )
            dst.execute(
                f"INSERT INTO {s['join']} ({s['join_categoria']}, {s['join_nota']}) VALUES (?, ?)", (category, pk)
            )
    dst.execute(
        "UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT COALESCE(MAX(Z_PK), 0) FROM ZNOTA) WHERE Z_ENT = ?", (s["nota"],)
    )
    dst.execute("UPDATE Z_PRIMARYKEY SET Z_MAX = ? WHERE Z_ENT = ?", (len(categories), s["categoria"]))
    dst.commit()
    dst.close()
    src.close()


def wide_raw(source: str, destination: str) -> None:
    db = raw_connect(destination)
    entity = db.execute("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Registro'").fetchone()[0]
    db.execute("ATTACH DATABASE ? AS s", (source,))
    db.execute("BEGIN")
    columns = ", ".join(WIDE_COLUMNS)
    db.execute(
        f"INSERT INTO ZREGISTRO (Z_PK, Z_ENT, Z_OPT, {columns}) SELECT Z_PK, ?, 1, {columns} FROM s.ZREGISTRO",
        (entity,),
    )
    db.execute(
        "UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT COALESCE(MAX(Z_PK), 0) FROM ZREGISTRO) WHERE Z_ENT = ?", (entity,)
    )
    db.execute("COMMIT")
    db.execute("DETACH DATABASE s")
    db.close()


def wide_script(source: str, destination: str) -> None:
    """Read each row, insert it."""
    src = sqlite3.connect(source)
    dst = sqlite3.connect(destination)
    entity = dst.execute("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = 'Registro'").fetchone()[0]
    columns = ", ".join(WIDE_COLUMNS)
    insert = f"INSERT INTO ZREGISTRO (Z_PK, Z_ENT, Z_OPT, {columns}) VALUES (?, ?, 1, {', '.join('?' * 20)})"
    for row in src.execute(f"SELECT Z_PK, {columns} FROM ZREGISTRO ORDER BY Z_PK"):
        dst.execute(insert, (row[0], entity, *row[1:]))
    dst.execute(
        "UPDATE Z_PRIMARYKEY SET Z_MAX = (SELECT COALESCE(MAX(Z_PK), 0) FROM ZREGISTRO) WHERE Z_ENT = ?", (entity,)
    )
    dst.commit()
    dst.close()
    src.close()


def cdmigrate_run(source: str, destination: str, mapping_file: str, policies: dict) -> None:
    import cdmigrate

    with cdmigrate.Model.from_file(os.path.join(NOTAS, "NotasV2.model.json")) as v2, cdmigrate.Model.from_file(
        os.path.join(NOTAS, "NotasV3.model.json")
    ) as v3, cdmigrate.MappingModel.from_file(mapping_file) as mapping, cdmigrate.Migration(
        v2, v3, mapping
    ) as migration:
        migration.run(source, destination, policies=policies)


def child(argv: list) -> None:
    """`run.py --child PATH SHAPE SOURCE DESTINATION`: one migration; prints its seconds, wall-clock and CPU."""
    path = argv[0]
    if path == "empty-stores":
        import cdmigrate

        shape, work = argv[1], argv[2]
        for model_file, name in zip(SHAPES[shape]["models"], ("source-empty", "destination-empty")):
            with cdmigrate.Model.from_file(model_file) as model, cdmigrate.Store.create(
                model, os.path.join(work, f"{shape}-{name}.sqlite")
            ) as store:
                store.save()
        return
    shape, source, destination = argv[1], argv[2], argv[3]
    start = time.perf_counter()
    cpu = time.process_time()
    if shape == "wide" and path == "raw-copy":
        wide_raw(source, destination)
    elif shape == "wide" and path == "script":
        wide_script(source, destination)
    elif path == "raw-copy":
        raw(source, destination, whole=False)
    elif path == "raw-sql":
        raw(source, destination, whole=True)
    elif path == "script":
        script(source, destination)
    elif path == "python-policy":
        from reference_migrations.notas import POLICIES

        os.remove(destination)
        cdmigrate_run(source, destination, os.path.join(NOTAS, "NotasV2ToV3.mapping.json"), POLICIES)
    elif path in PER_ROW_POLICIES:
        import notas_per_row

        os.remove(destination)
        cdmigrate_run(
            source,
            destination,
            os.path.join(NOTAS, "NotasV2ToV3.mapping.json"),
            getattr(notas_per_row, PER_ROW_POLICIES[path]),
        )
    elif path in SCHEMA_STEP_PATHS:
        os.remove(destination)
        seconds, cpu_seconds = schema_step_run(path, source, destination)
        print(f"{seconds:.6f} {cpu_seconds:.6f}")
        return
    else:
        raise SystemExit(f"unknown path {path}")
    print(f"{time.perf_counter() - start:.6f} {time.process_time() - cpu:.6f}")


def schema_step_run(path: str, source: str, destination: str) -> tuple:
    """One run of a SCHEMA_STEP_PATHS path (bench/schema_step.py's `rename` shape): its seconds,
    wall-clock and CPU (with that of cp and sqlite3, run as child processes), of the step alone
    (not loading the package or the models, as in bench/schema_step.py)."""
    import schema_step

    shape = "rename"
    model_path = os.path.join(os.path.dirname(destination), f"schema-step-{shape}.model.json")

    def clock() -> tuple:
        t = os.times()
        return time.perf_counter(), time.process_time() + t.children_user + t.children_system

    if path != "schema-step":
        start = clock()
        subprocess.run(["cp", source, destination], check=True)
        if path == "cp+ddl":
            subprocess.run(["sqlite3", destination, "; ".join(schema_step.SHAPES[shape][2])], check=True)
        end = clock()
        return end[0] - start[0], end[1] - start[1]
    import cdmigrate

    with cdmigrate.Model.from_file(schema_step.V2) as v2, cdmigrate.Model.from_file(
        model_path
    ) as v3, cdmigrate.MappingModel.infer(v2, v3) as mapping, cdmigrate.Migration(v2, v3, mapping) as migration:
        start = clock()
        report = migration.run(source, destination)
        end = clock()
    if not report.by_schema_changes:
        raise SystemExit("schema-step: the step did not run as schema changes")
    return end[0] - start[0], end[1] - start[1]


def run_one(shape: str, path: str, source: str, empty: str, work: str, tools: dict) -> tuple:
    """Runs one path in its own process: (seconds, CPU seconds, peak RSS in MiB, destination)."""
    destination = os.path.join(work, f"out-{shape}-{path}.sqlite")
    for suffix in ("", "-wal", "-shm", "-journal"):
        if os.path.exists(destination + suffix):
            os.remove(destination + suffix)
    base = path.split("@")[0]
    suffix = "@base" if path.endswith("@base") else ""
    if base in C_POLICY_MODES:
        command = [tools["c_policy" + suffix], C_POLICY_MODES[base], EXAMPLES, source, destination]
    elif base == "declarative":
        command = [tools["c_migrate" + suffix], *SHAPES[shape]["models"], SHAPES[shape]["copy"], source, destination]
    else:
        shutil.copy(empty, destination)
        command = [sys.executable, __file__, "--child", base, shape, source, destination]
    package = tools.get("python@base", "") if suffix else ""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, env=python_env(package))
    out = process.stdout.read() if process.stdout else b""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{path} failed with exit code {process.returncode}")
    figures = out.decode().strip().splitlines()[-1].split()
    # A program built from an older bench/*.c prints the wall-clock seconds alone.
    cpu = float(figures[1]) if len(figures) > 1 else float("nan")
    return float(figures[0]), cpu, usage.ru_maxrss / 1024.0, destination


def rows_of(shape: str, destination: str) -> tuple:
    db = sqlite3.connect(destination)
    if shape == "wide":
        sums = ", ".join(f"COUNT({c}), TOTAL(length({c}))" for c in WIDE_COLUMNS)
        result = db.execute(f"SELECT COUNT(*), TOTAL(Z_PK), {sums} FROM ZREGISTRO").fetchone()
        db.close()
        return result
    s = destination_schema(db)
    notes = db.execute(
        "SELECT COUNT(*), TOTAL(length(ZCONTENIDO)), TOTAL(ZFECHA), COUNT(ZETIQUETAS) FROM ZNOTA"
    ).fetchone()
    links = db.execute(
        f"SELECT COUNT(*) FROM {s['join']} j JOIN ZCATEGORIA c ON c.Z_PK = j.{s['join_categoria']}"
    ).fetchone()[0]
    names = tuple(r[0] for r in db.execute("SELECT ZNOMBRE FROM ZCATEGORIA ORDER BY ZNOMBRE"))
    db.close()
    return notes, links, names


def rows_of_notes(destination: str) -> tuple:
    db = sqlite3.connect(destination)
    notes = db.execute(
        "SELECT COUNT(*), TOTAL(Z_PK), TOTAL(length(ZCONTENIDO)), TOTAL(ZFECHA), COUNT(ZETIQUETAS) FROM ZNOTA"
    ).fetchone()
    db.close()
    return notes


def rows_of_schema_step(destination: str) -> tuple:
    import schema_step

    got = schema_step.rows(destination)
    return got[0], got[3], got[4]


def summary(values: list) -> str:
    return f"{statistics.median(values):,.0f} ({min(values):,.0f}–{max(values):,.0f})"


def ratio_cells(times: dict, path: str, reference: str) -> tuple:
    if reference not in times or reference == path:
        return "", None
    ratios = [r / t for r, t in zip(times[reference], times[path])]
    return f"{statistics.median(ratios):.3f} ({min(ratios):.3f}–{max(ratios):.3f})", ratios


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        return child(sys.argv[2:])
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--rows",
        "--sizes",
        dest="rows",
        default="100k,1M",
        help="comma-separated row counts: 100k, 1M, 10M or plain numbers",
    )
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated shapes: " + ", ".join(SHAPES))
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds, at least 3 (the median is reported)")
    parser.add_argument("--paths", default=",".join(PATHS), help="comma-separated paths to run (those a shape has)")
    parser.add_argument("--work", default=os.path.join(ROOT, "build", "bench"), help="where stores are kept")
    parser.add_argument("--quick", action="store_true", help="2,000 rows, 3 rounds: checks that every path works")
    parser.add_argument("--json", help="also write the figures to this file")
    parser.add_argument(
        "--raw-journal",
        choices=["off", "wal"],
        default="off",
        help="the raw paths' journal: off (journal and sync off, as cdmigrate's private file; the default) "
        "or wal (the empty store's WAL mode, synchronous = FULL)",
    )
    parser.add_argument(
        "--baseline",
        default="",
        help="an install prefix of another build: its declarative and C policy paths run too (path@base)",
    )
    parser.add_argument(
        "--baseline-python",
        default="",
        help="another checkout's bindings/python folder (its libcdmigrate.so built in: make -C bindings/python "
        "python-package there): the Python policy paths and schema-step run with it too (path@base), with this "
        "checkout's "
        "bench and examples",
    )
    parser.add_argument(
        "--schema-step",
        action="store_true",
        help="only bench/schema_step.py: an inferred step done as schema changes beside cp and cp + DDL",
    )
    parser.add_argument(
        "--chain",
        action="store_true",
        help="only bench/chain.py: four inferred steps fused and step by step beside one step and cp",
    )
    args = parser.parse_args()
    if args.chain:
        import chain

        chain.main(["--rows", args.rows, "--rounds", str(args.rounds), "--work", args.work])
        return
    if args.schema_step:
        import schema_step

        schema_step.main(["--rows", args.rows, "--rounds", str(args.rounds), "--work", args.work])
        return
    if args.rounds < 3:
        parser.error("--rounds must be at least 3: the median of fewer says little")
    os.environ["CDM_BENCH_RAW_JOURNAL"] = args.raw_journal
    sizes = [2000] if args.quick else [parse_rows(s) for s in args.rows.split(",")]
    shapes = args.shapes.split(",")
    for shape in shapes:
        if shape not in SHAPES:
            parser.error(f"unknown shape {shape}")
    wanted = args.paths.split(",")
    os.makedirs(args.work, exist_ok=True)
    tools = build(args.work, os.path.abspath(args.baseline) if args.baseline else "")
    if args.baseline_python:
        tools["python@base"] = os.path.abspath(args.baseline_python)
    results = []
    print(
        f"machine: {os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f}; {args.rounds} interleaved rounds; "
        f"raw paths with journal {args.raw_journal}; rows/s and ratios as median (min–max)"
    )
    for shape in shapes:
        spec = SHAPES[shape]
        paths = [p for p in spec["paths"] if p in wanted]
        if args.baseline:
            paths = [q for p in paths for q in ([p, p + "@base"] if p in ("declarative", *C_POLICY_MODES) else [p])]
        if args.baseline_python:
            python = ("python-policy", *PER_ROW_POLICIES, "schema-step")
            paths = [q for p in paths for q in ([p, p + "@base"] if p in python else [p])]
        for rows in sizes:
            source, empty = make_stores(args.work, shape, rows)
            if any(p.split("@")[0] in SCHEMA_STEP_PATHS for p in paths):
                import schema_step

                schema_step.destination_model(args.work, "rename")
            times = {p: [] for p in paths}
            cpus = {p: [] for p in paths}
            rss = {p: [] for p in paths}
            expected = {}
            for _ in range(args.rounds):
                for path in paths:
                    seconds, cpu, peak, destination = run_one(shape, path, source, empty, args.work, tools)
                    times[path].append(seconds)
                    cpus[path].append(cpu)
                    rss[path].append(peak)
                    # The copy paths of reference-1 leave out the categories: they agree among themselves.
                    group = (
                        "copy"
                        if shape == "reference-1" and path in ("raw-copy", "declarative", "declarative@base")
                        else "whole"
                    )
                    if path.split("@")[0] in SCHEMA_STEP_PATHS:
                        # The step and cp + DDL agree on the notes' columns and values; cp alone is the source.
                        if path == "cp":
                            continue
                        group = "schema-step"
                        got = rows_of_schema_step(destination)
                    else:
                        got = (
                            rows_of(shape, destination)
                            if group == "whole" or shape == "wide"
                            else rows_of_notes(destination)
                        )
                    if group not in expected:
                        expected[group] = (path, got)
                    elif got != expected[group][1]:
                        raise SystemExit(
                            f"{shape}: {path} at {rows} rows gave other rows than {expected[group][0]}: "
                            f"{got} != {expected[group][1]}"
                        )
            sql, peer = spec["sql"], spec["script"]
            # reference-1's copy paths (declarative) against their own limit, raw-copy, paired per round.
            limit = spec.get("copy_limit")
            copies = [p for p in paths if limit and limit in times and p != limit and p.split("@")[0] == "declarative"]
            print(f"\n{shape}, {rows:,} rows")
            print(f"{'path':<17} {'rows/s':>28} {'to ' + sql:>24} {'to ' + peer:>24} {'peak RSS MiB':>22}")
            for path in paths:
                rates = [rows / t for t in times[path]]
                to_sql, sql_ratios = ratio_cells(times, path, sql)
                to_script, script_ratios = ratio_cells(times, path, peer)
                print(
                    f"{path:<17} {summary(rates):>28} {to_sql:>24} {to_script:>24} "
                    f"{statistics.median(rss[path]):>8.1f} ({min(rss[path]):.1f}–{max(rss[path]):.1f})"
                )
                cpu_to_sql, cpu_sql_ratios = ratio_cells(cpus, path, sql)
                cpu_to_script, cpu_script_ratios = ratio_cells(cpus, path, peer)
                results.append(
                    {
                        "shape": shape,
                        "rows": rows,
                        "path": path,
                        "seconds": times[path],
                        "rows_per_second": rates,
                        "cpu_seconds": cpus[path],
                        "peak_rss_mib": rss[path],
                        "ratios_to_sql": sql_ratios,
                        "ratios_to_script": script_ratios,
                        "cpu_ratios_to_sql": cpu_sql_ratios,
                        "cpu_ratios_to_script": cpu_script_ratios,
                        "sql_path": sql,
                        "script_path": peer,
                        "raw_journal": args.raw_journal,
                    }
                )
            print(f"{'in CPU time':<17} {'CPU s':>28} {'to ' + sql:>24} {'to ' + peer:>24}")
            for path in paths:
                cpu_to_sql, _ = ratio_cells(cpus, path, sql)
                cpu_to_script, _ = ratio_cells(cpus, path, peer)
                print(
                    f"{path:<17} {statistics.median(cpus[path]):>12.3f} ({min(cpus[path]):.3f}–{max(cpus[path]):.3f}) "
                    f"{cpu_to_sql:>24} {cpu_to_script:>24}"
                )
            for path in copies:
                cells, ratios = ratio_cells(times, path, limit)
                cpu_cells, cpu_ratios = ratio_cells(cpus, path, limit)
                print(f"{path} to {limit} (paired per round, above 1: faster): time {cells}; CPU time {cpu_cells}")
                results.append(
                    {
                        "shape": shape,
                        "rows": rows,
                        "path": path,
                        "ratios_to_copy_limit": ratios,
                        "cpu_ratios_to_copy_limit": cpu_ratios,
                        "copy_limit_path": limit,
                    }
                )
            for path in [p for p in ("schema-step", "schema-step@base", "cp") if p in paths and "cp+ddl" in paths]:
                # Paired per round: the step's time over cp + DDL's (the target: at most 3).
                ratios = [t / b for t, b in zip(times[path], times["cp+ddl"])]
                cpu_ratios = [t / b for t, b in zip(cpus[path], cpus["cp+ddl"])]
                print(
                    f"{path} / cp+ddl (paired per round, below 1: faster): time {statistics.median(ratios):.2f} "
                    f"({min(ratios):.2f}–{max(ratios):.2f}); CPU time {statistics.median(cpu_ratios):.2f} "
                    f"({min(cpu_ratios):.2f}–{max(cpu_ratios):.2f})"
                )
                results.append(
                    {
                        "shape": shape,
                        "rows": rows,
                        "path": path,
                        "ratios_to_cp_ddl": ratios,
                        "cpu_ratios_to_cp_ddl": cpu_ratios,
                    }
                )
            for path in paths:
                if path + "@base" in times:
                    # Paired per round: this build's time over the baseline's (above 1: slower).
                    ratios = [t / b for t, b in zip(times[path], times[path + "@base"])]
                    cpu_ratios = [t / b for t, b in zip(cpus[path], cpus[path + "@base"])]
                    print(
                        f"{path}: time / {path}@base {statistics.median(ratios):.3f} "
                        f"({min(ratios):.3f}–{max(ratios):.3f}); "
                        f"CPU time / {path}@base {statistics.median(cpu_ratios):.3f} "
                        f"({min(cpu_ratios):.3f}–{max(cpu_ratios):.3f})"
                    )
                    results.append(
                        {
                            "shape": shape,
                            "rows": rows,
                            "path": path,
                            "time_to_baseline": ratios,
                            "cpu_time_to_baseline": cpu_ratios,
                        }
                    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=2)
    print(
        f"\nevery path gave the same rows as the others of its shape: {len(shapes)} shape(s), "
        f"{len(sizes)} size(s), {args.rounds} round(s)"
    )


if __name__ == "__main__":
    main()
