#!/usr/bin/env python3
"""Instruction counts of cdmigrate's C-driven paths under callgrind: a figure that a busy machine
does not disturb (unlike wall-clock time), for comparing two builds of the library.

    python3 bench/instructions.py --prefix PREFIX [--rows 20000] [--work build/bench]

PREFIX is an install prefix of the library (`make install PREFIX=...`); the drivers
(bench/c_migrate.c, bench/c_policy.c) are built against it. The stores are bench/run.py's.
Prints, per shape and path, the instructions executed by the whole process (Ir) and per row.
"""

from __future__ import annotations

import argparse
import hashlib
import os
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


def instructions(command: list, out: str, prefix: str) -> int:
    # The prefix's library, whatever paths its pkg-config file carries.
    env = dict(os.environ, LD_LIBRARY_PATH=os.path.join(os.path.realpath(prefix), "lib"))
    subprocess.run(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", *command],
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prefix", required=True)
    parser.add_argument("--rows", type=run.parse_rows, default=20000)
    parser.add_argument("--work", default=os.path.join(run.ROOT, "build", "bench"))
    parser.add_argument(
        "--paths",
        default="declarative,c-policy,c-policy-rows,per-note,distinct",
        help="reference-1 paths: declarative (copy), c-policy (the batch hook), c-policy-rows (the per-row hooks), "
        "per-note (bench/notas-per-note.mapping.json: a Categoria per note, linked by a to-many relationship "
        "mapping), distinct (bench/notas-distinct.mapping.json: the whole migration declaratively); the wide "
        "shape runs declarative",
    )
    args = parser.parse_args()
    wanted = args.paths.split(",")
    os.makedirs(args.work, exist_ok=True)
    tools = drivers(args.prefix, args.work)
    mappings = {
        "per-note": os.path.join(run.ROOT, "bench", "notas-per-note.mapping.json"),
        "distinct": os.path.join(run.ROOT, "bench", "notas-distinct.mapping.json"),
    }
    reference_paths = ("declarative", "c-policy", "c-policy-rows", "per-note", "distinct")
    for shape, paths in (
        ("reference-1", [p for p in reference_paths if p in wanted]),
        ("wide", ["declarative"] if "declarative" in wanted else []),
    ):
        if not paths:
            continue
        source, _ = run.make_stores(args.work, shape, args.rows)
        made = {}
        for path in paths:
            destination = os.path.join(args.work, f"ir-{shape}-{path}.sqlite")
            for suffix in ("", "-wal", "-shm", "-journal"):
                if os.path.exists(destination + suffix):
                    os.remove(destination + suffix)
            if path in run.C_POLICY_MODES:
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
        if "distinct" in made and "c-policy" in made:
            # The declarative whole migration must write what the policy writes (the data's names are NFC).
            same = run.rows_of(shape, made["distinct"]) == run.rows_of(shape, made["c-policy"])
            print(f"{shape:<12} distinct writes the rows c-policy writes: {'yes' if same else 'NO'}", flush=True)
            if not same:
                raise SystemExit("the distinct path's rows differ from the C policy's")


if __name__ == "__main__":
    main()
