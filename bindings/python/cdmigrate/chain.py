"""Progressive migration (Core Data's staged migration): a store of any released version brought
to the current one, one version at a time, with the mapping models found beside the models.

>>> models = cdmigrate.ModelSet("UnCloudNotes.xcdatamodeld")
>>> models.plan("Notes.sqlite").steps          # what would run, and why
>>> cdmigrate.migrate_store("Notes.sqlite", models, to="Notes-current.sqlite",
...                         policies={"AttachmentToImageAttachment": AttachmentToImageAttachment})

A ``MigrationChain`` is a ``Migration`` through a model set: policies, host functions and the
progress callback are registered once, as on a Migration, and serve every step of every run.
"""

from __future__ import annotations

import ctypes
import inspect
import json
import os
import types
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, cast

from . import _lib
from ._document import NOT_IN_DOCUMENT, Document
from ._handle import LongLivedHandle
from ._run import ChainRun, FunctionKey, PolicySpec, Run
from ._text import PathLike, c_optional_text, c_path
from .errors import check
from .migration import Migration
from .policy import EntityMigrationPolicy
from .reports import Loss, Progress

_lib_ = _lib.lib


@dataclass(frozen=True)
class MigrationStep(Document):
    """One step of a plan or a run: a store at one version becomes a store at the next."""

    source_version: str
    destination_version: str
    inferred: bool  #: Core Data's inferred (lightweight) mapping: no mapping model records the step
    mapping_models: list[str]  #: mapping model names in pass order (["inferred"] for an inferred step)
    reason: str = ""  #: why these mapping models (plans only)
    policies: list[str] = field(default_factory=list)
    destination_counts: dict[str, int] = field(default_factory=dict)  #: instances per entity after the step (runs only)
    #: External binary data files the step's source named but lacked (runs only; see MigrationReport).
    missing_external_data_files: int = 0
    losses: list[Loss] = field(default_factory=list)  #: the step's loss report (runs only; docs/loss-report.md)
    #: Core Data's own step: one mapping inferred straight over the versions between, taken where
    #: the version-by-version steps cannot be inferred or ordered (``reason`` says which).
    direct: bool = False
    #: The entity mappings of the step's mapping models, in the order they run (plans only).
    entity_mappings: list[str] = field(default_factory=list)
    #: For a pass that fused consecutive steps into one (runs only): the steps it ran, in order;
    #: empty for a step run on its own (docs/chains.md, "Fused steps").
    fused_steps: list[MigrationStep] = field(default_factory=list)

    @staticmethod
    def _from(raw: dict[str, Any]) -> MigrationStep:
        # A plan's step has no report; a run's has its step's report under "report".
        report = raw.get("report", {})
        return MigrationStep(
            raw["from"],
            raw["to"],
            bool(raw["inferred"]),
            list(raw.get("mappingModels", [])),
            raw.get("reason", ""),
            list(raw.get("policies", [])),
            dict(report.get("destinationCounts", {})),
            int(report.get("missingExternalDataFiles", 0)),
            [Loss._from(loss) for loss in report.get("losses", [])],
            bool(raw.get("direct", False)),
            list(raw.get("entityMappings", [])),
            [MigrationStep._from(step) for step in raw.get("fusedSteps", [])],
        )


@dataclass(frozen=True)
class DirectStep(Document):
    """Core Data's automatic migration beside a plan whose steps are all inferred: one mapping
    inferred straight from the store's version to the target, and whether it can be."""

    source_version: str
    destination_version: str
    inferable: bool
    reason: str  #: the step's reason when inferable, else why it cannot be inferred

    @staticmethod
    def _from(raw: dict[str, Any] | None) -> DirectStep | None:
        if not raw:
            return None
        return DirectStep(raw["from"], raw["to"], bool(raw["inferable"]), raw.get("reason", ""))


@dataclass(frozen=True)
class ChainPass(Document):
    """How a run makes a plan's steps: one step on its own, or consecutive steps without
    policies fused into one pass (their mapping models composed, the store copied once)."""

    source_version: str
    destination_version: str
    steps: list[int]  #: indices in the plan's ``steps``
    fused: bool
    #: Why the pass's last step is not fused with the next (None for the last pass).
    not_fused_with_next: str | None = None

    @staticmethod
    def _from(raw: dict[str, Any]) -> ChainPass:
        return ChainPass(
            raw["from"], raw["to"], [int(i) for i in raw["steps"]], bool(raw["fused"]), raw.get("notFusedWithNext")
        )


