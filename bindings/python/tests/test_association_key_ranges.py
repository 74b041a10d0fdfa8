"""The notes a Core Data-style per-row policy makes go by the batch default, whose associations
are recorded as key ranges, not a row each: over batches and called row by row by the engine
(one association row per note), the same migration must give the same tables row by row, the
same report and the same answers to ``destination_instances`` and ``source_instances``, with gaps
in the source keys and batches that fill their key range or do not."""

from __future__ import annotations

import sqlite3
from typing import ClassVar

import pytest
from reference_migrations import notas
from test_row_batches import ToDictStyle, both_ways, dump, run_notas


class LookingUp(ToDictStyle):
    """ToDictStyle asking Core Data's look-ups about every note once stage 1 is done."""

    seen: ClassVar[list] = []

    def end_instance_creation(self, mapping, manager):
        sources = manager.fetch_source("Nota", sort=["contenido"])
        for source in sources:
            made = manager.destination_instances("NotaToNota", [source])
            self.seen.append((source.object_id.primary_key, [n.object_id.primary_key for n in made]))
            for nota in made:
                (back,) = manager.source_instances("NotaToNota", [nota])
                self.seen.append((nota.object_id.primary_key, back.object_id.primary_key))
                assert nota["contenido"] == source["contenido"]


@pytest.mark.parametrize("batch_size", [7, 40, 500])
def test_notes_by_key_ranges_match_a_row_per_association(tmp_path, batch_size):
    source = str(tmp_path / "Notas-v2.sqlite")
    notas.generate_source(source, count=300)
    db = sqlite3.connect(source)
    # A gap now and then (a batch of two runs), and a stretch of scattered keys (rows, not ranges).
    db.execute("DELETE FROM ZNOTA WHERE Z_PK % 37 = 0 OR (Z_PK BETWEEN 200 AND 260 AND Z_PK % 2 = 0)")
    db.commit()
    left = db.execute("SELECT COUNT(*) FROM ZNOTA").fetchone()[0]
    db.close()
    fast, slow = both_ways(LookingUp)
    reports, lookups, tables = [], [], []
    for name, policy in (("slow", slow), ("fast", fast)):
        LookingUp.seen = []
        destination = str(tmp_path / f"{name}.sqlite")
        report = run_notas(source, destination, policy, batch_size)
        reports.append(
            (
                [(m.entity_mapping, m.source_instances, m.associations) for m in report.mappings],
                report.untaken,
                [(loss.kind, loss.entity, loss.count) for loss in report.losses],
            )
        )
        lookups.append(LookingUp.seen)
        tables.append(dump(destination))
    assert tables[1] == tables[0]
    assert reports[1] == reports[0]
    assert lookups[1] == lookups[0]
    assert len(tables[0]["ZNOTA"]) == left
    assert reports[0][0][0][1:] == (left, left)
    assert len(lookups[0]) == 2 * left
    # The notes were numbered in source-key order, each source to the note with its contents.
    assert sorted(pair for pair in lookups[0] if isinstance(pair[1], list))[:2] == [(1, [1]), (2, [2])]
