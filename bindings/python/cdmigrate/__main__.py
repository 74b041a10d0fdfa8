"""``python -m cdmigrate``: the ``cdmigrate`` command line (docs/cli.md) through the Python binding,
with custom policies written in Python.

    python -m cdmigrate migrate Notes.sqlite --to Notes-v2.sqlite \\
        --source-model v1.json --destination-model v2.json --mapping v1-v2.json --policies notepolicies
    python -m cdmigrate migrate Notes.sqlite --to Notes-v4.sqlite --models UnCloudNotes --policies notepolicies
    python -m cdmigrate validate --source-model v1.json --destination-model v2.json --mapping v1-v2.json
    python -m cdmigrate inspect Notes.sqlite --json
    python -m cdmigrate plan Notes.sqlite --models UnCloudNotes [--dot]
    python -m cdmigrate inspect --dot --model Model.xcdatamodeld
    python -m cdmigrate check released-stores --models UnCloudNotes --policies notepolicies
    python -m cdmigrate infer --source-model v1.json --destination-model v2.json -o v1-v2.mapping.json
    python -m cdmigrate import "Model.xcdatamodeld/Model 2.xcdatamodel" -o v2.json
    python -m cdmigrate import Model.xcdatamodeld -o models/
    python -m cdmigrate import V1toV2.xcmappingmodel --source-model v1.json --destination-model v2.json -o v1-v2.json

``--policies MODULE`` imports a module (a dotted name, importable from the current folder, or a
``.py`` file) and registers every ``cdmigrate.EntityMigrationPolicy`` subclass it defines under
its class name, which is what a mapping's ``policy`` names; a module-level ``FUNCTIONS`` dict
(``{("ClassName", "selector:"): callable}``) registers host functions too. With ``--models PATH``
(a model set, as ``cdmigrate migrate --models``) the store is brought to the set's current version
(or ``--to-version``) one version at a time, the modules' policies serving every step.

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
import tempfile
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import MappingModel, Migration, MigrationChain, Model, ModelSet, ModelVersionSet, store_metadata
from .graphs import model_dot, plan_dot
from .errors import DestinationStoreError, MigrationError, MissingSourceModelError
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

def _add_mapping_folders(parser) -> None:
    parser.add_argument("--mappings", action="append", default=[], metavar="dir",
                        help="a folder of mapping models kept apart from the model set, searched with its "
                             "subfolders (may be repeated)")


def run_migrate(args) -> int:
    if args.in_place == (args.to is not None):
        raise UsageError("give either --to PATH or --in-place")
    step_given = bool(args.source_model or args.destination_model or args.mapping)
    if args.models is None and args.mappings:
        raise UsageError("--mappings goes with --models")
    if args.models is not None:
        if step_given:
            raise UsageError("give either --models or --source-model/--destination-model/--mapping, not both")
        if args.no_version_check:
            raise UsageError("--no-version-check goes with a single step; with --models the store's version is found by its hashes")
        return run_migrate_chain(args)
    if args.to_version is not None:
        raise UsageError("--to-version goes with --models")
    if not (args.source_model and args.destination_model and args.mapping):
        raise UsageError("give --source-model, --destination-model and --mapping, or --models")
    out = Output(args.json, args.quiet)
    try:
        policies, functions = collect_policies(args.policies)
        source, destination, mappings = load_models(args)
        with Migration(source, destination, mappings, policies=policies, functions=functions,
                       check_source_version=not args.no_version_check) as migration:
            if args.dry_run:
                return dry_run(args, source, migration, out)
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


def dry_run(args, source: Model, migration: Migration, out: "Output") -> int:
    """``migrate --dry-run``: the models and mapping models were checked when the migration was
    made; the store must be at the source model's version; nothing is written."""
    metadata = None if args.no_version_check else store_metadata(args.store)
    if metadata is not None and not source.is_compatible(metadata):
        differing = ", ".join(f"{d.entity} (store {d.store_hash.hex() if d.store_hash else 'none'}, "
                              f"model {d.model_hash.hex() if d.model_hash else 'none'})"
                              for d in source.version_differences(metadata))
        raise MissingSourceModelError(f"the source store '{args.store}' does not match the source model: {differing or 'its metadata is empty'}",
                                      )
    if metadata is None and not os.path.exists(args.store):
        raise FileNotFoundError(f"no store at '{args.store}'")
    if not args.in_place and os.path.lexists(args.to):
        raise DestinationStoreError(f"the destination '{args.to}' already exists")
    for warning in migration.warnings:
        out.warning(warning)
    written = args.store if args.in_place else args.to
    out.line(f"{args.store} is at the source model's version; it would be migrated to {written}; nothing written")
    out.document({"ok": True, "dryRun": True, "source": args.store, "destination": written, "warnings": migration.warnings})
    return EXIT_SUCCESS


