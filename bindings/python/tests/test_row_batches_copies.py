"""The single-row hook over batches when ``manager.create(values=source.to_dict(), source=source)``
is the row's own copy: the instance keeps only the row's number and its values come from the
batch's columns when read, so what the hook does to its dict before or after the call, dates of
whole or fractional seconds, and reads during the batch must give the destination the
engine's per-row calls give (``row_batches = False``), row for row."""

from __future__ import annotations

import datetime as dt
import sqlite3
from typing import ClassVar

import pytest
from test_row_batches import dump, run_notas

import cdmigrate
from cdmigrate._row_batches import _dict_maker


def same_both_ways(tmp_path, source, policy_class, batch_size=7):
    fast = type(policy_class.__name__ + "Batched", (policy_class,), {"row_batches": True})
    slow = type(policy_class.__name__ + "PerRow", (policy_class,), {"row_batches": False})
    run_notas(source, str(tmp_path / f"slow-{batch_size}.sqlite"), slow, batch_size)
    run_notas(source, str(tmp_path / f"fast-{batch_size}.sqlite"), fast, batch_size)
    expected = dump(str(tmp_path / f"slow-{batch_size}.sqlite"))
    assert expected["ZNOTA"]
    assert dump(str(tmp_path / f"fast-{batch_size}.sqlite")) == expected
    return expected


@pytest.fixture
def notas_source(tmp_path):
    """Reference migration 1's source: whole-second dates and one fractional in one batch."""
    from reference_migrations import notas

    path = str(tmp_path / "Notas-v2.sqlite")
    notas.generate_source(path, count=60)
    with sqlite3.connect(path) as db:
        db.execute("UPDATE ZNOTA SET ZFECHA = ZFECHA + 0.25 WHERE Z_PK = 9")
    return path


class ChangedAfter(cdmigrate.EntityMigrationPolicy):
    """The dict given to create, changed afterwards: the instance keeps what it was given."""

    seen: ClassVar[list] = []

    def create_destination_instances(self, source, mapping, manager):
        values = source.to_dict()
        values.pop("categoria", None)
        nota = manager.create("Nota", values=values, source=source)
        values["contenido"] = "changed after create"
        values["fecha"] = dt.datetime(1999, 1, 1, tzinfo=dt.timezone.utc)
        self.seen.append((nota["contenido"], nota["fecha"], source["contenido"], source["fecha"]))
        return nota


class ChangedBefore(cdmigrate.EntityMigrationPolicy):
    """One value changed before create (every third row), the rest the row's own."""

    def create_destination_instances(self, source, mapping, manager):
        values = source.to_dict()
        values.pop("categoria", None)
        if source.object_id.primary_key % 3 == 0:
            values["fecha"] = source["fecha"] + dt.timedelta(days=1)
        if source.object_id.primary_key % 5 == 0:
            values["contenido"] = values["contenido"].upper()
        return manager.create(values=values, source=source)


class MissingKey(cdmigrate.EntityMigrationPolicy):
    """A key left out (etiquetas) and one the destination lacks (categoria) skipped."""

    def create_destination_instances(self, source, mapping, manager):
        values = source.to_dict()
        del values["etiquetas"]
        return manager.create("Nota", values=values, source=source, skip_unknown=True)


@pytest.mark.parametrize("batch_size", [7, 100])
def test_a_dict_changed_after_create_leaves_the_instance_as_made(tmp_path, notas_source, batch_size):
    ChangedAfter.seen = []
    same_both_ways(tmp_path, notas_source, ChangedAfter, batch_size)
    half = len(ChangedAfter.seen) // 2
    assert ChangedAfter.seen[:half] == ChangedAfter.seen[half:]  # the engine's run, then the batches'
    for contenido, fecha, source_contenido, source_fecha in ChangedAfter.seen:
        assert contenido == source_contenido and fecha == source_fecha
    assert any(isinstance(fecha, dt.datetime) and fecha.microsecond == 250_000 for _, fecha, _, _ in ChangedAfter.seen)


def test_a_dict_changed_before_create_gives_the_changed_values(tmp_path, notas_source):
    written = same_both_ways(tmp_path, notas_source, ChangedBefore)
    texts = [value for row in written["ZNOTA"] for value in row if isinstance(value, str) and value.startswith("NOTA ")]
    assert texts  # the upper-cased contents were written


def test_a_dict_without_one_copied_key_is_no_copy(tmp_path, notas_source):
    written = same_both_ways(tmp_path, notas_source, MissingKey)
    columns = [r[1] for r in sqlite3.connect(str(tmp_path / "fast-7.sqlite")).execute("PRAGMA table_info(ZNOTA)")]
    etiquetas = columns.index("ZETIQUETAS")
    assert all(row[etiquetas] is None for row in written["ZNOTA"])


def test_manager_create_is_the_managers_own_again_after_each_batch(tmp_path, notas_source):
    seen = []

    class Checking(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            seen.append("create" in vars(manager))
            values = source.to_dict()
            values.pop("categoria", None)
            return manager.create("Nota", values=values, source=source)

        def end_instance_creation(self, mapping, manager):
            seen.append("create" in vars(manager))

    run_notas(notas_source, str(tmp_path / "out.sqlite"), Checking)
    assert seen[0] is True and seen[-1] is False


def test_the_dicts_of_rows_have_the_attribute_names_whatever_they_spell():
    names = ["plain", "it's", 'a "quoted" one', "back\\slash", "ñandú"]
    make = _dict_maker(names)
    columns = [[1, 2], ["a", "b"], [None, 3.5], [b"x", b"y"], [True, False]]
    assert make(columns, 2) == [dict(zip(names, row)) for row in zip(*columns)]
    assert _dict_maker([])([], 3) == [{}, {}, {}]  # an entity without attributes: an empty dict a row
    assert _dict_maker(["only"])([[1, 2, 3]], 3) == [{"only": 1}, {"only": 2}, {"only": 3}]
