"""Batches of source rows for a policy's batch hook — cdmigrate's extension beyond Core Data.

A policy that defines ``create_destination_instances_batch(self, batch, mapping, manager)`` gets
its entity mapping's source rows in batches (``Migration.set_batch_size``, 5,000 by default), not
one call per row: arrays cross the C boundary in one call each (keys as int64 arrays, a column as
one JSON text), so a policy's work per row is a few list elements, not dozens of Python frames.
"""

from __future__ import annotations

import array
import base64
import ctypes
import datetime as _dt
import decimal
import json
import uuid
from itertools import repeat
from typing import TYPE_CHECKING, Any, Sequence

from . import _lib
from ._arrays import keys_from, paired_keys_arrays
from ._text import c_text
from .errors import MisuseError, check
from .values import REFERENCE_DATE, AttributeType, date_from_reference_seconds

if TYPE_CHECKING:  # pragma: no cover
    from .policy import MigrationManager

_lib_ = _lib.lib
_KEYS = ctypes.POINTER(ctypes.c_int64)


class _ColumnKind:
    """How cdm_batch_columns lays out a column's values (enum cdm_column_kind)."""

    INTEGER = 1
    DOUBLE = 2
    TEXT = 3
    BYTES = 4


_TEXT_POINTERS = ctypes.POINTER(ctypes.c_char_p)


def _int64s(pointer: Any, count: int) -> array.array:
    """A C int64 array (count values) as an array.array("q"): one copy."""
    return array.array("q", ctypes.string_at(pointer, count * 8)) if count else array.array("q")


def _column_from(kind: int, values: Any, text: Any, nulls: Any, null_count: int, rows: int) -> list[Any]:
    """One column of cdm_batch_columns as a list: numbers, texts (str) or bytes, None for nulls."""
    column: Any  # a list of int, float, str or bytes
    if kind == _ColumnKind.INTEGER:
        column = _int64s(values, rows).tolist()
    elif kind == _ColumnKind.DOUBLE:
        column = array.array("d", ctypes.string_at(values, rows * 8)).tolist() if rows else []
    else:
        offsets = _int64s(values, rows + 1)
        blob = ctypes.string_at(text, offsets[-1])
        column = blob.decode("utf-8").split("\0") if kind == _ColumnKind.TEXT else None
        if column is not None and len(column) == rows + 1:
            # Every text ends with a NUL and holds none: decoded and split in one go each.
            column.pop()  # after the last NUL
        elif kind == _ColumnKind.TEXT:
            column = [blob[a : b - 1].decode("utf-8") for a, b in zip(offsets, offsets[1:])]
        else:
            column = [blob[a : b - 1] for a, b in zip(offsets, offsets[1:])]
    for row in _int64s(nulls, null_count).tolist():
        column[row] = None
    return column


# Seconds from 1970 to 2001 (Core Data's reference date), exact in a double.
_SINCE_1970 = 978_307_200.0


def _whole_dates(seconds: list[float]) -> list[Any] | None:
    """A date column without nulls whose values are all whole seconds within datetime's years, as
    datetimes made by ``datetime.fromtimestamp`` in C loops (exact for whole seconds, and cheaper
    than a timedelta per value); None for any other column. A date beyond datetime's years is
    refused by fromtimestamp itself (no pass over the column for its least and greatest values)."""
    if not seconds:
        return []
    try:
        if not all(map(float.is_integer, seconds)):
            return None
        utc = _dt.timezone.utc
        return list(map(_dt.datetime.fromtimestamp, map(_SINCE_1970.__add__, seconds), repeat(utc)))
    except (TypeError, OverflowError, ValueError, OSError):
        return None


def _dates(values: list[Any]) -> list[Any]:
    """A date column's seconds as the values date_from_reference_seconds gives, in one pass (its
    expression inlined); a column holding a date datetime cannot hold goes value by value."""
    reference, seconds = REFERENCE_DATE, _dt.timedelta
    try:
        # timedelta(0, v) is timedelta(seconds=v), without parsing a keyword per value.
        return [None if v is None else reference + seconds(0, v) for v in values]
    except (OverflowError, ValueError):
        return [None if v is None else date_from_reference_seconds(v) for v in values]


def _converter(attribute_type: int | None):
    """How a JSON column value becomes the Python value an Instance would give, per attribute type."""
    if attribute_type == AttributeType.DATE:
        return lambda v: None if v is None else date_from_reference_seconds(v)
    if attribute_type in (AttributeType.BINARY, AttributeType.TRANSFORMABLE):
        return lambda v: None if v is None else base64.b64decode(v)
    if attribute_type == AttributeType.DECIMAL:
        return lambda v: None if v is None else decimal.Decimal(v)
    if attribute_type == AttributeType.UUID:
        return lambda v: None if v is None else uuid.UUID(v)
    if attribute_type == AttributeType.BOOLEAN:
        return lambda v: None if v is None else bool(v)
    return None


