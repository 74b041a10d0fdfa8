"""Migrations (NSMigrationManager): policies, host functions and progress as Python callables.

The C library calls back into Python through a handful of module-level trampolines that live as
long as the module. What a registration needs (the policy class, the function, the progress
callback) is kept in ``_registry`` under the integer passed to C as ``user``; the library's
``destroy(user)`` removes it, so a Python callback lives exactly as long as the engine can call it.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import sys
import threading
import warnings
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, Callable, Mapping, Sequence, Tuple, Union, cast

from . import _lib
from ._document import NOT_IN_DOCUMENT, Document
from ._handle import LongLivedHandle
from ._text import PathLike, c_path, c_text
from .batch import SourceBatch
from .errors import (
    ENTITY_MIGRATION_POLICY,
    MIGRATION_CANCELLED,
    NOTFOUND,
    EntityMigrationPolicyError,
    ExpressionEvaluationError,
    MigrationError,
    MigrationWarning,
    MisuseError,
    check,
)
from .instance import Instance, Side, set_result, value_from_handle
from .model import MappingModel, Model
from .policy import HOOK_NAMES, EntityMapping, EntityMigrationPolicy, MigrationManager
from .policy_methods import find_method
from .row_batches import run_rows

_lib_ = _lib.lib

PolicySpec = Union[type, EntityMigrationPolicy, Callable[[], EntityMigrationPolicy]]
FunctionKey = Union[str, Tuple[str, str]]


@dataclass(frozen=True)
class Progress:
    """Where a migration stands, as handed to the progress callback."""

    fraction: float  #: 0…1 over all stages and passes
    stage: int  #: 1 create destination instances, 2 create relationships, 3 validate
    pass_index: int  #: 0-based mapping model of a multi-pass migration
    entity_mapping: str  #: the current entity mapping ("" at the very end)
    processed: int  #: instances handled in this step so far
    total: int  #: instances in this step (0 when not known)


@dataclass(frozen=True)
class EntityMappingReport(Document):
    """What one entity mapping did in one pass."""

    pass_index: int  #: 0-based mapping model of a multi-pass migration
    entity_mapping: str  #: the entity mapping's name
    source_instances: int  #: source instances it took
    associations: int  #: source–destination associations it recorded


@dataclass(frozen=True)
class Loss(Document):
    """One line of the loss report: what a migration did not carry into the destination
    (docs/loss-report.md; the C API's and ``cdmigrate --json``'s ``losses``, with the binding's
    snake_case names: ``entityMapping`` is ``entity_mapping``, ``pass`` is ``pass_index``)."""

    kind: str  #: attribute, instances, relationship, toMany, nilled or externalData
    entity: str  #: the source entity
    count: int  #: values, instances or links (see docs/loss-report.md)
    intended: bool  #: whether the mapping declares it (cdmigrate.intendedLosses, …)
    property: str | None = None  #: the source property (None for instances)
    entity_mapping: str | None = None  #: the entity mapping that left it behind
    pass_index: int | None = None  #: that mapping's pass
    policy: str | None = None  #: that mapping's custom policy, whose code may carry it

    @staticmethod
    def _from(raw: dict[str, Any]) -> Loss:
        return Loss(
            str(raw.get("kind", "")),
            str(raw.get("entity", "")),
            int(raw.get("count", 0)),
            bool(raw.get("intended", False)),
            raw.get("property"),
            raw.get("entityMapping"),
            raw.get("pass"),
            raw.get("policy"),
        )


@dataclass
class MigrationReport(Document):
    """What a successful run did (Core Data's migration manager has no such report). ``to_dict()``
    and ``to_json()`` give it with these attribute names as keys."""

    mappings: list[EntityMappingReport] = field(default_factory=list)  #: per pass and entity mapping, in order
    destination_counts: dict[str, int] = field(default_factory=dict)  #: instances per destination entity
    untaken: dict[str, int] = field(default_factory=dict)  #: source instances no entity mapping took, per entity
    warnings: list[str] = field(default_factory=list)
    #: External binary data files source rows named but the source's ``.<name>_SUPPORT/_EXTERNAL_DATA``
    #: folder lacked: their values were migrated as None (the warnings name them).
    missing_external_data_files: int = 0
    losses: list[Loss] = field(default_factory=list)  #: the loss report: what did not reach the destination
    #: Whether the step was done as schema changes on a copy of the source file (docs/schema-step.md).
    by_schema_changes: bool = False
    schema_changes: list[str] = field(default_factory=list)  #: those changes, in words
    #: Why a step that was tried as schema changes took the general path (None when it did not, or was not tried).
    schema_changes_not_done: str | None = None
    #: The library's JSON document as it gave it (camelCase keys, as the C API and the command line give it).
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata=NOT_IN_DOCUMENT)

    @property
    def unintended_losses(self) -> list[Loss]:
        """The losses the mapping does not declare as intended (what ``fail_on_unintended_loss`` refuses)."""
        return [loss for loss in self.losses if not loss.intended]


# ---------------------------------------------------------------------------------------------
# The registry of Python objects the library holds as `user` pointers.

_registry: dict[int, Any] = {}
_registry_lock = threading.Lock()
_next_key = [1]


def _keep(obj: Any) -> int:
    with _registry_lock:
        key = _next_key[0]
        _next_key[0] += 1
        _registry[key] = obj
    return key


def _destroy(user: int | None) -> None:
    with contextlib.suppress(Exception):  # interpreter shutdown
        _registry.pop(user or 0, None)


class _State:
    """What the registrations of one Migration share: the run in progress (None between runs).
    Deliberately holds no reference to the Migration, so that the Migration can be collected."""

    __slots__ = ("__weakref__", "run")

    def __init__(self) -> None:
        self.run: _Run | None = None


_RUN_SCOPED = (
    "registrations given to run() last only for that run: register it with Migration(...), "
    "register_policy or register_function to keep it, or pass it to this run"
)


def _rows_in_batches(cls: type[EntityMigrationPolicy]) -> bool:
    """Whether a policy class's single-row create_destination_instances runs over batches of
    source rows (row_batches): it defines that hook, not the batch hook, and keeps
    ``row_batches`` true."""
    base = EntityMigrationPolicy
    return (
        getattr(cls, "row_batches", True) is True
        and cls.create_destination_instances is not base.create_destination_instances
        and cls.create_destination_instances_batch is base.create_destination_instances_batch
    )


class _PolicyRegistration:
    """A policy name's registration; `factory` None stands for a name whose policy was given to an
    earlier run only (the C library cannot unregister a name): its hooks raise."""

    __slots__ = ("factory", "name", "probe", "state")

    def __init__(
        self,
        name: str,
        factory: Callable[[], EntityMigrationPolicy] | None,
        probe: EntityMigrationPolicy | None,
        state: _State,
    ):
        self.name = name
        self.factory = factory
        self.probe = probe
        self.state = state


class _FunctionRegistration:
    __slots__ = ("function", "label", "state")

    def __init__(self, label: str, function: Callable[..., Any] | None, state: _State):
        self.label = label
        self.function = function
        self.state = state


class _ProgressRegistration:
    __slots__ = ("callback", "state")

    def __init__(self, callback: Callable[[Progress], Any] | None, state: _State):
        self.callback = callback
        self.state = state


class _Run:
    """One run: the manager, the policy objects (one per entity mapping and pass), the sides'
    attribute caches, and the first Python exception that escaped a callback."""

    def __init__(self) -> None:
        self.manager = MigrationManager(self)
        self.source_side = Side("source")
        self.destination_side = Side("destination")
        self.sides = {1: self.source_side, 2: self.destination_side}  # by enum cdm_store_kind
        self.models_known = False
        self.policies: dict[tuple[int, str, str], EntityMigrationPolicy] = {}
        self.mappings: dict[tuple[int, str], EntityMapping] = {}
        self.exception: BaseException | None = None
        self.pass_index = 0
        self.row_plans: dict[int, Any] = {}  # row_batches: what each entity mapping's batches need
        #: Set by the run's SIGINT handler: the next callback stops the run, which then raises KeyboardInterrupt.
        self.interrupted = False

    def entering(self, ctx: int | None) -> None:
        """Called as every callback begins (a chain's run starts a step's caches afresh here)."""

    def know_models(self, ctx: int) -> None:
        """The run's models (borrowed from the migration, valid for the whole run), for
        introspection and the binding's caches."""
        self.models_known = True
        for kind, side in self.sides.items():
            model = ctypes.c_void_p()
            if _lib_.cdm_context_model(ctx, kind, ctypes.byref(model)) == 0 and model.value:
                side.model.model = model.value

    def mapping_for(self, ctx: int) -> EntityMapping:
        if not self.models_known:
            self.know_models(ctx)
        out = ctypes.c_char_p()
        code = _lib_.cdm_context_entity_mapping_name(ctx, ctypes.byref(out))
        check(code)
        name = (out.value or b"").decode("utf-8")
        key = (self.pass_index, name)
        mapping = self.mappings.get(key)
        if mapping is None:
            passed = ctypes.c_int()
            code = _lib_.cdm_context_pass(ctx, ctypes.byref(passed))
            check(code)
            self.pass_index = passed.value
            key = (passed.value, name)
            mapping = self.mappings.get(key)
            if mapping is None:
                mapping = self.mappings[key] = EntityMapping(name, passed.value, self.manager)
        return mapping

    def policy_for(self, registration: _PolicyRegistration, mapping: EntityMapping) -> EntityMigrationPolicy:
        key = (mapping.pass_index, mapping.name, registration.name)
        policy = self.policies.get(key)
        if policy is None:
            if registration.factory is None:
                raise EntityMigrationPolicyError(
                    f"entity mapping '{mapping.name}' names policy '{registration.name}', "
                    f"which is not registered ({_RUN_SCOPED})"
                )
            if registration.probe is not None:
                policy, registration.probe = registration.probe, None
            else:
                policy = registration.factory()
            self.policies[key] = policy
        return policy

    def fail(self, ctx: int | None, error: BaseException, where: str = "") -> int:
        """Keeps the first exception of the callback nest and tells the library to stop; the
        library's message (what the command line prints) names ``where`` — the policy and its
        hook or method, or the function — and the exception."""
        if self.exception is None:
            self.exception = error
        if isinstance(error, KeyboardInterrupt):
            code = MIGRATION_CANCELLED
        elif isinstance(error, MigrationError) and error.code:
            code = error.code
        else:
            code = ENTITY_MIGRATION_POLICY
        if ctx:
            text = f"{type(error).__name__}: {error}"
            if where and not isinstance(error, KeyboardInterrupt):
                text = f"{where} raised {text}"
            message = text.encode("utf-8", "replace")
            return _lib_.cdm_context_fail(ctx, code, message) or code
        return code


def _enter(state: _State, ctx: int | None) -> tuple[_Run, int | None]:
    run = state.run
    if run is None:
        raise MisuseError("a callback ran outside of a run")
    run.entering(ctx)
    manager = run.manager
    previous = manager._ctx
    manager._ctx = ctx
    return run, previous


def _leave(run: _Run, previous: int | None, succeeded: bool) -> None:
    run.manager._ctx = previous
    if succeeded and previous is None:
        # An outermost callback finished well: any exception a nested callback raised was handled.
        run.exception = None


def _framed(ctx: int, user: int, body: Callable[..., int], *args: Any) -> int:
    """The frame every hook, function and policy method runs in: finds the registration and enters
    its run (failing, never raising, when that goes wrong), stops at once after ^C, runs
    ``body(registration, run, ctx, *args)`` for its return code, hands an exception to the run
    (which keeps the first and tells the library to stop), and leaves the run as it found it."""
    try:
        registration = _registry[user]
        run, previous = _enter(registration.state, ctx)
    except BaseException as error:  # a registry miss would be a binding bug: fail, never crash
        return (
            _lib_.cdm_context_fail(ctx, ENTITY_MIGRATION_POLICY, f"cdmigrate binding: {error}".encode())
            or ENTITY_MIGRATION_POLICY
        )
    ok = False
    try:
        if run.interrupted:
            raise KeyboardInterrupt
        code = body(registration, run, ctx, *args)
        ok = True
        return code
    except BaseException as error:
        return run.fail(ctx, error, _callback_name(registration, body, args, ctx))
    finally:
        _leave(run, previous, ok)


def _emit_warnings(report: Any) -> None:
    """Each warning of a run, once, through Python's ``warnings`` module as a MigrationWarning (a
    staged run's named by their step, as the command line prints them)."""
    raw = getattr(report, "raw", None) or {}
    lines: list[str] = []
    if "steps" in raw and "storeVersion" in raw:
        lines += list(raw.get("warnings", []))
        for step in raw.get("steps", []):
            lines += [
                f"{step.get('from')} → {step.get('to')}: {w}" for w in (step.get("report") or {}).get("warnings", [])
            ]
    else:
        lines += list(getattr(report, "warnings", []) or [])
    # Attributed to the program's line that ran the migration: the first frame outside the package.
    package = os.path.dirname(os.path.abspath(__file__))
    level, frame = 1, cast("FrameType | None", sys._getframe(0))
    while frame is not None and os.path.dirname(os.path.abspath(frame.f_code.co_filename)) == package:
        level, frame = level + 1, frame.f_back
    seen = set()
    for line in lines:
        if line not in seen:
            seen.add(line)
            warnings.warn(line, MigrationWarning, stacklevel=level)


def _callback_name(registration: Any, body: Callable[..., int], args: tuple[Any, ...], ctx: int | None) -> str:
    """What raised, for the library's message: "policy 'P' hook create_relationships (entity
    mapping 'M')", "policy 'P' method labelFor:", "function Class.selector:"."""
    try:
        if body is _function_body:
            return f"function {registration.label}"
        if body is _policy_method_body:
            what = f"policy '{registration.name}' method {(args[0] or b'').decode('utf-8', 'replace')}"
        elif body is _batch_body:
            what = f"policy '{registration.name}' hook create_destination_instances_batch"
        elif body is _row_batch_body:
            what = f"policy '{registration.name}' hook create_destination_instances"
        else:
            what = f"policy '{registration.name}' hook {args[0]}"
        name = ctypes.c_char_p()
        if ctx and _lib_.cdm_context_entity_mapping_name(ctx, ctypes.byref(name)) == 0 and name.value:
            what += f" (entity mapping '{name.value.decode('utf-8', 'replace')}')"
        return what
    except Exception:  # naming must never hide the exception itself
        return ""


def _batch_body(registration: _PolicyRegistration, run: _Run, ctx: int, handle: int) -> int:
    mapping = run.mapping_for(ctx)
    policy = run.policy_for(registration, mapping)
    batch = SourceBatch(handle, run.manager, mapping.source_entity_name)
    try:
        policy.create_destination_instances_batch(batch, mapping, run.manager)
    finally:
        batch._live = False
    return 0


def _call_batch_hook(user: int, ctx: int, handle: int) -> int:
    """create_destination_instances_batch: the policy's method with a SourceBatch valid for the call."""
    return _framed(ctx, user, _batch_body, handle)


def _row_batch_body(registration: _PolicyRegistration, run: _Run, ctx: int, handle: int) -> int:
    mapping = run.mapping_for(ctx)
    policy = run.policy_for(registration, mapping)
    batch = SourceBatch(handle, run.manager, mapping.source_entity_name)
    try:
        run_rows(policy, mapping, run.manager, batch, run.row_plans)
    finally:
        batch._live = False
    return 0


def _call_row_batch_hook(user: int, ctx: int, handle: int) -> int:
    """The single-row create_destination_instances run over a batch of source rows (row_batches)."""
    return _framed(ctx, user, _row_batch_body, handle)


def _hook_body(registration: _PolicyRegistration, run: _Run, ctx: int, hook: str, obj: int | None) -> int:
    mapping = run.mapping_for(ctx)
    policy = run.policy_for(registration, mapping)
    if obj is None:
        getattr(policy, hook)(mapping, run.manager)
    else:
        side = run.source_side if hook == "create_destination_instances" else run.destination_side
        getattr(policy, hook)(Instance(obj, side), mapping, run.manager)
    return 0


def _call_hook(user: int, hook: str, ctx: int, obj: int | None) -> int:
    return _framed(ctx, user, _hook_body, hook, obj)


def _make_hook(name: str):
    return _lib.HOOK(lambda ctx, user: _call_hook(user, name, ctx, None))


def _make_instance_hook(name: str):
    return _lib.INSTANCE_HOOK(lambda ctx, obj, user: _call_hook(user, name, ctx, obj or 0))


_HOOKS = {
    "begin_entity_mapping": _make_hook("begin_entity_mapping"),
    "create_destination_instances": _make_instance_hook("create_destination_instances"),
    "end_instance_creation": _make_hook("end_instance_creation"),
    "create_relationships": _make_instance_hook("create_relationships"),
    "end_relationship_creation": _make_hook("end_relationship_creation"),
    "perform_custom_validation": _make_hook("perform_custom_validation"),
    "end_entity_mapping": _make_hook("end_entity_mapping"),
    "create_destination_instances_batch": _lib.BATCH_HOOK(
        lambda ctx, batch, user: _call_batch_hook(user, ctx, batch or 0)
    ),
}
_ROW_BATCH_HOOK = _lib.BATCH_HOOK(lambda ctx, batch, user: _call_row_batch_hook(user, ctx, batch or 0))
_FIELDS = {
    "begin_entity_mapping": "begin",
    "create_destination_instances": "create_destination_instances",
    "end_instance_creation": "end_instance_creation",
    "create_relationships": "create_relationships",
    "end_relationship_creation": "end_relationship_creation",
    "perform_custom_validation": "perform_custom_validation",
    "end_entity_mapping": "end",
    "create_destination_instances_batch": "create_destination_instances_batch",
}


def _function_body(registration: _FunctionRegistration, run: _Run, ctx: int, argc: int, argv, result) -> int:
    if not run.models_known:
        run.know_models(ctx)
    function = registration.function
    if function is None:
        raise ExpressionEvaluationError(f"no function is registered for {registration.label} ({_RUN_SCOPED})")
    arguments = [value_from_handle(argv[i], None, run.sides, run.manager) for i in range(argc)]
    set_result(result, function(*arguments))
    return 0


def _function_trampoline(ctx, argc, argv, result, user) -> int:
    return _framed(ctx, user, _function_body, argc, argv, result)


def _policy_method_body(
    registration: _PolicyRegistration, run: _Run, ctx: int, selector, argc: int, argv, result
) -> int:
    policy = run.policy_for(registration, run.mapping_for(ctx))
    method = find_method(policy, (selector or b"").decode("utf-8"))
    if method is None:
        return NOTFOUND
    arguments = [value_from_handle(argv[i], None, run.sides, run.manager) for i in range(argc)]
    set_result(result, method(*arguments))
    return 0


def _policy_method_trampoline(ctx, selector, argc, argv, result, user) -> int:
    """FUNCTION($entityPolicy, "selector:", …): the method of the mapping's policy object
    (policy_methods.py); CDM_NOTFOUND when it has none, so the engine names policy and selector."""
    return _framed(ctx, user, _policy_method_body, selector, argc, argv, result)


def _progress_trampoline(record, user) -> int:
    run: _Run | None = None
    try:
        registration: _ProgressRegistration = _registry[user]
        run = registration.state.run
        if run is None:
            return 0
        p = record.contents
        run.pass_index = p.pass_
        callback = registration.callback
        answer = None
        if callback is not None:
            answer = callback(
                Progress(
                    p.fraction,
                    p.stage,
                    p.pass_,
                    (p.entity_mapping or b"").decode("utf-8", "replace"),
                    p.processed,
                    p.total,
                )
            )
        # None goes on (a callback that only prints); False (or 0) cancels; so does Ctrl-C.
        return 1 if (answer is not None and not answer) or run.interrupted else 0
    except BaseException as error:  # an exception of the callback: cancel cleanly, re-raise after the run
        if run is not None and run.exception is None:
            run.exception = error
        return 1


def _catch_interrupts(run: _Run) -> Callable[[], None]:
    """While the C library runs, Ctrl-C (SIGINT) only marks the run as interrupted: the next
    callback stops it, and ``run`` raises KeyboardInterrupt once the library has cleaned up.
    A KeyboardInterrupt raised inside a ctypes callback could not propagate (Python prints
    "Exception ignored" and goes on). Only on the main thread, and only when SIGINT has Python's
    default handler (a host's own handler is left alone). Returns what restores the handler."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.getsignal(signal.SIGINT)
    if previous is not signal.default_int_handler:
        return lambda: None

    def interrupted(signum, frame) -> None:
        run.interrupted = True

    signal.signal(signal.SIGINT, interrupted)

    def restore() -> None:
        signal.signal(signal.SIGINT, previous)

    return restore


_FUNCTION = _lib.FUNCTION(_function_trampoline)
_POLICY_METHOD = _lib.POLICY_METHOD(_policy_method_trampoline)
_PROGRESS = _lib.PROGRESS(_progress_trampoline)
_DESTROY = _lib.DESTROY(_destroy)


def _function_key(key: FunctionKey) -> tuple[str, str]:
    if isinstance(key, tuple) and len(key) == 2:
        return key
    if isinstance(key, str) and "." in key:
        class_name, _, selector = key.partition(".")
        return class_name, selector
    raise TypeError(f"a function is registered under (class_name, selector) or 'ClassName.selector:', not {key!r}")


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
        self._state = _State()
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
        """Registers a policy with the library; with `factory` None, one whose every hook raises
        "not registered" (the library cannot unregister a name)."""
        hooks = _lib.cdm_policy()
        for hook in HOOK_NAMES:
            # Hooks the class does not override stay NULL: the engine's default runs, and Python is not called.
            if cls is None or getattr(cls, hook) is not getattr(EntityMigrationPolicy, hook):
                setattr(hooks, _FIELDS[hook], _HOOKS[hook])
        if cls is not None and _rows_in_batches(cls):
            hooks.create_destination_instances_batch = _ROW_BATCH_HOOK
        registration = _PolicyRegistration(name, factory, probe, self._state)
        user = _keep(registration)
        code = _lib_.cdm_migration_register_policy(
            self._ptr, c_text(name, "the policy name"), ctypes.byref(hooks), ctypes.sizeof(hooks), user, _DESTROY
        )
        check(code)
        # Every selector of FUNCTION($entityPolicy, …) goes to the policy object's methods.
        code = _lib_.cdm_migration_register_policy_method(
            self._ptr, c_text(name, "the policy name"), None, _POLICY_METHOD, _keep(registration), _DESTROY
        )
        check(code)

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
        label = f'FUNCTION(CAST("{class_name}", "Class"), "{selector}", …)'
        user = _keep(_FunctionRegistration(label, function, self._state))
        code = _lib_.cdm_migration_register_function(
            self._ptr, c_text(class_name, "the class name"), c_text(selector, "the selector"), _FUNCTION, user, _DESTROY
        )
        check(code)

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
        # Always installed: it tracks the pass and lets Ctrl-C reach Python during long runs.
        user = _keep(_ProgressRegistration(callback, self._state))
        code = _lib_.cdm_migration_set_progress(self._ptr, _PROGRESS, user, _DESTROY)
        check(code)

    def _register(
        self,
        policies: Mapping[str, PolicySpec] | None,
        functions: Mapping[FunctionKey, Callable[..., Any]] | None,
    ) -> None:
        for name, policy in (policies or {}).items():
            self.register_policy(name, policy)
        for key, function in (functions or {}).items():
            class_name, selector = _function_key(key)
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
                class_name, selector = _function_key(key)
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

    def _new_run(self) -> _Run:
        return _Run()

    def _run_registered(self, call: Callable[[int], int]) -> MigrationReport:
        run = self._state.run = self._new_run()
        restore_interrupts = _catch_interrupts(run)
        try:
            code = call(self._ptr)
        finally:
            restore_interrupts()
            self._state.run = None
            run.manager.user_info.clear()
        error, run.exception = run.exception, None
        if run.interrupted and not isinstance(error, KeyboardInterrupt):
            raise KeyboardInterrupt
        if code:
            if error is not None:
                raise error.with_traceback(error.__traceback__)
            check(code)
        self._report = self._read_report()
        _emit_warnings(self._report)
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
