"""cdm_batch_columns: several source attributes of a batch read in one call as flat arrays (numbers
as int64 or doubles, texts as one UTF-8 buffer with offsets) give exactly the values the JSON
column (cdm_batch_column_json) gives, for every attribute type and for stored values SQLite's
typing lets through (a number in a text column, text in a number column, ill-formed UTF-8, a NUL
inside a text, infinities, a row deleted inside the batch's key range)."""

from __future__ import annotations

import ctypes
import sqlite3

import pytest
from conftest import KITCHEN_V1, copy_mapping

import cdmigrate
from cdmigrate import _lib
from cdmigrate.batch import _KEYS

ATTRIBUTES = [a["name"] for a in KITCHEN_V1["entities"][0]["attributes"]]


def compare_in_batches(kitchen_models, kitchen_store, tmp_path, batch_size=7):
    """Runs a batch hook reading every Item attribute both ways; returns the rows it compared."""
    v1, v2 = kitchen_models
    compared = []

    class Both(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances_batch(self, batch, mapping, manager):
            entity = manager.source_entity("Item")
            types = [entity.attributes[a].type for a in ATTRIBUTES]
            by_json = [batch._column_values(a) for a in ATTRIBUTES]
            by_arrays = batch._typed_columns(ATTRIBUTES, types)
            for name, (values, raw), (json_values, json_raw) in zip(ATTRIBUTES, by_arrays, by_json):
                assert values == json_values, name
                assert [type(v) for v in values] == [type(v) for v in json_values], name
                if entity.attributes[name].type == cdmigrate.AttributeType.DATE:
                    assert raw == json_raw, name  # the seconds, as stored
            # One attribute alone, and none.
            assert batch._typed_columns(["str"], [entity.attributes["str"].type])[0][0] == by_json[6][0]
            assert batch._typed_columns([], []) == []
            compared.extend(zip(batch.keys, zip(*(values for values, _ in by_arrays))))
            batch.apply_default()

    with cdmigrate.MappingModel.from_json(copy_mapping(item_policy="P")) as m, cdmigrate.Migration(
        v1, v2, m
    ) as migration:
        migration.set_batch_size(batch_size)
        migration.run(kitchen_store, str(tmp_path / f"out-{batch_size}.sqlite"), policies={"P": Both})
    return compared


def test_columns_read_in_one_call_are_the_json_columns(tmp_path, kitchen_models, kitchen_store):
    compared = compare_in_batches(kitchen_models, kitchen_store, tmp_path)
    assert len(compared) == 30
    row = dict(compared)[1]
    assert row[ATTRIBUTES.index("str")] == "héllo ✓" and row[ATTRIBUTES.index("flag")] is True
    assert row[ATTRIBUTES.index("blob")] == b"\x00\x01binary\xff"


def test_stored_values_of_other_kinds_read_as_the_json_column_reads_them(tmp_path, kitchen_models, kitchen_store):
    with sqlite3.connect(kitchen_store) as db:
        updates = [
            "ZSTR = CAST(X'66FF6F' AS TEXT)",  # ill-formed UTF-8
            "ZSTR = 'nul' || char(0) || 'inside'",
            "ZSTR = ''",
            "ZSTR = 42, ZDBL = 'not a number'",
            "ZSTR = 2.5, ZDBL = '7.25', ZI32 = '12'",
            "ZDBL = 9e999, ZFLT = -9e999",  # infinities
            "ZI64 = 3.0, ZFLAG = 7, ZWHEN = 10",
            "ZI16 = 'x', ZFLAG = 'YES', ZWHEN = '2020-01-01'",
            "ZSTR = X'E282', ZLINK = CAST(X'EDA080' AS TEXT)",  # truncated; an encoded surrogate
            "ZSTR = CAST(X'F4908080' AS TEXT), ZDEC = 3",  # above U+10FFFF; a decimal stored as an integer
        ]
        for key, update in enumerate(updates, start=2):
            db.execute(f"UPDATE ZITEM SET {update} WHERE Z_PK = ?", (key,))
        db.execute("DELETE FROM ZITEM WHERE Z_PK = 20")  # a gap inside a batch's key range
    compared = dict(compare_in_batches(kitchen_models, kitchen_store, tmp_path))
    assert len(compared) == 29
    text = ATTRIBUTES.index("str")
    assert compared[2][text] == "f\ufffdo"
    assert compared[3][text] == "nul\x00inside"
    assert compared[4][text] == ""
    assert compared[5][text] == "42"


def test_one_batch_of_every_row_and_batches_of_one(tmp_path, kitchen_models, kitchen_store):
    assert len(compare_in_batches(kitchen_models, kitchen_store, tmp_path, batch_size=1000)) == 30
    assert len(compare_in_batches(kitchen_models, kitchen_store, tmp_path, batch_size=1)) == 30


def test_bad_calls_are_refused_with_codes(tmp_path, kitchen_models, kitchen_store):
    v1, v2 = kitchen_models
    seen = []

    class Refusing(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances_batch(self, batch, mapping, manager):
            with pytest.raises(cdmigrate.NotFoundError, match="nothing"):
                batch._typed_columns(["str", "nothing"], [None, None])
            lib = _lib.lib
            count = ctypes.c_size_t()
            names = (ctypes.c_char_p * 1)(b"str")
            kinds, values = (ctypes.c_int * 1)(), (ctypes.c_void_p * 1)()
            # NULL out arrays, a NULL name list with a count, a NULL count: misuse, not a crash.
            assert lib.cdm_batch_columns(batch._handle(), names, 1, None, values, None, None, None, None) == 101
            assert lib.cdm_batch_columns(batch._handle(), None, 1, kinds, values, None, None, None, None) == 101
            assert lib.cdm_batch_columns(batch._handle(), names, 1, kinds, values, None, None, None, None) == 101
            assert lib.cdm_batch_columns(None, names, 1, kinds, values, None, None, None, ctypes.byref(count)) == 101
            # Only the values wanted: no text pointers, no null lists.
            code = lib.cdm_batch_columns(
                batch._handle(), names, 1, kinds, values, None, None, None, ctypes.byref(count)
            )
            assert code == 0 and kinds[0] == 3 and count.value == len(batch)
            nulls, null_counts = (_KEYS * 1)(), (ctypes.c_size_t * 1)()
            code = lib.cdm_batch_columns(
                batch._handle(), names, 0, None, None, None, nulls, null_counts, ctypes.byref(count)
            )
            assert code == 0 and count.value == len(batch)
            seen.append(len(batch))
            batch.apply_default()

    with cdmigrate.MappingModel.from_json(copy_mapping(item_policy="P")) as m, cdmigrate.Migration(
        v1, v2, m
    ) as migration:
        migration.run(kitchen_store, str(tmp_path / "out.sqlite"), policies={"P": Refusing})
    assert seen == [30]


def test_date_columns_of_whole_seconds_without_nulls_are_named_as_such(tmp_path, kitchen_models, kitchen_store):
    """_typed_columns names the date columns whose datetimes give back their exact seconds (every
    value whole seconds, no null): a batch of such dates, one with a fraction, one with a null."""
    with sqlite3.connect(kitchen_store) as db:
        db.execute("UPDATE ZITEM SET ZWHEN = CAST(ZWHEN AS INTEGER)")  # whole seconds
        db.execute("UPDATE ZITEM SET ZWHEN = ZWHEN + 0.5 WHERE Z_PK = 9")  # the second batch of 7
        db.execute("UPDATE ZITEM SET ZWHEN = NULL WHERE Z_PK = 16")  # the third
    v1, v2 = kitchen_models
    seen = []

    class Dates(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances_batch(self, batch, mapping, manager):
            date = cdmigrate.AttributeType.DATE
            whole: set[str] = set()
            [(values, raw), _] = batch._typed_columns(["when", "str"], [date, cdmigrate.AttributeType.STRING], whole)
            seen.append((batch.keys[0], whole))
            if whole:
                assert [cdmigrate.values.reference_seconds(v) for v in values] == raw
            batch.apply_default()

    with cdmigrate.MappingModel.from_json(copy_mapping(item_policy="P")) as m, cdmigrate.Migration(
        v1, v2, m
    ) as migration:
        migration.set_batch_size(7)
        migration.run(kitchen_store, str(tmp_path / "out.sqlite"), policies={"P": Dates})
    assert seen == [(1, {"when"}), (8, set()), (15, set()), (22, {"when"}), (29, {"when"})]
