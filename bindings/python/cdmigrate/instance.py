"""Instances (NSManagedObject) as Python mappings, and the values of expressions and host functions.

An ``Instance`` wraps a handle of the library that it retains (``cdm_object_retain``) while the
Python object lives: a policy may keep instances across hooks and passes (a name → Author dict made
in ``create_destination_instances`` and used in ``create_relationships``), as Core Data policies
keep managed objects. When the Python object goes, so does the handle, so policies that keep
nothing keep memory flat. When the migration run ends (or, for a ``Store``'s instances, the store
is closed), every use raises ``MisuseError`` — never a crash.

Reading costs one C call per value: attribute names are resolved to indexes once per entity and
side (source or destination), so ``source["name"]`` is one typed getter by index.
``instance.to_dict()`` reads every attribute in one call and ``instance.set_values(d)`` writes a
dict in one call (_fields.py), which is the cheap way through ctypes.
"""

from __future__ import annotations

import ctypes
import datetime as _dt
import decimal
import uuid
from _thread import get_ident
from collections.abc import MutableMapping
from typing import Any, Iterable, Iterator, NoReturn

from . import _lib
from ._fields import COLLECTION, FieldBuffer, decode_row, interned, pack, read_row
from ._text import c_text
from .errors import NOTFOUND, MismatchError, NotFoundError, check, from_record, last_error
from .introspection import EntityCache, EntityDescription
from .values import URL, CoreDataDate, ObjectID, date_from_reference_seconds, reference_seconds
from .values import AttributeType as T
from .values import ValueType as V

_lib_ = _lib.lib
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


class _Buffers:
    """Out-parameters for the getters, made once per side (a side belongs to one thread)."""

    __slots__ = ("dbl", "handle", "i64", "int", "isnull", "ptr", "size", "text", "uuid")

    def __init__(self) -> None:
        self.i64 = ctypes.c_int64()
        self.dbl = ctypes.c_double()
        self.int = ctypes.c_int()
        self.isnull = ctypes.c_int()
        self.ptr = ctypes.c_void_p()
        self.size = ctypes.c_size_t()
        self.uuid = (ctypes.c_ubyte * 16)()
        self.handle = ctypes.c_void_p()
        self.text = ctypes.c_char_p()


SOURCE, DESTINATION, OTHER = 1, 2, 0  # enum cdm_store_kind

# The kinds by the names ObjectID.store and messages use, and back.


STORE_NAMES = {SOURCE: "source", DESTINATION: "destination", OTHER: "store"}
STORE_KINDS = {"source": SOURCE, "destination": DESTINATION, "store": OTHER}


class Side:
    """The attributes of one model's entities as seen through instances: name → (index, type),
    resolved on first use. One per model of a running migration or an open store."""

    def __init__(self, label: str, model: Any = None) -> None:
        """`model`: a cdm_model pointer or a Model, as EntityCache takes."""
        self.label = label
        self.entities: dict[str, dict[str, tuple[int, int] | None]] = {}
        self.names: dict[str, list[str]] = {}
        self.buffers = _Buffers()
        self.fields = FieldBuffer()
        self.model = EntityCache(model)
        #: Counts attribute writes through instances of this side (row_batches keeps fetch results until it changes).
        self.generation = 0


def _fail_relating(code: int, key: str):
    """A relationship change's error, worded for Python (the library suggests the C setter)."""
    error = last_error(code)
    if "cdm_object_set_object" in error.message:
        error.message = error.message.replace("cdm_object_set_object", f"instance['{key}'] = target")
        error.args = (error.message,)
    raise error


def _text(pointer: int | None, length: int) -> str:
    return ctypes.string_at(pointer, length).decode("utf-8") if pointer and length else ""


def _bytes(pointer: int | None, length: int) -> bytes:
    return ctypes.string_at(pointer, length) if pointer and length else b""


