"""Scenario 3: Event becomes PrintedEvent and NumericEvent, with two mapping models run as two
passes into the same destination: StepOne makes the PrintedEvents through the custom policy
StepOneEntityMigrationPolicy, StepTwo the NumericEvents with a value expression; then the new store
replaces the old one."""

from __future__ import annotations

import datetime as dt
import math
import os

import cdmigrate

from .common import SeededGenerator, mapping, model, summary

DIRECTORY = "3-events-two-passes"
MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


#: Beyond this many seconds from 2001 (about 31.7 million years) a date has no text, as in Swift and C.
LIMIT = 1e15


def civil_from_days(days: int):
    """Year, month, day of a day count since 1970-01-01 (Howard Hinnant's algorithm, as Swift's
    DateConversion.civilFromDays and the C example): no year limit, unlike datetime."""
    z = days + 719468
    era = (z if z >= 0 else z - 146096) // 146097
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (1 if month <= 2 else 0), month, day


def medium_date(reference_seconds: float) -> str | None:
    """What DateFormatter with medium date and time styles prints for en_US, in UTC:
    "Sep 12, 2017 at 12:55:13 PM" (fractions of a second dropped, a plain space before AM/PM),
    as examples/swift/ReferenceMigrations/MediumDateFormat.swift. Any year prints (11507 too);
    None when the time stamp is not finite or more than LIMIT seconds from 2001."""
    if not math.isfinite(reference_seconds) or abs(reference_seconds) > LIMIT:
        return None
    total = math.floor(reference_seconds + cdmigrate.UNIX_TO_REFERENCE)
    days, second_of_day = divmod(total, 86_400)
    year, month, day = civil_from_days(days)
    hour, minute, second = second_of_day // 3600, second_of_day // 60 % 60, second_of_day % 60
    hour12 = hour % 12 or 12
    return f"{MONTHS[month - 1]} {day}, {year} at {hour12}:{minute:02d}:{second:02d} {'AM' if hour < 12 else 'PM'}"


def printed_date(value) -> str | None:
    """StepOne's printedDate for a time stamp: dates arrive as datetimes, or as
    cdmigrate.CoreDataDate (seconds since 2001) beyond datetime's year 9999. A time stamp with no
    text fails the migration, as in Swift and C."""
    if value is None:
        return None
    if not isinstance(value, (dt.datetime, cdmigrate.CoreDataDate)):
        raise TypeError(f"{StepOneEntityMigrationPolicy.__name__} takes a date, not {type(value).__name__}")
    seconds = cdmigrate.reference_seconds(value)
    text = medium_date(seconds)
    if text is None:
        raise ValueError(
            f"{StepOneEntityMigrationPolicy.__name__}: the date {seconds!r} (seconds since 2001) is out of range"
        )
    return text


class StepOneEntityMigrationPolicy(cdmigrate.EntityMigrationPolicy):
    """The scenario's StepOne policy: one PrintedEvent per Event, its printedDate the time stamp as
    a medium date and medium time (medium_date), as the original policy did with NSDateFormatter."""

    def create_destination_instances(self, source, mapping, manager):
        printed = manager.create("PrintedEvent")
        printed["printedDate"] = printed_date(source["timeStamp"])
        manager.associate(source, printed)


POLICIES = {"StepOneEntityMigrationPolicy": StepOneEntityMigrationPolicy}


def time_stamps(count: int = 2000, seed: int = 3) -> list[float]:
    """Distinct instants from 1965 to 2035 with milliseconds, edge cases first (as the Swift generator)."""
    values = [
        0.0,
        -978_307_200.5,
        -978_307_200.0,
        43_200.0,
        86_399.999,
        604_627_200 + 3_600 * 13 + 0.25,
        526_953_599.75,
    ]
    seen = set(values)
    random = SeededGenerator(seed)
    while len(values) < count:
        candidate = float(random.int(-1_135_000_000, 1_072_000_000)) + float(random.int(0, 999)) / 1_000
        if candidate not in seen:
            seen.add(candidate)
            values.append(candidate)
    return values[:count]


def generate_source(path: str, count: int = 2000, seed: int = 3) -> list[float]:
    stamps = time_stamps(count, seed)
    write_source(path, stamps)
    return stamps


def write_source(path: str, stamps: list[float]) -> None:
    """A v1 store with one Event per time stamp (seconds since 2001, written as they are)."""
    with model(DIRECTORY, "EventsV1.model.json") as v1, cdmigrate.Store.create(v1, path) as store:
        for t in stamps:
            event = store.insert("Event")
            # Exactly the seconds, whatever the year (a datetime ends at year 9999).
            event["timeStamp"] = cdmigrate.CoreDataDate(t)
        store.save()


def migration(step_one_in_ranges: bool = False) -> cdmigrate.Migration:
    """Both passes (StepOne whole, or in two ranges by predicates); run it with POLICIES."""
    first = "StepOneInRanges.mapping.json" if step_one_in_ranges else "StepOne.mapping.json"
    with model(DIRECTORY, "EventsV1.model.json") as v1, model(DIRECTORY, "EventsV2.model.json") as v2, mapping(
        DIRECTORY, first
    ) as one, mapping(DIRECTORY, "StepTwo.mapping.json") as two:
        return cdmigrate.Migration(v1, v2, [one, two])


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


def migrate(source: str, destination: str) -> cdmigrate.MigrationReport:
    with migration() as events:
        return events.run(source, destination, policies=POLICIES)


def run(directory: str) -> str:
    source = os.path.join(directory, "Events.sqlite")
    migrated = os.path.join(directory, "Events-v2.sqlite")
    generate_source(source)
    with migration() as events:
        report = events.run(source, migrated, policies=POLICIES)
    replace_store(source, migrated)
    return summary(3, "Events: one entity becomes two, in two passes", [report])
