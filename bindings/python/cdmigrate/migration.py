"""Migrations (NSMigrationManager): policies, host functions and progress as Python callables.

A ``Migration`` keeps its registrations (``register_policy``, ``register_function``,
``set_progress``) and runs the library's migration; what the library calls back during a run, and
the run's state, are the run plumbing of _run.py. What a run returns is in reports.py.
"""

from __future__ import annotations

import ctypes
import json
import threading
from typing import Any, Callable, Mapping, Sequence

from . import _lib
from ._handle import LongLivedHandle
from ._run import (
    FunctionKey,
    PolicySpec,
    Run,
    RunState,
    catch_interrupts,
    emit_warnings,
    function_key,
    install_function,
    install_policy,
    install_progress,
)
from ._text import PathLike, c_path
from .errors import MisuseError, check
from .model import MappingModel, Model
from .policy import EntityMigrationPolicy
from .reports import EntityMappingReport, Loss, MigrationReport, Progress

_lib_ = _lib.lib


class Migration(LongLivedHandle):
    """A heavyweight migration from a source model to a destination model through one or more
    mapping models (one per pass).

    >>> with Migration(source_model, destination_model, [mapping]) as migration:
    ...     report = migration.run("v1.sqlite", "v2.sqlite", policies={"MyPolicy": MyPolicy},
    ...                            functions={("MigrationFunctions", "getFirstName:"): first_name},
    ...                            progress=lambda p: print(p.fraction))

    ``policies`` maps the names mappings give in their ``policy`` to EntityMigrationPolicy
    subclasses (or factories, or a shared instance); ``functions`` maps
    ``(class_name, selector)`` (or ``"ClassName.selector:"``) to callables that value expressions
    call with ``FUNCTION(CAST("ClassName", "Class"), "selector:", ...)``. Registrations given to
    the constructor (or made with ``register_policy``, ``register_function``, ``set_progress``)
    stay for every run, like ``sqlite3.Connection.create_function``; those given to ``run`` last
    for that run only: afterwards the migration has what it had before (a later run whose mapping
    names a policy only an earlier run had fails with EntityMigrationPolicyError, "not
    registered").

    A Migration belongs to one thread at a time; separate migrations may run in parallel.
    """

    _kind = "migration"
    _error = staticmethod(lambda p: _lib_.cdm_migration_error(p))

    def __init__(
        self,
        source_model: Model,
        destination_model: Model,
        mappings: MappingModel | Sequence[MappingModel],
        *,
        policies: Mapping[str, PolicySpec] | None = None,
        functions: Mapping[FunctionKey, Callable[..., Any]] | None = None,
        progress: Callable[[Progress], Any] | None = None,
        progress_interval: int | None = None,
        check_source_version: bool = True,
    ):
        super().__init__(None)
        self._init_state()
        passes: list[MappingModel] = [mappings] if isinstance(mappings, MappingModel) else list(mappings)
        for model in (source_model, destination_model):
            if not isinstance(model, Model):
                raise TypeError(f"models must be cdmigrate.Model, not {type(model).__name__}")
        for mapping in passes:
            if not isinstance(mapping, MappingModel):
                raise TypeError(f"mappings must be cdmigrate.MappingModel, not {type(mapping).__name__}")
        array = (ctypes.c_void_p * max(len(passes), 1))(*[m._ptr for m in passes])
        out = ctypes.c_void_p()
        code = _lib_.cdm_migration_new(source_model._ptr, destination_model._ptr, array, len(passes), ctypes.byref(out))
        self._pointer = out.value
        self._raise_if_failed(code)
        self.set_progress(progress, progress_interval)
        self._register(policies, functions)
        if not check_source_version:
            self.check_source_version = False

    # -- registrations ----------------------------------------------------------------------
    def _init_state(self) -> None:
        """The Python side of a migration handle (Migration and MigrationChain alike)."""
        self._state = RunState()
        self._lock = threading.Lock()
        self._report: MigrationReport | None = None
        # What the migration keeps between runs, to restore after a run with its own registrations.
        self._policies: dict[str, tuple[type, Callable[[], EntityMigrationPolicy]]] = {}
        self._functions: dict[tuple[str, str], Callable[..., Any]] = {}
        self._progress: Callable[[Progress], Any] | None = None
        self._check_source_version = True

    def register_policy(self, name: str, policy: PolicySpec) -> None:
        """Registers the policy mappings name in their ``policy``, for every later run: an
        EntityMigrationPolicy subclass (a new object per entity mapping and pass), a factory
        returning one, or one shared object."""
        self._idle()
        cls, factory, probe = self._resolve_policy(name, policy)
        self._install_policy(name, cls, factory, probe)
        self._policies[name] = (cls, factory)

    @staticmethod
    def _resolve_policy(
        name: str, policy: PolicySpec
    ) -> tuple[type, Callable[[], EntityMigrationPolicy], EntityMigrationPolicy | None]:
        """(class, factory, first object made to find the class) of a policy specification."""
        factory: Callable[[], EntityMigrationPolicy]
        probe: EntityMigrationPolicy | None
        if isinstance(policy, type):
            if not issubclass(policy, EntityMigrationPolicy):
                raise TypeError(f"policy '{name}': {policy.__name__} is not an EntityMigrationPolicy subclass")
            cls, factory, probe = policy, policy, None
        elif isinstance(policy, EntityMigrationPolicy):
            shared = policy
            cls, factory, probe = type(policy), (lambda: shared), None
        elif callable(policy):
            probe = policy()
            if not isinstance(probe, EntityMigrationPolicy):
                raise TypeError(
                    f"policy '{name}': the factory made a {type(probe).__name__}, not an EntityMigrationPolicy"
                )
            cls, factory = type(probe), policy
        else:
            raise TypeError(f"policy '{name}' must be an EntityMigrationPolicy subclass, instance or factory")
        return cls, factory, probe

    def _install_policy(
        self,
        name: str,
        cls: type | None,
        factory: Callable[[], EntityMigrationPolicy] | None,
        probe: EntityMigrationPolicy | None,
    ) -> None:
        """Registers a policy with the library (see `install_policy`)."""
        install_policy(self._ptr, self._state, name, cls, factory, probe)

    def register_function(self, class_name: str, selector: str, function: Callable[..., Any]) -> None:
        """Registers what ``FUNCTION(CAST("class_name", "Class"), "selector", args…)`` calls, for
        every later run: a Python callable taking the arguments as Python values and returning one."""
        self._idle()
        if not callable(function):
            raise TypeError(f"function {class_name} {selector} is not callable")
        self._install_function(class_name, selector, function)
        self._functions[(class_name, selector)] = function

    def _install_function(self, class_name: str, selector: str, function: Callable[..., Any] | None) -> None:
        """Registers a function with the library; None for one that raises "not registered"."""
        install_function(self._ptr, self._state, class_name, selector, function)

    def set_batch_size(self, size: int) -> None:
        """How many source instances stage 1 handles between writes of the destination, and the
        size of the batches ``create_destination_instances_batch`` gets (default 5,000)."""
        self._idle()
        check(_lib_.cdm_migration_set_batch_size(self._ptr, size))

    def set_progress(self, callback: Callable[[Progress], Any] | None, interval: int | None = None) -> None:
        """Sets the progress callback (None removes it), called at the start of every step and every
        ``interval`` instances (default 500). Returning False cancels: ``run`` then raises
        MigrationCancelledError. Ctrl-C (KeyboardInterrupt) stops the run too, which then raises
        KeyboardInterrupt, with or without a callback."""
        self._idle()
        if callback is not None and not callable(callback):
            raise TypeError("the progress callback is not callable")
        if interval is not None:
            check(_lib_.cdm_migration_set_progress_interval(self._ptr, interval))
        self._install_progress(callback)
        self._progress = callback

    def _install_progress(self, callback: Callable[[Progress], Any] | None) -> None:
        install_progress(self._ptr, self._state, callback)

    def _register(
        self,
        policies: Mapping[str, PolicySpec] | None,
        functions: Mapping[FunctionKey, Callable[..., Any]] | None,
    ) -> None:
        for name, policy in (policies or {}).items():
            self.register_policy(name, policy)
        for key, function in (functions or {}).items():
            class_name, selector = function_key(key)
            self.register_function(class_name, selector, function)

    def _register_for_run(
        self,
        policies: Mapping[str, PolicySpec] | None,
        functions: Mapping[FunctionKey, Callable[..., Any]] | None,
        progress: Callable[[Progress], Any] | None,
    ) -> Callable[[], None]:
        """Installs a run's own registrations; returns what puts the migration's back afterwards."""
        names: list[str] = []
        keys: list[tuple[str, str]] = []
        if progress is not None and not callable(progress):
            raise TypeError("the progress callback is not callable")

        def restore() -> None:
            for name in names:
                kept = self._policies.get(name)
                self._install_policy(name, kept[0] if kept else None, kept[1] if kept else None, None)
            for key in keys:
                self._install_function(key[0], key[1], self._functions.get(key))
            if progress is not None:
                self._install_progress(self._progress)

        try:
            for name, policy in (policies or {}).items():
                cls, factory, probe = self._resolve_policy(name, policy)
                names.append(name)
                self._install_policy(name, cls, factory, probe)
            for key, function in (functions or {}).items():
                class_name, selector = function_key(key)
                if not callable(function):
                    raise TypeError(f"function {class_name} {selector} is not callable")
                keys.append((class_name, selector))
                self._install_function(class_name, selector, function)
            if progress is not None:
                self._install_progress(progress)
        except BaseException:
            restore()
            raise
        return restore

    def _idle(self) -> None:
        self._ptr  # noqa: B018 - raises when closed
        if self._state.run is not None:
            raise MisuseError("the migration is running: it cannot be changed from its own callbacks")

    # -- running ----------------------------------------------------------------------------
    def run(
        self,
        source: PathLike,
        destination: PathLike,
        *,
        policies: Mapping[str, PolicySpec] | None = None,
        functions: Mapping[FunctionKey, Callable[..., Any]] | None = None,
        progress: Callable[[Progress], Any] | None = None,
    ) -> MigrationReport:
        """Migrates the store at ``source`` into a new store at ``destination`` (which must not
        exist, nor appear during the run). The source is never written and nothing is created
        beside it; another migration to ``destination`` fails as busy. On any error nothing is left
        at ``destination``; an exception raised by a policy, host function or progress callback
        is re-raised here with its original traceback.

        ``policies``, ``functions`` and ``progress`` apply to this run only (added to, or in
        place of, the migration's own registrations of the same names)."""
        return self._run(
            lambda p: _lib_.cdm_migration_run(
                p, c_path(source, "the source path"), c_path(destination, "the destination path")
            ),
            policies,
            functions,
            progress,
        )

    def run_in_place(
        self,
        path: PathLike,
        *,
        policies: Mapping[str, PolicySpec] | None = None,
        functions: Mapping[FunctionKey, Callable[..., Any]] | None = None,
        progress: Callable[[Progress], Any] | None = None,
    ) -> MigrationReport:
        """Migrates a store and replaces it with the result only after everything succeeded; on
        error the store's contents are unchanged (the message says whether committed transactions
        of its -wal were checkpointed into its main file first). ``policies``, ``functions`` and
        ``progress`` apply to this run only, as for ``run``."""
        return self._run(
            lambda p: _lib_.cdm_migration_run_in_place(p, c_path(path, "the store path")), policies, functions, progress
        )

    def _run(
        self,
        call: Callable[[int], int],
        policies: Mapping[str, PolicySpec] | None,
        functions: Mapping[FunctionKey, Callable[..., Any]] | None,
        progress: Callable[[Progress], Any] | None,
    ) -> MigrationReport:
        if not self._lock.acquire(blocking=False):
            raise MisuseError("the migration is already running (a Migration belongs to one thread at a time)")
        try:
            self._idle()
            restore_registrations = self._register_for_run(policies, functions, progress)
            try:
                return self._run_registered(call)
            finally:
                restore_registrations()
        finally:
            self._lock.release()

    def set_model_versions(self, path: PathLike | None) -> None:
        """The versions of the source model (an ``.xcdatamodeld`` or a folder of JSON models): when
        the source store is not at the source model's version, MissingSourceModelError names the
        version it does match. None forgets them. MigrationIOError, InvalidModelError when the set
        cannot be read."""
        self._idle()
        check(
            _lib_.cdm_migration_set_model_versions(
                self._ptr, None if path is None else c_path(path, "the model set path")
            )
        )

    @property
    def check_source_version(self) -> bool:
        """Whether a run compares the store's entity version hashes with the source model's (the
        default) and fails with MissingSourceModelError when they differ. False skips that
        comparison: the store is read with the source model as it is (``cdmigrate migrate
        --no-version-check``)."""
        self._ptr  # noqa: B018 - raises when closed
        return self._check_source_version

    @check_source_version.setter
    def check_source_version(self, check_version: bool) -> None:
        self._idle()
        check(_lib_.cdm_migration_set_source_version_check(self._ptr, 1 if check_version else 0))
        self._check_source_version = bool(check_version)

    @property
    def fail_on_unintended_loss(self) -> bool:
        """Whether a run that loses data its mapping does not declare as intended fails (with
        MigrationError, 134110, listing the losses) before the hand-over, nothing written at the
        destination (``cdmigrate migrate --strict``). False (the default) runs on and reports them
        in ``report.losses``. For a MigrationChain, every step; an inferred step declares nothing."""
        self._ptr  # noqa: B018 - raises when closed
        return getattr(self, "_fail_on_unintended_loss", False)

    @fail_on_unintended_loss.setter
    def fail_on_unintended_loss(self, fail: bool) -> None:
        self._idle()
        check(_lib_.cdm_migration_set_fail_on_unintended_loss(self._ptr, 1 if fail else 0))
        self._fail_on_unintended_loss = bool(fail)

    @property
    def schema_changes(self) -> bool:
        """Whether a step SQLite can express as schema changes (renames, added and dropped attributes
        and entities; no policy, plain copies) is done as such on a private copy of the source file
        (True, the default) or always by writing every row (False). The result is the same on
        every store whose values its model allows; a column the change does not touch is carried as it
        is (a value of another storage class is kept, not converted); ``report.by_schema_changes``
        says which ran (docs/schema-step.md). Not for a MigrationChain."""
        self._ptr  # noqa: B018 - raises when closed
        return getattr(self, "_schema_changes", True)

    @schema_changes.setter
    def schema_changes(self, tries: bool) -> None:
        self._idle()
        check(_lib_.cdm_migration_set_schema_changes(self._ptr, 1 if tries else 0))
        self._schema_changes = bool(tries)

    @property
    def warnings(self) -> list[str]:
        """What checking the models and mapping models noticed, before any run (a run's report
        starts with the same lines): a destination property no mapping fills while the source
        entity has one of that name, an entity mapping without a source expression, a model's
        ``versionHash`` that differs from the computed one, what an Xcode mapping model dropped."""
        out = ctypes.c_void_p()
        check(_lib_.cdm_migration_warnings_json(self._ptr, ctypes.byref(out)))
        return json.loads(_lib.take_string(out.value))

    def _new_run(self) -> Run:
        return Run()

    def _run_registered(self, call: Callable[[int], int]) -> MigrationReport:
        run = self._state.run = self._new_run()
        restore_interrupts = catch_interrupts(run)
        try:
            code = call(self._ptr)
        finally:
            self._state.run = None
            run.manager.user_info.clear()
            restore_interrupts()  # last: it raises what a pending signal's handler raises
        error, run.exception = run.exception, None
        if run.interrupted and not isinstance(error, KeyboardInterrupt):
            raise KeyboardInterrupt
        if code:
            if error is not None:
                raise error.with_traceback(error.__traceback__)
            check(code)
        self._report = self._read_report()
        emit_warnings(self._report)
        return self._report

    @property
    def report(self) -> MigrationReport | None:
        """The report of the last successful run (None before one)."""
        return self._report

    def _read_report(self) -> MigrationReport:
        out = ctypes.c_void_p()
        code = _lib_.cdm_migration_report_json(self._ptr, ctypes.byref(out))
        check(code)
        raw = json.loads(_lib.take_string(out.value))
        mappings = [
            EntityMappingReport(
                int(m.get("pass", 0)),
                str(m.get("entityMapping", "")),
                int(m.get("sourceInstances", 0)),
                int(m.get("associations", 0)),
            )
            for m in raw.get("mappings", [])
        ]
        return MigrationReport(
            mappings=mappings,
            destination_counts=dict(raw.get("destinationCounts", {})),
            untaken=dict(raw.get("untakenSourceInstances", {})),
            warnings=list(raw.get("warnings", [])),
            missing_external_data_files=int(raw.get("missingExternalDataFiles", 0)),
            losses=[Loss._from(loss) for loss in raw.get("losses", [])],
            by_schema_changes=bool(raw.get("bySchemaChanges", False)),
            schema_changes=[str(c) for c in raw.get("schemaChanges", [])],
            schema_changes_not_done=raw.get("schemaChangesNotDone"),
            raw=raw,
        )

    def close(self) -> None:
        """Frees the migration and releases every callback registered with it."""
        if self._pointer and self._state.run is not None:
            raise MisuseError("a migration cannot be closed from its own callbacks")
        pointer, self._pointer = self._pointer, None
        if pointer:
            _lib_.cdm_migration_free(pointer)

    def __del__(self) -> None:
        try:
            if self._state.run is None:
                self.close()
        except Exception:
            pass

    def __repr__(self) -> str:
        return "<Migration closed>" if self.closed else "<Migration>"