def _read(instance: _InstanceMapping, index: int, kind: int) -> Any:
    """The attribute at `index` of type `kind` through its typed getter."""
    h = instance._h
    b = instance._buffers
    isnull = ctypes.byref(b.isnull)
    value: Any
    if kind in (T.INTEGER16, T.INTEGER32, T.INTEGER64):
        code = _lib_.cdm_object_get_int64_at(h, index, ctypes.byref(b.i64), isnull)
        value = b.i64.value
    elif kind == T.STRING or kind == T.URI:
        code = _lib_.cdm_object_get_text_at(h, index, ctypes.byref(b.ptr), ctypes.byref(b.size), isnull)
        value = None if code or b.isnull.value else _text(b.ptr.value, b.size.value)
    elif kind in (T.DOUBLE, T.FLOAT):
        code = _lib_.cdm_object_get_double_at(h, index, ctypes.byref(b.dbl), isnull)
        value = b.dbl.value
    elif kind == T.DATE:
        code = _lib_.cdm_object_get_date_at(h, index, ctypes.byref(b.dbl), isnull)
        value = None if code or b.isnull.value else date_from_reference_seconds(b.dbl.value)
    elif kind == T.BOOLEAN:
        code = _lib_.cdm_object_get_bool_at(h, index, ctypes.byref(b.int), isnull)
        value = bool(b.int.value)
    elif kind in (T.BINARY, T.TRANSFORMABLE):
        code = _lib_.cdm_object_get_blob_at(h, index, ctypes.byref(b.ptr), ctypes.byref(b.size), isnull)
        value = None if code or b.isnull.value else _bytes(b.ptr.value, b.size.value)
    elif kind == T.DECIMAL:
        code = _lib_.cdm_object_get_text_at(h, index, ctypes.byref(b.ptr), ctypes.byref(b.size), isnull)
        value = None if code or b.isnull.value else decimal.Decimal(_text(b.ptr.value, b.size.value))
    elif kind == T.UUID:
        code = _lib_.cdm_object_get_uuid_at(h, index, ctypes.byref(b.uuid), isnull)
        value = uuid.UUID(bytes=bytes(b.uuid))
    else:  # a type this binding does not know yet: the generic path
        return None
    check(code)
    return None if b.isnull.value else value


def _write(instance: _InstanceMapping, key: str, index: int | None, kind: int | None, value: Any) -> None:
    """Sets an attribute through the setter that fits the Python type; the library checks that the
    attribute takes it (MismatchError otherwise)."""
    h = instance._h
    side = instance._side
    if side is not None:
        side.generation += 1
    by_index = index is not None
    target = index if by_index else c_text(key, "the key")
    suffix = "_at" if by_index else ""
    if value is None:
        code = getattr(_lib_, "cdm_object_set_null" + suffix)(h, target)
    elif isinstance(value, bool):
        code = getattr(_lib_, "cdm_object_set_bool" + suffix)(h, target, 1 if value else 0)
    elif isinstance(value, int):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise OverflowError(f"{value} does not fit the 64-bit integer attribute '{key}'")
        code = getattr(_lib_, "cdm_object_set_int64" + suffix)(h, target, value)
    elif isinstance(value, CoreDataDate):
        code = getattr(_lib_, "cdm_object_set_date" + suffix)(h, target, float(value))
    elif isinstance(value, float):
        code = getattr(_lib_, "cdm_object_set_double" + suffix)(h, target, value)
    elif isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
        code = getattr(_lib_, "cdm_object_set_text" + suffix)(h, target, data, len(data))
    elif isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        code = getattr(_lib_, "cdm_object_set_blob" + suffix)(h, target, data, len(data))
    elif isinstance(value, (_dt.datetime, _dt.date)):
        code = getattr(_lib_, "cdm_object_set_date" + suffix)(h, target, reference_seconds(value))
    elif isinstance(value, decimal.Decimal):
        data = str(value).encode("ascii")
        code = getattr(_lib_, "cdm_object_set_text" + suffix)(h, target, data, len(data))
    elif isinstance(value, uuid.UUID):
        if kind == T.UUID or kind is None:
            raw = (ctypes.c_ubyte * 16).from_buffer_copy(value.bytes)
            code = getattr(_lib_, "cdm_object_set_uuid" + suffix)(h, target, ctypes.byref(raw))
        else:
            data = str(value).encode("ascii")
            code = getattr(_lib_, "cdm_object_set_text" + suffix)(h, target, data, len(data))
    elif isinstance(value, (dict, list, tuple)):
        # An NSDictionary or NSArray for a transformable attribute: built as a value, then set
        # (the library keeps its keyed archive, or says why the attribute cannot take it).
        built = ctypes.c_void_p()
        check(_lib_.cdm_object_new_value(h, ctypes.byref(built)))
        set_result(built.value or 0, value)
        code = _lib_.cdm_object_set_value(h, c_text(key, "the key"), built.value)
    else:
        raise MismatchError(f"cannot store a {type(value).__name__} in attribute '{key}' of '{instance.entity_name}'")
    check(code)


