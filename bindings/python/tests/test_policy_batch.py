"""A policy's batch hook (``create_destination_instances_batch``, cdmigrate's extension beyond Core
Data): the same destination as a single-row policy, across batch boundaries; typed columns; the
bulk calls and their refusals; errors stopping the run; empty sources; stale batches."""

from __future__ import annotations

import os
import sqlite3

import pytest
from conftest import KITCHEN_V1, copy_mapping, rows
from reference_migrations import notas
from reference_migrations.common import mapping, model
from reference_migrations.text import nfc

import cdmigrate


class SingleRowCategorias(cdmigrate.EntityMigrationPolicy):
    """The Core Data-style policy of reference migration 1: one callback per note."""

    def create_destination_instances(self, source, mapping, manager):
        nota = manager.create("Nota")
        manager.apply_attribute_mappings(source, nota)
        nombre = source["categoria"]
        if nombre:
            nombre = nfc(nombre)
            found = manager.fetch_destination("Categoria", "nombre == %@", nombre, limit=1)
            if found:
                categoria = found[0]
            else:
                categoria = manager.create("Categoria")
                categoria["nombre"] = nombre
            nota.add("categorias", categoria)
        manager.associate(source, nota)


def run_notas(source, destination, policy, batch_size=None):
    with model(notas.DIRECTORY, "NotasV2.model.json") as v2, model(
        notas.DIRECTORY, "NotasV3.model.json"
    ) as v3, mapping(notas.DIRECTORY, "NotasV2ToV3.mapping.json") as m, cdmigrate.Migration(v2, v3, m) as migration:
        if batch_size:
            migration.set_batch_size(batch_size)
        return migration.run(source, destination, policies={"CrearCategoriasMigrationPolicy": policy})


