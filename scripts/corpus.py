#!/usr/bin/env python3
"""Runs cdmigrate over real projects' Xcode models, as a new user would, and says what reached the
current version with its data.

    python3 scripts/corpus.py [--cdmigrate PATH] [--rows N] [--json FILE] FOLDER...

Each FOLDER is searched (recursively) for `.xcdatamodeld` bundles with two or more versions. For
each bundle:

1. import: `cdmigrate import BUNDLE -o DIR` reads every version (and the mapping models);
2. seed: a store at the oldest version (versions ordered by their names as a developer reads
   them: `Model 2` before `Model 10`; when the model was renamed on the way, the versions of the
   current version's name last), with --rows instances of every concrete entity, every
   attribute given a value of its type (optional ones now and then nil) and every to-one
   relationship pointing at an instance of its destination;
3. migrate: `cdmigrate migrate SEED --models BUNDLE --to OUT --json` (with `--mappings` for every
   folder of the project that holds `.xcmappingmodel`s and is nearer to this bundle than to the
   project's other bundles, when the command has that option);
4. compare: for every entity that every version has, the destination holds as many instances as
   the seed, and the values of every attribute that every version declares with the same name
   and type are the same (as a multiset per entity: the engine may renumber instances).

With --policies DIR, a project whose mapping models name NSEntityMigrationPolicy subclasses gets
them from `DIR/<project folder name>.py` (the project's policies ported to Python): the migration
runs through `python -m cdmigrate migrate --policies` that module. The module may define
`CHECKED_BY_POLICY` (entity names the generic comparison skips, because the policy changes them on
purpose), `prepare(seed_path)` (brings the seed in line with what the app's own code keeps true of
its data, which a model cannot say), `check(seed_path, out_path) -> list of problems`, which
says what the project's own code says the result must be, `SEED_VERSION` (the version to seed
at instead of the oldest, when the older versions lack what the policies read) and `PASSES` (the
order of a step's mapping models as the app's code gives it, the `steps` of a
`migration-passes.json`) and `CURRENT_IS_NEWEST` (the current version is the newest though its
name sorts first).

Nothing of the projects is copied into this repository; the folders are read where they are
(see Tests/Fixtures/README.md for the projects used and their licences). Exit status 0; the last
line counts the bundles that passed each stage.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import random
import re
import shutil
import sqlite3
import subprocess
import sys
import tempfile
from typing import Any

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))

STAGES = ("import", "seed", "migrate", "compare")


def natural_key(name: str) -> list[Any]:
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", name)]


def stem(name: str) -> str:
    """A version name without its trailing version number: `Model 2`, `Model_v1.1` -> `Model`."""
    return re.sub(r"[\s._-]*(?:v(?=\d))?[\d\s._-]*$", "", name, flags=re.IGNORECASE).lower()


def ordered_versions(names: list[str], current: str | None) -> list[str]:
    """The versions oldest first, by their names as a developer reads them (`Model 2` before
    `Model 10`). A bundle whose model was renamed on the way (`mHealth`, `mHealth 2`, then
    `arc 3`) has versions of several stems: those of the current version's stem come last (the
    current version is the newest), the others before them in name order."""
    ordered = sorted(names, key=natural_key)
    if current is None or current not in names:
        return ordered

    def current_line(name: str) -> bool:
        # `SampleModel3_v2` continues `SampleModel3` though the stems differ (the 3 is the name's).
        return stem(name) == stem(current) or name.lower().startswith(current.lower())

    return [n for n in ordered if not current_line(n)] + [n for n in ordered if current_line(n)]


def bundles(folder: str) -> list[str]:
    found = []
    for directory, subdirectories, _ in os.walk(folder):
        for name in list(subdirectories):
            if name.endswith(".xcdatamodeld"):
                path = os.path.join(directory, name)
                versions = [v for v in os.listdir(path) if v.endswith(".xcdatamodel")]
                if len(versions) >= 2:
                    found.append(path)
                subdirectories.remove(name)
    return sorted(found)


def project_root(bundle: str, folders: list[str]) -> str:
    """The project a bundle belongs to: a FOLDER given is one project, or a folder of projects
    (each of its immediate subfolders that holds the bundle deeper down is one)."""
    bundle = os.path.abspath(bundle)
    for folder in map(os.path.abspath, folders):
        if bundle.startswith(folder + os.sep):
            first = os.path.relpath(bundle, folder).split(os.sep)[0]
            candidate = os.path.join(folder, first)
            return candidate if candidate != bundle and os.path.isdir(candidate) else folder
    return os.path.dirname(bundle)


def mapping_folders(root: str) -> list[str]:
    folders = set()
    for directory, subdirectories, _ in os.walk(root):
        for name in subdirectories:
            if name.endswith(".xcmappingmodel"):
                folders.add(directory)
    return sorted(folders)


def own_mapping_folders(bundle: str, root: str) -> list[str]:
    """The mapping folders of the project that belong to `bundle`: those nearer to it (the deeper
    their common folder) than to any other bundle of the project; a tie gives a folder to each.
    A mapping model of another bundle whose version names happen to match would otherwise be
    taken for this bundle's steps (Threema keeps a copy of its one mapping model beside each of
    its two bundles, which share version names)."""
    others = bundles(root) if os.path.isdir(root) else []
    others = [os.path.abspath(b) for b in others] or [os.path.abspath(bundle)]

    def closeness(folder: str, candidate: str) -> int:
        return len(os.path.commonpath([folder, candidate]).split(os.sep))

    chosen = []
    for folder in mapping_folders(root):
        folder = os.path.abspath(folder)
        best = max(closeness(folder, b) for b in others)
        if closeness(folder, os.path.abspath(bundle)) == best:
            chosen.append(folder)
    return chosen


def python_environment() -> dict[str, str]:
    """The environment in which `python -m cdmigrate` finds this checkout's binding."""
    environment = dict(os.environ)
    binding = os.path.join(ROOT, "bindings", "python")
    environment["PYTHONPATH"] = (
        binding + os.pathsep + environment.get("PYTHONPATH", "") if environment.get("PYTHONPATH") else binding
    )
    return environment


