#!/usr/bin/env python3
"""Instruction counts of cdmigrate's C-driven paths under callgrind: a figure that a busy machine
does not disturb (unlike wall-clock time), for comparing two builds of the library.

    python3 bench/instructions.py --prefix PREFIX [--rows 20000] [--work build/bench]
    python3 bench/instructions.py --prefix PREFIX --paths declarative,raw-copy --rows 200000

PREFIX is an install prefix of the library (`make install PREFIX=...`); the drivers
(bench/c_migrate.c, bench/c_policy.c) are built against it. The stores are bench/run.py's.
Prints, per shape and path, the instructions executed by the whole process (Ir) and per row.

raw-copy is the limit of the declarative copy (bench/c_raw_copy.c: ATTACH + INSERT … SELECT with
journal and sync off, linked with the system's SQLite, as bench/run.py's raw-copy path). With both
declarative and raw-copy, each also runs counted inside its call alone (`cdm_migration_run`,
`raw_copy`: no process start, no model loading), and the ratio raw-copy / declarative is printed
for both counts (the declarative copy's throughput as a share of the raw copy's; target >= 0.90).

The Python paths of reference-1 (raw-sql, the whole migration as SQL in Python's sqlite3, the
limit the C policy paths are measured against; script, python-policy, python-rows, python-fetch
and the -engine ones: bench/run.py's) run as bench/run.py's child process, with this checkout's bindings/python
(its library built in: `make -C bindings/python python-package`); --prefix is not needed for them.
Each also runs at --fixed-rows notes, and the instructions a note are printed with that run's
(the interpreter's start, imports, models) taken off: (Ir(rows) - Ir(fixed)) / (rows - fixed).
They run with PYTHONHASHSEED=0 (str hashes, and so dict probing, the same in every run), the C
drivers with SWIFT_DETERMINISTIC_HASHING=1 (the same for the library's dictionaries);
--python-package DIR runs them with another checkout's bindings/python (its library built in).

    python3 bench/instructions.py --paths script,python-rows,python-fetch,python-policy --rows 20000
"""

from __future__ import annotations

import argparse
import hashlib
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run


def drivers(prefix: str, work: str) -> dict:
    # An absolute prefix: the drivers' rpath (which wins over LD_LIBRARY_PATH) must name it from anywhere.
    prefix = os.path.realpath(prefix)
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(prefix, "lib", "pkgconfig"))
    flags = subprocess.run(
        ["pkg-config", "--cflags", "--libs", "cdmigrate"], env=env, check=True, capture_output=True, text=True
    ).stdout.split()
    flags = [f for f in flags if "rpath" not in f]
    # The same name for the same prefix in every run (str hashes differ from process to process).
    tag = hashlib.sha1(prefix.encode()).hexdigest()[:12]
    built = {}
    raw_copy = os.path.join(work, "c_raw_copy")
    subprocess.run(
        [
            os.environ.get("CC", "cc"),
            "-O2",
            "-o",
            raw_copy,
            os.path.join(run.ROOT, "bench", "c_raw_copy.c"),
            "-lsqlite3",
        ],
        check=True,
    )
    built["c_raw_copy"] = raw_copy
    for name in ("c_migrate", "c_policy"):
        out = os.path.join(work, f"{name}-{tag}")
        subprocess.run(
            [
                os.environ.get("CC", "cc"),
                "-O2",
                "-o",
                out,
                os.path.join(run.ROOT, "bench", f"{name}.c"),
                f"-L{os.path.join(prefix, 'lib')}",
                *flags,
                "-Wl,--disable-new-dtags",
                f"-Wl,-rpath,{os.path.join(prefix, 'lib')}",
            ],
            check=True,
        )
        built[name] = out
    return built


