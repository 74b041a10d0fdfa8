"""Scenario 3: Event becomes NumericEvent and PrintedEvent, with two mapping models (StepOne,
StepTwo) run as two passes into the same destination; then the new store replaces the old one."""

from __future__ import annotations

import datetime as dt
import os
from typing import List, Optional

import cdmigrate

from .common import SeededGenerator, mapping, model, remove_store, summary

DIRECTORY = "3-events-two-passes"
FORMATTING_CLASS = "EventFormatting"
FORMATTING_SELECTOR = "printedDate:"
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def medium_date(reference_seconds: float) -> str:
    """What DateFormatter with medium date and time styles prints for en_US, in UTC:
    "Sep 12, 2017 at 12:55:13 PM" (fractions of a second dropped, a plain space before AM/PM),
    as examples/swift/ReferenceMigrations/MediumDateFormat.swift."""
    unix = int((reference_seconds + cdmigrate.UNIX_TO_REFERENCE) // 1)
    moment = dt.datetime(1970, 1, 1) + dt.timedelta(seconds=unix)
    hour12 = moment.hour % 12 or 12
    return (f"{MONTHS[moment.month - 1]} {moment.day}, {moment.year} at {hour12}:{moment.minute:02d}:{moment.second:02d} "
            f"{'AM' if moment.hour < 12 else 'PM'}")


def printed_date(value) -> Optional[str]:
    """The host function EventFormatting printedDate: (dates arrive as datetimes; numbers are
    seconds since 2001)."""
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return medium_date(cdmigrate.reference_seconds(value))
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return medium_date(float(value))
    raise TypeError(f"{FORMATTING_CLASS} {FORMATTING_SELECTOR} takes a date, not {type(value).__name__}")


FUNCTIONS = {(FORMATTING_CLASS, FORMATTING_SELECTOR): printed_date}


def time_stamps(count: int = 2000, seed: int = 3) -> List[float]:
    """Distinct instants from 1965 to 2035 with milliseconds, edge cases first (as the Swift generator)."""
    values = [0.0, -978_307_200.5, -978_307_200.0, 43_200.0, 86_399.999, 604_627_200 + 3_600 * 13 + 0.25, 526_953_599.75]
    seen = set(values)
    random = SeededGenerator(seed)
    while len(values) < count:
        candidate = float(random.int(-1_135_000_000, 1_072_000_000)) + float(random.int(0, 999)) / 1_000
        if candidate not in seen:
            seen.add(candidate)
            values.append(candidate)
    return values[:count]


def generate_source(path: str, count: int = 2000, seed: int = 3) -> List[float]:
    stamps = time_stamps(count, seed)
    with model(DIRECTORY, "EventsV1.model.json") as v1, cdmigrate.Store.create(v1, path) as store:
        for t in stamps:
            store.insert("Event", timeStamp=cdmigrate.date_from_reference_seconds(t))
        store.save()
    return stamps


def migration(step_one_in_ranges: bool = False) -> cdmigrate.Migration:
    """Both passes (StepOne whole, or in two ranges by predicates) with the formatting function."""
    first = "StepOneInRanges.mapping.json" if step_one_in_ranges else "StepOne.mapping.json"
    with model(DIRECTORY, "EventsV1.model.json") as v1, model(DIRECTORY, "EventsV2.model.json") as v2, \
            mapping(DIRECTORY, first) as one, mapping(DIRECTORY, "StepTwo.mapping.json") as two:
        return cdmigrate.Migration(v1, v2, [one, two], functions=FUNCTIONS)


def replace_store(path: str, new_path: str) -> None:
    """Puts the store at new_path in the place of the one at path (old -wal/-shm removed first, so
    they cannot be replayed onto the new file)."""
    for suffix in ("-wal", "-shm", "-journal"):
        if os.path.exists(path + suffix):
            os.remove(path + suffix)
    os.replace(new_path, path)
    for suffix in ("-wal", "-shm", "-journal"):
        if os.path.exists(new_path + suffix):
            os.replace(new_path + suffix, path + suffix)


def run(directory: str) -> str:
    source = os.path.join(directory, "Events.sqlite")
    migrated = os.path.join(directory, "Events-v2.sqlite")
    generate_source(source)
    with migration() as events:
        report = events.run(source, migrated)
    replace_store(source, migrated)
    return summary(3, "Events: one entity becomes two, in two passes", [report])