def run(command: list[str], timeout: int = 600, environment: dict[str, str] | None = None) -> tuple[int, str, str]:
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout, env=environment)
        return done.returncode, done.stdout, done.stderr
    except subprocess.TimeoutExpired:
        return -1, "", f"timed out after {timeout} s"


def first_line(text: str) -> str:
    try:
        error = json.loads(text)["error"]
        return (
            f"error {error.get('code')}: {error.get('message') or (error.get('errors') or [{}])[0].get('message', '')}"[
                :300
            ]
        )
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        pass
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[0][:300] if lines else ""


# ---- Models, read from the JSON that `cdmigrate import` writes.


class Entity:
    def __init__(self, raw: dict[str, Any], by_name: dict[str, dict[str, Any]]):
        self.name = raw["name"]
        self.abstract = bool(raw.get("abstract"))
        self.parent = raw.get("parent")
        self.renaming = raw.get("renamingIdentifier")
        chain, parent = [], raw
        while parent is not None:
            chain.insert(0, parent)
            parent = by_name.get(parent.get("parent")) if parent.get("parent") else None
        self.root = chain[0]["name"]
        self.attributes = {a["name"]: a for level in chain for a in level.get("attributes", [])}
        self.relationships = {r["name"]: r for level in chain for r in level.get("relationships", [])}


def is_model(path: str) -> bool:
    with open(path, encoding="utf-8") as handle:
        return "entities" in json.load(handle)


def load_version(path: str) -> dict[str, Entity]:
    with open(path, encoding="utf-8") as handle:
        raw = json.load(handle)
    by_name = {e["name"]: e for e in raw["entities"]}
    return {name: Entity(e, by_name) for name, e in by_name.items()}


