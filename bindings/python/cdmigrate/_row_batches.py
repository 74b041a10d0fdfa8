"""Core Data's single-row hook run over batches of source rows.

A policy that defines ``create_destination_instances(source, mapping, manager)`` (and not the
batch hook) is called once per source instance, exactly as Core Data calls
``createDestinationInstancesForSourceInstance:entityMapping:manager:error:``; what changes is how
the binding reaches the library. The engine hands the mapping's source rows over a batch at a time
(the batch hook), the binding reads the batch's attribute columns in one call (``cdm_batch_columns``) and calls the
policy's hook for every row with a ``source`` that answers attribute reads from those columns. What
the hook does through the manager and the instances it makes is kept in the binding — instances
made (``manager.create``), attribute values set, to-many adds and to-one sets, associations,
``apply_attribute_mappings`` whose expressions are plain ``$source.attribute`` copies — and written
to the library per batch, in the order the hook did it: the instances by
``cdm_context_create_instances_json`` (so they get the primary keys they would have got one by
one), the relationships by ``cdm_context_relate``, the associations by ``cdm_batch_associate``.

Reads see what the batch has made so far, as Core Data's context would: ``fetch_destination``
with a predicate ``key == %@`` on an attribute looks into the batch's own new instances as well as
the store; any other read of the destination (another predicate, ``count_destination``,
``destination_instances``, ``evaluate``, reading an instance the batch made, …) first writes what
the batch holds, then runs as before. Anything this path cannot express simply takes the
library's own path after such a write, so the destination is the same, row for row, as with the
single-row hook called by the engine (``row_batches = False`` on the policy class keeps that).
"""

from __future__ import annotations

import ctypes
import datetime as _dt
import gc
import re
from operator import attrgetter
from typing import TYPE_CHECKING, Any, ClassVar, cast

from . import _lib
from ._arrays import keys_array, keys_from, rows_json
from ._fields import pack
from ._text import c_text
from .batch import SourceBatch
from .errors import MisuseError, check
from .instance import DESTINATION, SOURCE, Instance, _InstanceMapping
from .values import AttributeType, CoreDataDate, ObjectID, date_from_reference_seconds, reference_seconds

if TYPE_CHECKING:  # pragma: no cover
    from .policy import EntityMapping, MigrationManager

    # Instances to the type checker too (at run time they are registered as Instances: see below).
    _Unretained = Instance
else:
    _Unretained = _InstanceMapping

_lib_ = _lib.lib
_PLAIN = (str, int, float, bool, type(None))
_SIMPLE_COPY = re.compile(r"^\s*\$source\.([A-Za-z_][A-Za-z0-9_]*)\s*$")
_EQUALS_ARGUMENT = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*==\s*%@\s*$")


_ENTITY = attrgetter("_entity")
_COPY = attrgetter("_copy")
_KEY = attrgetter("_key")

_INTEGERS = (AttributeType.INTEGER16, AttributeType.INTEGER32, AttributeType.INTEGER64)
_NUMBERS = (*_INTEGERS, AttributeType.DOUBLE, AttributeType.FLOAT)


def _suits(value: Any, kind: Any) -> bool:
    """Whether a value set on a new instance can be kept in the binding and written as JSON with
    the effect the typed setter has; anything else takes the library's own path."""
    if value is None:
        return True
    t = type(value)
    if t is str:
        return kind == AttributeType.STRING or kind == AttributeType.URI
    if t is bool:
        return kind == AttributeType.BOOLEAN
    if t is int:
        return kind in _INTEGERS and -(2**63) <= value < 2**63
    if t is float:
        return kind in _NUMBERS and value - value == 0.0  # finite
    if t is _dt.datetime:
        return kind == AttributeType.DATE
    if t is CoreDataDate:
        return kind == AttributeType.DATE and value - value == 0.0  # finite
    return False


def _whole(seconds: list[Any]) -> bool:
    """Whether every value of a date column's raw seconds is nil or whole seconds (within
    datetime's years), checked in C loops (map, min, max) rather than a Python call per value."""
    numbers = [v for v in seconds if v is not None]
    if not numbers:
        return True
    kinds = set(map(type, numbers))
    if not kinds <= {int, float}:
        return False
    if float in kinds and not all(map(float.is_integer, [v for v in numbers if type(v) is float])):
        return False
    return min(numbers) > -63_113_904_000 and max(numbers) < 252_423_993_600


_COMPARED: dict[str, str | None] = {}


def _compared_key(predicate: str) -> str | None:
    """The attribute a predicate ``key == %@`` compares (None for any other predicate)."""
    try:
        return _COMPARED[predicate]
    except KeyError:
        pass
    match = _EQUALS_ARGUMENT.match(predicate)
    key = match.group(1) if match else None
    if len(_COMPARED) < 256:
        _COMPARED[predicate] = key
    return key


def _create_many(ctx: int, entity: str, rows: list[dict[str, Any]]) -> list[int]:
    pointer = ctypes.POINTER(ctypes.c_int64)()
    count = ctypes.c_size_t()
    check(
        _lib_.cdm_context_create_instances_json(
            ctx, c_text(entity, "the entity name"), rows_json(rows), ctypes.byref(pointer), ctypes.byref(count)
        )
    )
    return keys_from(pointer, count.value)


def _relate_many(ctx: int, entity: str, relationship: str, owners: list[int], targets: list[int]) -> None:
    owner_array, count = keys_array(owners, "owners")
    target_array, _ = keys_array(targets, "targets")
    check(
        _lib_.cdm_context_relate(
            ctx,
            c_text(entity, "the entity name"),
            c_text(relationship, "the relationship name"),
            owner_array,
            target_array,
            count,
        )
    )


