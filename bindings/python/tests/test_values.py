"""How Core Data's values look in Python: dates beyond datetime's years."""

import datetime
import json
import sqlite3

import pytest

import cdmigrate


def test_dates_beyond_datetime_read_as_core_data_dates():
    assert cdmigrate.date_from_reference_seconds(12.5) == cdmigrate.REFERENCE_DATE + datetime.timedelta(seconds=12.5)
    for seconds in (299_985_683_696.75, -63_200_000_000.0, float("inf")):
        date = cdmigrate.date_from_reference_seconds(seconds)
        assert isinstance(date, cdmigrate.CoreDataDate) and date == seconds
        assert cdmigrate.reference_seconds(date) == seconds
    with pytest.raises(OverflowError):
        cdmigrate.CoreDataDate(299_985_683_696.75).to_datetime()
    assert cdmigrate.CoreDataDate(12.5).to_datetime() == cdmigrate.REFERENCE_DATE + datetime.timedelta(seconds=12.5)
    assert repr(cdmigrate.CoreDataDate(1.5)) == "CoreDataDate(1.5)"


def test_core_data_dates_write_their_exact_seconds(tmp_path):
    model = cdmigrate.Model.from_json(
        json.dumps(
            {
                "entities": [
                    {
                        "name": "Event",
                        "attributes": [
                            {"name": "when", "type": "date", "optional": True},
                            {"name": "weight", "type": "double", "optional": True},
                        ],
                    }
                ]
            }
        )
    )
    path = str(tmp_path / "events.sqlite")
    stamps = [299_985_683_696.75, -63_200_000_000.0, 12.5]
    with cdmigrate.Store.create(model, path) as store:
        for seconds in stamps:
            store.insert("Event", when=cdmigrate.CoreDataDate(seconds))
        event = store.insert("Event")
        event["when"] = cdmigrate.CoreDataDate(1e12)
        with pytest.raises(cdmigrate.MismatchError):
            event["weight"] = cdmigrate.CoreDataDate(1.0)  # a date is not a number
        store.save()
    with sqlite3.connect(path) as db:
        assert [r[0] for r in db.execute("SELECT ZWHEN FROM ZEVENT ORDER BY Z_PK")] == [*stamps, 1000000000000.0]