def run_migrate_chain(args) -> int:
    """``migrate --models``: the store's version found by its entity hashes, then every step to
    the target, with the policy modules registered once for all of them (MigrationChain)."""
    out = Output(args.json, args.quiet)
    try:
        policies, functions = collect_policies(args.policies)
        if args.dry_run:
            plan = ModelSet(args.models, args.mappings).plan(args.store, args.to_version)
            out.line(f"{args.store} is at version {plan.store_version}: {len(plan.steps)} step(s) to {plan.target_version}; nothing written")
            for step in plan.steps:
                out.line(f"  {step.source_version} → {step.destination_version}: "
                         + ("inferred" if step.inferred else ", ".join(step.mapping_models)))
            out.document({"ok": True, "dryRun": True, "source": args.store, "storeVersion": plan.store_version,
                          "targetVersion": plan.target_version, "steps": [_step_json(step) for step in plan.steps]})
            return EXIT_SUCCESS
        # What planning says before the run (passes in file-name order, a pass needing another's instances).
        warnings = ModelSet(args.models, args.mappings).plan(args.store, args.to_version).warnings
        for warning in warnings:
            out.warning(warning)
        with MigrationChain(ModelSet(args.models, args.mappings), args.to_version, policies=policies, functions=functions) as chain:
            report = chain.run_in_place(args.store) if args.in_place else chain.run(args.store, args.to)
        written = args.store if args.in_place else args.to
        if report.already_at_target:
            out.line(f"{args.store} is already at version {report.target_version}; "
                     + ("nothing to do" if args.in_place else f"copied to {written}"))
        else:
            count = len(report.steps)
            out.line(f"migrated {args.store} ({report.store_version}) → {written} ({report.target_version}) "
                     f"in {count} step{'' if count == 1 else 's'}")
        for step in report.steps:
            out.line(f"  {step.source_version} → {step.destination_version}: "
                     + ("inferred" if step.inferred else ", ".join(step.mapping_models)))
            for entity, number in step.destination_counts.items():
                out.line(f"    {entity}: {number}")
        out.document({"ok": True, "source": args.store, "destination": written, "storeVersion": report.store_version,
                      "targetVersion": report.target_version, "alreadyAtTarget": report.already_at_target,
                      "warnings": warnings, "steps": report.raw.get("steps", [])})
        return EXIT_SUCCESS
    except (Exception, KeyboardInterrupt) as error:
        out.error(error)
        out.document({"ok": False, "source": args.store, "error": error_object(error)})
        return exit_status(error)


def _step_json(step) -> Dict[str, Any]:
    return {"from": step.source_version, "to": step.destination_version, "inferred": step.inferred,
            "mappingModels": step.mapping_models, "reason": step.reason, "policies": step.policies}