def sample(attribute: dict[str, Any], rng: random.Random, row: int, required_later: bool = False) -> Any:
    """A value for `attribute`; nil now and then when it is optional and no later version requires it
    (the app's data would have a value there, or Core Data would refuse the step too)."""
    import cdmigrate

    kind = attribute.get("type", "string")
    if attribute.get("optional") is not False and not required_later and rng.random() < 0.2:
        return None
    # Within the attribute's range (minValue/maxValue: Core Data validates them at save, so the
    # app's data keeps to them; for a string, its length).
    low, high = attribute.get("minValue"), attribute.get("maxValue")
    if kind in ("integer16", "integer32", "integer64"):
        first = int(low) if isinstance(low, (int, float)) else 0
        last = int(high) if isinstance(high, (int, float)) else max(first, 0) + 30000
        return rng.randint(first, max(first, last))
    if kind == "boolean":
        return rng.random() < 0.5
    if kind in ("double", "float", "decimal"):
        first = float(low) if isinstance(low, (int, float)) else 0.0
        last = float(high) if isinstance(high, (int, float)) else first + (1 << 17)
        return first + float(rng.randint(0, 1 << 20)) / (1 << 20) * max(last - first, 0.0)
    if kind == "string":
        text = f"{attribute['name']} {row} {rng.choice(['café', 'naïve', '東京', '🎉', 'plain'])}"
        if isinstance(low, (int, float)) and len(text) < low:
            text += "x" * (int(low) - len(text))
        if isinstance(high, (int, float)) and len(text) > high:
            text = text[: max(int(high), 0)]
        return text
    if kind == "date":
        return cdmigrate.date_from_reference_seconds(500_000_000 + rng.randint(0, 10_000_000))
    if kind == "binary":
        return bytes(rng.randint(0, 255) for _ in range(rng.randint(1, 32)))
    if kind == "uuid":
        import uuid

        return uuid.UUID(int=rng.getrandbits(128))
    if kind == "uri":
        return f"https://example.org/{row}"
    if kind == "transformable":
        # A string, archived by NSKeyedArchiver as Core Data's default transformer does; bytes for
        # an attribute naming its own transformer (stored as that transformer's output).
        if attribute.get("valueTransformerName"):
            return f"{attribute['name']} {row}".encode()
        return f"{attribute['name']} {row}"
    return None


def seed(
    model_path: str, entities: dict[str, Entity], path: str, rows: int, required_later: frozenset = frozenset()
) -> None:
    import cdmigrate

    rng = random.Random(7)
    model = cdmigrate.Model.from_file(model_path)
    with cdmigrate.Store.create(model, path) as store:
        made: dict[str, list] = collections.defaultdict(list)
        concrete = [e for e in entities.values() if not e.abstract]

        def make(entity: Entity, row: int) -> Any:
            values = {}
            for name, attribute in entity.attributes.items():
                if attribute.get("transient") or attribute.get("derived"):
                    continue
                if attribute.get("type") in ("objectID", "undefined", "composite"):
                    continue
                value = sample(attribute, rng, row, (entity.name, name) in required_later)
                if value is not None:
                    values[name] = value
            instance = store.insert(entity.name, values)
            made[entity.name].append(instance)
            return instance

        # Rows are numbered across entities: sub-entities share their root's table, and a
        # uniqueness constraint there holds over all of them.
        for number, entity in enumerate(concrete):
            for row in range(rows):
                make(entity, number * rows + row)
        # A one-to-one (to-one both ways) takes each destination once, so that setting one link
        # never takes another's away; required links are set first.
        taken: dict[tuple[str, str], set] = collections.defaultdict(set)
        paired: set = set()
        links = [
            (entity, name, relationship)
            for entity in concrete
            for name, relationship in entity.relationships.items()
            if not relationship.get("toMany") and not relationship.get("transient")
        ]
        links.sort(key=lambda link: link[2].get("optional") is not False)
        for entity, name, relationship in links:
            destination = relationship["destination"]
            inverse = (
                entities.get(destination).relationships.get(relationship.get("inverse") or "")
                if destination in entities
                else None
            )
            one_to_one = inverse is not None and not inverse.get("toMany")
            if one_to_one:
                # Set from one side only (the first, a required one): the other side follows.
                pair = frozenset([(entity.name, name), (destination, relationship.get("inverse"))])
                if pair in paired:
                    continue
                paired.add(pair)
            for instance in made[entity.name]:
                if not (relationship.get("optional") is False or rng.random() < 0.8):
                    continue
                targets = [i for e in concrete if is_kind_of(entities, e.name, destination) for i in made[e.name]]
                if one_to_one:
                    used = taken[(destination, relationship.get("inverse") or "")]
                    targets = [t for t in targets if id(t) not in used]
                if not targets and one_to_one and relationship.get("optional") is False:
                    # A required one-to-one needs a destination of its own: make one.
                    kinds = [e for e in concrete if is_kind_of(entities, e.name, destination)]
                    if kinds:
                        targets = [make(kinds[0], len(made[kinds[0].name]))]
                if targets:
                    target = rng.choice(targets)
                    if one_to_one:
                        used.add(id(target))
                    instance[name] = target
        store.save()