def side_of(handle: int | None, sides: dict[int, Side] | None) -> Side | None:
    """The side (source or destination) an instance handle belongs to, by its store."""
    if not sides:
        return None
    store = ctypes.c_int()
    if _lib_.cdm_object_id(handle, ctypes.byref(store), None, None):
        return None
    return sides.get(store.value)


def value_from_handle(
    handle: int | None, side: Side | None, sides: dict[int, Side] | None = None, manager: Any = None
) -> Any:
    """A cdm_value (an expression's result, a host function's argument) as a Python value.
    Instances get `side`, or with `sides` ({store kind: Side}) the side of their store;
    ``$manager`` (CDM_VALUE_MANAGER) is `manager`, the running migration's MigrationManager."""
    lib = _lib_
    kind = lib.cdm_value_type(handle)
    if kind == V.NULL:
        return None
    if kind == V.MANAGER:
        if manager is None:
            raise MismatchError("$manager is only passed to host functions and policy methods")
        return manager
    if kind == V.STRING or kind == V.URI or kind == V.DECIMAL:
        ptr, size = ctypes.c_void_p(), ctypes.c_size_t()
        code = lib.cdm_value_text(handle, ctypes.byref(ptr), ctypes.byref(size))
        check(code)
        text = _text(ptr.value, size.value)
        if kind == V.DECIMAL:
            return decimal.Decimal(text)
        return URL(text) if kind == V.URI else text
    if kind == V.INTEGER:
        out = ctypes.c_int64()
        code = lib.cdm_value_int64(handle, ctypes.byref(out))
        result: Any = out.value
    elif kind == V.DOUBLE or kind == V.DATE:
        out_d = ctypes.c_double()
        code = (lib.cdm_value_double if kind == V.DOUBLE else lib.cdm_value_date)(handle, ctypes.byref(out_d))
        result = out_d.value if kind == V.DOUBLE else date_from_reference_seconds(out_d.value)
    elif kind == V.BOOL:
        out_i = ctypes.c_int()
        code = lib.cdm_value_bool(handle, ctypes.byref(out_i))
        result = bool(out_i.value)
    elif kind == V.BINARY:
        ptr, size = ctypes.c_void_p(), ctypes.c_size_t()
        code = lib.cdm_value_blob(handle, ctypes.byref(ptr), ctypes.byref(size))
        result = None if code else _bytes(ptr.value, size.value)
    elif kind == V.UUID:
        raw = (ctypes.c_ubyte * 16)()
        code = lib.cdm_value_uuid(handle, ctypes.byref(raw))
        result = uuid.UUID(bytes=bytes(raw))
    elif kind == V.OBJECT:
        obj = ctypes.c_void_p()
        code = lib.cdm_value_object(handle, ctypes.byref(obj))
        result = Instance(obj.value, side if sides is None else side_of(obj.value, sides)) if obj.value else None
    elif kind == V.COLLECTION:
        count = ctypes.c_size_t()
        code = lib.cdm_value_count(handle, ctypes.byref(count))
        check(code)
        element = ctypes.c_void_p()
        result = []
        for i in range(count.value):
            code = lib.cdm_value_element_at(handle, i, ctypes.byref(element))
            check(code)
            result.append(value_from_handle(element.value, side, sides, manager))
        return result
    elif kind == V.DICTIONARY:
        count = ctypes.c_size_t()
        check(lib.cdm_value_dictionary_count(handle, ctypes.byref(count)))
        member = ctypes.c_void_p()
        entries: dict[Any, Any] = {}
        for i in range(count.value):
            check(lib.cdm_value_dictionary_key_at(handle, i, ctypes.byref(member)))
            key = value_from_handle(member.value, side, sides, manager)
            check(lib.cdm_value_dictionary_value_at(handle, i, ctypes.byref(member)))
            entries[key] = value_from_handle(member.value, side, sides, manager)
        return entries
    else:
        # -1: a NULL or stale handle; the thread's last error says which.
        raise from_record(101, None) if kind == -1 else MismatchError(f"unknown value type {kind}")
    check(code)
    return result