def run_plan(args) -> int:
    """``plan STORE --models PATH``: the steps ``migrate --models`` would run; nothing is written."""
    if args.json and args.dot:
        raise UsageError("give --json or --dot, not both")
    out = Output(args.json)
    try:
        plan = ModelSet(args.models, args.mappings).plan(args.store, to_version=args.to_version)
    except (Exception, KeyboardInterrupt) as error:
        out.error(error)
        out.document({"ok": False, "store": args.store, "error": error_object(error)})
        return exit_status(error)
    if args.dot:
        for warning in plan.warnings:
            out.warning(warning)
        sys.stdout.write(plan_dot(plan))
        return EXIT_SUCCESS
    out.line(f"{args.store}: version {plan.store_version}; target {plan.target_version}"
             + (" (already there: nothing to do)" if plan.is_at_target else f", {len(plan.steps)} step{'' if len(plan.steps) == 1 else 's'}"))
    for number, step in enumerate(plan.steps, 1):
        out.line(f"  {number}. {step.source_version} → {step.destination_version}: "
                 + ("inferred (lightweight)" if step.inferred else ", ".join(step.mapping_models)))
        if step.reason:
            out.line(f"     {step.reason}")
        if step.policies:
            out.line(f"     policies: {', '.join(step.policies)}")
    for warning in plan.warnings:
        out.warning(warning)
    out.document({"ok": True, "store": args.store, "storeVersion": plan.store_version, "targetVersion": plan.target_version,
                  "currentVersion": plan.current_version, "versions": plan.versions,
                  "steps": [_step_json(step) for step in plan.steps], "warnings": plan.warnings})
    return EXIT_SUCCESS


def _folder_stores(folder: str) -> List[str]:
    """Every regular file of the folder but SQLite's companions and hidden files, as ``cdmigrate check`` takes them."""
    if not os.path.isdir(folder):
        raise FileNotFoundError(f"'{folder}' is not a folder")
    return [os.path.join(folder, name) for name in sorted(os.listdir(folder))
            if not name.startswith(".") and not name.endswith(("-wal", "-shm", "-journal")) and ".cdmigrate-" not in name
            and not os.path.isdir(os.path.join(folder, name))]


def run_check(args) -> int:
    """``check FOLDER --models PATH``: every store migrated to the current version in a scratch
    folder (the policy modules registered once, on one MigrationChain), the result checked to be
    at the current version."""
    out = Output(args.json, args.quiet)
    try:
        policies, functions = collect_policies(args.policies)
        stores = _folder_stores(args.folder)
        models = ModelSet(args.models, args.mappings)
        chain = MigrationChain(models, policies=policies, functions=functions)
    except (Exception, KeyboardInterrupt) as error:
        out.error(error)
        out.document({"ok": False, "error": error_object(error)})
        return exit_status(error)
    results: List[Dict[str, Any]] = []
    first_failure: Optional[int] = None
    current = None
    warnings: List[str] = []
    with chain, tempfile.TemporaryDirectory(prefix="cdmigrate-check-") as scratch:
        for index, store in enumerate(stores):
            name = os.path.basename(store)
            try:
                # What planning this store's steps says (passes in file-name order, …), once each.
                for warning in models.plan(store).warnings:
                    if warning not in warnings:
                        warnings.append(warning)
                        out.warning(warning)
                report = chain.run(store, os.path.join(scratch, f"{index}-{name}"))
                result = models.plan(os.path.join(scratch, f"{index}-{name}"))
                current = result.current_version
                if result.store_version != result.current_version:
                    raise MigrationError(f"the result is at version {result.store_version}, not {result.current_version}")
                counts = report.steps[-1].destination_counts if report.steps else {}
                steps = [f"{s.source_version} → {s.destination_version} ({'inferred' if s.inferred else ', '.join(s.mapping_models)})"
                         for s in report.steps]
                out.line(f"ok    {name}: {report.store_version}" + (": " + ", ".join(steps) if steps else ", already current")
                         + ("; " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) if counts else ""))
                results.append({"store": store, "ok": True, "version": report.store_version,
                                "steps": [_step_json(s) for s in report.steps], "counts": counts})
            except (Exception, KeyboardInterrupt) as error:
                if not args.json:
                    code = getattr(error, "code", None)
                    print(f"FAIL  {name}: " + (f"error {code}: " if isinstance(code, int) else "") + str(error), file=sys.stderr)
                results.append({"store": store, "ok": False, "error": error_object(error)})
                if first_failure is None:
                    first_failure = exit_status(error)
                if isinstance(error, KeyboardInterrupt):
                    break
    passed = sum(1 for r in results if r["ok"])
    out.line(f"{passed} of {len(stores)} store{'' if len(stores) == 1 else 's'} reach version {current or 'the current one'}")
    out.document({"ok": first_failure is None, "currentVersion": current, "stores": results, "warnings": warnings})
    return first_failure if first_failure is not None else EXIT_SUCCESS