class SourceBatch:
    """The source rows of one call of ``create_destination_instances_batch``, in primary-key
    order; usable only during that call (MisuseError afterwards).

    - ``keys``: the rows' primary keys (ints);
    - ``column(name)``: one attribute's values for every row (a list), read in one query;
    - ``apply_default()``: Core Data's default for every row at once (destination instance,
      attribute mappings, association — as one SQL statement where the mappings translate),
      returning the destination primary keys, one per row;
    - ``associate(entity, source_keys, destination_keys)``: many associations in one call.

    Destination instances are named by their primary keys (ints) in batch calls: use them with
    ``manager.create_many`` and ``manager.relate_many``.
    """

    __slots__ = ("_h", "_keys", "_live", "_manager", "_source_entity")

    def __init__(self, handle: int, manager: MigrationManager, source_entity: str | None):
        self._h = handle
        self._manager = manager
        self._keys: list[int] | None = None
        self._live = True
        self._source_entity = source_entity

    def _handle(self) -> int:
        if not self._live:
            raise MisuseError(
                "a source batch is usable only during the create_destination_instances_batch call that received it"
            )
        return self._h

    def __len__(self) -> int:
        return len(self.keys)

    @property
    def keys(self) -> list[int]:
        """The source rows' primary keys, ascending."""
        if self._keys is None:
            pointer = _KEYS()
            count = ctypes.c_size_t()
            check(_lib_.cdm_batch_source_keys(self._handle(), ctypes.byref(pointer), ctypes.byref(count)))
            self._keys = keys_from(pointer, count.value)
        return self._keys

    def column(self, attribute: str) -> list[Any]:
        """The values of a source attribute for every row, in row order (None for null, and for a
        row whose entity lacks the attribute). Raises NotFoundError for an unknown attribute."""
        return self._column_values(attribute)[0]

    def _column_values(self, attribute: str):
        """(the column as ``column`` gives it, the column as the JSON had it: dates as seconds)."""
        attribute_type = None
        if self._source_entity:
            found = self._manager.source_entity(self._source_entity).attributes.get(attribute)
            attribute_type = found.type if found is not None else None
        return self._typed_column_values(attribute, attribute_type)

    def _typed_column_values(self, attribute: str, attribute_type: int | None):
        """``_column_values`` of an attribute whose type the caller knows (no manager call)."""
        out = ctypes.c_char_p()
        check(_lib_.cdm_batch_column_json(self._handle(), c_text(attribute, "the attribute name"), ctypes.byref(out)))
        values = json.loads(out.value or b"[]")
        if attribute_type == AttributeType.DATE:
            return _dates(values), values
        convert = _converter(attribute_type)
        return ([convert(v) for v in values] if convert else values), values

    def _typed_columns(
        self, names: Sequence[str], attribute_types: Sequence[int | None], whole: set[str] | None = None
    ) -> list[tuple[list, list]]:
        """``_typed_column_values`` of several attributes, read in one call (cdm_batch_columns):
        numbers and texts as flat arrays instead of JSON. The names of date columns without nulls
        whose values are all whole seconds (within datetime's years) are added to ``whole``."""
        count = len(names)
        if not count:
            return []
        attributes = (ctypes.c_char_p * count)(*(c_text(name, "the attribute name") for name in names))
        kinds = (ctypes.c_int * count)()
        values = (ctypes.c_void_p * count)()
        texts = (ctypes.c_void_p * count)()
        nulls = (_KEYS * count)()
        null_counts = (ctypes.c_size_t * count)()
        rows = ctypes.c_size_t()
        check(
            _lib_.cdm_batch_columns(
                self._handle(),
                attributes,
                count,
                kinds,
                values,
                ctypes.cast(texts, _TEXT_POINTERS),
                nulls,
                null_counts,
                ctypes.byref(rows),
            )
        )
        result = []
        for i, attribute_type in enumerate(attribute_types):
            raw = _column_from(kinds[i], values[i], texts[i], nulls[i], null_counts[i], rows.value)
            if attribute_type == AttributeType.DATE:
                made = _whole_dates(raw) if not null_counts[i] else None
                if made is not None and whole is not None:
                    whole.add(names[i])
                result.append((made if made is not None else _dates(raw), raw))
            elif attribute_type in (AttributeType.BINARY, AttributeType.TRANSFORMABLE):
                result.append((raw, raw))  # the bytes themselves, not base64
            else:
                convert = _converter(attribute_type)
                result.append(([convert(v) for v in raw] if convert else raw, raw))
        return result

    def apply_default(self) -> list[int]:
        """Core Data's default createDestinationInstancesForSourceInstance for every row of the
        batch; returns the destination instances' primary keys, one per row in order (empty for a
        mapping without a destination entity)."""
        pointer = _KEYS()
        count = ctypes.c_size_t()
        check(_lib_.cdm_batch_apply_default(self._handle(), ctypes.byref(pointer), ctypes.byref(count)))
        return keys_from(pointer, count.value)

    def associate(self, destination_entity: str, source_keys: Sequence[int], destination_keys: Sequence[int]) -> None:
        """Associates the batch's rows ``source_keys[i]`` with the instances of
        ``destination_entity`` of keys ``destination_keys[i]``, for the current entity mapping."""
        sources, destinations, count = paired_keys_arrays(
            source_keys, destination_keys, ("source_keys", "destination_keys"), "associate"
        )
        check(
            _lib_.cdm_batch_associate(
                self._handle(), c_text(destination_entity, "the entity name"), sources, destinations, count
            )
        )

    def __repr__(self) -> str:
        return (
            f"<SourceBatch of {len(self._keys) if self._keys is not None else '?'} rows>"
            if self._live
            else "<SourceBatch (finished)>"
        )
