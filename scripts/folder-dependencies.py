#!/usr/bin/env python3
"""Which engine folders use which: for each folder of Sources/CDMigrate, the other folders whose
top-level types its code names (comments skipped). docs/architecture.md states the direction:
a folder uses only folders below it in ORDER. Exits 1, naming each type and file, when a folder
uses one above it, unless the use is in EXCEPTIONS; and when a folder is not in ORDER. Above the
engine it checks the targets' imports: CDMigrate < CDMigrateCAPI < CDMigrateCommandLine <
CDMigrateCLI, no Foundation in the engine or the C API, and FoundationEssentials only (no
Foundation, hence no ICU in libcdmigrate.so) in the command line.
scripts/test.sh runs it (and so does FolderDependencyTests in the Swift suite).

    scripts/folder-dependencies.py                 # folder -> folders it uses; fails on a break
    scripts/folder-dependencies.py Model Store     # the names behind one edge, with their files
    scripts/folder-dependencies.py --root DIR      # another tree laid out like Sources/CDMigrate
"""

import collections
import os
import pathlib
import re
import sys

R = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "Sources", "CDMigrate")
# Bottom to top: docs/architecture.md ("Direction of dependencies").
ORDER = ["Core", "Model", "Expressions", "Store", "Mapping", "Archive", "Xcode", "Migration"]
# The one upward use kept on purpose, with the only names it may use (docs/architecture.md says why).
args = sys.argv[1:]
if args[:1] == ["--root"]:
    R, args = args[1], args[2:]
EXCEPTIONS = {("Core", "Store"): {"ManagedObject"}}
folders = sorted(os.listdir(R))
decl = re.compile(
    r"^[ \t]*(?:(?:public|package|internal|private|fileprivate|final|open|indirect)\s+)*"
    r"(?:class|struct|enum|protocol|typealias)[ \t]+([A-Za-z_][A-Za-z0-9_]*)",
    re.M,
)
owner = {}
files = {}
for f in folders:
    for n in os.listdir(os.path.join(R, f)):
        src = pathlib.Path(R, f, n).read_text()
        code = "\n".join(line.split("//")[0] if not line.strip().startswith("///") else "" for line in src.split("\n"))
        # string literals are kept: interpolations name types too
        files[(f, n)] = code
        for m in decl.finditer(code):
            # only top-level (no indentation)
            if m.group(0).startswith((" ", "\t")):
                continue
            owner.setdefault(m.group(1), f)
uses = collections.defaultdict(lambda: collections.defaultdict(set))
for (f, n), code in files.items():
    for name, of in owner.items():
        if of == f:
            continue
        if re.search(r"\b" + name + r"\b", code):
            uses[f][of].add(f"{name} ({n})")
for f in folders:
    print(f, "->", ", ".join(sorted(uses[f].keys())))
if len(args) > 1:
    a, b = args[0], args[1]
    for x in sorted(uses[a][b]):
        print("  ", x)
breaks = []
for f in folders:
    if f not in ORDER:
        breaks.append(f"{f}/ is not in ORDER: place it in the direction of dependencies (docs/architecture.md)")
        continue
    for of, names in uses[f].items():
        if of not in ORDER or ORDER.index(of) < ORDER.index(f):
            continue
        allowed = EXCEPTIONS.get((f, of), set())
        for x in sorted(names):
            if x.split(" ")[0] not in allowed:
                breaks.append(f"{f} -> {of}: {x}")
# The targets above the engine (docs/architecture.md): each imports only targets before it, and
# the engine and the C API import no Foundation (libcdmigrate links only the Swift core runtime).
TARGETS = ["CDMigrate", "CDMigrateCAPI", "CDMigrateCommandLine", "CDMigrateCLI"]
NO_FOUNDATION = {"CDMigrate", "CDMigrateCAPI"}
sources = os.path.join(R, "..")
if os.path.basename(os.path.normpath(R)) == "CDMigrate" and all(
    os.path.isdir(os.path.join(sources, t)) for t in TARGETS
):
    importre = re.compile(
        r"^\s*(?:@_implementationOnly\s+|(?:public|package|internal)\s+)?import\s+(?:\w+\s+)?([A-Za-z_][A-Za-z0-9_]*)",
        re.M,
    )
    for i, target in enumerate(TARGETS):
        for folder, _, names in os.walk(os.path.join(sources, target)):
            for n in names:
                if not n.endswith(".swift"):
                    continue
                for m in importre.finditer(pathlib.Path(folder, n).read_text()):
                    module = m.group(1)
                    if module in TARGETS and TARGETS.index(module) > i:
                        breaks.append(f"{target} -> {module}: import in {n} (targets: {' < '.join(TARGETS)})")
                    if target in NO_FOUNDATION and module.startswith("Foundation"):
                        breaks.append(f"{target} imports {module} ({n}): the engine and the C API use no Foundation")
                    # libcdmigrate.so carries the command line: FoundationEssentials only (no ICU).
                    if target == "CDMigrateCommandLine" and module == "Foundation":
                        breaks.append(
                            f"{target} imports Foundation ({n}): the command line uses FoundationEssentials only"
                        )
if breaks:
    print("\nuses against the direction " + " < ".join(ORDER) + ":", file=sys.stderr)
    for b in breaks:
        print("  " + b, file=sys.stderr)
    sys.exit(1)