def run_validate(args) -> int:
    out = Output(args.json)
    try:
        policies, functions = collect_policies(args.policies)
        source, destination, mappings = load_models(args)
        migration = Migration(source, destination, mappings, policies=policies, functions=functions)
        try:
            warnings = migration.warnings
        finally:
            migration.close()
        for warning in warnings:
            out.warning(warning)
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
        out.document({"ok": True, "warnings": warnings, "entityMappings": count})
        return EXIT_SUCCESS
    except Exception as error:
        out.error(error)
        out.document({"ok": False, "error": error_object(error)})
        return exit_status(error)


def _write_text(text: str, output: Optional[str]) -> None:
    """Writes to the file ``output``, or to standard output for None or ``-``."""
    if output is None or output == "-":
        sys.stdout.write(text)
        sys.stdout.flush()
        return
    with open(output, "w", encoding="utf-8") as file:
        file.write(text)


def _failed(out: "Output", error: BaseException) -> int:
    out.error(error)
    out.document({"ok": False, "error": error_object(error)})
    return exit_status(error)


def run_infer(args) -> int:
    """``infer``: the mapping model Core Data would infer between two models, as mapping JSON."""
    out = Output(args.json)
    try:
        source = Model.from_file(args.source_model)
        destination = Model.from_file(args.destination_model)
        with MappingModel.infer(source, destination) as mapping:
            text = mapping.to_json()
            count = len(mapping.entity_mapping_names)
        _write_text(text + "\n", args.output)
        if args.output not in (None, "-") and not args.json:
            print(f"wrote {count} entity mappings to {args.output}", file=sys.stderr)
        return EXIT_SUCCESS
    except (Exception, KeyboardInterrupt) as error:
        return _failed(out, error)


_MODEL_SUFFIXES = (".xcdatamodel", ".xcdatamodel/contents", ".mom", ".json")
_BUNDLE_SUFFIXES = (".xcdatamodeld", ".momd")


def _is_bundle(path: str) -> bool:
    """An .xcdatamodeld or .momd, or any folder holding a VersionInfo.plist (as the cdmigrate command tells them)."""
    return path.endswith(_BUNDLE_SUFFIXES) or os.path.exists(os.path.join(path, "VersionInfo.plist"))


def run_import(args) -> int:
    """``import PATH``: one model (an ``.xcdatamodel``, ``.mom`` or model JSON) as model JSON; a
    model bundle (``.xcdatamodeld``, ``.momd``) as a folder of JSON models and mappings (``-o DIR``,
    the layout ``cdmigrate import`` writes, from ModelSet.write_json); or an ``.xcmappingmodel``
    compiled against ``--source-model``/``--destination-model`` as mapping JSON."""
    trimmed = args.path.rstrip("/") or args.path
    mapping = trimmed.endswith(".xcmappingmodel") or trimmed.endswith(".xcmappingmodel/xcmapping.xml")
    bundle = not mapping and _is_bundle(trimmed)
    if mapping:
        if not (args.source_model and args.destination_model):
            raise UsageError("a mapping model is compiled against its models: give --source-model and --destination-model")
    elif bundle:
        if args.output in (None, "-"):
            raise UsageError("a model bundle has several versions: give -o DIR for their JSON files")
        if args.source_model or args.destination_model:
            raise UsageError("--source-model and --destination-model are for mapping models")
    elif not trimmed.endswith(_MODEL_SUFFIXES):
        raise UsageError(f"'{args.path}' is not an .xcdatamodel, .xcdatamodeld, .mom, .momd, model JSON or .xcmappingmodel")
    elif args.source_model or args.destination_model:
        raise UsageError("--source-model and --destination-model are for mapping models")
    if args.mappings and not bundle:
        raise UsageError("--mappings goes with a model bundle (.xcdatamodeld or .momd)")
    out = Output(args.json)
    try:
        if bundle:
            return _import_bundle(trimmed, args.output, out, args.mappings)
        if mapping:
            source = Model.from_file(args.source_model)
            destination = Model.from_file(args.destination_model)
            with MappingModel.from_xcode(args.path, source, destination) as imported:
                text = imported.to_json()
        else:
            with Model.from_file(trimmed) as model:
                text = model.to_json()
        _write_text(text + "\n", args.output)
        return EXIT_SUCCESS
    except (Exception, KeyboardInterrupt) as error:
        return _failed(out, error)


