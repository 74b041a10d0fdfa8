"""Progressive migration (Core Data's staged migration): a store of any released version brought
to the current one, one version at a time, with the mapping models found beside the models.

>>> models = cdmigrate.ModelSet("UnCloudNotes.xcdatamodeld")
>>> models.plan("Notes.sqlite").steps          # what would run, and why
>>> cdmigrate.migrate_store("Notes.sqlite", models, to="Notes-current.sqlite")
"""

from __future__ import annotations

import ctypes
import json
import os
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Union

from . import _lib
from ._document import NOT_IN_DOCUMENT, Document
from ._text import PathLike, c_optional_text, c_path
from .errors import check

_lib_ = _lib.lib


@dataclass(frozen=True)
class MigrationStep(Document):
    """One step of a plan or a run: a store at one version becomes a store at the next."""
    source_version: str
    destination_version: str
    inferred: bool                 #: Core Data's inferred (lightweight) mapping: no mapping model records the step
    mapping_models: List[str]      #: mapping model names in pass order (["inferred"] for an inferred step)
    reason: str = ""               #: why these mapping models (plans only)
    policies: List[str] = field(default_factory=list)
    destination_counts: Dict[str, int] = field(default_factory=dict)  #: instances per entity after the step (runs only)

    @staticmethod
    def _from(raw: Dict[str, Any]) -> "MigrationStep":
        return MigrationStep(raw["from"], raw["to"], bool(raw["inferred"]), list(raw.get("mappingModels", [])),
                             raw.get("reason", ""), list(raw.get("policies", [])), dict(raw.get("destinationCounts", {})))


@dataclass(frozen=True)
class MigrationPlan(Document):
    """What a progressive migration of a store would do."""
    store: str
    store_version: str
    target_version: str
    current_version: str
    versions: List[str]
    steps: List[MigrationStep]
    warnings: List[str]

    @property
    def is_at_target(self) -> bool:
        return not self.steps


@dataclass(frozen=True)
class StagedMigrationReport(Document):
    """What a progressive migration did (``to_dict()``/``to_json()`` as for MigrationReport)."""
    store_version: str
    target_version: str
    already_at_target: bool
    copied: bool
    steps: List[MigrationStep]
    raw: Dict[str, Any] = field(repr=False, compare=False, metadata=NOT_IN_DOCUMENT)  #: the library's JSON document (camelCase)


class ModelSet:
    """Every version of a model with the mapping models between them: an ``.xcdatamodeld`` (and
    the ``.xcmappingmodel`` bundles beside it), a folder of JSON models (and its
    ``*.mapping.json``), or a ``.momd``. Read when used, by the library, each time."""

    def __init__(self, path: PathLike):
        self.path = os.fspath(path)
        c_path(path, "the model set path")

    def plan(self, store: PathLike, to_version: Optional[str] = None) -> MigrationPlan:
        """The steps that bring ``store`` to ``to_version`` (default: the current version).

        Raises MissingSourceModelError when no version matches the store (the message lists its
        hashes), InferredMappingModelError (a MigrationError with code 134190) for a step that
        cannot be inferred."""
        out = ctypes.c_void_p()
        check(_lib_.cdm_chain_plan(c_path(self.path, "the model set path"), c_path(store, "the store path"),
                                   c_optional_text(to_version, "the target version"), ctypes.byref(out)))
        raw = json.loads(_lib.take_string(out.value))
        return MigrationPlan(raw["store"], raw["storeVersion"], raw["targetVersion"], raw["currentVersion"],
                             list(raw["versions"]), [MigrationStep._from(s) for s in raw["steps"]], list(raw["warnings"]))

    def __repr__(self) -> str:
        return f"ModelSet({self.path!r})"


def migrate_store(store: PathLike, models: Union[ModelSet, PathLike], to: Optional[PathLike] = None, *,
                  in_place: bool = False, to_version: Optional[str] = None) -> StagedMigrationReport:
    """Migrates ``store`` version by version to ``to_version`` (default: the current one) into a
    new store at ``to`` (which must not exist), or with ``in_place=True`` replaces it once every
    step succeeded. Intermediate stores are removed; on error nothing is left and the store is
    untouched. Steps whose mapping names a policy are refused: use Migration per step for those.

    Core Data counterpart: ``NSStagedMigrationManager``."""
    if (to is None) == (not in_place):
        raise ValueError("give either to=PATH or in_place=True")
    model_set = models if isinstance(models, ModelSet) else ModelSet(models)
    out = ctypes.c_void_p()
    check(_lib_.cdm_migrate_chain(c_path(model_set.path, "the model set path"), c_path(store, "the store path"),
                                  c_optional_text(to_version, "the target version"),
                                  c_path(to, "the destination path") if to is not None else None, ctypes.byref(out)))
    raw = json.loads(_lib.take_string(out.value))
    return StagedMigrationReport(raw["storeVersion"], raw["targetVersion"], bool(raw["alreadyAtTarget"]), bool(raw["copied"]),
                                 [MigrationStep._from(s) for s in raw["steps"]], raw)
