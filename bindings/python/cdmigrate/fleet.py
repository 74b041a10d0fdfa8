"""Fleets of stores: many stores migrated in parallel worker processes, one result per store.

Users rarely migrate one huge store; they migrate many small ones (server-side copies of per-user
app stores, backups, seeded stores of app variants). ``migrate_many`` spreads them over a
``concurrent.futures.ProcessPoolExecutor`` (spawn context): each worker loads the models, mapping
models and policies once and migrates store after store. One store's failure is its result, never
an exception; a worker process that dies (a crash in native code) costs only the stores it was
running, which are tried again each in a process of its own.

>>> results = cdmigrate.migrate_many(["a.sqlite", "b.sqlite"], "out",
...                                  source_model="UsersV1.model.json", destination_model="UsersV2.model.json",
...                                  mappings=["UsersV1ToV2.mapping.json"], policies_module="my_policies")
>>> [r.store for r in results if not r.ok]

Policies travel as a module name (``policies_module``): workers load it as the command line's
``--policies MODULE`` does (an importable name or a ``.py`` file) and register its
EntityMigrationPolicy subclasses under their class names, its ``POLICIES`` (policy name →
EntityMigrationPolicy subclass or factory) and its ``FUNCTIONS`` (``(class_name, selector)`` →
callable); a module that registers nothing fails the whole run up front.

``migrate_one`` is the per-store call on its own, for other schedulers (Dask, Ray, a job queue):
it takes only picklable arguments and returns a ``StoreResult``.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import threading
import time
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from ._policy_modules import load_policies
from ._text import PathLike
from .chain import MigrationChain
from .errors import MigrationIOError
from .migration import Migration
from .model import MappingModel, Model


@dataclass(frozen=True)
class FleetPlan:
    """What every store of a fleet is migrated with: files and module names only, so that it
    pickles to any worker. Either ``models`` (a model set: each store's version is found and its
    chain run up to the current version) or ``source_model``, ``destination_model`` and
    ``mappings`` (one step)."""

    source_model: str | None = None
    destination_model: str | None = None
    mappings: tuple[str, ...] = ()
    models: str | None = None
    to_version: str | None = None
    policies_module: str | None = None
    in_place: bool = False

    def __post_init__(self) -> None:
        one_step = self.source_model is not None or self.destination_model is not None or bool(self.mappings)
        if self.models is not None and one_step:
            raise ValueError("give either models= or source_model=, destination_model= and mappings=, not both")
        if self.models is None and (self.source_model is None or self.destination_model is None or not self.mappings):
            raise ValueError("give models= (a model set) or source_model=, destination_model= and at least one mapping")
        if self.models is None and self.to_version is not None:
            raise ValueError("to_version= goes with models=")


@dataclass
class StoreResult:
    """How one store of a fleet ended."""

    store: str  #: the source store
    destination: str  #: where it was written (the store itself when in place)
    ok: bool  #: migrated
    code: int | None = None  #: the engine's error code (None when ok, or for a non-engine error)
    message: str = ""  #: what went wrong ("" when ok)
    error_type: str | None = None  #: the exception's class name ("IncompatibleVersionHashError", "ValueError", …)
    #: instances per destination entity (with a model set: after the last step; {} for a store
    #: already at the target, which is only copied)
    counts: dict[str, int] = field(default_factory=dict)
    duration: float = 0.0  #: seconds spent on this store (in its worker)
    version: str | None = None  #: the store's version, when a model set found it
    target_version: str | None = None  #: the version reached, with a model set


# ---------------------------------------------------------------------------------------------
# In each worker: what the plan needs, loaded once per process and thread (a Migration belongs to
# one thread at a time; schedulers such as Dask may run several tasks of a process at once).

_loaded = threading.local()


def _policies(module_name: str | None) -> tuple[dict[str, Any], dict[Any, Any]]:
    """The policies module loaded as the command line's ``--policies`` loads it."""
    if not module_name:
        return {}, {}
    return load_policies(module_name)


