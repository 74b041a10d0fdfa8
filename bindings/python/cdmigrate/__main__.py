"""``python -m cdmigrate``: the ``cdmigrate`` command line (docs/cli.md) through the Python binding,
with custom policies written in Python.

    python -m cdmigrate migrate Notes.sqlite --to Notes-v2.sqlite \\
        --source-model v1.json --destination-model v2.json --mapping v1-v2.json --policies notepolicies
    python -m cdmigrate validate --source-model v1.json --destination-model v2.json --mapping v1-v2.json
    python -m cdmigrate inspect Notes.sqlite --json

``--policies MODULE`` imports a module (a dotted name, importable from the current folder, or a
``.py`` file) and registers every ``cdmigrate.EntityMigrationPolicy`` subclass it defines under
its class name, which is what a mapping's ``policy`` names; a module-level ``FUNCTIONS`` dict
(``{("ClassName", "selector:"): callable}``) registers host functions too.

Exit codes are the command's: 0 success, 1 the migration failed, 64 usage, 65 an invalid model,
mapping model or expression, 66 the store is not at the source model's version, 74 a file could
not be read or written, 130 cancelled.
"""

import argparse
import importlib
import importlib.util
import inspect as _inspect
import json
import os
import plistlib
import sqlite3
import sys
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import MappingModel, Migration, Model
from .errors import MigrationError
from .policy import EntityMigrationPolicy

EXIT_SUCCESS, EXIT_FAILED, EXIT_USAGE, EXIT_INVALID, EXIT_INCOMPATIBLE, EXIT_IO, EXIT_CANCELLED = 0, 1, 64, 65, 66, 74, 130

_INVALID_CODES = {1, 2, 3, 4, 6, 134190}         # JSON, model, mapping, expression syntax, argument, inference
_INCOMPATIBLE_CODES = {134100, 134130}            # version hashes, missing source model
_IO_CODES = {7, 134150, 134160}                   # I/O, source store, destination store


def exit_status(error: BaseException) -> int:
    """The exit code docs/cli.md gives for an error."""
    if isinstance(error, KeyboardInterrupt):
        return EXIT_CANCELLED
    if isinstance(error, (OSError, ImportError)):
        return EXIT_IO
    code = getattr(error, "code", None)
    if code in _INVALID_CODES:
        return EXIT_INVALID
    if code in _INCOMPATIBLE_CODES:
        return EXIT_INCOMPATIBLE
    if code in _IO_CODES:
        return EXIT_IO
    if code == 134120:
        return EXIT_CANCELLED
    return EXIT_FAILED


class UsageError(Exception):
    """Wrong command-line arguments (exit 64)."""


class _Parser(argparse.ArgumentParser):
    """argparse with the command's usage exit code (64, not 2)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


# -- output -------------------------------------------------------------------------------------

class Output:
    def __init__(self, json_output: bool, quiet: bool = False):
        self.json = json_output
        self.quiet = quiet

    def line(self, text: str) -> None:
        if not self.json and not self.quiet:
            print(text)

    def warning(self, text: str) -> None:
        if not self.json:
            print(f"warning: {text}", file=sys.stderr)

    def error(self, error: BaseException) -> None:
        if not self.json:
            code = getattr(error, "code", None)
            prefix = f"error {code}: " if isinstance(code, int) else "error: "
            text = prefix + str(error)
            for problem in getattr(error, "problems", []) or []:
                text += f"\n  - error {problem.code}: {problem.message}" + (f" (at {problem.path})" if problem.path else "")
            print(f"cdmigrate: {text}", file=sys.stderr)

    def document(self, obj: Dict[str, Any]) -> None:
        if self.json:
            print(json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False))


def error_object(error: BaseException) -> Dict[str, Any]:
    """An error as the command's JSON gives it: code, name, message, path, offset, errors."""
    code = getattr(error, "code", None)
    if not isinstance(code, int):
        code = 7 if isinstance(error, OSError) else 0
    obj: Dict[str, Any] = {"code": code, "message": str(error)}
    name = getattr(error, "code_name", None)
    if isinstance(name, str):
        obj["name"] = name
    for key in ("path", "offset"):
        value = getattr(error, key, None)
        if value is not None:
            obj[key] = value
    problems = getattr(error, "problems", None) or []
    if problems:
        obj["errors"] = [{k: v for k, v in (("code", p.code), ("message", p.message), ("path", p.path), ("offset", p.offset)) if v is not None}
                         for p in problems]
    return obj


# -- models, mappings and policies ----------------------------------------------------------------

def _is_xcode_mapping(path: str) -> bool:
    trimmed = path.rstrip("/")
    return trimmed.endswith(".xcmappingmodel") or trimmed.endswith(".xml")


