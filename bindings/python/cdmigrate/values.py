"""Types of attributes and values, how Core Data's values look in Python, and an instance's
identity (``ObjectID``).

==========================  ==========================================================
Core Data                   Python
==========================  ==========================================================
nil                         ``None``
Integer 16/32/64            ``int``
Double, Float               ``float``
Decimal                     ``decimal.Decimal``
String                      ``str``
Boolean                     ``bool``
Date                        ``datetime.datetime`` in UTC (stored as seconds since 2001);
                            a ``CoreDataDate`` outside ``datetime``'s years 1–9999
Binary, Transformable       ``bytes``; a transformable attribute's keyed archive of a
                            string, number, date, array (``list``) or NSDictionary
                            (``dict``) reads as that value and is written from it
UUID                        ``uuid.UUID``
URI                         ``str``; a ``URL`` (a ``str``) inside a transformable
                            attribute's array or dictionary (NSURL, not NSString)
to-one relationship         an ``Instance`` or ``None``
to-many relationship        a ``list`` of ``Instance``
==========================  ==========================================================

Naive datetimes given to the library are taken as UTC. A Core Data date is a double of seconds
since 2001 and reaches far beyond year 9999; such a date reads as a ``CoreDataDate`` (a ``float``
of those seconds), and a ``CoreDataDate`` can be written wherever a date is taken.
"""

from __future__ import annotations

import datetime as _dt
import enum
from typing import NamedTuple

REFERENCE_DATE = _dt.datetime(2001, 1, 1, tzinfo=_dt.timezone.utc)
"""Core Data's reference date: dates are stored as seconds since this instant."""

UNIX_TO_REFERENCE = 978_307_200.0
"""Seconds from 1970-01-01 to 2001-01-01 (NSTimeIntervalSince1970)."""


class AttributeType(enum.IntEnum):
    """Core Data's NSAttributeType values (enum cdm_attribute_type). UNDEFINED, OBJECT_ID and
    COMPOSITE are only ever transient attributes: cdmigrate stores none of them."""

    UNDEFINED = 0
    INTEGER16 = 100
    INTEGER32 = 200
    INTEGER64 = 300
    DECIMAL = 400
    DOUBLE = 500
    FLOAT = 600
    STRING = 700
    BOOLEAN = 800
    DATE = 900
    BINARY = 1000
    UUID = 1100
    URI = 1200
    TRANSFORMABLE = 1800
    OBJECT_ID = 2000
    COMPOSITE = 2100


class ValueType(enum.IntEnum):
    """The kinds of values of expressions and host functions (enum cdm_value_type)."""

    NULL = 0
    BOOL = 1
    INTEGER = 2
    DOUBLE = 3
    DECIMAL = 4
    STRING = 5
    DATE = 6
    BINARY = 7
    UUID = 8
    URI = 9
    OBJECT = 10
    COLLECTION = 11
    #: ``$manager`` passed as an argument: the running migration's MigrationManager.
    MANAGER = 12
    #: An NSDictionary a transformable attribute's keyed archive holds: a Python ``dict``.
    DICTIONARY = 13


class URL(str):
    """An NSURL as text: what an archived array or dictionary holds for a URL (an app's
    ``[Int: URL]``), as distinct from an NSString. Reads of such archives give ``URL``; a ``URL``
    in a list or dict set on a transformable attribute (or returned by a host function) is
    archived as an NSURL, a plain ``str`` as an NSString. Equal to the ``str`` of its text."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"URL({str.__repr__(self)})"


class CoreDataDate(float):
    """A Core Data date as it is stored: seconds since 2001-01-01 00:00 UTC, as a ``float``.

    Dates read as ``datetime.datetime`` where ``datetime`` can hold them (years 1 to 9999) and as
    ``CoreDataDate`` elsewhere (a Core Data date is a double and may lie in year 11507 or before
    year 1). Writing a ``CoreDataDate`` to a date attribute, or returning one from a host
    function, stores exactly these seconds; a plain ``float`` would be taken as a number.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"CoreDataDate({float(self)!r})"

    def to_datetime(self) -> _dt.datetime:
        """The UTC datetime; raises ``OverflowError`` outside ``datetime``'s years 1 to 9999."""
        return REFERENCE_DATE + _dt.timedelta(seconds=float(self))


def date_from_reference_seconds(seconds: float) -> _dt.datetime | CoreDataDate:
    """The UTC datetime of a Core Data date (seconds since 2001-01-01), to the microsecond, or a
    ``CoreDataDate`` holding the seconds when ``datetime`` cannot hold the date (not finite, or
    outside years 1 to 9999)."""
    try:
        return REFERENCE_DATE + _dt.timedelta(seconds=seconds)
    except (OverflowError, ValueError):
        return CoreDataDate(seconds)


def reference_seconds(value: _dt.datetime | _dt.date | CoreDataDate) -> float:
    """Seconds since 2001-01-01 UTC of a datetime (naive ones are UTC), a date (at midnight UTC) or
    a ``CoreDataDate``."""
    if isinstance(value, CoreDataDate):
        return float(value)
    if not isinstance(value, _dt.datetime):
        value = _dt.datetime(value.year, value.month, value.day)
    if value.tzinfo is None:
        value = value.replace(tzinfo=_dt.timezone.utc)
    delta = value - REFERENCE_DATE
    # Exact integer arithmetic first, one rounding at the end.
    return (delta.days * 86_400 + delta.seconds) + delta.microseconds / 1_000_000


class ObjectID(NamedTuple):
    """An instance's identity without text (NSManagedObjectID): which store (``"source"``,
    ``"destination"`` or ``"store"``), the entity and the primary key. Hashable, comparable, and
    valid for the whole run: ``manager.instance_with_id(object_id)`` gives the instance back."""

    store: str
    entity: str
    primary_key: int