def notas_of(path):
    """(contenido, fecha, etiquetas, category names) of every Nota, sorted; and the Categoria names."""
    join = next(
        r[0]
        for r in rows(path, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\'")
        if r[0] not in ("Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE")
    )
    columns = [c[1] for c in rows(path, f"PRAGMA table_info({join})")]
    nota_column = next(c for c in columns if c.endswith("NOTAS"))
    categoria_column = next(c for c in columns if c.endswith("CATEGORIAS"))
    names = dict(rows(path, "SELECT Z_PK, ZNOMBRE FROM ZCATEGORIA"))
    links = {}
    for nota, categoria in rows(path, f"SELECT {nota_column}, {categoria_column} FROM {join}"):
        links.setdefault(nota, []).append(names[categoria])
    result = sorted(
        (contenido, fecha, etiquetas, tuple(sorted(links.get(pk, []))))
        for pk, contenido, fecha, etiquetas in rows(path, "SELECT Z_PK, ZCONTENIDO, ZFECHA, ZETIQUETAS FROM ZNOTA")
    )
    return result, sorted(names.values())


def test_batch_policy_gives_the_single_row_policys_destination_across_batch_boundaries(tmp_path):
    source = str(tmp_path / "Notas-v2.sqlite")
    notas.generate_source(source, count=300)
    run_notas(source, str(tmp_path / "single.sqlite"), SingleRowCategorias)
    sizes = []

    class Counting(notas.CrearCategoriasMigrationPolicy):
        def create_destination_instances_batch(self, batch, mapping, manager):
            sizes.append(len(batch))
            assert batch.keys == sorted(batch.keys)
            super().create_destination_instances_batch(batch, mapping, manager)

    run_notas(source, str(tmp_path / "batch.sqlite"), Counting, batch_size=128)
    assert sizes == [128, 128, 44]
    single, batched = notas_of(str(tmp_path / "single.sqlite")), notas_of(str(tmp_path / "batch.sqlite"))
    assert len(single[0]) == 300 and single[1]
    assert batched == single


def test_batch_columns_give_the_values_an_instance_gives(tmp_path, kitchen_models, kitchen_store):
    v1, v2 = kitchen_models
    attributes = [a["name"] for a in KITCHEN_V1["entities"][0]["attributes"]]
    by_instance, by_column = [], {}

    class PerRow(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            by_instance.append([source[a] for a in attributes])
            return manager.default_create_destination_instances(source)

    class PerBatch(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances_batch(self, batch, mapping, manager):
            columns = [batch.column(a) for a in attributes]
            with pytest.raises(cdmigrate.NotFoundError, match="nothing"):
                batch.column("nothing")
            made = batch.apply_default()
            assert len(made) == len(batch) == len(set(made))
            for i, key in enumerate(batch.keys):
                by_column[key] = [column[i] for column in columns]

    # Text that JSON must escape: a quote, a backslash, a newline, a control character.
    with sqlite3.connect(kitchen_store) as db:
        db.execute("UPDATE ZITEM SET ZSTR = 'q\"uo\\te' || char(10) || char(1) || 'ñ' WHERE Z_PK = 1")
    with cdmigrate.MappingModel.from_json(copy_mapping(item_policy="P")) as m, cdmigrate.Migration(
        v1, v2, m
    ) as migration:
        migration.run(kitchen_store, str(tmp_path / "rows.sqlite"), policies={"P": PerRow})
        migration.set_batch_size(7)
        migration.run(kitchen_store, str(tmp_path / "batch.sqlite"), policies={"P": PerBatch})
    assert len(by_column) == len(by_instance) == 30
    assert sorted(by_column.values(), key=repr) == sorted(by_instance, key=repr)
    assert any(values[attributes.index("str")] == 'q"uo\\te\n\x01ñ' for values in by_column.values())
    # The relationship mappings of stage 2 found the instances the batches made and associated.
    linked = rows(str(tmp_path / "batch.sqlite"), "SELECT COUNT(*) FROM ZITEM WHERE ZBOX IS NOT NULL")[0][0]
    assert (
        linked == rows(str(tmp_path / "rows.sqlite"), "SELECT COUNT(*) FROM ZITEM WHERE ZBOX IS NOT NULL")[0][0] == 20
    )


def test_an_exception_in_the_batch_hook_stops_the_run_with_its_message(tmp_path):
    source = str(tmp_path / "Notas-v2.sqlite")
    notas.generate_source(source, count=50)
    calls = []

    class Failing(notas.CrearCategoriasMigrationPolicy):
        def create_destination_instances_batch(self, batch, mapping, manager):
            calls.append(len(batch))
            if len(calls) == 2:
                raise LookupError("categoria desconocida en el lote 2")
            super().create_destination_instances_batch(batch, mapping, manager)

    destination = str(tmp_path / "out.sqlite")
    with pytest.raises(LookupError, match="categoria desconocida en el lote 2"):
        run_notas(source, destination, Failing, batch_size=20)
    assert calls == [20, 20]
    assert not os.path.exists(destination)


def test_an_empty_source_calls_no_batch(tmp_path):
    source = str(tmp_path / "empty.sqlite")
    notas.generate_source(source, count=0)
    calls = []

    class Recording(notas.CrearCategoriasMigrationPolicy):
        def create_destination_instances_batch(self, batch, mapping, manager):
            calls.append(len(batch))

    run_notas(source, str(tmp_path / "out.sqlite"), Recording)
    assert calls == []
    assert rows(str(tmp_path / "out.sqlite"), "SELECT COUNT(*) FROM ZNOTA")[0][0] == 0


def test_bulk_calls_refuse_bad_names_and_keys_and_a_kept_batch(tmp_path):
    source = str(tmp_path / "Notas-v2.sqlite")
    notas.generate_source(source, count=5)
    kept = []

    class Refusing(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances_batch(self, batch, mapping, manager):
            with pytest.raises(cdmigrate.NotFoundError, match="Nadie"):
                manager.create_many("Nadie", [{}])
            with pytest.raises(cdmigrate.NotFoundError, match="color"):
                manager.create_many("Categoria", [{"nombre": "a"}, {"color": "rojo"}])
            with pytest.raises(TypeError):
                manager.create_many("Categoria", [{"nombre": object()}])
            with pytest.raises(cdmigrate.NotFoundError, match="amigos"):
                manager.relate_many("Nota", "amigos", [1], [1])
            with pytest.raises(ValueError, match="2 owners but 1 targets"):
                manager.relate_many("Nota", "categorias", [1, 2], [1])
            assert manager.create_many("Categoria", []) == []
            notas_made = batch.apply_default()
            with pytest.raises(cdmigrate.InvalidArgumentError, match="999"):
                manager.relate_many("Nota", "categorias", [notas_made[0]], [999])
            with pytest.raises(cdmigrate.InvalidArgumentError, match="123456"):
                batch.associate("Nota", [123456], [notas_made[0]])
            (trabajo,) = manager.create_many("Categoria", [{"nombre": "Trabajo"}])
            manager.relate_many("Nota", "categorias", notas_made, [trabajo] * len(notas_made))
            kept.append(batch)

    destination = str(tmp_path / "out.sqlite")
    run_notas(source, destination, Refusing)
    # Nothing of the refused calls was made: one Categoria, every note in it.
    assert rows(destination, "SELECT ZNOMBRE FROM ZCATEGORIA") == [("Trabajo",)]
    assert all(names == ("Trabajo",) for *_, names in notas_of(destination)[0])
    with pytest.raises(cdmigrate.MisuseError):
        kept[0].apply_default()