def _import_bundle(path: str, folder: str, out: "Output", mappings: Optional[List[str]] = None) -> int:
    """Every version as ``DIR/<version>.json``, each mapping model as ``DIR/<name>.mapping.json``,
    the passes manifest and ``DIR/current-version``, as ``cdmigrate import`` writes them."""
    files = ModelSet(path, mappings or ()).write_json(folder)
    for warning in files.warnings:
        out.warning(warning)
    mappings = list(files.mapping_models)
    if not out.json:
        print(f"wrote {len(files.versions)} version(s) and {len(mappings)} mapping model(s) to {folder} "
              f"(current: {files.current_version})", file=sys.stderr)
    out.document({"ok": True, "versions": files.versions, "currentVersion": files.current_version,
                  "mappingModels": mappings, "folder": folder})
    return EXIT_SUCCESS


_UUID_BYTES = frozenset(b"0123456789ABCDEFabcdef-")


def _external_data_census(path: str, connection: sqlite3.Connection) -> Dict[str, Any]:
    """The store's external binary data, as `cdmigrate inspect` counts it: the files in its
    `.<name>_SUPPORT/_EXTERNAL_DATA` folder, the BLOB cells of its entity tables that name a file
    (0x02, a 36-character UUID, 0x00) and the named files that are missing."""
    slash = path.rfind("/")
    directory = "." if slash < 0 else ("/" if slash == 0 else path[:slash])
    stem = path[slash + 1:]
    if stem.rfind(".") > 0:
        stem = stem[:stem.rfind(".")]
    folder = f"{directory}/.{stem}_SUPPORT/_EXTERNAL_DATA"
    names = set(os.listdir(folder)) if os.path.isdir(folder) else set()
    references, missing = 0, set()
    tables = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z%' AND name NOT LIKE 'Z\\_%' ESCAPE '\\'")
    for (table,) in tables.fetchall():
        for column in connection.execute(f'PRAGMA table_info("{table}")').fetchall():
            if str(column[2] or "").upper() != "BLOB":
                continue
            quoted = '"' + column[1].replace('"', '""') + '"'
            for (cell,) in connection.execute(
                    f'SELECT substr({quoted}, 2, 36) FROM "{table}" WHERE typeof({quoted}) = \'blob\' AND length({quoted}) = 38 '
                    f"AND substr({quoted}, 1, 1) = x'02' AND substr({quoted}, 38, 1) = x'00'"):
                if isinstance(cell, bytes) and all(byte in _UUID_BYTES for byte in cell):
                    references += 1
                    if cell.decode() not in names:
                        missing.add(folder + "/" + cell.decode())
    return {"folder": folder, "files": len(names), "references": references, "missing": len(missing), "missingFiles": sorted(missing)}


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
                "hasVersionMetadata": bool(metadata), "entities": entities,
                "externalData": _external_data_census(path, connection)}
    finally:
        connection.close()


def _difference_text(difference) -> str:
    """A version difference as the cdmigrate command words it."""
    if difference.store_hash is not None and difference.model_hash is not None:
        return f"{difference.entity}: store hash {difference.store_hash.hex()}, model hash {difference.model_hash.hex()}"
    if difference.store_hash is None and difference.model_hash is not None:
        return f"{difference.entity} is not in the store"
    if difference.store_hash is not None:
        return f"{difference.entity} is only in the store"
    return difference.entity


