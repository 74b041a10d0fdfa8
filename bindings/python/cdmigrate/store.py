"""Stores outside a migration: a new SQLite store in Core Data's layout, filled with instances
and saved (``Store.create``, for hosts that make source stores: tests, generators); and an
existing store opened read-only through its model (``Store.open``), so that a test asserts on the
objects a migration wrote — as Android's Room ``MigrationTestHelper`` lets a test open a migrated
database — instead of on SQL (docs/ci.md)."""

from __future__ import annotations

import base64
import contextlib
import ctypes
import datetime as _dt
import decimal
import json
import os
import uuid
from typing import Any, Dict, Iterable, List, Union

from . import _lib
from ._borrowed_model import BorrowedModel
from ._fields import pack
from ._handle import LongLivedHandle
from ._sorting import SortSpec, sort_descriptors
from ._text import PathLike, c_optional_text, c_path, c_text
from .errors import MisuseError, check, last_error, located
from .instance import Instance, Side, instances_from_array
from .model import Model
from .values import CoreDataDate

Objects = Union[str, bytes, "os.PathLike[str]", List[Dict[str, Any]], Dict[str, Any]]


class _StoreModel(BorrowedModel):
    """The model a store lends (``cdm_store_model``): valid while the store is open."""

    def __init__(self, pointer: int | None, store: Store):
        super().__init__(pointer)
        self._store = store

    @property
    def _ptr(self) -> int:
        if self._store.closed:
            raise MisuseError("the model of a closed store: keep the store open while its model is used")
        return super()._ptr


def _json_value(value: Any) -> Any:
    """Python values a JSON store description cannot hold as such, in the forms it takes."""
    if isinstance(value, CoreDataDate):
        return float(value)
    if isinstance(value, _dt.datetime):
        if value.tzinfo is None:
            value = value.replace(tzinfo=_dt.timezone.utc)
        return value.isoformat()
    if isinstance(value, _dt.date):
        return _dt.datetime(value.year, value.month, value.day, tzinfo=_dt.timezone.utc).isoformat()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    raise TypeError(f"a store description cannot hold a {type(value).__name__} value ({value!r})")


def description_json(objects: Objects) -> str:
    """The JSON text of a store description given as JSON text, a path to a JSON file, or Python
    lists and dicts (datetimes, dates, bytes, Decimals and UUIDs allowed; naive datetimes are UTC)."""
    if isinstance(objects, bytes):
        return objects.decode("utf-8")
    if isinstance(objects, os.PathLike):
        with open(os.fspath(objects), encoding="utf-8") as file:
            return file.read()
    if isinstance(objects, str):
        if objects.lstrip()[:1] in ("[", "{"):
            return objects
        with open(objects, encoding="utf-8") as file:
            return file.read()
    return json.dumps(objects, default=_json_value, ensure_ascii=False)