def _handle_for(manager: MigrationManager, store: int, entity: str, key: int, concrete: bool = True) -> Instance:
    """The library's instance of a row, found by primary key in the running context (``entity``
    its concrete entity, or with ``concrete`` False one of its superentities)."""
    ctx = manager._ctx
    if ctx is None:
        raise MisuseError(
            "the migration manager is only usable inside a policy hook, host function or progress callback"
        )
    out = ctypes.c_void_p()
    check(_lib_.cdm_context_instance_with_id(ctx, store, c_text(entity, "the entity"), key, ctypes.byref(out)))
    side = manager._run.source_side if store == SOURCE else manager._run.destination_side
    instance = Instance(out.value, side)
    if concrete:
        instance._entity = entity
    return instance


class _Released:
    """The batch of a released RowSource: no columns, never active."""

    columns: ClassVar[dict[str, list[Any]]] = {}
    active = False

    def column(self, name: str) -> None:
        return None


_RELEASED = _Released()


class RowSource(_Unretained):
    """A source row of the batch as the hook's ``source`` (an Instance): attribute reads come from
    the batch's columns; anything else (relationships, key paths, ``uri``…) from the library's own
    instance, found by primary key when first needed, which releases itself."""

    # Made by run_rows: the class called without arguments (no __init__: a Python call per row
    # less), then _rows, _index and _key set. No handle: it is found only when needed (_h
    # below), _real unset until then. The entity and side are class attributes of the mapping's
    # subclass (_Plan.source_class).
    __slots__ = ("_index", "_key", "_real", "_rows")
    _rows: RowBatch
    _index: int
    _key: int
    _real: Instance

    if TYPE_CHECKING:  # pragma: no cover

        def __init__(self) -> None: ...

    @classmethod
    def of_mapping(cls, entity: str, side: Any) -> type[RowSource]:
        """The class of a mapping's source rows: its source entity and side as class attributes."""
        return type("RowSource", (cls,), {"__slots__": (), "_entity": entity, "_side": side})

    @property
    def _h(self) -> int:  # type: ignore[override]
        try:
            real: Instance = self._real
        except AttributeError:
            real = self._real = _handle_for(self._rows.manager, SOURCE, self._entity or "", self._key)
        return real._h

    @property
    def object_id(self) -> ObjectID:
        return ObjectID("source", self._entity or "", self._key)

    def release(self) -> None:
        """As Instance.release: every later use is MisuseError ("no longer valid")."""
        self._h  # noqa: B018 - the library's instance, so that its handle is what goes stale
        self._real.release()
        self._rows = cast("RowBatch", _RELEASED)  # no more reads from the batch's columns

    # Once the batch is over its columns are gone: a source kept for later reads through the library.
    def __getitem__(self, key: str) -> Any:
        column = self._rows.columns.get(key)
        if column is None:
            column = self._rows.column(key)  # read now, the first time the batch needs it
            if column is None:
                return Instance.__getitem__(self, key)
        return column[self._index]

    def get(self, key: str, default: Any = None) -> Any:
        column = self._rows.columns.get(key)
        if column is None:
            column = self._rows.column(key)
            if column is None:
                return Instance.get(self, key, default)
        return column[self._index]

    def to_dict(self, keys: Any = None) -> dict[str, Any]:
        rows = self._rows
        if keys is None and rows.active:
            dicts = rows.dicts
            if dicts is None:
                # Every row's dict at once, the first time a hook asks for one.
                names = rows.plan.columns
                rows.read(names)
                columns = [rows.column(name) for name in names]
                dicts = rows.dicts = rows.plan.make_dicts(columns, len(rows.keys))
            row = dicts[self._index]
            if row is None:
                i = self._index
                return {name: rows.column(name)[i] for name in rows.plan.columns}  # type: ignore[index]
            dicts[self._index] = None  # given away: a second call makes a new one
            return row
        return Instance.to_dict(self, keys)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, RowSource):
            return other._key == self._key and other._entity == self._entity
        return Instance.__eq__(self, other)

    def __hash__(self) -> int:
        return hash(self.object_id)


