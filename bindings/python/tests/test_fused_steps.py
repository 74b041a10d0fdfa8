"""Fused chain steps from Python: the plan's passes, ``fuse_steps`` on a chain and on
``migrate_store``, and the same store either way (every table row by row)."""

from __future__ import annotations

import sqlite3

import pytest
from conftest import RENAMES_MODELS, renames_store

import cdmigrate


def rows(path: str) -> dict[str, list[tuple]]:
    with sqlite3.connect(path) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        result = {}
        for table in tables:
            columns = sorted(r[1] for r in db.execute(f'PRAGMA table_info("{table}")'))
            listed = ", ".join(f'"{c}"' for c in columns)
            result[table] = sorted(db.execute(f'SELECT {listed} FROM "{table}"').fetchall(), key=repr)
    return result


def test_the_plan_lists_the_fused_pass_and_the_step_by_step_passes(tmp_path):
    store = renames_store(tmp_path, "1.0.0")
    models = cdmigrate.ModelSet(RENAMES_MODELS)
    fused = models.plan(store)
    assert len(fused.steps) == 4
    assert fused.passes == [cdmigrate.ChainPass("v1.0.0", "v2.0.0", [0, 1, 2, 3], True, None)]
    separate = models.plan(store, fuse_steps=False)
    assert [p.steps for p in separate.passes] == [[0], [1], [2], [3]]
    assert not any(p.fused for p in separate.passes)
    assert separate.passes[0].not_fused_with_next == "the step-by-step run was asked for"


@pytest.mark.parametrize("use_chain", [False, True])
def test_fused_and_step_by_step_runs_give_the_same_store(tmp_path, use_chain):
    store = renames_store(tmp_path, "1.0.0")
    fused_path, steps_path = str(tmp_path / "fused.sqlite"), str(tmp_path / "steps.sqlite")
    if use_chain:
        with cdmigrate.MigrationChain(RENAMES_MODELS) as chain:
            assert chain.fuse_steps
            fused = chain.run(store, fused_path)
            chain.fuse_steps = False
            assert not chain.fuse_steps
            steps = chain.run(store, steps_path)
    else:
        fused = cdmigrate.migrate_store(store, RENAMES_MODELS, to=fused_path)
        steps = cdmigrate.migrate_store(store, RENAMES_MODELS, to=steps_path, fuse_steps=False)
    assert len(fused.steps) == 1
    assert [(s.source_version, s.destination_version) for s in fused.steps[0].fused_steps] == [
        ("v1.0.0", "v1.1.0"),
        ("v1.1.0", "v1.1.2"),
        ("v1.1.2", "v1.2.0"),
        ("v1.2.0", "v2.0.0"),
    ]
    assert len(steps.steps) == 4 and all(not s.fused_steps for s in steps.steps)
    assert fused.steps[-1].destination_counts == steps.steps[-1].destination_counts == {"BasicEntity": 1}
    assert rows(fused_path) == rows(steps_path)