def load_models(args: argparse.Namespace) -> Tuple[Model, Model, List[MappingModel]]:
    source = Model.from_file(args.source_model)
    destination = Model.from_file(args.destination_model)
    mappings = []
    for path in args.mapping:
        if _is_xcode_mapping(path):
            mappings.append(MappingModel.from_xcode(path, source, destination))
        else:
            mapping = MappingModel.from_file(path)
            mapping.validate(source, destination)
            mappings.append(mapping)
    return source, destination, mappings


def load_policy_module(name: str):
    """Imports ``name``: a ``.py`` file, or a module importable from the current folder or sys.path."""
    if name.endswith(".py") or os.sep in name:
        module_name = os.path.splitext(os.path.basename(name))[0]
        spec = importlib.util.spec_from_file_location(module_name, name)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load the policy module '{name}'")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        return module
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    return importlib.import_module(name)


def collect_policies(modules: Sequence[str]):
    """The policy classes (by class name) and host functions the modules define."""
    policies: Dict[str, type] = {}
    functions: Dict[Any, Any] = {}
    for name in modules:
        try:
            module = load_policy_module(name)
        except ImportError as error:
            raise ImportError(f"cannot import the policy module '{name}': {error}") from error
        for attribute, value in vars(module).items():
            if (_inspect.isclass(value) and issubclass(value, EntityMigrationPolicy) and value is not EntityMigrationPolicy
                    and value.__module__ == module.__name__):
                policies[value.__name__] = value
        functions.update(getattr(module, "FUNCTIONS", {}) or {})
    return policies, functions


def named_policies(paths: Sequence[str]) -> List[tuple]:
    """(entity mapping, policy) for every JSON mapping file's entity mapping that names a policy."""
    named = []
    for path in paths:
        if _is_xcode_mapping(path):
            continue
        with open(path, encoding="utf-8") as file:
            document = json.load(file)
        for mapping in document.get("entityMappings", []) or []:
            if isinstance(mapping, dict) and mapping.get("policy"):
                named.append((mapping.get("name", "?"), mapping["policy"]))
    return named


def _unqualified(name: str) -> str:
    return name.rsplit(".", 1)[-1]


# -- commands -------------------------------------------------------------------------------------

def run_migrate(args) -> int:
    if args.in_place == (args.to is not None):
        raise UsageError("give either --to PATH or --in-place")
    out = Output(args.json, args.quiet)
    try:
        policies, functions = collect_policies(args.policies)
        source, destination, mappings = load_models(args)
        with Migration(source, destination, mappings, policies=policies, functions=functions) as migration:
            if args.in_place:
                report = migration.run_in_place(args.store)
            else:
                report = migration.run(args.store, args.to)
        written = args.store if args.in_place else args.to
        out.line(f"migrated {args.store} → {written}")
        for entity, count in report.destination_counts.items():
            out.line(f"  {entity}: {count}")
        for entity, count in report.untaken.items():
            out.warning(f"{count} {entity} instances were taken by no entity mapping")
        for warning in report.warnings:
            out.warning(warning)
        out.document({"ok": True, "source": args.store, "destination": written, "report": report.raw})
        return EXIT_SUCCESS
    except (Exception, KeyboardInterrupt) as error:
        out.error(error)
        out.document({"ok": False, "source": args.store, "error": error_object(error)})
        return exit_status(error)


def run_validate(args) -> int:
    out = Output(args.json)
    try:
        policies, functions = collect_policies(args.policies)
        source, destination, mappings = load_models(args)
        Migration(source, destination, mappings, policies=policies, functions=functions).close()
        if args.policies:
            registered = {_unqualified(name) for name in policies}
            missing = [(m, p) for m, p in named_policies(args.mapping) if _unqualified(p) not in registered]
            if missing:
                text = "; ".join(f"entity mapping '{m}' names policy '{p}', which no --policies module defines" for m, p in missing)
                error = MigrationError(text, 3)
                out.error(error)
                out.document({"ok": False, "error": error_object(error)})
                return EXIT_INVALID
        count = sum(len(m.entity_mapping_names) for m in mappings)
        out.line(f"ok: {len(mappings)} mapping model(s), {count} entity mappings fit both models")
        out.document({"ok": True, "warnings": [], "entityMappings": count})
        return EXIT_SUCCESS
    except Exception as error:
        out.error(error)
        out.document({"ok": False, "error": error_object(error)})
        return exit_status(error)


