"""cdmigrate — Core Data's heavyweight migration (mapping models, NSEntityMigrationPolicy,
NSMigrationManager) for SQLite stores in Core Data's layout, driven from Python.

The package loads the self-contained ``libcdmigrate.so`` through ctypes (found inside the package,
or at the path in ``CDMIGRATE_LIBRARY``); no compiler or Swift toolchain is needed at run time.

>>> import cdmigrate
>>> source = cdmigrate.Model.from_file("UsersV1.model.json")
>>> destination = cdmigrate.Model.from_file("UsersV2.model.json")
>>> mapping = cdmigrate.MappingModel.from_file("UsersV1ToV2.mapping.json")
>>> class SwedenUserMapping(cdmigrate.EntityMigrationPolicy):
...     def create_destination_instances(self, source, mapping, manager):
...         if source["country"] == "Sweden":
...             user = manager.create("SwedenUser")
...             user["name"] = source["name"]
...             manager.associate(source, user)
>>> with cdmigrate.Migration(source, destination, mapping) as migration:
...     migration.run("Users.sqlite", "Users-v2.sqlite", policies={"SwedenUserMapping": SwedenUserMapping})
"""

from __future__ import annotations

from typing import Sequence

from . import _command_line, _lib, graphs
from ._version import __version__ as __version__
from .batch import SourceBatch
from .chain import (
    ChainPass,
    DirectStep,
    MigrationChain,
    MigrationPlan,
    MigrationStep,
    ModelSet,
    ModelSetFiles,
    StagedMigrationReport,
    migrate_store,
)
from .errors import (
    DestinationStoreError,
    EncodingError,
    EntityMigrationPolicyError,
    ExpressionEvaluationError,
    ExpressionSyntaxError,
    IncompatibleVersionHashError,
    InferredMappingModelError,
    InvalidArgumentError,
    InvalidJSONError,
    InvalidMappingError,
    InvalidModelError,
    MigrationCancelledError,
    MigrationError,
    MigrationIOError,
    MigrationWarning,
    MismatchError,
    MissingMappingModelError,
    MissingSourceModelError,
    MisuseError,
    NotFoundError,
    Problem,
    SourceStoreError,
    SQLiteError,
    ValidationError,
    error_class,
)
from .fleet import FleetPlan, StoreResult, migrate_many, migrate_one
from .instance import Instance
from .introspection import AttributeDescription, EntityDescription, RelationshipDescription
from .metadata import ModelVersionSet, StoreEntity, StoreMetadata, VersionDifference, store_metadata
from .migration import Migration
from .model import MappingModel, Model
from .policy import EntityMapping, EntityMigrationPolicy, MigrationManager, PropertyMapping
from .reports import EntityMappingReport, Loss, MigrationReport, Progress
from .store import Store
from .values import (
    REFERENCE_DATE,
    UNIX_TO_REFERENCE,
    URL,
    AttributeType,
    CoreDataDate,
    ObjectID,
    ValueType,
    date_from_reference_seconds,
    reference_seconds,
)


def library_version() -> str:
    """The loaded libcdmigrate's version ("0.1.0")."""
    return _lib.lib.cdm_libversion().decode()


def sqlite_version() -> str:
    """The version of the SQLite library libcdmigrate uses."""
    return _lib.lib.cdm_sqlite_version().decode()


def library_path() -> str:
    """Where the package loaded libcdmigrate.so from."""
    return _lib.library_path()


__all__ = [
    "REFERENCE_DATE",
    "UNIX_TO_REFERENCE",
    "URL",
    "AttributeDescription",
    "AttributeType",
    "ChainPass",
    "CoreDataDate",
    "DestinationStoreError",
    "DirectStep",
    "EncodingError",
    "EntityDescription",
    "EntityMapping",
    "EntityMappingReport",
    "EntityMigrationPolicy",
    "EntityMigrationPolicyError",
    "ExpressionEvaluationError",
    "ExpressionSyntaxError",
    "FleetPlan",
    "IncompatibleVersionHashError",
    "InferredMappingModelError",
    "Instance",
    "InvalidArgumentError",
    "InvalidJSONError",
    "InvalidMappingError",
    "InvalidModelError",
    "Loss",
    "MappingModel",
    "Migration",
    "MigrationCancelledError",
    "MigrationChain",
    "MigrationError",
    "MigrationIOError",
    "MigrationManager",
    "MigrationPlan",
    "MigrationReport",
    "MigrationStep",
    "MigrationWarning",
    "MismatchError",
    "MissingMappingModelError",
    "MissingSourceModelError",
    "MisuseError",
    "Model",
    "ModelSet",
    "ModelSetFiles",
    "ModelVersionSet",
    "NotFoundError",
    "ObjectID",
    "Problem",
    "Progress",
    "PropertyMapping",
    "RelationshipDescription",
    "SQLiteError",
    "SourceBatch",
    "SourceStoreError",
    "StagedMigrationReport",
    "Store",
    "StoreEntity",
    "StoreMetadata",
    "StoreResult",
    "ValidationError",
    "ValueType",
    "VersionDifference",
    "date_from_reference_seconds",
    "error_class",
    "graphs",
    "library_path",
    "library_version",
    "migrate_many",
    "migrate_one",
    "migrate_store",
    "reference_seconds",
    "run_command",
    "sqlite_version",
    "store_metadata",
]


def run_command(arguments: Sequence[str], program: str = "cdmigrate") -> int:
    """Runs one command of the ``cdmigrate`` command line (``["migrate", "a.sqlite", …]``) in this
    process, as the executable runs it: the same options, output on standard output and standard
    error, and exit status (docs/cli.md); ``--policies`` also takes Python modules.

    :param arguments: the arguments after the program's name.
    :param program: the program name messages use.
    :returns: the exit status (0 success, 1 failed, 64 usage, 65 invalid input, 66 not a store at
        the expected version, 74 I/O, 128 + the signal when cancelled).

    Core Data counterpart: none (Core Data has no command line)."""
    return _command_line.run(arguments, program)