def _set_warning(text: str, versions: List[str]) -> bool:
    """Whether a warning of ModelSet.json_files() is about the set's versions themselves (what the
    cdmigrate command prints for --models), not about a version's model or a mapping model's file."""
    if text.startswith("no mapping model found") or "its embedded" in text or "model path names version" in text \
            or text.startswith("versions ordered by the steps") or text.startswith("the steps mapping models record"):
        return False   # about the mapping models (the cdmigrate command reads the versions alone)
    return not any(text.startswith(f"{v}: ") for v in versions) and not text.endswith("records no pair of the set's versions: not written")


def run_inspect(args) -> int:
    if args.dot and args.json:
        raise UsageError("--dot and --json cannot be combined")
    if args.dot and args.models is not None:
        raise UsageError("--dot draws one model: give --model, not --models")
    if args.store is None and not (args.dot and args.model is not None):
        raise UsageError("give the store to inspect (only --dot --model needs none)")
    if args.dot:
        out = Output(False)
        try:
            model = Model.from_file(args.model) if args.model is not None else Model.from_store(args.store)
            with model:
                sys.stdout.write(model_dot(model, title=args.model if args.model is not None else args.store))
            return EXIT_SUCCESS
        except (Exception, KeyboardInterrupt) as error:
            return _failed(out, error)
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
        census = info["externalData"]
        if census["files"] or census["references"]:
            out.line(f"  external binary data: {census['files']} file{'' if census['files'] == 1 else 's'} in {census['folder']}, "
                     f"{census['references']} referenced by rows, {census['missing']} missing")
            for file in census["missingFiles"][:5]:
                out.warning(f"external binary data file missing: {file}")
        if args.model is not None:
            with Model.from_file(args.model) as model, store_metadata(args.store) as metadata:
                differences = [_difference_text(d) for d in metadata.version_differences(model)]
            out.line(f"at the version of {args.model}" if not differences
                     else f"not at the version of {args.model}: " + "; ".join(differences))
            info["compatible"] = not differences
            info["differences"] = differences
        if args.models is not None:
            files = ModelSet(args.models).json_files()
            for warning in files.warnings:
                if _set_warning(warning, files.versions):
                    out.warning(warning)
            version = ModelVersionSet(args.models).version_for_store(args.store)
            out.line(f"written with version {version} of {args.models} (current: {files.current_version})" if version is not None
                     else f"written with none of the versions in {args.models} ({', '.join(files.versions)})")
            info["version"] = version
            info["currentVersion"] = files.current_version
        out.document(info)
        return EXIT_SUCCESS
    except (MigrationError, OSError, sqlite3.Error) as error:
        out.error(error)
        out.document({"ok": False, "error": error_object(error)})
        return EXIT_IO if isinstance(error, (OSError, sqlite3.Error)) else exit_status(error)


# -- arguments ----------------------------------------------------------------------------------

