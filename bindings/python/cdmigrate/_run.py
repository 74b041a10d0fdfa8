"""The run plumbing under Migration and MigrationChain: what the C library calls back, and the
state a run keeps between those calls.

The C library calls back into Python through a handful of module-level trampolines that live as
long as the module. What a registration needs (the policy class, the function, the progress
callback) is kept in ``registry`` under the integer passed to C as ``user``; the library's
``destroy(user)`` removes it, so a Python callback lives exactly as long as the engine can call it.
Every callback runs in one frame (``_framed``): it finds its registration, enters the run of its
migration (``RunState.run``, a ``Run`` or, for a chain, a ``ChainRun``), and hands an exception
to the run, which keeps the first and tells the library to stop.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import threading
import warnings
from types import FrameType
from typing import Any, Callable, Tuple, Union, cast

from . import _lib
from ._policy_methods import find_method
from ._row_batches import run_rows
from ._text import c_text
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
from .policy import HOOK_NAMES, EntityMapping, EntityMigrationPolicy, MigrationManager
from .reports import Progress

_lib_ = _lib.lib

PolicySpec = Union[type, EntityMigrationPolicy, Callable[[], EntityMigrationPolicy]]
FunctionKey = Union[str, Tuple[str, str]]

#: The Python objects the library holds as ``user`` pointers, by that integer.
registry: dict[int, Any] = {}
_registry_lock = threading.Lock()
_next_key = [1]


def _keep(obj: Any) -> int:
    with _registry_lock:
        key = _next_key[0]
        _next_key[0] += 1
        registry[key] = obj
    return key


def _destroy(user: int | None) -> None:
    with contextlib.suppress(Exception):  # interpreter shutdown
        registry.pop(user or 0, None)


class RunState:
    """What the registrations of one Migration share: the run in progress (None between runs).
    Deliberately holds no reference to the Migration, so that the Migration can be collected."""

    __slots__ = ("__weakref__", "run")

    def __init__(self) -> None:
        self.run: Run | None = None


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
        state: RunState,
    ):
        self.name = name
        self.factory = factory
        self.probe = probe
        self.state = state


class _FunctionRegistration:
    __slots__ = ("function", "label", "state")

    def __init__(self, label: str, function: Callable[..., Any] | None, state: RunState):
        self.label = label
        self.function = function
        self.state = state


class _ProgressRegistration:
    __slots__ = ("callback", "state")

    def __init__(self, callback: Callable[[Progress], Any] | None, state: RunState):
        self.callback = callback
        self.state = state


class Run:
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


def _enter(state: RunState, ctx: int | None) -> tuple[Run, int | None]:
    run = state.run
    if run is None:
        raise MisuseError("a callback ran outside of a run")
    run.entering(ctx)
    manager = run.manager
    previous = manager._ctx
    manager._ctx = ctx
    return run, previous


def _leave(run: Run, previous: int | None, succeeded: bool) -> None:
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
        registration = registry[user]
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


def emit_warnings(report: Any) -> None:
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


def _batch_body(registration: _PolicyRegistration, run: Run, ctx: int, handle: int) -> int:
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


def _row_batch_body(registration: _PolicyRegistration, run: Run, ctx: int, handle: int) -> int:
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


def _hook_body(registration: _PolicyRegistration, run: Run, ctx: int, hook: str, obj: int | None) -> int:
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


def _function_body(registration: _FunctionRegistration, run: Run, ctx: int, argc: int, argv, result) -> int:
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
    registration: _PolicyRegistration, run: Run, ctx: int, selector, argc: int, argv, result
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
    (_policy_methods.py); CDM_NOTFOUND when it has none, so the engine names policy and selector."""
    return _framed(ctx, user, _policy_method_body, selector, argc, argv, result)


