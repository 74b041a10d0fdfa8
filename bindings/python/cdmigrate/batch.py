"""Batches of source rows for a policy's batch hook — cdmigrate's extension beyond Core Data.

A policy that defines ``create_destination_instances_batch(self, batch, mapping, manager)`` gets
its entity mapping's source rows in batches (``Migration.set_batch_size``, 5,000 by default), not
one call per row: arrays cross the C boundary in one call each (keys as int64 arrays, a column as
one JSON text), so a policy's work per row is a few list elements, not dozens of Python frames.
"""

from __future__ import annotations

import base64
import ctypes
import datetime as _dt
import decimal
import json
import uuid
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