def is_kind_of(entities: dict[str, Entity], name: str, ancestor: str) -> bool:
    entity = entities.get(name)
    while entity is not None:
        if entity.name == ancestor:
            return True
        entity = entities.get(entity.parent) if entity.parent else None
    return False


# ---- Reading a store's rows by entity and attribute name.


def entity_rows(path: str, entity: Entity, attributes: list[str]) -> collections.Counter | None:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        number = db.execute("SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = ?", (entity.name,)).fetchone()
        table = "Z" + entity.root.upper()
        columns = [row[1] for row in db.execute(f'PRAGMA table_info("{table}")')]
        if number is None or not columns:
            return None
        chosen = []
        for name in attributes:
            candidates = [c for c in columns if re.fullmatch("Z" + re.escape(name.upper()) + r"\d*", c)]
            if len(candidates) != 1:
                return None
            chosen.append(candidates[0])
        select = ", ".join(f'"{c}"' for c in chosen) or "1"
        return collections.Counter(
            db.execute(f'SELECT {select} FROM "{table}" WHERE Z_ENT = ?', (number[0],)).fetchall()
        )
    finally:
        db.close()


def successor(items: dict[str, dict[str, Any]], name: str) -> str | None:
    """The name `name` has in the next version: the same name, else the item whose renaming
    identifier is `name` (Xcode's elementID)."""
    renamed = [n for n, item in items.items() if item.get("renamingIdentifier") == name]
    if renamed:
        return renamed[0]
    return name if name in items and not items[name].get("renamingIdentifier") else None


def lineage(versions: list[dict[str, Entity]], entity: str) -> tuple[str, dict[str, str]] | None:
    """The entity's name in the last version and, for each attribute of the first version that
    every version keeps (through renames, with the same type), its name in the last version."""
    names = {a: a for a, attribute in versions[0][entity].attributes.items() if not attribute.get("transient")}
    current = entity
    for previous, version in zip(versions, versions[1:]):
        raw = {n: {"renamingIdentifier": e.renaming} for n, e in version.items()}
        following = successor(raw, current)
        if following is None:
            return None
        before, after = previous[current].attributes, version[following].attributes
        for first, name in list(names.items()):
            moved = successor(after, name)
            if (
                moved is None
                or after[moved].get("type") != before[name].get("type")
                or after[moved].get("transient")
                or after[moved].get("valueTransformerName") != before[name].get("valueTransformerName")
            ):
                del names[first]
            else:
                names[first] = moved
        current = following
    return current, names