def set_result(handle: int, value: Any, depth: int = 0) -> None:
    """Writes a host function's result (a Python value) into its cdm_value. A list or tuple is an
    ordered collection (an ordered to-many keeps its order), a set or frozenset an unordered one,
    empty or not: instances for a relationship mapping, or plain values (strings, numbers, URLs as
    strings, nested lists…) for a transformable attribute, which keeps their keyed archive."""
    lib = _lib_
    if isinstance(value, dict):
        if depth >= 64:
            raise MismatchError("a value nests collections more than 64 deep")
        check(lib.cdm_value_set_dictionary(handle))
        key_handle, value_handle = ctypes.c_void_p(), ctypes.c_void_p()
        for key, item in value.items():
            check(lib.cdm_value_dictionary_add_new(handle, ctypes.byref(key_handle), ctypes.byref(value_handle)))
            set_result(key_handle.value or 0, key, depth + 1)
            set_result(value_handle.value or 0, item, depth + 1)
        return
    if isinstance(value, (list, tuple, set, frozenset)):
        if depth >= 64:
            raise MismatchError("a function's result nests collections more than 64 deep")
        check(lib.cdm_value_set_collection(handle))
        element = ctypes.c_void_p()
        for item in value:
            if isinstance(item, Instance):
                check(lib.cdm_value_append_object(handle, item._h))
            else:
                check(lib.cdm_value_append_new(handle, ctypes.byref(element)))
                set_result(element.value or 0, item, depth + 1)
        return
    if value is None:
        code = lib.cdm_value_set_null(handle)
    elif isinstance(value, bool):
        code = lib.cdm_value_set_bool(handle, 1 if value else 0)
    elif isinstance(value, int):
        if not _INT64_MIN <= value <= _INT64_MAX:
            raise OverflowError(f"the function's result {value} does not fit 64 bits")
        code = lib.cdm_value_set_int64(handle, value)
    elif isinstance(value, CoreDataDate):
        code = lib.cdm_value_set_date(handle, float(value))
    elif isinstance(value, float):
        code = lib.cdm_value_set_double(handle, value)
    elif isinstance(value, URL):
        data = value.encode("utf-8", "surrogatepass")
        code = lib.cdm_value_set_uri(handle, data, len(data))
    elif isinstance(value, str):
        data = value.encode("utf-8", "surrogatepass")
        code = lib.cdm_value_set_text(handle, data, len(data))
    elif isinstance(value, decimal.Decimal):
        if not value.is_finite():
            raise MismatchError(f"a host function cannot return the decimal {value}")
        code = lib.cdm_value_set_decimal(handle, str(value).encode("ascii"))
    elif isinstance(value, uuid.UUID):
        data = str(value).encode("ascii")
        code = lib.cdm_value_set_text(handle, data, len(data))
    elif isinstance(value, (bytes, bytearray, memoryview)):
        data = bytes(value)
        code = lib.cdm_value_set_blob(handle, data, len(data))
    elif isinstance(value, (_dt.datetime, _dt.date)):
        code = lib.cdm_value_set_date(handle, reference_seconds(value))
    elif isinstance(value, Instance):
        code = lib.cdm_value_set_object(handle, value._h)
    else:
        raise MismatchError(f"a host function cannot return a {type(value).__name__}")
    check(code)