@dataclass(frozen=True)
class MigrationPlan(Document):
    """What a progressive migration of a store would do."""

    store: str
    store_version: str
    target_version: str
    current_version: str
    versions: list[str]
    steps: list[MigrationStep]
    warnings: list[str]
    #: Core Data's one direct step, offered where every step is inferred (None otherwise).
    direct_step: DirectStep | None = None
    #: The passes a run makes (steps fused or not, as ``plan(fuse_steps=…)`` asked).
    passes: list[ChainPass] = field(default_factory=list)

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
    steps: list[MigrationStep]
    raw: dict[str, Any] = field(
        repr=False, compare=False, metadata=NOT_IN_DOCUMENT
    )  #: the library's JSON document (camelCase)


class ModelSet:
    """Every version of a model with the mapping models between them: an ``.xcdatamodeld`` (and
    the ``.xcmappingmodel`` bundles beside it), a folder of JSON models (and its
    ``*.mapping.json``), or a ``.momd``. ``mappings``: more folders of mapping models, searched
    with their subfolders (where projects keep them apart: ``Migrations/``, ``Mappings/``), as
    ``cdmigrate plan --mappings DIR``. Read when used, by the library, each time."""

    def __init__(self, path: PathLike, mappings: Iterable[PathLike] = ()):
        self.path = os.fspath(path)
        c_path(path, "the model set path")
        if isinstance(mappings, (str, bytes, os.PathLike)):
            mappings = [mappings]
        self.mappings: tuple[str | bytes, ...] = tuple(os.fspath(m) for m in mappings)
        self._mapping_paths = [c_path(m, "a mapping models folder") for m in self.mappings]

    def _mapping_dirs(self):
        """The mapping folders as the C API's NULL-terminated array (None when there are none)."""
        if not self._mapping_paths:
            return None
        return (ctypes.c_char_p * (len(self._mapping_paths) + 1))(*self._mapping_paths, None)

    def plan(self, store: PathLike, to_version: str | None = None, *, fuse_steps: bool = True) -> MigrationPlan:
        """The steps that bring ``store`` to ``to_version`` (default: the current version), and
        the ``passes`` a run makes of them (``fuse_steps=False``: one per step).

        Raises MissingSourceModelError when no version matches the store (the message lists its
        hashes), InferredMappingModelError (a MigrationError with code 134190) for a step that
        cannot be inferred."""
        out = ctypes.c_void_p()
        check(
            _lib_.cdm_chain_plan_with_options(
                c_path(self.path, "the model set path"),
                self._mapping_dirs(),
                c_path(store, "the store path"),
                c_optional_text(to_version, "the target version"),
                1 if fuse_steps else 0,
                ctypes.byref(out),
            )
        )
        raw = json.loads(_lib.take_string(out.value))
        return MigrationPlan(
            raw["store"],
            raw["storeVersion"],
            raw["targetVersion"],
            raw["currentVersion"],
            list(raw["versions"]),
            [MigrationStep._from(s) for s in raw["steps"]],
            list(raw["warnings"]),
            DirectStep._from(raw.get("directStep")),
            [ChainPass._from(p) for p in raw.get("passes", [])],
        )

    def json_files(self) -> ModelSetFiles:
        """The set as the files of a folder of JSON models — what ``cdmigrate import`` writes for
        an ``.xcdatamodeld`` or ``.momd``: ``<version>.json`` per version, ``<name>.mapping.json``
        per mapping model (bound to the two versions it records, an Xcode mapping compiled against
        them, with their entity hashes), ``migration-passes.json`` when the set has one, and
        ``current-version``. A mapping model that records no pair of versions is left out with a
        warning. MigrationIOError, InvalidModelError, InvalidMappingError naming the file at fault."""
        out = ctypes.c_void_p()
        check(
            _lib_.cdm_model_set_json_with_mappings(
                c_path(self.path, "the model set path"), self._mapping_dirs(), ctypes.byref(out)
            )
        )
        raw = json.loads(_lib.take_string(out.value))
        return ModelSetFiles(
            list(raw["versions"]),
            raw["currentVersion"],
            {m["name"]: (m["from"], m["to"]) for m in raw["mappingModels"]},
            [(f["name"], f["text"]) for f in raw["files"]],
            list(raw["warnings"]),
        )

    def write_json(self, folder: PathLike) -> ModelSetFiles:
        """Writes ``json_files()`` into ``folder`` (created if needed; files of the same names are
        replaced): a folder ``ModelSet`` reads as the same set. Returns what was written."""
        files = self.json_files()
        target = os.fsdecode(folder)
        os.makedirs(target, exist_ok=True)
        for name, text in files.files:
            with open(os.path.join(target, name), "w", encoding="utf-8", newline="") as file:
                file.write(text)
        return files

    def __repr__(self) -> str:
        return (
            f"ModelSet({self.path!r}, mappings={list(self.mappings)!r})"
            if self.mappings
            else f"ModelSet({self.path!r})"
        )


