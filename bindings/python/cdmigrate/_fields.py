"""Bulk values across the C boundary: ``cdm_field`` arrays packed and unpacked with ``struct``.

A call through ctypes costs far more than the work of copying one value, so the binding reads a
whole row (``cdm_object_get_fields``) and writes a whole set of values
(``cdm_object_set_fields``, ``cdm_context_create_instance_with_fields``) in one call each, and
packs or unpacks the field array in Python with a single ``struct`` call per field instead of a
ctypes attribute access per member. Text and bytes of a row are copied out with one
``string_at`` over the block the library keeps them in (architecture.md, "Crossing the C
boundary cheaply").
"""

from __future__ import annotations

import ctypes
import datetime as _dt
import decimal
import struct
import uuid
from typing import Any, Iterable, Sequence

from . import _lib
from ._text import c_text
from .errors import MismatchError, check
from .values import AttributeType as T
from .values import CoreDataDate, date_from_reference_seconds, reference_seconds
from .values import ValueType as V

_lib_ = _lib.lib

#: The layout of struct cdm_field (checked against the library's size at import).
FIELD = struct.Struct("@PiiqdPNP")
assert FIELD.size == ctypes.sizeof(_lib.cdm_field)

_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_NULL, _BOOL, _INTEGER, _DOUBLE, _DECIMAL, _STRING, _DATE, _BINARY, _UUID, _URI, _OBJECT = (
    V.NULL,
    V.BOOL,
    V.INTEGER,
    V.DOUBLE,
    V.DECIMAL,
    V.STRING,
    V.DATE,
    V.BINARY,
    V.UUID,
    V.URI,
    V.OBJECT,
)
_COLLECTION = V.COLLECTION
_DICTIONARY = V.DICTIONARY
#: What decode_row gives for a field holding an array or a dictionary (a transformable attribute's), which a field
#: cannot carry: read the attribute by its key instead.
COLLECTION = object()
_WITH_DATA = frozenset((int(V.DECIMAL), int(V.STRING), int(V.BINARY), int(V.UUID), int(V.URI)))

# Names the library hands out are interned for the life of the process: cached by address.
_interned: dict[int, str] = {}


def interned(address: int) -> str:
    name = _interned.get(address)
    if name is None:
        name = _interned[address] = ctypes.string_at(address).decode("utf-8")
    return name


# Names the binding hands in: NUL-terminated copies kept alive for the life of the process (the
# keys policies use are a model's property names; other keys are not cached).
_names: dict[str, tuple[Any, int]] = {}
_NAME_CACHE_LIMIT = 4096


def name_address(name: str, keep: list[Any]) -> int:
    entry = _names.get(name)
    if entry is None:
        if not isinstance(name, str):
            raise TypeError(f"field names are str, not {type(name).__name__}")
        buffer = ctypes.create_string_buffer(c_text(name, "a field name"))
        entry = (buffer, ctypes.addressof(buffer))
        if len(_names) < _NAME_CACHE_LIMIT:
            _names[name] = entry
        else:
            keep.append(buffer)
    return entry[1]


class FieldBuffer:
    """A reusable array for bulk reads (one per side: a side belongs to one thread)."""

    __slots__ = ("array", "capacity", "count")

    def __init__(self, capacity: int = 32) -> None:
        self.capacity = capacity
        self.array = (_lib.cdm_field * capacity)()
        self.count = ctypes.c_size_t()

    def grow(self, capacity: int) -> None:
        self.capacity = capacity
        self.array = (_lib.cdm_field * capacity)()


def read_row(handle: int, buffer: FieldBuffer) -> list[tuple[int, int, int, int, float, int, int, int]]:
    """The raw fields of an instance's attributes, in index order: one C call (two when the
    buffer has to grow)."""
    code = _lib_.cdm_object_get_fields(handle, buffer.array, buffer.capacity, ctypes.byref(buffer.count))
    check(code)
    count = buffer.count.value
    if count > buffer.capacity:
        buffer.grow(max(count, buffer.capacity * 2))
        code = _lib_.cdm_object_get_fields(handle, buffer.array, buffer.capacity, ctypes.byref(buffer.count))
        check(code)
    if not count:
        return []
    return list(FIELD.iter_unpack(memoryview(buffer.array).cast("B")[: count * FIELD.size]))