class PendingInstance(_Unretained):
    """A destination instance (an Instance) a hook made in the batch (or found with
    fetch_destination during it). Until the batch is written its attribute values are kept here;
    afterwards, and for anything not kept here, it is the library's instance of its row (the batch
    is written first when it holds anything)."""

    # No __init__ (made by the class called without arguments, then its slots set: see made), so
    # that the batch's fast path makes one without a Python call. Instance's _local and _thread
    # stay unset: no side-less table, no handle of its own to release.
    __slots__ = ("_copy", "_creator", "_key", "_real", "_rows", "_values")
    _rows: RowBatch
    _values: dict[str, Any] | None
    _key: int | None
    _real: Instance | None
    #: The index of the batch row whose attribute mappings alone made the values (-1: none).
    _copy: int
    #: The source row the hook was called for when it made this instance (errors name it).
    _creator: RowSource | None

    if TYPE_CHECKING:  # pragma: no cover

        def __init__(self) -> None: ...

    @staticmethod
    def made(
        rows: RowBatch,
        entity: str,
        values: dict[str, Any] | None,
        key: int | None = None,
        copy: int = -1,
        creator: RowSource | None = None,
    ) -> PendingInstance:
        """A new instance of ``entity`` in the batch ``rows`` (``key``: one already stored)."""
        instance = PendingInstance()
        instance._side = rows.side
        instance._entity = entity
        instance._rows = rows
        instance._values = values
        instance._key = key
        instance._real = None
        instance._copy = copy
        instance._creator = creator
        return instance

    def release(self) -> None:
        """As Instance.release: every later use is MisuseError ("no longer valid")."""
        try:
            self._h  # noqa: B018 - written and found, so that its handle is what goes stale
        except MisuseError:
            return  # made in a batch whose hook failed: nothing to release
        if self._real is not None:
            self._real.release()

    @property
    def _h(self) -> int:  # type: ignore[override]
        rows = self._rows
        if rows.active:
            rows.reached()
        real = self._real
        if real is None:
            if self._key is None:
                raise MisuseError(f"an instance of '{self._entity}' made in a batch whose hook failed is not usable")
            real = self._real = _handle_for(rows.manager, DESTINATION, self._entity or "", self._key)
        return real._h

    def __getitem__(self, key: str) -> Any:
        values = self._values
        if values is not None and self._key is None and self._rows.active:
            if not values and self._copy >= 0:
                values = self._rows.filled(self)
            if key in values:
                value = values[key]
                t = type(value)
                if t is CoreDataDate or t is _dt.datetime:
                    # Read back as the library gives a stored date (aware UTC, to the microsecond).
                    return date_from_reference_seconds(reference_seconds(value))
                return value
        return Instance.__getitem__(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        if self._key is None and self._rows.active and self._rows.set_value(self, key, value):
            return
        Instance.__setitem__(self, key, value)

    def add(self, key: str, *targets: Instance) -> None:
        rows = self._rows
        run = rows.run  # None once the batch is written or over
        if run is not None and self._key is None and run[1] == key and run[0] == self._entity and len(targets) == 1:
            target = targets[0]
            if type(target) is PendingInstance:
                # The batch's last relationship run is this to-many one (checked when it began).
                run[2].append(self)
                run[3].append(target)
                rows.dirty = True
                return
        if self._key is None and rows.active and rows.relate(self, key, targets, True):
            return
        Instance.add(self, key, *targets)

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if isinstance(other, PendingInstance) and (self._key is None or other._key is None):
            return False
        return Instance.__eq__(self, other)

    def __hash__(self) -> int:
        return hash(self.object_id)


# Instances to every caller (isinstance, issubclass), without Instance's handle and its __del__.
Instance.register(RowSource)
Instance.register(PendingInstance)


def _dict_maker(names: list[str]) -> Any:
    """A function making the dict of each of ``count`` rows from columns of these attribute names
    (one list per name, in this order): a comprehension of dict displays, made for the names (about
    three times cheaper per row than dict(zip(names, row)), which makes a tuple per value)."""
    if not names:
        return lambda columns, count: [{} for _ in range(count)]
    variables = [f"v{i}" for i in range(len(names))]
    display = ", ".join(f"{name!r}: {variable}" for name, variable in zip(names, variables))
    source = f"lambda columns, count: [{{{display}}} for {', '.join(variables)}, in zip(*columns)]"
    return eval(source, {"__builtins__": {"zip": zip}})


class _EntityInfo:
    """A destination entity as the batches need it."""

    __slots__ = ("attributes", "has_subentities", "relationships", "root")

    def __init__(self, name: str, model: Any, parents: dict[str, str | None]) -> None:
        description = model.entity(name)
        self.attributes = {a.name: a.type for a in description.attributes.values() if not a.transient}
        self.relationships = {r.name: r.to_many for r in description.relationships.values()}
        root = name
        while parents.get(root):
            root = parents[root] or root
        self.root = root
        self.has_subentities = name in parents.values()


class _Plan:
    """What the binding knows of one entity mapping for its batches (read once per mapping)."""

    __slots__ = (
        "column_set",
        "column_types",
        "columns",
        "date_columns",
        "destination_entity",
        "entities",
        "fast",
        "make_dicts",
        "manager",
        "parents",
        "source_class",
        "source_entity",
    )

    def __init__(self, mapping: EntityMapping, manager: MigrationManager) -> None:
        self.manager = manager
        self.source_entity = mapping.source_entity_name
        self.destination_entity = mapping.destination_entity_name
        source_model = manager.source_model
        subentities = bool(self.source_entity) and any(
            source_model.entity(name).parent == self.source_entity for name in source_model.entity_names
        )
        self.fast = bool(self.source_entity) and not subentities
        source = manager.source_entity(self.source_entity or "") if self.fast else None
        if source is not None and any(a.type == AttributeType.TRANSFORMABLE for a in source.attributes.values()):
            # A transformable attribute reads as the object its archive holds, which only the
            # library's instance answers (batch columns hold the stored bytes).
            self.fast, source = False, None
        self.columns = [name for name, a in source.attributes.items() if not a.transient] if source else []
        self.column_set = set(self.columns)
        self.column_types = {name: source.attributes[name].type for name in self.columns} if source else {}
        self.date_columns = (
            {name for name, a in source.attributes.items() if a.type == AttributeType.DATE} if source else set()
        )
        destination_model = manager.destination_model
        self.parents = {name: destination_model.entity(name).parent for name in destination_model.entity_names}
        self.entities: dict[str, _EntityInfo] = {}
        self.source_class = RowSource.of_mapping(self.source_entity or "", manager._run.source_side)
        self.make_dicts = _dict_maker(self.columns)

    def entity(self, name: str) -> _EntityInfo | None:
        info = self.entities.get(name)
        if info is None:
            if name not in self.parents:
                return None  # the library names the unknown entity
            info = self.entities[name] = _EntityInfo(name, self.manager._run.destination_side.model, self.parents)
        return info

    def copies(self, mapping: EntityMapping) -> list[tuple[str, str, Any]] | None:
        """(destination attribute, source attribute, type) of the mapping's attribute mappings when
        every one copies a source attribute of its destination attribute's type (``$source.name``)
        or has no expression; None otherwise. Read per batch: a hook may set an expression."""
        destination = self.destination_entity
        if not self.fast or not destination:
            return None
        source = self.manager._run.source_side.model.entity(self.source_entity or "")
        target = self.entity(destination)
        if target is None:
            return None
        copies = []
        for name, prop in mapping.attribute_mappings.items():
            if prop.value_expression is None:
                continue
            match = _SIMPLE_COPY.match(prop.value_expression)
            found = source.attributes.get(match.group(1)) if match else None
            if found is None or found.transient or target.attributes.get(name) != found.type:
                return None
            copies.append((name, found.name, found.type))
        return copies


class RowBatch:
    """One batch of the single-row hook: the source columns, and what the hook made and did,
    until it is written (``flush``)."""

    def __init__(self, manager: MigrationManager, mapping: EntityMapping, batch: SourceBatch, plan: _Plan) -> None:
        self.manager = manager
        self.side = manager._run.destination_side
        self.source_side = manager._run.source_side
        self.mapping = mapping
        self.batch = batch
        self.plan = plan
        self.source_class = plan.source_class
        self.active = True
        self.dirty = False
        self.flushed = False  # written before the batch's end (a read needed it)
        self.keys = batch.keys
        # The source columns read so far: each is read (one call) the first time the batch needs it.
        self.columns: dict[str, list[Any]] = {}
        self.raw: dict[str, list[Any]] = {}
        self.copies = plan.copies(mapping)
        self.destination_entity = plan.destination_entity
        self.copy_names = {name for name, _, _ in self.copies} if self.copies is not None else None
        self.copy_count = len(self.copies) if self.copies is not None else -1
        self._copy_items: list[tuple[str, list[Any]]] | None = None
        self.row_copy_items: list[tuple[str, list[Any]]] | None = None  # _row_copy_items's
        self._copy_columns: list[tuple[str, list[Any], bool]] | None = None
        self.exact_dates: dict[str, bool] = {}
        self.dicts: list[dict[str, Any] | None] | None = None  # to_dict's, made for every row at once
        self.by_name: bool | None = None
        self.infos: dict[str, _EntityInfo] = {}
        self.created: list[PendingInstance] = []  # in the order the hook made them, not yet written
        self.relations: list[tuple[str, str, list[Any], list[Any]]] = []
        self.run: tuple[str, str, list[Any], list[Any]] | None = None  # the last of relations, when to-many
        #: Associations kept (manager.associate, create with a source): the batch rows (their
        #: indexes) and the destination instances, pairwise.
        self.associated_rows: list[int] = []
        self.associated: list[PendingInstance] = []
        #: How many rows, from the first on, had their instance of the destination entity made by
        #: manager.create's copy of the row, associated with it, while nothing else made an
        #: instance of that entity or set a value of one; -1 once anything did. When it reaches the
        #: batch's size and so does the number of associations, those instances are the batch
        #: default's (_by_default).
        self.in_order = 0
        #: The entities other than the mapping's destination entity of the instances in ``created``.
        self.other_entities: set[str] = set()
        self.by_entity: dict[str, list[PendingInstance]] = {}  # the unwritten ones of entities fetched (_pending)
        #: {entity: {attribute: [how many of by_entity[entity] are indexed, {value: those instances
        #: holding it, in order}, or None when one lacks the attribute]}}: fetch_destination's
        #: lookups among the batch's own instances (_matching); an entity's goes when a value is set.
        self.indexed: dict[str, dict[str, list[Any]]] = {}
        #: fetch_destination's answers by (entity, predicate, argument, limit): see _answer.
        self.answers: dict[tuple, tuple] = {}
        self.current: RowSource | None = None
        self.fetched: dict[tuple[str, str, str, int], tuple[int, list[int]]] = {}
        #: {entity: {predicate: the attribute fetch_destination answers it by, None: the library's path}}
        self.compared: dict[str, dict[str, str | None]] = {}

    def column(self, name: str) -> list[Any] | None:
        """A source attribute's values for every row of the batch (read now if not yet); None for
        a key that is not an attribute column of the batch, or once the batch is over."""
        values = self.columns.get(name)
        if values is None and self.active and name in self.plan.column_set:
            self.read([name])
            values = self.columns[name]
        return values

    def read(self, names: list[str]) -> None:
        """Reads the source columns of ``names`` not read yet, in one call."""
        known = self.plan.column_set
        wanted = [name for name in names if name not in self.columns and name in known]
        if wanted:
            # The types from the plan: asking the manager would write what the batch holds first.
            types = self.plan.column_types
            whole: set[str] = set()
            for name, (values, raw) in zip(
                wanted, self.batch._typed_columns(wanted, [types[n] for n in wanted], whole)
            ):
                self.columns[name] = values
                self.raw[name] = raw
            for name in whole:
                # Whole seconds without nulls: their datetimes give back the exact seconds.
                self.exact_dates[name] = True

    def copy_items(self) -> list[tuple[str, list[Any]]]:
        """(destination attribute, the source column of its name): a to_dict copy is checked against these."""
        items = self._copy_items
        if items is None:
            names = [name for name, _, _ in self.copies or ()]
            self.read([name for name in names if name in self.plan.column_set])
            items = self._copy_items = [(name, self.column(name)) for name in names if name in self.plan.column_set]  # type: ignore[misc]
        return items

    def _row_copy_items(self) -> list[tuple[str, list[Any]]]:
        """``copy_items`` when the attribute mappings copy the row by name (``_copies_by_name``; as
        many as copies), else an empty list: what manager_create checks a to_dict copy against."""
        by_name = self.by_name
        if by_name is None:
            by_name = self._copies_by_name()
        items = self.copy_items() if by_name else []
        if len(items) != self.copy_count:
            items = []
        self.row_copy_items = items
        return items

    def copy_columns(self) -> list[tuple[str, list[Any], bool]]:
        """(destination attribute, the source column as read — a date's raw seconds, copied
        exactly —, whether it is a date) of the attribute mappings' copies."""
        columns = self._copy_columns
        if columns is None:
            columns = []
            self.read([column for _, column, _ in self.copies or ()])
            for name, column, kind in self.copies or ():
                values = self.column(column) or []
                dates = kind == AttributeType.DATE
                columns.append((name, self.raw[column] if dates else values, dates))
            self._copy_columns = columns
        return columns

    def filled(self, instance: PendingInstance) -> dict[str, Any]:
        """The values of an instance the batch made; those of one whose only values are the
        attribute mappings' copy of a row (apply_attribute_mappings) are put in now."""
        values = instance._values
        if values is None:
            return {}
        i = instance._copy
        if not values and i >= 0:
            for name, column, dates in self.copy_columns():
                value = column[i]
                values[name] = CoreDataDate(value) if dates and value is not None else value
        return values

    def _dates_exact(self, column: str) -> bool:
        """Whether every date of a source column reads as a datetime that writes back its exact
        seconds (to_dict → create then stores what the attribute mappings would copy)."""
        exact = self.exact_dates.get(column)
        if exact is None:
            self.column(column)
            raw = self.raw[column]
            # Whole seconds go to a datetime and back exactly; anything else is checked value by value.
            exact = _whole(raw) or all(
                r is None or (type(v) is CoreDataDate or reference_seconds(v) == r)
                for v, r in zip(self.columns[column], raw)
            )
            self.exact_dates[column] = exact
        return exact

    def reached(self) -> None:
        """The library is about to be used directly (a manager call, an instance's handle): what
        the batch holds is written first, and what was fetched may change."""
        if self.dirty:
            self.flush()
        self.side.generation += 1

    # -- kept in the binding ---------------------------------------------------------------
    def manager_create(
        self,
        entity: str | None = None,
        values: dict[str, Any] | None = None,
        *,
        source: Instance | None = None,
        skip_unknown: bool = False,
    ) -> Instance:
        """``manager.create`` while the batch runs (MigrationManager.create's signature). The row's
        own values under their names (``source.to_dict()``, without some keys) for the mapping's
        destination entity are the attribute mappings' copy of the row: the instance keeps only
        the row's number, its values put in when something reads them (``filled``)."""
        if (
            source is not None
            and values
            and type(source) is self.source_class
            and source._rows is self
            and (entity is None or entity == self.destination_entity)
        ):
            items = self.row_copy_items
            if items is None:
                items = self._row_copy_items()
            if len(values) == len(items):
                index = source._index
                # As many keys as copies, each the row's own value (a key missing: KeyError).
                try:
                    for key, column in items:
                        if values[key] is not column[index]:
                            break
                    else:
                        # PendingInstance.made(self, entity, {}, None, index, self.current), inline.
                        instance = PendingInstance()
                        instance._side = self.side
                        instance._entity = self.destination_entity
                        instance._rows = self
                        instance._values = {}
                        instance._key = None
                        instance._real = None
                        instance._copy = index
                        instance._creator = self.current
                        self.created.append(instance)
                        self.dirty = True
                        self.in_order = index + 1 if self.in_order == index else -1
                        if self.by_entity:
                            watched = self.by_entity.get(self.destination_entity or "")
                            if watched is not None:
                                watched.append(instance)
                        self.associated_rows.append(index)
                        self.associated.append(instance)
                        return instance
                except KeyError:
                    pass  # not the row's own values: the general path below
        elif not values and source is None:
            # An instance with its default values (to be set next): create's, inline.
            if entity is None:
                entity = self.destination_entity
            if entity is not None and entity in self.infos:
                instance = PendingInstance()
                instance._side = self.side
                instance._entity = entity
                instance._rows = self
                instance._values = {}
                instance._key = None
                instance._real = None
                instance._copy = -1
                instance._creator = self.current
                self.created.append(instance)
                if entity != self.destination_entity:
                    self.other_entities.add(entity)
                else:
                    self.in_order = -1
                self.dirty = True
                if self.by_entity:
                    watched = self.by_entity.get(entity)
                    if watched is not None:
                        watched.append(instance)
                return instance
        made = self.create(entity, values, source, skip_unknown)
        if made is not None:
            return made
        return type(self.manager).create(self.manager, entity, values, source=source, skip_unknown=skip_unknown)

    def create(
        self, entity: str | None, values: dict[str, Any] | None, source: Instance | None, skip_unknown: bool
    ) -> PendingInstance | None:
        """manager.create, kept; None when this path cannot express it."""
        if entity is None:
            entity = self.plan.destination_entity
            if entity is None:
                return None
        if source is not None and (source.__class__ is not self.source_class or source._rows is not self):
            return None
        info = self.infos.get(entity)
        if info is None:
            info = self.plan.entity(entity)
            if info is None:
                return None
            self.infos[entity] = info
        copy = -1
        relationships = None
        kept: dict[str, Any] | None
        if not values:
            kept = {}
        elif source is not None and entity == self.destination_entity and values.keys() == self.copy_names:
            by_name = self.by_name
            if by_name is None:
                by_name = self._copies_by_name()
            if not by_name:
                kept, relationships = self._kept(values, info, skip_unknown)
                if kept is None:
                    return None
            else:
                # The row's own values under the same names (source.to_dict()): the attribute mappings' copy.
                index = source._index
                copy = index
                items = self._copy_items
                if items is None:
                    items = self.copy_items()
                for key, column in items:
                    if values[key] is not column[index]:
                        copy = -1
                        break
                kept = dict(values)
                if copy < 0:
                    attributes = info.attributes
                    for key, value in kept.items():
                        if value is not None and not _suits(value, attributes[key]):
                            return None
        else:
            kept, relationships = self._kept(values, info, skip_unknown)
            if kept is None:
                return None
        instance = PendingInstance.made(self, entity, kept, None, copy, self.current)
        self.created.append(instance)
        if entity == self.destination_entity or source is not None:
            self.in_order = -1
        if entity != self.destination_entity:
            self.other_entities.add(entity)
        self.dirty = True
        if self.by_entity:
            watched = self.by_entity.get(entity)
            if watched is not None:
                watched.append(instance)
        if source is not None:
            self.associated_rows.append(source._index)
            self.associated.append(instance)
        if relationships:
            for key, value in relationships:
                instance[key] = value
        return instance

    @staticmethod
    def _kept(
        values: dict[str, Any], info: _EntityInfo, skip_unknown: bool
    ) -> tuple[dict[str, Any] | None, list[tuple[str, Any]] | None]:
        """The attribute values of a create kept in the binding and its relationships, set after;
        (None, None) when a value or key takes the library's path."""
        kept = {}
        relationships = None
        attributes = info.attributes
        for key, value in values.items():
            kind = attributes.get(key)
            if kind is not None:
                if value is not None and not _suits(value, kind):
                    return None, None
                kept[key] = value
            elif key in info.relationships:
                if relationships is None:
                    relationships = []
                relationships.append((key, value))
            elif not skip_unknown:
                return None, None  # the library's path names the key (the instance stays made, as in C)
        return kept, relationships

    def _copies_by_name(self) -> bool:
        """Whether the attribute mappings copy each source attribute to the destination attribute
        of its name, with every date of the batch written back exactly from its datetime."""
        ok = self.by_name
        if ok is None:
            copies = self.copies
            ok = self.by_name = copies is not None and all(
                name == column and (kind != AttributeType.DATE or self._dates_exact(column))
                for name, column, kind in copies
            )
        return ok

    def set_value(self, instance: PendingInstance, key: str, value: Any) -> bool:
        info = self.plan.entity(instance._entity or "")
        if info is None:
            return False
        kind = info.attributes.get(key)
        if kind is not None:
            if value is not None and not _suits(value, kind):
                return False
            self.filled(instance)[key] = value
            instance._copy = -1
            self.in_order = -1
            if self.indexed:
                self._forget(instance._entity or "")
            return True
        to_many = info.relationships.get(key)
        if to_many is None or to_many or not isinstance(value, Instance):
            return False  # a whole to-many replaced, a to-one made nil: the library's path
        return self.relate(instance, key, (value,), False)

    def relate(self, owner: PendingInstance, key: str, targets: Any, to_many: bool) -> bool:
        info = self.infos.get(owner._entity or "") or self.plan.entity(owner._entity or "")
        if info is None or info.relationships.get(key) is not to_many:
            return False
        plain = False
        for target in targets:
            if type(target) is not PendingInstance:
                if not isinstance(target, Instance) or isinstance(target, RowSource) or target._side is not self.side:
                    return False
                plain = True
        if not targets:
            return True
        relations = self.relations
        last = relations[-1] if relations else None
        if last is not None and last[1] == key and last[0] == owner._entity:
            owners, members = last[2], last[3]
        else:
            owners, members = [], []
            relations.append((owner._entity or "", key, owners, members))
            #: The run add may extend without these checks: a to-many relationship's.
            self.run = relations[-1] if to_many else None
        for target in targets:
            owners.append(owner)
            members.append(target)
        self.dirty = True
        if plain:
            # An instance the binding does not follow may be read next: write now.
            self.flush()
        return True

    # manager.associate, apply_attribute_mappings and fetch_destination while the batch runs (the
    # manager's own signatures: run_rows puts these in its place, one Python call per use); what
    # this path cannot express goes to the manager's own method, which uses the library.
    def associate(self, source: Instance, destination: Instance) -> None:
        """``manager.associate``: a source row and an instance the batch made, kept."""
        if (
            source.__class__ is not self.source_class
            or source._rows is not self
            or type(destination) is not PendingInstance
            or destination._key is not None
        ):
            manager = self.manager
            return type(manager).associate(manager, source, destination)
        self.associated_rows.append(source._index)
        self.associated.append(destination)
        self.dirty = True

    def apply_attribute_mappings(self, source: Instance | None, destination: Instance) -> None:
        """``manager.apply_attribute_mappings``: plain copies of a source row onto an instance of
        the destination entity the batch made, kept (as the row's number until read)."""
        copies = self.copies
        if (
            copies is None
            or source.__class__ is not self.source_class
            or source._rows is not self
            or type(destination) is not PendingInstance
            or destination._key is not None
            or destination._entity != self.destination_entity
        ):
            manager = self.manager
            return type(manager).apply_attribute_mappings(manager, source, destination)
        values = destination._values
        i = source._index
        self.in_order = -1
        if self.indexed:
            self._forget(destination._entity or "")
        if not values:
            # Only the copy of row i: its values are put in when something reads them (filled).
            destination._copy = i
            return None
        for name, column, dates in self.copy_columns():
            value = column[i]
            values[name] = CoreDataDate(value) if dates and value is not None else value
        destination._copy = i if len(values) == len(copies) else -1
        return None

    def fetch_destination(
        self,
        entity: str,
        predicate: str | None = None,
        *arguments: Any,
        variables: Any = None,
        include_subentities: bool = True,
        limit: int | None = None,
        sort: Any = None,
    ) -> list[Instance]:
        """``manager.fetch_destination`` by ``key == %@`` (a string attribute, a str argument): the
        store's instances — the batch changes no attribute of those — then the batch's own, in
        Z_PK order. An answer is kept until the destination or the batch's instances of the entity
        may have changed (a write, an instance made, a value set)."""
        answer = None
        simple = (
            type(predicate) is str
            and len(arguments) == 1
            and type(arguments[0]) is str
            and (limit is None or type(limit) is int)
            and not variables
            and not sort
        )
        if simple:
            answer = self.answers.get((entity, predicate, arguments[0], limit))
            if answer is not None:
                pending = self.by_entity.get(entity)
                count = answer[2]
                if (
                    answer[0] != self.side.generation
                    or answer[1][0] != count
                    or pending is None
                    or len(pending) != count
                ):
                    answer = None
            if answer is None:
                answer = self._answer(entity, predicate, arguments[0], limit)  # type: ignore[arg-type]
        if answer is None:
            manager = self.manager
            return type(manager).fetch_destination(
                manager,
                entity,
                predicate,
                *arguments,
                variables=variables,
                include_subentities=include_subentities,
                limit=limit,
                sort=sort,
            )
        result: list[Instance] = []
        for k in answer[3]:
            # PendingInstance.made(self, entity, None, k), inline: the store's instances.
            instance = PendingInstance()
            instance._side = self.side
            instance._entity = entity
            instance._rows = self
            instance._values = None
            instance._key = k
            instance._real = None
            instance._copy = -1
            instance._creator = None
            result.append(instance)
        found = answer[4]
        if found:
            result += found  # the batch's own
        return result

    def _answer(self, entity: str, predicate: str, value: str, limit: int | None) -> tuple | None:
        """fetch_destination's answer as the batch keeps it — (the destination's generation, the
        index entry of the batch's instances it read, their count then, the store's primary keys,
        the batch's instances) — or None when this path cannot give it."""
        compared = self.compared.get(entity)
        if compared is None:
            compared = self.compared[entity] = {}
        key = compared.get(predicate, "")
        if key == "":
            key = compared[predicate] = self._compared(entity, predicate)
        if key is None:
            return None
        pending = self.by_entity.get(entity)
        if pending is None:
            pending = self._pending(entity)
        matching = self._matching(entity, key, pending)
        if matching is None:
            return None  # an instance without the attribute: its default value is the library's to know
        if limit is not None and limit < 0:
            raise ValueError(f"limit must not be negative ({limit})")
        stored = self._stored(entity, key, predicate, value, limit or 0)
        found = matching.get(value) or []
        found = found[: max(limit - len(stored), 0)] if limit else list(found)
        answer = (self.side.generation, self.indexed[entity][key], len(pending), stored, found)
        self.answers[(entity, predicate, value, limit)] = answer
        return answer

    def _forget(self, entity: str) -> None:
        """A value of an instance of ``entity`` the batch made is set: its index goes, and the
        answers that read it with it (their entries marked)."""
        gone = self.indexed.pop(entity, None)
        if gone:
            for entry in gone.values():
                entry[0] = -1

    def _matching(
        self, entity: str, key: str, pending: list[PendingInstance]
    ) -> dict[str, list[PendingInstance]] | None:
        """The batch's unwritten instances of ``entity`` by their value of ``key`` (each list in
        the order they were made), or None when one has no value of its own for it. Kept from fetch
        to fetch: instances made since are added; a value set on an instance of the entity starts
        it again (set_value, apply_attribute_mappings)."""
        by_key = self.indexed.get(entity)
        if by_key is None:
            by_key = self.indexed[entity] = {}
        entry = by_key.get(key)
        if entry is None:
            entry = by_key[key] = [0, {}]
        done, index = entry
        if done < len(pending) and index is not None:
            filled = self.filled
            for p in pending[done:]:
                values = filled(p)
                if key not in values:
                    index = entry[1] = None
                    break
                value = values[key]
                same = index.get(value)
                if same is None:
                    index[value] = [p]
                else:
                    same.append(p)
            entry[0] = len(pending)
        return index

    def _compared(self, entity: str, predicate: str) -> str | None:
        """The string attribute of a concrete entity without subentities a predicate ``key == %@``
        compares, the fetches this path answers; None for any other."""
        key = _compared_key(predicate)
        if key is None:
            return None
        info = self.infos.get(entity)
        if info is None:
            info = self.plan.entity(entity)
            if info is None:
                return None
            self.infos[entity] = info
        if info.has_subentities or info.attributes.get(key) != AttributeType.STRING:
            return None
        return key

    def _pending(self, entity: str) -> list[PendingInstance]:
        """The batch's unwritten instances of an entity, in the order they were made; kept up to
        date by ``create`` from now on (until the batch is written)."""
        pending = self.by_entity[entity] = [p for p in self.created if p._entity == entity]
        return pending

    def _stored(self, entity: str, key: str, predicate: str, value: str, limit: int) -> list[int]:
        """The primary keys of the stored instances a fetch finds, kept while nothing could have
        changed the destination's attributes (no write by the batch or through an instance, no
        other use of the library)."""
        side = self.side
        cache_key = (entity, key, value, limit)
        kept = self.fetched.get(cache_key)
        if kept is not None and kept[0] == side.generation:
            return kept[1]
        array, count, keep = pack([(None, 0, value)], "predicate argument")
        out = ctypes.c_void_p()
        code = _lib_.cdm_context_fetch_destination(
            self.manager._ctx,
            c_text(entity, "the entity"),
            c_text(predicate, "the predicate"),
            array,
            count,
            0,
            limit,
            ctypes.byref(out),
        )
        del keep
        check(code)
        handles, found = ctypes.POINTER(ctypes.c_void_p)(), ctypes.c_size_t()
        check(_lib_.cdm_list_objects(out.value, ctypes.byref(handles), ctypes.byref(found)))
        keys = []
        for i in range(found.value):
            real = Instance(handles[i], side)
            keys.append(real.object_id.primary_key)
            real.release()  # only its key is kept
        _lib_.cdm_object_release(out.value)
        self.fetched[cache_key] = (side.generation, keys)
        return keys

    # -- writing -----------------------------------------------------------------------------
    def _by_default(
        self, created: list[PendingInstance], others: set[str], rows: list[int], associated: list[PendingInstance]
    ) -> list[PendingInstance] | None:
        """The instances the batch's default can make (``cdm_batch_apply_default``: one per row,
        the attribute mappings applied, associated), when every row made exactly that as the only
        instance of its destination entity's hierarchy, with that association alone; else None.
        ``created``: the instances made (``others``: their entities but the destination entity),
        ``rows`` and ``associated``: the associations."""
        keys = self.keys
        if self.flushed or self.copies is None or not keys:
            return None
        destination = self.plan.destination_entity
        info = self.plan.entity(destination or "")
        if info is None:
            return None
        root = info.root
        for name in others:
            other = self.plan.entity(name or "")
            if other is None or other.root == root:
                return None  # another entity of the hierarchy: not the default's one instance per row
        if self.in_order == len(keys) == len(associated):
            # Made by the copy of every row in row order and nothing else: the checks below hold.
            return associated
        made = [p for p in created if p._entity == destination] if others else created
        count = len(made)
        if count != len(keys) or len(associated) != count:
            return None
        # Made from row i by the attribute mappings alone, and associated with the row it was made
        # from (the same objects in the same order: compared by identity, in C).
        if made != associated or rows != list(range(count)) or list(map(_COPY, made)) != rows:
            return None
        return made

    def flush(self, final: bool = False) -> None:
        """Writes what the batch holds: the new instances (by runs of one entity, in order), then
        the relationships and associations."""
        if not self.dirty:
            return
        self.dirty = False
        self.side.generation += 1
        ctx = self.manager._ctx or 0
        created, others = self.created, self.other_entities
        self.created, self.other_entities = [], set()
        self.by_entity, self.indexed, self.answers = {}, {}, {}
        rows, self.associated_rows = self.associated_rows, []
        destinations, self.associated = self.associated, []
        by_default = self._by_default(created, others, rows, destinations) if final else None
        if not final:
            self.flushed = True
        if by_default is not None:
            pointer = ctypes.POINTER(ctypes.c_int64)()
            count = ctypes.c_size_t()
            check(
                _lib_.cdm_batch_apply_default_numbered(self.batch._handle(), ctypes.byref(pointer), ctypes.byref(count))
            )
            for p, key in zip(by_default, keys_from(pointer, count.value)):
                p._key = key
            rows, destinations = [], []
            created = [p for p in created if p._key is None] if len(by_default) != len(created) else []
        start = 0
        while start < len(created):
            entity = created[start]._entity or ""
            end = start + 1
            while end < len(created) and created[end]._entity == entity:
                end += 1
            run = created[start:end]
            if run:
                try:
                    keys = _create_many(ctx, entity, [self.filled(p) for p in run])
                except Exception as error:
                    raise self._named(error, entity, run) from None
                for p, key in zip(run, keys):
                    p._key = key
                    p._values = None
            start = end
        relations, self.relations, self.run = self.relations, [], None
        for entity, relationship, owners, members in relations:
            # Written above: every pending instance has its key by now.
            try:
                targets = list(map(_KEY, members))  # every member a pending instance (C loop)
            except AttributeError:
                targets = [m._key if isinstance(m, PendingInstance) else m.object_id.primary_key for m in members]
            _relate_many(ctx, entity, relationship, list(map(_KEY, owners)), targets)
        if destinations:
            keys = self.keys
            groups: dict[str, tuple[list[int], list[int]]] = {}
            for row, destination in zip(rows, destinations):
                source_keys, destination_keys = groups.setdefault(destination._entity or "", ([], []))
                source_keys.append(keys[row])
                destination_keys.append(destination._key)  # type: ignore[arg-type]
            for entity, (source_keys, destination_keys) in groups.items():
                self.batch.associate(entity, source_keys, destination_keys)

    def _named(self, error: Exception, entity: str, run: list[PendingInstance]) -> Exception:
        """The error of writing a run of new instances, naming the instance refused and the source
        instance it was made for: the rows are written again one at a time to find it (nothing is
        made when a row is refused, and the migration stops anyway)."""
        ctx = self.manager._ctx or 0
        for p in run:
            try:
                _create_many(ctx, entity, [self.filled(p)])
            except Exception as single:
                creator = p._creator
                what = (
                    f"a new '{entity}' made for source instance {creator.object_id.entity} {creator._key}"
                    if creator is not None
                    else f"a new '{entity}'"
                )
                message = f"{getattr(single, 'message', single)} ({what})"
                single.args = (message,)
                if hasattr(single, "message"):
                    single.message = message
                return single
        return error

    def close(self) -> None:
        """The batch is over: what it read and kept goes (instances and sources a policy keeps
        read through the library from now on)."""
        self.active = False
        self.columns, self.raw, self.fetched, self.by_entity, self.indexed, self.answers = {}, {}, {}, {}, {}, {}
        self.created, self.relations, self.associated_rows, self.associated = [], [], [], []
        self.other_entities = set()
        self.current = self.run = None


def run_rows(
    policy: Any, mapping: EntityMapping, manager: MigrationManager, batch: SourceBatch, plans: dict[int, Any]
) -> None:
    """Calls the policy's create_destination_instances for every row of the batch, as the engine
    calls it per source instance, and writes what the calls made."""
    kept = plans.get(id(mapping))
    if kept is None or kept[0] is not mapping:
        kept = plans[id(mapping)] = (mapping, _Plan(mapping, manager))
    plan = kept[1]
    hook = policy.create_destination_instances
    run = manager._run
    if not plan.fast:
        # Rows of sub-entities too: the library's own instances, one by one, written at once.
        entity = plan.source_entity or ""
        for key in batch.keys:
            if run.interrupted:
                raise KeyboardInterrupt
            hook(_handle_for(manager, SOURCE, entity, key, concrete=False), mapping, manager)
        return
    rows = RowBatch(manager, mapping, batch, plan)
    manager._rows = rows
    # The manager's create, associate, apply_attribute_mappings and fetch_destination answered by
    # the batch in one call each (not the manager's method, then the batch's).
    stand_ins = manager.__dict__
    stand_ins["create"] = rows.manager_create
    stand_ins["associate"] = rows.associate
    stand_ins["apply_attribute_mappings"] = rows.apply_attribute_mappings
    stand_ins["fetch_destination"] = rows.fetch_destination
    # Python's cyclic garbage collector waits for the batch's end: the thousands of small objects
    # a batch makes (sources, new instances, their values) are freed by reference counting once
    # it is written, and collections during it would only walk them over and over.
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    try:
        source_class = plan.source_class
        for index, key in enumerate(rows.keys):
            if run.interrupted:
                raise KeyboardInterrupt
            source = source_class()
            source._rows = rows
            source._index = index
            source._key = key
            rows.current = source
            hook(source, mapping, manager)
        rows.current = None
        rows.flush(final=True)
    finally:
        if collecting:
            gc.enable()
        manager._rows = None
        for name in ("create", "associate", "apply_attribute_mappings", "fetch_destination"):
            manager.__dict__.pop(name, None)
        rows.close()