def _migration(plan: FleetPlan) -> Any:
    """A new Migration for the plan (models, mapping models and policies loaded): a
    MigrationChain over a model set, else one step."""
    policies, functions = _policies(plan.policies_module)
    if plan.models is not None:
        return MigrationChain(plan.models, plan.to_version, policies=policies, functions=functions)
    assert plan.source_model is not None and plan.destination_model is not None  # FleetPlan checks it
    source = Model.from_file(plan.source_model)
    destination = Model.from_file(plan.destination_model)
    mappings = [MappingModel.from_file(m) for m in plan.mappings]
    return Migration(source, destination, mappings, policies=policies, functions=functions)


def _loaded_migration(plan: FleetPlan) -> Any:
    """The plan's Migration (or MigrationChain), made on first use in this worker thread and kept
    for the worker's next stores."""
    cache: dict[FleetPlan, Any] = _loaded.__dict__.setdefault("migrations", {})
    migration = cache.get(plan)
    if migration is None:
        migration = cache[plan] = _migration(plan)
    return migration


def _run_chain(plan: FleetPlan, store: str, destination: str) -> StoreResult:
    """A model set: the store's version is found and its steps run, with the plan's policies."""
    chain = _loaded_migration(plan)
    report = chain.run_in_place(store) if plan.in_place else chain.run(store, destination)
    counts = dict(report.steps[-1].destination_counts) if report.steps else {}
    return StoreResult(
        store, destination, True, counts=counts, version=report.store_version, target_version=report.target_version
    )


def migrate_one(store: PathLike, destination: PathLike, plan: FleetPlan) -> StoreResult:
    """Migrates one store as ``plan`` says and returns its result; never raises for the store's
    own failure (only for a plan that cannot be loaded at all, which ``migrate_many`` checks
    before starting). Picklable arguments only: any scheduler can call it in any process."""
    store_text, destination_text = os.fsdecode(store), os.fsdecode(destination)
    started = time.perf_counter()
    try:
        if plan.models is not None:
            result = _run_chain(plan, store_text, destination_text)
        else:
            migration = _loaded_migration(plan)
            report = (
                migration.run_in_place(store_text) if plan.in_place else migration.run(store_text, destination_text)
            )
            result = StoreResult(store_text, destination_text, True, counts=dict(report.destination_counts))
    except Exception as error:  # one store's failure is its result
        result = StoreResult(
            store_text,
            destination_text,
            False,
            code=getattr(error, "code", None),
            message=str(error) or type(error).__name__,
            error_type=type(error).__name__,
        )
    result.duration = time.perf_counter() - started
    return result


# ---------------------------------------------------------------------------------------------
# In the parent.


def _isolated(store: str, destination: str, plan: FleetPlan) -> StoreResult:
    """One store in a process of its own (after a worker died): its result, or a result saying
    the process died."""
    context = multiprocessing.get_context("spawn")
    with concurrent.futures.ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
        try:
            return pool.submit(migrate_one, store, destination, plan).result()
        except BrokenProcessPool as error:
            return StoreResult(
                store,
                destination,
                False,
                message=f"the worker process died while migrating this store ({error})",
                error_type="BrokenProcessPool",
            )