class Store(LongLivedHandle):
    """A store outside a migration: a new one (``create``), filled with instances and saved, or
    an existing one opened read-only (``open``) and read through its model. Instances are valid
    until the store is closed; closing rolls back what was not saved.

    >>> with Store.create(model, "Notes.sqlite") as store:
    ...     note = store.insert("Note", title="Hello", body="")
    ...     store.save()
    >>> with Store.open("Migrated.sqlite") as store:          # through its own model cache
    ...     [book["title"] for book in store.fetch("Book", "author.name == %@", "Ann", sort=["title"])]
    """

    _kind = "store"
    _free = staticmethod(lambda p: _lib.lib.cdm_store_close(p))
    _error = staticmethod(lambda p: _lib.lib.cdm_store_error(p))

    def __init__(self, pointer: int | None, model: Model | None):
        super().__init__(pointer)
        self.model = model
        self._side = Side("store", model)

    @classmethod
    def create(cls, model: Model, path: PathLike, objects: Objects | None = None, validate: bool = True) -> Store:
        """Creates a store at ``path`` (which must not exist) as a migration writes its
        destination: Core Data's metadata with the model's version hashes, ``Z_PRIMARYKEY``, the
        model cache. With ``objects`` — a store description (docs/ci.md, "The objects file") as Python lists
        and dicts, JSON text or a JSON file's path — it holds those instances, saved: a seed store
        of a model version for a test.

        >>> Store.create(v1, "seed.sqlite", objects=[
        ...     {"entity": "Author", "id": "ann", "values": {"name": "Ann"}},
        ...     {"entity": "Book", "values": {"title": "Notes", "author": "ann"}}]).close()

        The store with ``objects`` is then checked as Core Data's save checks what it writes
        (``validate()``); ``validate=False`` keeps objects it would refuse (a required value
        missing), to seed the damaged data real devices hold.

        Raises DestinationStoreError, SQLiteError or MigrationIOError when the store cannot be
        made; InvalidJSONError or InvalidArgumentError (``error.path`` names the JSON path at
        fault) for a description that does not fit the model, ValidationError for objects Core
        Data would not save — the file is then removed."""
        out = ctypes.c_void_p()
        code = _lib.lib.cdm_store_create(model._ptr, c_path(path), ctypes.byref(out))
        store = cls(out.value, model)
        store._raise_if_failed(code)
        if objects is not None:
            try:
                store.insert_objects(objects)
                store.save()
                if validate:
                    store.validate()
            except BaseException:
                store.close()
                for suffix in ("", "-wal", "-shm"):
                    with contextlib.suppress(OSError):
                        os.remove(os.fsdecode(path) + suffix)
                raise
        return store

    @classmethod
    def open(cls, path: PathLike, model: Model | None = None) -> Store:
        """Opens an existing store read-only. With ``model``, which must be the store's version
        (IncompatibleVersionHashError naming the entities that differ otherwise); without, through
        the model the store keeps of itself in its model cache (``Z_MODELCACHE``: every store Core
        Data writes since macOS 10.12 and iOS 10, and every store cdmigrate writes), which
        ``store.model`` then is. Nothing is written.

        Raises MigrationIOError (no such file), SQLiteError (not an SQLite database),
        MissingSourceModelError (no model given and an empty model cache: pass one, e.g.
        ``Model.from_store(path)`` rebuilt from the schema), InvalidModelError (a damaged cache),
        IncompatibleVersionHashError (not a Core Data store, or another version).
        Core Data counterpart: ``NSPersistentContainer`` with ``NSReadOnlyPersistentStoreOption``."""
        out = ctypes.c_void_p()
        code = _lib.lib.cdm_store_open(
            c_path(path, "the store path"), model._ptr if model is not None else None, ctypes.byref(out)
        )
        store = cls(out.value, model)
        store._raise_if_failed(code)
        if model is None:
            borrowed = ctypes.c_void_p()
            check(_lib.lib.cdm_store_model(store._ptr, ctypes.byref(borrowed)))
            store.model = _StoreModel(borrowed.value, store)
            store._side = Side("store", store.model)
        return store

    def insert(self, entity: str, values: dict[str, Any] | None = None, **more: Any) -> Instance:
        """Inserts an instance of ``entity`` and sets the given values (attributes, to-one
        relationships as Instances, to-many ones as lists of Instances)."""
        out = ctypes.c_void_p()
        code = _lib.lib.cdm_store_insert(self._ptr, c_text(entity, "the entity"), ctypes.byref(out))
        check(code)
        instance = Instance(out.value, self._side)
        instance._entity = entity
        values = {**(values or {}), **more}
        if values:
            instance.set_values(values, skip_unknown=False)  # the attributes in one call
        return instance

    def insert_objects(self, objects: Objects) -> None:
        """Inserts the instances a store description gives (docs/ci.md, "The objects file") and relates them;
        ``save()`` writes them. InvalidArgumentError names the JSON path of a value that does not
        fit the model (``error.path``)."""
        text = description_json(objects)
        check(_lib.lib.cdm_store_insert_json(self._ptr, c_text(text, "the store description")))

    def save(self) -> None:
        """Writes everything inserted and changed so far, with Core Data's bookkeeping, and commits."""
        code = _lib.lib.cdm_store_save(self._ptr)
        check(code)

    def validate(self) -> None:
        """Checks every instance against the model as Core Data's save validates them (and a
        migration its destination): required attributes and relationships present, to-many
        counts within bounds, numbers within their type and min/max. Unsaved changes are written
        first. Raises ValidationError (1570–1620 naming the instance and property; 1560 with each
        failure in ``error.problems``)."""
        check(_lib.lib.cdm_store_validate(self._ptr))

    def _query(self, entity: str, predicate: str | None, arguments: Iterable[Any], variables: dict[str, Any] | None):
        items: list[tuple[str | None, int, Any]] = [(None, i, value) for i, value in enumerate(arguments)]
        items += [(name, -1, value) for name, value in (variables or {}).items()]
        array, count, keep = pack(items, "predicate argument")
        return c_text(entity, "the entity"), c_optional_text(predicate, "the predicate"), array, count, keep

    def fetch(
        self,
        entity: str,
        predicate: str | None = None,
        *arguments: Any,
        variables: dict[str, Any] | None = None,
        sort: Iterable[SortSpec] | None = None,
        limit: int | None = None,
        include_subentities: bool = True,
    ) -> list[Instance]:
        """Instances of ``entity`` (and its subentities unless ``include_subentities=False``)
        matching an NSPredicate string, with ``arguments`` for its ``%@`` in order and
        ``variables`` for its ``$NAME``s; sorted by ``sort`` (``[("year", False), "title"]``, a
        plain key ascending; Z_PK order without, and between ties); at most ``limit``.

        Each instance reads like a dict: ``book["title"]``; ``book["author"]`` is the related
        Instance (its attributes read on first use) or None, ``author["books"]`` a list of
        Instances, an ordered relationship in its order; ``book.to_dict()`` every attribute.

        >>> store.fetch("Book", "year > %d AND author.name == $name", 1990, variables={"name": "Ann"}, sort=["year"])

        Raises NotFoundError (unknown entity), ExpressionSyntaxError (``offset`` in the
        predicate), InvalidArgumentError (an unknown key, a missing argument, a sort key that is
        not a stored attribute). Core Data counterpart: ``NSManagedObjectContext.fetch`` of an
        ``NSFetchRequest``."""
        if limit is not None and limit < 0:
            raise ValueError(f"limit must not be negative ({limit})")
        descriptors, sort_count, sort_keep = sort_descriptors(sort)
        name, text, array, count, keep = self._query(entity, predicate, arguments, variables)
        out = ctypes.c_void_p()
        code = _lib.lib.cdm_store_fetch(
            self._ptr,
            name,
            text,
            array,
            count,
            descriptors,
            sort_count,
            0 if include_subentities else 1,
            limit or 0,
            ctypes.byref(out),
        )
        del keep, sort_keep
        if code:
            error = last_error(code)
            raise located(error, predicate) if predicate is not None else error
        objects, total = ctypes.POINTER(ctypes.c_void_p)(), ctypes.c_size_t()
        check(_lib.lib.cdm_list_objects(out.value, ctypes.byref(objects), ctypes.byref(total)))
        return instances_from_array(objects, total.value, self._side)

    def count(
        self,
        entity: str,
        predicate: str | None = None,
        *arguments: Any,
        variables: dict[str, Any] | None = None,
        include_subentities: bool = True,
    ) -> int:
        """How many instances ``fetch`` would give without a limit; the same errors."""
        name, text, array, count, keep = self._query(entity, predicate, arguments, variables)
        out = ctypes.c_size_t()
        code = _lib.lib.cdm_store_count(
            self._ptr, name, text, array, count, 0 if include_subentities else 1, ctypes.byref(out)
        )
        del keep
        if code:
            error = last_error(code)
            raise located(error, predicate) if predicate is not None else error
        return out.value

    def __repr__(self) -> str:
        return "<Store closed>" if self.closed else "<Store>"