@dataclass(frozen=True)
class ModelSetFiles(Document):
    """A model set as a folder's files (``ModelSet.json_files()``)."""

    versions: list[str]  #: the versions, in the set's order
    current_version: str
    mapping_models: dict[str, tuple[str, str]]  #: mapping model name → (source version, destination version)
    files: list[tuple[str, str]] = field(repr=False)  #: (file name, text), in writing order
    warnings: list[str] = field(default_factory=list)


def _report(raw: dict[str, Any]) -> StagedMigrationReport:
    return StagedMigrationReport(
        raw["storeVersion"],
        raw["targetVersion"],
        bool(raw["alreadyAtTarget"]),
        bool(raw["copied"]),
        [MigrationStep._from(s) for s in raw["steps"]],
        raw,
    )


def module_registrations(module: types.ModuleType) -> tuple[dict[str, type], dict[Any, Callable[..., Any]]]:
    """The policies a module defines — every EntityMigrationPolicy subclass defined in it, under
    its class name, which is what a mapping's ``policy`` names — and its host functions (a
    module-level ``FUNCTIONS`` dict ``{("ClassName", "selector:"): callable}``)."""
    policies: dict[str, type] = {}
    for value in vars(module).values():
        if (
            inspect.isclass(value)
            and issubclass(value, EntityMigrationPolicy)
            and value is not EntityMigrationPolicy
            and value.__module__ == module.__name__
        ):
            policies[value.__name__] = value
    return policies, dict(getattr(module, "FUNCTIONS", {}) or {})


