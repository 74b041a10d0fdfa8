"""What the bulk calls of batch hooks pass across the C boundary: primary keys as C int64 arrays
(read with one copy, written without one for an ``array.array("q")``), and rows of attribute
values as the JSON text of ``cdm_context_create_instances_json``."""

from __future__ import annotations

import array
import base64
import ctypes
import datetime as _dt
import decimal
import json
import uuid
from typing import Any, Sequence

from .values import CoreDataDate, reference_seconds


def keys_from(pointer: Any, count: int) -> list[int]:
    """A C int64 array as a list."""
    if not count:
        return []
    return array.array("q", ctypes.string_at(pointer, count * 8)).tolist()


def keys_array(keys: Sequence[int], what: str):
    """A sequence of ints as a C int64 array (None when empty) and its length; the array object
    must stay referenced for the call."""
    try:
        packed = keys if isinstance(keys, array.array) and keys.typecode == "q" else array.array("q", keys)
    except (TypeError, OverflowError) as error:
        raise TypeError(f"{what} must be a sequence of int64 primary keys: {error}") from None
    if not packed:
        return None, 0
    return (ctypes.c_int64 * len(packed)).from_buffer(packed), len(packed)


def paired_keys_arrays(first: Sequence[int], second: Sequence[int], names: tuple[str, str], call: str):
    """Two sequences of primary keys that pair up, as C int64 arrays and their common length;
    ValueError when their lengths differ."""
    first_array, count = keys_array(first, names[0])
    second_array, other = keys_array(second, names[1])
    if count != other:
        raise ValueError(f"{call}: {count} {names[0].replace('_', ' ')} but {other} {names[1].replace('_', ' ')}")
    return first_array, second_array, count


def _json_value(value: Any) -> Any:
    """What json.dumps cannot write itself, as cdm_context_create_instances_json reads it."""
    if isinstance(value, (_dt.datetime, _dt.date, CoreDataDate)):
        return reference_seconds(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode("ascii")
    if isinstance(value, (decimal.Decimal, uuid.UUID)):
        return str(value)
    raise TypeError(f"a {type(value).__name__} value cannot be stored in an attribute")


def rows_json(rows: Sequence[dict[str, Any]]) -> bytes:
    """Rows of attribute values as the JSON text of cdm_context_create_instances_json."""
    return json.dumps(list(rows), default=_json_value, ensure_ascii=False, allow_nan=False).encode("utf-8")