def compare(seed_path: str, out_path: str, versions: list[dict[str, Entity]], skipped=frozenset()) -> list[str]:
    problems = []
    for name, entity in sorted(versions[0].items()):
        if name in skipped:
            continue
        kept = lineage(versions, name) if not entity.abstract else None
        if kept is None:
            continue
        last_name, attributes = kept
        first_names = sorted(attributes)
        before = entity_rows(seed_path, entity, first_names)
        after = entity_rows(out_path, versions[-1][last_name], [attributes[a] for a in first_names])
        if before is None or after is None:
            continue
        if sum(before.values()) != sum(after.values()):
            problems.append(f"{name}: {sum(before.values())} instances before, {sum(after.values())} after")
        elif before != after:
            lost = [
                a
                for i, a in enumerate(first_names)
                if collections.Counter(r[i] for r in before.elements())
                != collections.Counter(r[i] for r in after.elements())
            ]
            problems.append(f"{name}: values changed in {', '.join(lost)}")
    return problems


def policies_module(bundle: str, folders: list[str], directory: str | None) -> str | None:
    """The ported policies of the project holding `bundle`, if `directory` has them."""
    if directory is None:
        return None
    for folder in folders:
        folder = os.path.abspath(folder)
        if os.path.abspath(bundle).startswith(folder + os.sep):
            relative = os.path.relpath(os.path.abspath(bundle), folder).split(os.sep)
            for name in (os.path.basename(folder), relative[0]):
                path = os.path.join(directory, name + ".py")
                if os.path.isfile(path):
                    return path
    return None