def migrate_many(
    stores: Iterable[PathLike],
    destination_dir: PathLike | None,
    *,
    models: PathLike | None = None,
    to_version: str | None = None,
    source_model: PathLike | None = None,
    destination_model: PathLike | None = None,
    mappings: Sequence[PathLike] = (),
    policies_module: str | None = None,
    jobs: int | None = None,
    in_place: bool = False,
    on_result: Callable[[StoreResult], Any] | None = None,
) -> list[StoreResult]:
    """Migrates many stores in parallel worker processes and returns one ``StoreResult`` per
    store, in the order given.

    - ``destination_dir``: each store is written there under its file name (the folder is made
      if missing; destinations must not exist). ``None`` with ``in_place=True``: each store is
      replaced by its migrated version, only after its own migration succeeded.
    - ``models``: a model set (an ``.xcdatamodeld``, a folder of JSON models or a ``.momd``, as
      ``cdmigrate.ModelSet`` takes): each store's version is found and its steps run up to
      ``to_version`` (default: the current version), as ``cdmigrate.migrate_store`` does; or
      ``source_model``, ``destination_model`` and ``mappings`` (one step, passes in order).
    - ``policies_module``: a policies module as the command line's ``--policies`` takes it (an
      importable name or a ``.py`` file): its EntityMigrationPolicy subclasses by class name, its
      ``POLICIES`` and its ``FUNCTIONS``; workers load it, so it must be importable there. With a
      model set, every step whose mapping names a policy uses it.
    - ``jobs``: worker processes (default: ``os.cpu_count()``).
    - ``on_result``: called in this process with each result as it comes in.

    Raises only for what would fail every store alike, before any store is started: ValueError
    for arguments that do not fit (or two stores with one destination), the models' or mapping
    models' MigrationError, ImportError for a policies module that cannot be imported and
    InvalidArgumentError for one that registers nothing. A store's own
    failure — corrupt, at another version, a policy raising, a worker process dying — is in its
    result (``ok`` False, ``code``, ``message``).
    """
    plan = FleetPlan(
        source_model=None if source_model is None else os.fsdecode(source_model),
        destination_model=None if destination_model is None else os.fsdecode(destination_model),
        mappings=tuple(os.fsdecode(m) for m in mappings),
        models=None if models is None else os.fsdecode(models),
        to_version=to_version,
        policies_module=policies_module,
        in_place=in_place,
    )
    if in_place != (destination_dir is None):
        raise ValueError("give either destination_dir or in_place=True")
    if jobs is not None and jobs < 1:
        raise ValueError("jobs must be at least 1")
    pairs: list[tuple[str, str]] = []
    seen: dict[str, str] = {}
    for store in stores:
        store_text = os.fsdecode(store)
        destination = (
            store_text
            if destination_dir is None
            else os.path.join(os.fsdecode(destination_dir), os.path.basename(store_text))
        )
        key = os.path.realpath(destination)
        if key in seen:
            raise ValueError(f"{seen[key]} and {store_text} would both be written to {destination}")
        seen[key] = store_text
        pairs.append((store_text, destination))
    if not pairs:
        return []
    # What would fail every store alike fails here, once.
    if plan.models is None:
        _migration(plan).close()  # checked, and nothing kept in this process
    elif not os.path.exists(plan.models):
        raise MigrationIOError(f"the model set {plan.models} does not exist")
    else:
        _policies(plan.policies_module)  # a module that cannot be imported or registers nothing
    if destination_dir is not None:
        os.makedirs(os.fsdecode(destination_dir), exist_ok=True)

    existed = [os.path.lexists(destination) for _, destination in pairs]
    results: list[StoreResult | None] = [None] * len(pairs)
    broken: list[int] = []
    context = multiprocessing.get_context("spawn")
    workers = min(jobs or os.cpu_count() or 1, len(pairs))
    with concurrent.futures.ProcessPoolExecutor(max_workers=workers, mp_context=context) as pool:
        futures = {
            pool.submit(migrate_one, store, destination, plan): i for i, (store, destination) in enumerate(pairs)
        }
        for future in concurrent.futures.as_completed(futures):
            index = futures[future]
            try:
                results[index] = future.result()
            except BrokenProcessPool:
                broken.append(index)
                continue
            if on_result is not None:
                on_result(results[index])  # type: ignore[arg-type]
    # A worker died: every store it left unfinished runs again in a process of its own, so that
    # only the store that kills its process fails.
    # A store whose destination appeared during the run was migrated before the pool broke (the
    # hand-over is atomic: a destination appears only whole); only its report was lost.
    finished = [i for i in broken if not in_place and not existed[i] and os.path.lexists(pairs[i][1])]
    for index in finished:
        results[index] = StoreResult(
            pairs[index][0],
            pairs[index][1],
            True,
            message="migrated; its report was lost when another store's worker process died (counts unknown)",
        )
        if on_result is not None:
            on_result(results[index])  # type: ignore[arg-type]
    broken = [i for i in broken if i not in finished]
    if broken:
        with concurrent.futures.ThreadPoolExecutor(max_workers=workers) as threads:
            retried = {threads.submit(_isolated, pairs[i][0], pairs[i][1], plan): i for i in sorted(broken)}
            for future in concurrent.futures.as_completed(retried):
                index = retried[future]
                result = results[index] = future.result()
                if in_place and not result.ok:
                    result.message += (
                        " (its first attempt was cut short when a worker process died; it may have been migrated then)"
                    )
                if on_result is not None:
                    on_result(results[index])  # type: ignore[arg-type]
    return [result for result in results if result is not None]