class _InstanceMapping(MutableMapping):
    """What every instance does, whoever holds its library handle: ``Instance`` adds the handle it
    retains while it lives. The binding's own instances of a batch of source rows (_row_batches:
    a source row, a new instance kept until the batch is written) hold no handle of their own and
    derive from this class, registered as Instances, so that freeing one runs no ``__del__``."""

    __slots__ = ("__weakref__", "_entity", "_h", "_local", "_side", "_thread")
    _h: int
    _side: Side | None
    _entity: str | None
    _local: dict[str, tuple[int, int] | None] | None
    _thread: int

    # -- identity -------------------------------------------------------------------------
    @property
    def _buffers(self) -> _Buffers:
        return self._side.buffers if self._side is not None else _Buffers()

    @property
    def entity_name(self) -> str:
        """The name of the instance's entity."""
        name = self._entity
        if name is None:
            out = ctypes.c_char_p()
            code = _lib_.cdm_object_entity_name(self._h, ctypes.byref(out))
            check(code)
            name = self._entity = (out.value or b"").decode("utf-8")
        return name

    @property
    def entity(self) -> EntityDescription:
        """The instance's entity (``instance.entity``): its attributes and relationships, inherited
        ones included, with name, type, optional, to-many and destination entity."""
        side = self._side
        if side is None or side.model.model is None:
            raise NotFoundError(f"no model is known for this instance of '{self.entity_name}'")
        return side.model.entity(self.entity_name)

    @property
    def uri(self) -> str:
        """Core Data's object ID URI: ``x-coredata://<store UUID>/<Entity>/p<Z_PK>``; source and
        destination URIs differ. ``manager.instance_for_uri(uri)`` gives the instance back."""
        out = ctypes.c_char_p()
        code = _lib_.cdm_object_uri(self._h, ctypes.byref(out))
        check(code)
        return (out.value or b"").decode("utf-8")

    @property
    def object_id(self) -> ObjectID:
        """The instance's identity as a hashable ObjectID (store, entity, primary key), read
        without text; source and destination IDs differ."""
        store, entity, key = ctypes.c_int(), ctypes.c_void_p(), ctypes.c_int64()
        code = _lib_.cdm_object_id(self._h, ctypes.byref(store), ctypes.byref(entity), ctypes.byref(key))
        check(code)
        return ObjectID(
            STORE_NAMES.get(store.value, "store"), interned(entity.value) if entity.value else "", key.value
        )

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Instance):
            return NotImplemented
        return other is self or other._h == self._h or other.object_id == self.object_id

    def __hash__(self) -> int:
        return hash(self.object_id)

    def __repr__(self) -> str:
        try:
            return f"<Instance {self.entity_name} {self.uri}>"
        except Exception:
            return "<Instance (no longer valid)>"

    # -- attribute resolution ------------------------------------------------------------------
    def _table(self) -> dict[str, tuple[int, int] | None]:
        side = self._side
        if side is None:
            if self._local is None:
                self._local = {}
            return self._local
        entity = self.entity_name
        table = side.entities.get(entity)
        if table is None:
            table = side.entities[entity] = {}
        return table

    def _attribute(self, key: str) -> tuple[int, int] | None:
        """(index, type) of the attribute `key`, or None when `key` is a relationship, a key path
        or unknown (those take the generic path, which reports unknown keys)."""
        table = self._table()
        try:
            return table[key]
        except KeyError:
            pass
        if not isinstance(key, str):
            raise TypeError(f"instance keys are str, not {type(key).__name__}")
        entry: tuple[int, int] | None = None
        if "." not in key:
            kind, index = ctypes.c_int(), ctypes.c_int()
            name = c_text(key, "the key")
            code = _lib_.cdm_object_attribute_type(self._h, name, ctypes.byref(kind))
            if code == 0:
                code = _lib_.cdm_object_attribute_index(self._h, name, ctypes.byref(index))
                check(code)
                entry = (index.value, kind.value)
            elif code != NOTFOUND:
                check(code)
        table[key] = entry
        return entry

    def _description(self) -> EntityDescription | None:
        side = self._side
        if side is None or side.model.model is None:
            return None
        return side.model.entity(self.entity_name)

    def attribute_names(self) -> list[str]:
        """The entity's attribute names (inherited ones included), in the entity's order."""
        side = self._side
        entity = self.entity_name
        if side is not None and entity in side.names:
            return side.names[entity]
        description = self._description()
        if description is not None:
            names = list(description.attributes)
        else:
            names = [
                interned(field[0]) for field in read_row(self._h, side.fields if side is not None else FieldBuffer())
            ]
        if side is not None:
            side.names[entity] = names
        return names

    def relationship_names(self) -> list[str]:
        description = self._description()
        return list(description.relationships) if description is not None else []

    def to_json(self) -> str:
        """The instance as JSON text, the library's view of it: ``{"entity", "uri",
        "attributes"}`` (``json.loads(instance.to_json())`` for a dict; ``to_dict()`` gives the
        attribute values as Python values)."""
        out = ctypes.c_void_p()
        check(_lib_.cdm_object_to_json(self._h, ctypes.byref(out)))
        return _lib.take_string(out.value)

    # -- reading ------------------------------------------------------------------------------
    def __getitem__(self, key: str) -> Any:
        entry = self._attribute(key)
        if entry is not None and entry[1] != T.TRANSFORMABLE:
            return _read(self, entry[0], entry[1])
        # A transformable attribute reads as the object its archive holds (a str, a list…) or its
        # bytes: the library says which.
        out = self._buffers.handle
        code = _lib_.cdm_object_get_value(self._h, c_text(key, "the key"), ctypes.byref(out))
        check(code)
        return value_from_handle(out.value, self._side)

    def __iter__(self) -> Iterator[str]:
        return iter(self.attribute_names())

    def __len__(self) -> int:
        return len(self.attribute_names())

    def __contains__(self, key: object) -> bool:
        if not isinstance(key, str):
            return False
        if self._attribute(key) is not None:
            return True
        try:
            self[key]
        except KeyError:
            return False
        return True

    def to_dict(self, keys: Iterable[str] | None = None) -> dict[str, Any]:
        """The attribute values as a dict (``dictionaryWithValuesForKeys:``): every attribute in
        one call to the library, or the given keys (which may also name relationships and key
        paths; NotFoundError for a key the entity lacks)."""
        side = self._side
        row = decode_row(read_row(self._h, side.fields if side is not None else FieldBuffer()))
        for key, value in row.items():
            if value is COLLECTION:  # a transformable attribute holding an array
                row[key] = self[key]
        if keys is None:
            return row
        result: dict[str, Any] = {}
        for key in keys:
            result[key] = row[key] if key in row else self[key]
        return result

    # -- writing ------------------------------------------------------------------------------
    def __setitem__(self, key: str, value: Any) -> None:
        entry = self._attribute(key)
        if entry is not None:
            _write(self, key, entry[0], entry[1], value)
            return
        name = c_text(key, "the key")
        if isinstance(value, Instance):
            code = _lib_.cdm_object_set_object(self._h, name, value._h)
        elif value is None:
            code = _lib_.cdm_object_set_null(self._h, name)
        elif isinstance(value, (list, tuple, set, frozenset)):
            # The whole contents of a to-many relationship: what is no longer there goes, the rest
            # is (re)added in the given order.
            targets = list(value)
            for target in targets:
                if not isinstance(target, Instance):
                    raise MismatchError(f"'{self.entity_name}.{key}' takes instances, not {type(target).__name__}")
            current = self[key]
            if not isinstance(current, list):
                raise MismatchError(f"'{self.entity_name}.{key}' is not a to-many relationship")
            self.remove(key, *current)
            self.add(key, *targets)
            return
        else:
            # Not an attribute: let the library say what the key is.
            _write(self, key, None, None, value)
            return
        check(code)

    # -- removing: an entity's properties cannot be removed ---------------------------------------
    # Every instance has every property of its entity, so nothing can be deleted from it: these
    # raise TypeError for a property the entity has (set it to None to make it nil) and
    # KeyError, as a dict does, for a key it lacks. So `k in i` stays true for every property,
    # and pop/popitem/clear never loop or half-succeed.
    def _refuse_removal(self, key: object, operation: str) -> NoReturn:
        if not isinstance(key, str) or key not in self:
            raise NotFoundError(f"'{self.entity_name}' has no property {key!r}")
        raise TypeError(
            f"{operation}: the properties of an instance of '{self.entity_name}' cannot be removed; "
            f"set instance[{key!r}] = None to make {key!r} nil"
        )

    def __delitem__(self, key: str) -> None:
        """Refused: TypeError for a property of the entity, KeyError for a key it lacks."""
        self._refuse_removal(key, f"del instance[{key!r}]")

    def pop(self, key: str, *default: Any) -> Any:
        """Refused like ``del``; with a default, a key the entity lacks gives the default (as a
        dict's pop does)."""
        if len(default) > 1:
            raise TypeError(f"pop expected at most 2 arguments, got {1 + len(default)}")
        if default and (not isinstance(key, str) or key not in self):
            return default[0]
        self._refuse_removal(key, f"instance.pop({key!r})")

    def popitem(self) -> tuple[str, Any]:
        """Refused: TypeError (KeyError for an entity without attributes, as for an empty dict)."""
        names = self.attribute_names()
        if not names:
            raise NotFoundError(f"popitem(): '{self.entity_name}' has no attributes")
        self._refuse_removal(names[-1], "instance.popitem()")

    def clear(self) -> None:
        """Refused: TypeError (an entity's properties cannot be removed). Harmless for an
        entity without attributes, as for an empty dict. To make every attribute nil:
        ``instance.set_values(dict.fromkeys(instance, None))``."""
        names = self.attribute_names()
        if names:
            self._refuse_removal(names[0], "instance.clear()")

    def add(self, key: str, *targets: Instance) -> None:
        """Adds instances to a to-many relationship (``mutableSetValueForKey:`` add; appended
        when it is ordered)."""
        self._relate(_lib_.cdm_object_add_object, key, targets)

    def remove(self, key: str, *targets: Instance) -> None:
        """Removes instances from a to-many relationship (harmless for one that is not there)."""
        self._relate(_lib_.cdm_object_remove_object, key, targets)

    def insert(self, key: str, index: int, target: Instance) -> None:
        """Inserts an instance at ``index`` of an ordered to-many relationship (clamped to its
        count; a member already there moves). O(n) per call: ``add`` appends."""
        if not isinstance(target, Instance):
            raise MismatchError(f"'{key}' takes instances, not {type(target).__name__}")
        if index < 0:
            raise IndexError(f"index {index} of '{self.entity_name}.{key}' is negative")
        code = _lib_.cdm_object_insert_object(self._h, c_text(key, "the key"), target._h, index)
        if code:
            _fail_relating(code, key)

    def _relate(self, function, key: str, targets: Iterable[Instance]) -> None:
        name = c_text(key, "the key")
        for target in targets:
            if not isinstance(target, Instance):
                raise MismatchError(f"'{key}' takes instances, not {type(target).__name__}")
            code = function(self._h, name, target._h)
            if code:
                _fail_relating(code, key)

    def _split(self, values: dict[str, Any], skip_unknown: bool) -> tuple[list, list, list[str]]:
        """(attribute fields, relationship items, skipped keys) of a dict of values."""
        attributes: list[tuple[str | None, int, Any]] = []
        relationships: list[tuple[str, Any]] = []
        skipped: list[str] = []
        description = None
        for key, value in values.items():
            entry = self._attribute(key)
            if entry is not None and not isinstance(value, (Instance, list, tuple, set, frozenset, dict)):
                attributes.append((None, entry[0], value))
                continue
            if description is None:
                description = self._description()
            if entry is None and description is not None and key not in description.relationships:
                if skip_unknown:
                    skipped.append(key)
                else:
                    attributes.append((key, -1, value))  # the library names the unknown key
            else:
                relationships.append((key, value))
        return attributes, relationships, skipped

    def set_values(self, values: dict[str, Any], skip_unknown: bool = True) -> list[str]:
        """Sets values from a dict (``setValuesForKeysWithDictionary:``): the attributes in one
        call, relationships (Instances, lists of Instances, None) and the arrays and dicts of
        transformable attributes one by one; keys the entity
        lacks are skipped unless ``skip_unknown`` is False (NotFoundError naming the key).
        Returns the keys skipped."""
        attributes, relationships, skipped = self._split(values, skip_unknown)
        if attributes:
            if self._side is not None:
                self._side.generation += 1
            array, count, keep = pack(attributes, "attribute")
            code = _lib_.cdm_object_set_fields(self._h, array, count, 0)
            del keep
            check(code)
        for key, value in relationships:
            try:
                self[key] = value
            except KeyError:
                if not skip_unknown:
                    raise
                skipped.append(key)
        return skipped