class MigrationChain(Migration):
    """A progressive migration as a Migration: a store at any version of ``models`` is brought
    to ``to_version`` (default: the current one) in one ``run`` (or ``run_in_place``), version by
    version, with the policies, host functions and progress callback registered on it — once,
    for every step (each step gets its own policy objects). The store's version is found anew on
    every run, so one chain serves stores of every released version. ``run`` returns a
    StagedMigrationReport. A step whose mapping names a policy that is not registered is refused
    with EntityMigrationPolicyError (134170) before anything runs. The progress fraction is over
    the whole chain.

    >>> with MigrationChain("UnCloudNotes", policies={"AttachmentToImageAttachment": Policy}) as chain:
    ...     chain.run("v1.sqlite", "v4.sqlite")

    Core Data counterpart: ``NSStagedMigrationManager`` with ``NSCustomMigrationStage``s.
    """

    def __init__(
        self,
        models: ModelSet | PathLike,
        to_version: str | None = None,
        *,
        policies: Mapping[str, PolicySpec] | types.ModuleType | None = None,
        functions: Mapping[FunctionKey, Callable[..., Any]] | None = None,
        progress: Callable[[Progress], Any] | None = None,
        progress_interval: int | None = None,
    ):
        LongLivedHandle.__init__(self, None)
        self._init_state()
        self.models = models if isinstance(models, ModelSet) else ModelSet(models)
        self.to_version = to_version
        out = ctypes.c_void_p()
        code = _lib_.cdm_migration_new_chain_with_mappings(
            c_path(self.models.path, "the model set path"),
            self.models._mapping_dirs(),
            c_optional_text(to_version, "the target version"),
            ctypes.byref(out),
        )
        self._pointer = out.value
        self._raise_if_failed(code)
        self.set_progress(progress, progress_interval)
        self._register(policies, functions)

    def _register(self, policies, functions) -> None:
        if isinstance(policies, types.ModuleType):
            policies, defined = module_registrations(policies)
            functions = {**defined, **(functions or {})}
        super()._register(policies, functions)

    def run(self, source: PathLike, destination: PathLike, **kwargs: Any) -> StagedMigrationReport:  # type: ignore[override]
        """As ``Migration.run``: migrates the store at ``source``, whatever its version, to a new store at
        ``destination``; returns the StagedMigrationReport."""
        return cast(StagedMigrationReport, super().run(source, destination, **kwargs))

    def run_in_place(self, path: PathLike, **kwargs: Any) -> StagedMigrationReport:  # type: ignore[override]
        """As ``Migration.run_in_place``, version by version; returns the StagedMigrationReport."""
        return cast(StagedMigrationReport, super().run_in_place(path, **kwargs))

    @property
    def fuse_steps(self) -> bool:
        """Whether runs fuse consecutive steps without policies into one pass (True, the default:
        the store is copied once for them; the result is the step-by-step run's) or run every step
        on its own (False; ``cdmigrate migrate --no-fuse``). Each run step's ``fused_steps`` says
        which steps a pass fused (docs/chains.md, "Fused steps")."""
        self._ptr  # noqa: B018 - raises when closed
        return getattr(self, "_fuse_steps", True)

    @fuse_steps.setter
    def fuse_steps(self, fuse: bool) -> None:
        self._idle()
        check(_lib_.cdm_migration_set_fuse_steps(self._ptr, 1 if fuse else 0))
        self._fuse_steps = bool(fuse)

    def _new_run(self) -> Run:
        return ChainRun()

    def _read_report(self) -> StagedMigrationReport:  # type: ignore[override]
        out = ctypes.c_void_p()
        check(_lib_.cdm_migration_report_json(self._ptr, ctypes.byref(out)))
        return _report(json.loads(_lib.take_string(out.value)))

    def __repr__(self) -> str:
        return "<MigrationChain closed>" if self.closed else f"<MigrationChain {self.models.path!r}>"


def migrate_store(
    store: PathLike,
    models: ModelSet | PathLike,
    to: PathLike | None = None,
    *,
    in_place: bool = False,
    to_version: str | None = None,
    policies: Mapping[str, PolicySpec] | types.ModuleType | None = None,
    functions: Mapping[FunctionKey, Callable[..., Any]] | None = None,
    progress: Callable[[Progress], Any] | None = None,
    fail_on_unintended_loss: bool = False,
    fuse_steps: bool = True,
) -> StagedMigrationReport:
    """Migrates ``store`` version by version to ``to_version`` (default: the current one) into a
    new store at ``to`` (which must not exist), or with ``in_place=True`` replaces it once every
    step succeeded. Intermediate stores are removed; on error nothing is left and the store is
    untouched. ``policies`` (a dict as Migration takes, or a module whose EntityMigrationPolicy
    subclasses are registered by class name, with its ``FUNCTIONS``), ``functions`` and
    ``progress`` serve every step, as on a MigrationChain; a step whose mapping names a policy
    that is not registered is refused (EntityMigrationPolicyError, 134170) before anything runs.
    ``fail_on_unintended_loss`` fails the run before the hand-over when a step loses data its
    mapping does not declare (see ``Migration.fail_on_unintended_loss``); each step's ``losses`` says
    what it did not carry. ``fuse_steps=False`` runs every step on its own instead of fusing
    consecutive steps without policies into one pass (see ``MigrationChain.fuse_steps``).

    Core Data counterpart: ``NSStagedMigrationManager``."""
    if (to is None) == (not in_place):
        raise ValueError("give either to=PATH or in_place=True")
    with MigrationChain(models, to_version, policies=policies, functions=functions, progress=progress) as chain:
        chain.fail_on_unintended_loss = fail_on_unintended_loss
        chain.fuse_steps = fuse_steps
        if in_place:
            return chain.run_in_place(store)
        assert to is not None
        return chain.run(store, to)