def _add_models(parser: argparse.ArgumentParser, required: bool = True) -> None:
    parser.add_argument("--source-model", required=required, metavar="path", help="the model the store was written with")
    parser.add_argument("--destination-model", required=required, metavar="path", help="the model to migrate to")
    parser.add_argument("--mapping", action="append", required=required, default=None if required else [], metavar="path",
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
    _add_models(migrate, required=False)
    migrate.add_argument("--models", metavar="path",
                         help="a model set (an .xcdatamodeld, a folder of JSON models or a .momd, with its mapping "
                              "models): migrate through its versions instead of one step")
    migrate.add_argument("--to-version", metavar="name", help="with --models: the version to reach (default: the current one)")
    _add_mapping_folders(migrate)
    migrate.add_argument("--dry-run", action="store_true",
                         help="check the models, the mapping models and the store's version (or plan the chain); write nothing")
    migrate.add_argument("--no-version-check", action="store_true",
                         help="do not compare the store's version hashes with the source model's")
    migrate.add_argument("--json", action="store_true", help="print the report as JSON")
    migrate.add_argument("--quiet", action="store_true", help="print nothing but errors")
    migrate.set_defaults(run=run_migrate)

    validate = commands.add_parser("validate", help="check models and mapping models against each other", epilog=EPILOG)
    _add_models(validate)
    validate.add_argument("--json", action="store_true", help="print the result as JSON")
    validate.set_defaults(run=run_validate)

    plan = commands.add_parser("plan", help="show the version-by-version migration a store needs (--models)", epilog=EPILOG)
    plan.add_argument("store", help="the store")
    plan.add_argument("--models", required=True, metavar="path", help="the model set")
    plan.add_argument("--to-version", metavar="name", help="the version to reach (default: the current one)")
    _add_mapping_folders(plan)
    plan.add_argument("--json", action="store_true", help="print the plan as JSON")
    plan.add_argument("--dot", action="store_true",
                      help="print the plan as a Graphviz digraph: versions as nodes (the store's highlighted), a solid "
                           "edge per step with mapping models, a dashed one per inferred step")
    plan.set_defaults(run=run_plan)

    check = commands.add_parser("check", help="migrate every store of a folder to the current version and check the results",
                                epilog=EPILOG)
    check.add_argument("folder", help="the folder of stores (one or more per released version)")
    check.add_argument("--models", required=True, metavar="path", help="the model set")
    _add_mapping_folders(check)
    check.add_argument("--policies", action="append", default=[], metavar="module",
                       help="a Python module (or .py file) defining EntityMigrationPolicy subclasses; may be repeated")
    check.add_argument("--json", action="store_true", help="print the results as JSON")
    check.add_argument("--quiet", action="store_true", help="print nothing but failures")
    check.set_defaults(run=run_check)

    infer = commands.add_parser("infer", help="write the mapping model Core Data would infer between two models, as JSON",
                                epilog=EPILOG)
    infer.add_argument("--source-model", required=True, metavar="path", help="the model the stores were written with")
    infer.add_argument("--destination-model", required=True, metavar="path", help="the model to migrate to")
    infer.add_argument("-o", "--output", metavar="file", help="where to write the mapping JSON (default: standard output)")
    infer.add_argument("--json", action="store_true", help="print errors as JSON on standard output")
    infer.set_defaults(run=run_infer)

    import_ = commands.add_parser("import", help="convert Xcode model and mapping files (source or compiled) to JSON",
                                  epilog=EPILOG)
    import_.add_argument("path", help="the .xcdatamodel, .xcdatamodeld, .mom, .momd, model JSON or .xcmappingmodel")
    import_.add_argument("-o", "--output", metavar="file|dir",
                         help="the file to write (default: standard output), or for a model bundle the folder "
                              "(created if needed) that receives every version, its mapping models and current-version")
    _add_mapping_folders(import_)
    import_.add_argument("--source-model", metavar="path", help="for a mapping model: the model it maps from")
    import_.add_argument("--destination-model", metavar="path", help="for a mapping model: the model it maps to")
    import_.add_argument("--json", action="store_true", help="print errors as JSON on standard output")
    import_.set_defaults(run=run_import)

    inspect = commands.add_parser("inspect", help="show a store's metadata, entities and row counts, or a model as a Graphviz graph",
                                  epilog=EPILOG)
    inspect.add_argument("store", nargs="?", help="the store to inspect (none with --dot --model)")
    inspect.add_argument("--json", action="store_true", help="print the result as JSON")
    inspect.add_argument("--dot", action="store_true",
                         help="print --model (else the store's own model: its model cache, or the model rebuilt from its "
                              "schema) as a Graphviz digraph: entities as record nodes with their attributes, "
                              "relationships as labelled edges, inheritance as dashed edges")
    inspect.add_argument("--model", metavar="path",
                         help="a model to compare the store's version hashes with; with --dot, the model to draw "
                              "(JSON, .xcdatamodel(d), .mom)")
    inspect.add_argument("--models", metavar="path",
                         help="a model's versions (an .xcdatamodeld or a folder of JSON models): names the one the "
                              "store was written with")
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