class Instance(_InstanceMapping):
    """An instance of the source or destination store, read and written like a dict.

    ``source["name"]`` reads an attribute, a relationship (an Instance, None, or a list of
    Instances) or a key path (``source["note.body"]``); ``get`` answers None for unknown keys and
    nil values alike. ``destination["name"] = "x"`` sets an attribute, a to-one relationship (an
    Instance or None) or the whole contents of a to-many one (a list of Instances);
    ``add``/``remove``/``insert`` change a to-many relationship. Iterating gives the attribute
    names; ``to_dict()`` and ``set_values()`` read and write them all in one call each. Every
    property of the entity is always there, so ``del``, ``pop``, ``popitem`` and ``clear`` raise
    TypeError (KeyError for a key the entity lacks); ``instance[key] = None`` makes a value nil.

    Two Instance objects are equal when they stand for the same stored instance (the same
    ``object_id``), so instances can be dictionary keys. An Instance stays usable in later hooks
    and passes of the same run as long as it is referenced (keep it in the policy, in a dict, in
    ``manager.user_info``); after the run it raises MisuseError. Its ``object_id`` (or ``uri``)
    with ``manager.instance_with_id`` (or ``manager.instance_for_uri``) finds it again too.
    """

    __slots__ = ()

    def __init__(self, handle: int | None, side: Side | None) -> None:
        self._h: int = handle or 0  # 0 (NULL): every call says misuse
        self._side = side
        self._entity: str | None = None
        self._local: dict[str, tuple[int, int] | None] | None = None
        # Kept while this object lives; released by __del__ on the thread that retained it (a
        # handle belongs to its thread's table: elsewhere the same token could name another).
        self._thread = get_ident() if handle and not _lib_.cdm_object_retain(handle) else 0

    def __del__(self) -> None:
        try:
            if self._thread and self._thread == get_ident():
                self._thread = 0
                _lib_.cdm_object_release(self._h)
        except Exception:  # interpreter shutdown
            pass

    def release(self) -> None:
        """Ends this handle's validity now, before the Python object goes (to keep memory flat
        when something still references very many instances). Harmless when it is already
        invalid."""
        if self._thread:
            self._thread = 0
            _lib_.cdm_object_release(self._h)
        _lib_.cdm_object_release(self._h)


def instances_from_array(array, count: int, side: Side | None) -> list[Instance]:
    return [Instance(array[i], side) for i in range(count)]


def handle_array(instances: Iterable[Instance]):
    items = list(instances)
    for item in items:
        if not isinstance(item, Instance):
            raise MismatchError(f"expected instances, not {type(item).__name__}")
    array = (ctypes.c_void_p * max(len(items), 1))(*[item._h for item in items])
    return array, len(items)