def _progress_trampoline(record, user) -> int:
    run: Run | None = None
    try:
        registration: _ProgressRegistration = registry[user]
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
                    p.run_processed,
                    p.run_total,
                    p.step,
                    p.step_count,
                )
            )
        # None goes on (a callback that only prints); False (or 0) cancels; so does Ctrl-C.
        return 1 if (answer is not None and not answer) or run.interrupted else 0
    except BaseException as error:  # an exception of the callback: cancel cleanly, re-raise after the run
        if run is not None and run.exception is None:
            run.exception = error
        return 1


def catch_interrupts(run: Run) -> Callable[[], None]:
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
        # signal.signal first runs the handlers of signals already pending; when one of them raises
        # (a time limit's SIGALRM, …) it raises before changing anything, which would leave Ctrl-C
        # marking this finished run for the rest of the process: put Python's handler back anyway,
        # then let the first such exception go on.
        error: BaseException | None = None
        while signal.getsignal(signal.SIGINT) is interrupted:
            try:
                signal.signal(signal.SIGINT, previous)
            except BaseException as raised:
                error = error or raised
        if error is not None:
            raise error

    return restore


_FUNCTION = _lib.FUNCTION(_function_trampoline)
_POLICY_METHOD = _lib.POLICY_METHOD(_policy_method_trampoline)
_PROGRESS = _lib.PROGRESS(_progress_trampoline)
_DESTROY = _lib.DESTROY(_destroy)


def function_key(key: FunctionKey) -> tuple[str, str]:
    if isinstance(key, tuple) and len(key) == 2:
        return key
    if isinstance(key, str) and "." in key:
        class_name, _, selector = key.partition(".")
        return class_name, selector
    raise TypeError(f"a function is registered under (class_name, selector) or 'ClassName.selector:', not {key!r}")


class ChainRun(Run):
    """A chain's run: each step has its own models, entity mappings and policy objects, so the
    caches of the run start afresh when a callback comes from a step with other models."""

    def __init__(self) -> None:
        super().__init__()
        self._step_model: int | None = None

    def entering(self, ctx: int | None) -> None:
        if not ctx:
            return
        model = ctypes.c_void_p()
        if _lib_.cdm_context_model(ctx, 2, ctypes.byref(model)) != 0 or model.value == self._step_model:
            return
        if self._step_model is not None:
            self.source_side = Side("source")
            self.destination_side = Side("destination")
            self.sides = {1: self.source_side, 2: self.destination_side}
            self.models_known = False
            self.policies = {}
            self.mappings = {}
            self.pass_index = 0
        self._step_model = model.value


def install_policy(
    pointer: int,
    state: RunState,
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
    registration = _PolicyRegistration(name, factory, probe, state)
    user = _keep(registration)
    code = _lib_.cdm_migration_register_policy(
        pointer, c_text(name, "the policy name"), ctypes.byref(hooks), ctypes.sizeof(hooks), user, _DESTROY
    )
    check(code)
    # Every selector of FUNCTION($entityPolicy, …) goes to the policy object's methods.
    code = _lib_.cdm_migration_register_policy_method(
        pointer, c_text(name, "the policy name"), None, _POLICY_METHOD, _keep(registration), _DESTROY
    )
    check(code)


def install_function(
    pointer: int, state: RunState, class_name: str, selector: str, function: Callable[..., Any] | None
) -> None:
    """Registers a function with the library; None for one that raises "not registered"."""
    label = f'FUNCTION(CAST("{class_name}", "Class"), "{selector}", …)'
    user = _keep(_FunctionRegistration(label, function, state))
    code = _lib_.cdm_migration_register_function(
        pointer, c_text(class_name, "the class name"), c_text(selector, "the selector"), _FUNCTION, user, _DESTROY
    )
    check(code)


def install_progress(pointer: int, state: RunState, callback: Callable[[Progress], Any] | None) -> None:
    """Registers the progress callback (None: none, but the trampoline still runs)."""
    # Always installed: it tracks the pass and lets Ctrl-C reach Python during long runs.
    user = _keep(_ProgressRegistration(callback, state))
    code = _lib_.cdm_migration_set_progress(pointer, _PROGRESS, user, _DESTROY)
    check(code)