def _store_info(path: str) -> Dict[str, Any]:
    """What `cdmigrate inspect` says about a store, read with sqlite3 and plistlib."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"no store at '{path}'")
    uri = "file:" + os.path.abspath(path) + "?mode=ro"
    connection = sqlite3.connect(uri, uri=True)
    try:
        try:
            row = connection.execute("SELECT Z_UUID, Z_PLIST FROM Z_METADATA ORDER BY Z_VERSION LIMIT 1").fetchone()
            rows = connection.execute("SELECT Z_ENT, Z_NAME, Z_SUPER FROM Z_PRIMARYKEY ORDER BY Z_ENT").fetchall()
        except sqlite3.DatabaseError as error:
            raise MigrationError(f"'{path}' is not a Core Data SQLite store: {error}", 134150) from error
        if row is None:
            raise MigrationError(f"'{path}' has no Z_METADATA row", 134150)
        uuid, blob = row
        metadata = plistlib.loads(bytes(blob)) if blob else {}
        hashes = metadata.get("NSStoreModelVersionHashes", {}) or {}
        by_number = {number: (name, parent) for number, name, parent in rows}
        entities = []
        for number, name, parent in rows:
            root = number
            seen = set()
            while by_number.get(root, (None, 0))[1] and root not in seen:
                seen.add(root)
                root = by_number[root][1]
            table = "Z" + by_number[root][0].upper()
            try:
                count = connection.execute(f'SELECT COUNT(*) FROM "{table}" WHERE Z_ENT = ?', (number,)).fetchone()[0]
            except sqlite3.DatabaseError:
                count = 0
            entity: Dict[str, Any] = {"name": name, "entityNumber": number, "rows": count}
            if parent:
                entity["superentity"] = by_number.get(parent, (str(parent), 0))[0]
            if name in hashes:
                import base64
                entity["versionHash"] = base64.b64encode(bytes(hashes[name])).decode()
            entities.append(entity)
        return {"store": path, "uuid": uuid, "storeType": metadata.get("NSStoreType", "SQLite"),
                "versionIdentifiers": list(metadata.get("NSStoreModelVersionIdentifiers", []) or []),
                "hasVersionMetadata": bool(metadata), "entities": entities}
    finally:
        connection.close()


def run_inspect(args) -> int:
    out = Output(args.json)
    try:
        info = _store_info(args.store)
        out.line(f"store {args.store}")
        out.line(f"  UUID {info['uuid']}, type {info['storeType']}")
        out.line("  model version identifiers: " + ", ".join(f'"{v}"' for v in info["versionIdentifiers"]))
        if not info["hasVersionMetadata"]:
            out.line("  no version metadata (empty Z_PLIST)")
        for entity in info["entities"]:
            parent = f" : {entity['superentity']}" if "superentity" in entity else ""
            digest = f"  {entity['versionHash']}" if "versionHash" in entity else ""
            out.line(f"  {entity['name']}{parent}: {entity['rows']} rows{digest}")
        out.document(info)
        return EXIT_SUCCESS
    except (MigrationError, OSError, sqlite3.Error) as error:
        out.error(error)
        out.document({"ok": False, "error": error_object(error)})
        return EXIT_IO if isinstance(error, (OSError, sqlite3.Error)) else exit_status(error)


# -- arguments ----------------------------------------------------------------------------------

def _add_models(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--source-model", required=True, metavar="path", help="the model the store was written with")
    parser.add_argument("--destination-model", required=True, metavar="path", help="the model to migrate to")
    parser.add_argument("--mapping", action="append", required=True, metavar="path",
                        help="a mapping model (JSON or .xcmappingmodel); several run as passes, in order")
    parser.add_argument("--policies", action="append", default=[], metavar="module",
                        help="a Python module (or .py file) defining EntityMigrationPolicy subclasses, "
                             "registered by class name; may be repeated")


EPILOG = ("exit codes: 0 success; 1 the migration failed; 64 usage; 65 invalid model, mapping model or "
          "expression; 66 the store is not at the source model's version; 74 a file could not be read "
          "or written; 130 cancelled")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m cdmigrate", description="Core Data heavyweight migrations through the Python binding.",
                     epilog=EPILOG)
    commands = parser.add_subparsers(dest="command", metavar="command", parser_class=_Parser)
    commands.required = True

    migrate = commands.add_parser("migrate", help="migrate a store to the destination model", epilog=EPILOG)
    migrate.add_argument("store", help="the store to migrate")
    migrate.add_argument("--to", metavar="path", help="where to write the migrated store (must not exist)")
    migrate.add_argument("--in-place", action="store_true", help="replace the store with the migrated one")
    _add_models(migrate)
    migrate.add_argument("--json", action="store_true", help="print the report as JSON")
    migrate.add_argument("--quiet", action="store_true", help="print nothing but errors")
    migrate.set_defaults(run=run_migrate)

    validate = commands.add_parser("validate", help="check models and mapping models against each other", epilog=EPILOG)
    _add_models(validate)
    validate.add_argument("--json", action="store_true", help="print the result as JSON")
    validate.set_defaults(run=run_validate)

    inspect = commands.add_parser("inspect", help="show a store's metadata, entities and row counts", epilog=EPILOG)
    inspect.add_argument("store", help="the store to inspect")
    inspect.add_argument("--json", action="store_true", help="print the result as JSON")
    inspect.set_defaults(run=run_inspect)
    return parser


def main(argv: Optional[Sequence[str]] = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return args.run(args)
    except UsageError as error:
        parser.print_usage(sys.stderr)
        print(f"{parser.prog} {args.command}: error: {error}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