def load_module(path: str) -> Any:
    import importlib.util

    spec = importlib.util.spec_from_file_location("corpus_policies_" + str(abs(hash(path))), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def try_bundle(
    bundle: str, folders: list[str], tool: str, rows: int, has_mappings_option: bool, policies: str | None = None
) -> dict[str, Any]:
    result: dict[str, Any] = {"bundle": bundle, "passed": [], "failed": None, "message": ""}
    work = tempfile.mkdtemp(prefix="cdmigrate-corpus-")
    try:
        json_dir = os.path.join(work, "json")
        code, out, err = run([tool, "import", bundle, "-o", json_dir])
        if code != 0:
            result.update(failed="import", message=first_line(err) or first_line(out))
            return result
        result["passed"].append("import")
        found = [f[:-5] for f in os.listdir(json_dir) if f.endswith(".json") and is_model(os.path.join(json_dir, f))]
        result["versions"] = len(found)
        current = None
        current_file = os.path.join(json_dir, "current-version")
        if os.path.exists(current_file):
            with open(current_file, encoding="utf-8") as handle:
                current = handle.read().strip()
        names = ordered_versions(found, current)
        # A port may say that the current version, though its name sorts first, is the newest
        # (a project that keeps editing its unnumbered model and snapshots the older ones).
        module = load_module(policies) if policies else None
        if current in names and getattr(module, "CURRENT_IS_NEWEST", False):
            names = [n for n in names if n != current] + [current]
        # A bundle whose current version is its oldest by name (a library's test models, switched
        # per test) has nothing to migrate: said, not counted as a pass.
        if len(names) > 1 and current == names[0]:
            result.update(skipped=True, message=f"skipped: the current version '{current}' is the oldest by name")
            return result
        # A port may seed at a later version (SEED_VERSION), where the steps its policies serve
        # have data to work on (the older versions lack what they read).
        start = getattr(module, "SEED_VERSION", None)
        if start is not None:
            if start not in names:
                result.update(failed="seed", message=f"SEED_VERSION '{start}' is not a version of the bundle")
                return result
            names = names[names.index(start) :]
            result["seed_version"] = start
        versions = [load_version(os.path.join(json_dir, n + ".json")) for n in names]
        seed_path = os.path.join(work, "seed.sqlite")
        try:
            required_later = frozenset(
                (entity.name, name)
                for version in versions[1:]
                for entity in version.values()
                for name, attribute in entity.attributes.items()
                if attribute.get("optional") is False
            )
            seed(os.path.join(json_dir, names[0] + ".json"), versions[0], seed_path, rows, required_later)
        except Exception as error:  # a model the seeding cannot fill is reported, not fatal
            result.update(failed="seed", message=f"{type(error).__name__}: {error}"[:300])
            return result
        if module is not None and hasattr(module, "prepare"):
            module.prepare(seed_path)
        result["passed"].append("seed")
        out_path = os.path.join(work, "out.sqlite")
        if policies:
            result["policies"] = os.path.basename(policies)
            command = [
                sys.executable,
                "-m",
                "cdmigrate",
                "migrate",
                seed_path,
                "--models",
                bundle,
                "--to",
                out_path,
                "--json",
                "--policies",
                policies,
            ]
        else:
            command = [tool, "migrate", seed_path, "--models", bundle, "--to", out_path, "--json"]
        if has_mappings_option:
            for folder in own_mapping_folders(bundle, project_root(bundle, folders)):
                command += ["--mappings", folder]
        # A port may give the passes' order the app's code gives (migration-passes.json).
        passes = getattr(module, "PASSES", None)
        if passes and has_mappings_option:
            manifest = os.path.join(work, "passes")
            os.makedirs(manifest, exist_ok=True)
            with open(os.path.join(manifest, "migration-passes.json"), "w", encoding="utf-8") as handle:
                json.dump({"steps": passes}, handle)
            command += ["--mappings", manifest]
        code, out, err = run(command, environment=python_environment() if policies else None)
        if code != 0:
            result.update(failed="migrate", message=first_line(err) or first_line(out), exit=code)
            return result
        result["passed"].append("migrate")
        skipped = set(getattr(module, "CHECKED_BY_POLICY", ()))
        problems = compare(seed_path, out_path, versions, skipped)
        if module is not None and hasattr(module, "check"):
            try:
                problems += module.check(seed_path, out_path)
            except Exception as error:  # a check that cannot read the result says so
                problems.append(f"the policies module's check failed: {type(error).__name__}: {error}")
        if problems:
            result.update(failed="compare", message="; ".join(problems)[:600])
            return result
        result["passed"].append("compare")
        return result
    finally:
        if not os.environ.get("CORPUS_KEEP"):
            shutil.rmtree(work, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+")
    parser.add_argument(
        "--cdmigrate", default=shutil.which("cdmigrate") or os.path.join(ROOT, ".build", "debug", "cdmigrate")
    )
    parser.add_argument("--rows", type=int, default=20)
    parser.add_argument("--json", help="write one JSON object per bundle to this file")
    parser.add_argument("--policies", help="folder of <project>.py modules: projects' policies ported to Python")
    args = parser.parse_args()
    has_mappings_option = "--mappings" in run([args.cdmigrate, "migrate", "--help"])[1]
    results = []
    for bundle in [b for folder in args.folders for b in bundles(folder)]:
        policies = policies_module(bundle, args.folders, args.policies)
        result = try_bundle(bundle, args.folders, args.cdmigrate, args.rows, has_mappings_option, policies)
        results.append(result)
        status = (
            "skipped"
            if result.get("skipped")
            else "ok"
            if result["failed"] is None
            else f"FAILED at {result['failed']}"
        )
        print(
            f"{status:20} {os.path.relpath(bundle)} ({result.get('versions', '?')} versions) {result['message']}",
            flush=True,
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            for result in results:
                handle.write(json.dumps(result, ensure_ascii=False) + "\n")
    counts = {stage: sum(stage in r["passed"] for r in results) for stage in STAGES}
    skipped = sum(bool(r.get("skipped")) for r in results)
    print(
        f"{len(results)} bundles: "
        + ", ".join(f"{counts[s]} {s}" for s in STAGES)
        + (f" ({skipped} skipped: nothing to migrate)" if skipped else "")
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