def instructions(command: list, out: str, prefix: str, inside: str = "") -> int:
    """Instructions of the whole process, or of the calls of the function `inside` alone."""
    # The prefix's library, whatever paths its pkg-config file carries.
    # Swift's hashing with a fixed seed: dictionary probing, and so the count, the same in every run.
    env = dict(
        os.environ, LD_LIBRARY_PATH=os.path.join(os.path.realpath(prefix), "lib"), SWIFT_DETERMINISTIC_HASHING="1"
    )
    toggle = [f"--toggle-collect={inside}"] if inside else []
    subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *toggle, *command],
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    with open(out) as f:
        for line in f:
            if line.startswith(("summary:", "totals:")):
                return int(line.split()[1])
    raise SystemExit(f"no totals in {out}")


#: bench/run.py's paths run in Python (its child process), this checkout's bindings/python.
PYTHON_PATHS = (
    "raw-sql",
    "script",
    "python-policy",
    "python-rows",
    "python-fetch",
    "python-rows-engine",
    "python-fetch-engine",
)


def python(args: argparse.Namespace, paths: list) -> None:
    """The Python paths of reference-1: instructions of the whole process and a note's, the run
    at --fixed-rows taken off; every path's rows checked against the first's."""
    if not args.python_package:
        run.build_python_package()
    env = dict(run.python_env(os.path.abspath(args.python_package) if args.python_package else ""), PYTHONHASHSEED="0")
    shape = "reference-1"
    counts = {}
    rows_written = {}
    for rows in (args.fixed_rows, args.rows):
        source, empty = run.make_stores(args.work, shape, rows)
        for path in paths:
            destination = os.path.join(args.work, f"ir-{shape}-{path}-{rows}.sqlite")
            for suffix in ("", "-wal", "-shm", "-journal"):
                if os.path.exists(destination + suffix):
                    os.remove(destination + suffix)
            shutil.copy(empty, destination)
            command = [sys.executable, os.path.join(run.ROOT, "bench", "run.py"), "--child", path, shape]
            out = destination + ".callgrind"
            subprocess.run(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *command, source, destination],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
            )
            with open(out) as f:
                ir = next(int(line.split()[1]) for line in f if line.startswith(("summary:", "totals:")))
            counts[(path, rows)] = ir
            if rows == args.rows:
                rows_written[path] = run.rows_of(shape, destination)
                note = (ir - counts[(path, args.fixed_rows)]) / (rows - args.fixed_rows)
                print(
                    f"{shape:<12} {path:<20} {rows:>9,} rows  {ir:>15,} Ir  {note:>10,.0f} Ir/note "
                    f"(the {args.fixed_rows:,}-note run's {counts[(path, args.fixed_rows)]:,} Ir taken off)",
                    flush=True,
                )
    first = paths[0]
    for path in paths[1:]:
        if rows_written[path] != rows_written[first]:
            raise SystemExit(f"{path} wrote other rows than {first}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prefix", default="", help="an install prefix of the library (the C paths)")
    parser.add_argument("--python-package", default="", help="another checkout's bindings/python for the Python paths")
    parser.add_argument(
        "--fixed-rows", type=run.parse_rows, default=100, help="the Python paths' run whose count is taken off"
    )
    parser.add_argument("--rows", type=run.parse_rows, default=20000)
    parser.add_argument("--work", default=os.path.join(run.ROOT, "build", "bench"))
    parser.add_argument(
        "--paths",
        default="declarative,c-policy,c-policy-rows,per-note,distinct",
        help="reference-1 paths: declarative (copy), raw-copy (its limit: bench/c_raw_copy.c), c-policy (the batch "
        "hook), c-policy-rows (the per-row hooks), "
        "per-note (bench/notas-per-note.mapping.json: a Categoria per note, linked by a to-many relationship "
        "mapping), distinct (bench/notas-distinct.mapping.json: the whole migration declaratively); the wide "
        "shape runs declarative",
    )
    args = parser.parse_args()
    wanted = args.paths.split(",")
    os.makedirs(args.work, exist_ok=True)
    python_paths = [p for p in wanted if p in PYTHON_PATHS]
    if python_paths:
        python(args, python_paths)
    if not [p for p in wanted if p not in PYTHON_PATHS]:
        return
    if not args.prefix:
        parser.error("--prefix is needed for the C paths")
    tools = drivers(args.prefix, args.work)
    mappings = {
        "per-note": os.path.join(run.ROOT, "bench", "notas-per-note.mapping.json"),
        "distinct": os.path.join(run.ROOT, "bench", "notas-distinct.mapping.json"),
    }
    reference_paths = ("declarative", "raw-copy", "c-policy", "c-policy-rows", "per-note", "distinct")
    # The function each path's own work is in, counted alone when declarative and raw-copy both run.
    calls = {"declarative": "cdm_migration_run", "raw-copy": "raw_copy"}
    for shape, paths in (
        ("reference-1", [p for p in reference_paths if p in wanted]),
        ("wide", ["declarative"] if "declarative" in wanted else []),
    ):
        if not paths:
            continue
        source, empty = run.make_stores(args.work, shape, args.rows)
        made = {}
        counted = {}
        paired = shape == "reference-1" and "declarative" in paths and "raw-copy" in paths

        def fresh(destination: str) -> None:
            for suffix in ("", "-wal", "-shm", "-journal"):
                if os.path.exists(destination + suffix):
                    os.remove(destination + suffix)

        for path in paths:
            destination = os.path.join(args.work, f"ir-{shape}-{path}.sqlite")
            fresh(destination)
            if path == "raw-copy":
                shutil.copy(empty, destination)
                command = [tools["c_raw_copy"], source, destination]
            elif path in run.C_POLICY_MODES:
                command = [tools["c_policy"], run.C_POLICY_MODES[path], run.EXAMPLES, source, destination]
            else:
                command = [
                    tools["c_migrate"],
                    *run.SHAPES[shape]["models"],
                    mappings.get(path, run.SHAPES[shape]["copy"]),
                    source,
                    destination,
                ]
            ir = instructions(command, destination + ".callgrind", args.prefix)
            print(
                f"{shape:<12} {path:<14} {args.rows:>9,} rows  {ir:>15,} Ir  {ir / args.rows:>10,.0f} Ir/row",
                flush=True,
            )
            made[path] = destination
            counted[path] = [ir]
            if paired and path in calls:
                fresh(destination)
                if path == "raw-copy":
                    shutil.copy(empty, destination)
                ir = instructions(command, destination + ".inside.callgrind", args.prefix, inside=calls[path])
                counted[path].append(ir)
                print(
                    f"{shape:<12} {path:<14} {args.rows:>9,} rows  {ir:>15,} Ir  {ir / args.rows:>10,.0f} Ir/row"
                    f"  (inside {calls[path]} alone)",
                    flush=True,
                )
        if paired:
            # Both wrote the same notes (run.py's check of its copy paths).
            if run.rows_of_notes(made["declarative"]) != run.rows_of_notes(made["raw-copy"]):
                raise SystemExit("the declarative copy's notes differ from the raw copy's")
            whole = counted["raw-copy"][0] / counted["declarative"][0]
            inside = counted["raw-copy"][1] / counted["declarative"][1]
            print(
                f"{shape:<12} declarative to raw-copy in instructions (raw-copy / declarative; target >= 0.90): "
                f"{inside:.3f} inside the calls, {whole:.3f} whole processes; the notes are the same",
                flush=True,
            )
        if "distinct" in made and "c-policy" in made:
            # The declarative whole migration must write what the policy writes (the data's names are NFC).
            same = run.rows_of(shape, made["distinct"]) == run.rows_of(shape, made["c-policy"])
            print(f"{shape:<12} distinct writes the rows c-policy writes: {'yes' if same else 'NO'}", flush=True)
            if not same:
                raise SystemExit("the distinct path's rows differ from the C policy's")


if __name__ == "__main__":
    main()