def decode_row(
    raw: Sequence[tuple[int, int, int, int, float, int, int, int]], kinds: Sequence[int | None] = ()
) -> dict[str, Any]:
    """Python values of raw fields, by attribute name. `kinds` (attribute types by index) are
    optional: the library already reports booleans as BOOL and doubles as DOUBLE; with them an
    INTEGER value of a boolean or floating-point attribute still becomes a bool or a float."""
    # One copy of every text and byte value: they sit in one block of the library's.
    low = high = 0
    for field in raw:
        start = field[5]
        if start:
            end = start + field[6]
            if not low or start < low:
                low = start
            if end > high:
                high = end
    block = ctypes.string_at(low, high - low) if low else b""
    result: dict[str, Any] = {}
    names = _interned
    for name, index, kind, integer, number, data, length, _ in raw:
        if kind in (_STRING, _URI):
            value: Any = block[data - low : data - low + length].decode("utf-8") if length else ""
        elif kind == _INTEGER:
            value = integer
            if kinds and index < len(kinds):
                attribute_type = kinds[index]
                if attribute_type == T.BOOLEAN:
                    value = bool(integer)
                elif attribute_type == T.DOUBLE or attribute_type == T.FLOAT:
                    value = float(integer)
        elif kind == _NULL:
            value = None
        elif kind == _DOUBLE:
            value = number
        elif kind == _BOOL:
            value = integer != 0
        elif kind == _DATE:
            value = date_from_reference_seconds(number)
        elif kind == _DECIMAL:
            value = decimal.Decimal(block[data - low : data - low + length].decode("ascii"))
        elif kind == _BINARY:
            value = block[data - low : data - low + length]
        elif kind == _UUID:
            value = uuid.UUID(bytes=block[data - low : data - low + 16])
        elif kind in (_COLLECTION, _DICTIONARY):
            value = COLLECTION
        else:
            raise MismatchError(f"attribute '{interned(name)}' has a value of unknown type {kind}")
        key = names.get(name)
        if key is None:
            key = interned(name)
        result[key] = value
    return result


_STR, _INT, _FLOAT, _BOOLEAN, _NONE, _BYTES = str, int, float, bool, type(None), bytes
_DATETIMES = (_dt.datetime, _dt.date, CoreDataDate)


def pack(items: Iterable[tuple[str | None, int, Any]], what: str = "value") -> tuple[Any, int, list[Any]]:
    """A cdm_field array for (name or None, index, value) items: (array, count, keepalive).
    Keep `keepalive` referenced until the C call returns."""
    keep: list[Any] = []
    prepared = []
    blob = bytearray()
    names = _names
    for name, index, value in items:
        if name is None:
            address = 0
        else:
            entry = names.get(name)
            address = entry[1] if entry is not None else name_address(name, keep)
        t = type(value)
        integer, number, offset, length, obj = 0, 0.0, -1, 0, 0
        if t is _STR:
            data = value.encode("utf-8", "surrogatepass")
            kind, offset, length = _STRING, len(blob), len(data)
            blob += data
            blob.append(0)
        elif t is _INT:
            if not _INT64_MIN <= value <= _INT64_MAX:
                raise OverflowError(f"{value} does not fit 64 bits ({what} '{name if name is not None else index}')")
            kind, integer = _INTEGER, value
        elif t is _FLOAT:
            kind, number = _DOUBLE, value
        elif t is _NONE:
            kind = _NULL
        elif t is _BOOLEAN:
            kind, integer = _BOOL, 1 if value else 0
        elif isinstance(value, _DATETIMES):
            kind, number = _DATE, reference_seconds(value)
        elif isinstance(value, decimal.Decimal):
            data = str(value).encode("ascii")
            kind, offset, length = _DECIMAL, len(blob), len(data)
            blob += data
            blob.append(0)
        elif isinstance(value, (bytes, bytearray, memoryview)):
            data = bytes(value)
            kind, offset, length = _BINARY, len(blob), len(data)
            blob += data
            blob.append(0)
        elif isinstance(value, uuid.UUID):
            kind, offset, length = _UUID, len(blob), 16
            blob += value.bytes
        elif isinstance(value, bool):
            kind, integer = _BOOL, 1 if value else 0
        elif isinstance(value, int):
            if not _INT64_MIN <= value <= _INT64_MAX:
                raise OverflowError(f"{value} does not fit 64 bits ({what} '{name if name is not None else index}')")
            kind, integer = _INTEGER, int(value)
        elif isinstance(value, float):
            kind, number = _DOUBLE, float(value)
        elif isinstance(value, str):
            data = str(value).encode("utf-8", "surrogatepass")
            kind, offset, length = _STRING, len(blob), len(data)
            blob += data
            blob.append(0)
        elif hasattr(value, "_h") and hasattr(value, "entity_name"):  # an Instance (predicate arguments)
            kind, obj = _OBJECT, value._h
        else:
            label = name if name is not None else (f"argument {index + 1}" if index >= 0 else "?")
            raise MismatchError(f"cannot pass a {type(value).__name__} as {what} '{label}'")
        prepared.append((address, index, kind, integer, number, offset, length, obj))
    # One buffer: the field array, then every text and byte value it points at.
    count = len(prepared)
    size = FIELD.size
    head = max(count, 1) * size
    buffer = bytearray(head + len(blob))
    array = (_lib.cdm_field * max(count, 1)).from_buffer(buffer)
    keep.append(buffer)
    base = ctypes.addressof(array) + head
    if blob:
        buffer[head:] = blob
    pack_into = FIELD.pack_into
    for i, (address, index, kind, integer, number, offset, length, obj) in enumerate(prepared):
        pack_into(
            buffer, i * size, address, index, kind, integer, number, base + offset if offset >= 0 else 0, length, obj
        )
    return array, count, keep
