"""Core Data's single-row ``create_destination_instances`` run over batches of source rows by the
binding (``row_batches``): every policy here runs both ways — over batches (the default) and
called row by row by the engine (``row_batches = False``) — and the two destinations must be the
same row for row, table by table; errors, reads during a batch, associations and relationships
behave as with the engine's own per-row calls."""

from __future__ import annotations

import datetime as dt
import os
import re

import pytest
from conftest import copy_mapping, rows
from reference_migrations import notas
from reference_migrations.common import mapping, model

import cdmigrate


def both_ways(policy_class):
    """The policy class as the default runs it (over batches) and as the engine calls it row by row."""
    fast = type(policy_class.__name__ + "Batched", (policy_class,), {"row_batches": True})
    slow = type(policy_class.__name__ + "PerRow", (policy_class,), {"row_batches": False})
    return fast, slow


def dump(path):
    """Every table of a store (Z_METADATA and the model cache aside), every row in key order."""
    tables = [
        r[0]
        for r in rows(
            path,
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN "
            "('Z_METADATA', 'Z_MODELCACHE') AND name NOT LIKE 'sqlite%' ORDER BY name",
        )
    ]
    return {table: rows(path, f"SELECT * FROM {table} ORDER BY 1, 2") for table in tables}


def dumps_both_ways(policy_class, v1, v2, mapping_json, source, tmp_path, batch_size):
    """The stores a migration with ``policy_class`` (registered as "P") makes both ways (over
    batches, then row by row), each dumped."""
    dumps = []
    for cls in both_ways(policy_class):
        destination = str(tmp_path / f"{cls.__name__}.sqlite")
        with cdmigrate.MappingModel.from_json(mapping_json) as m, cdmigrate.Migration(v1, v2, m) as migration:
            migration.set_batch_size(batch_size)
            migration.run(source, destination, policies={"P": cls})
        dumps.append(dump(destination))
    return dumps


def run_notas(source, destination, policy, batch_size=7):
    with model(notas.DIRECTORY, "NotasV2.model.json") as v2, model(
        notas.DIRECTORY, "NotasV3.model.json"
    ) as v3, mapping(notas.DIRECTORY, "NotasV2ToV3.mapping.json") as m, cdmigrate.Migration(v2, v3, m) as migration:
        migration.set_batch_size(batch_size)
        return migration.run(source, destination, policies={"CrearCategoriasMigrationPolicy": policy})


@pytest.fixture
def notas_source(tmp_path):
    path = str(tmp_path / "Notas-v2.sqlite")
    notas.generate_source(path, count=120)
    return path


def same_both_ways(tmp_path, source, policy_class, batch_size=7):
    fast, slow = both_ways(policy_class)
    run_notas(source, str(tmp_path / f"slow-{batch_size}.sqlite"), slow, batch_size)
    run_notas(source, str(tmp_path / f"fast-{batch_size}.sqlite"), fast, batch_size)
    expected = dump(str(tmp_path / f"slow-{batch_size}.sqlite"))
    assert dump(str(tmp_path / f"fast-{batch_size}.sqlite")) == expected
    assert len(expected["ZNOTA"]) == 120
    return expected


class ToDictStyle(cdmigrate.EntityMigrationPolicy):
    """to_dict, create(values=…, source=…), a dict of categories kept across calls."""

    def __init__(self):
        self.categorias = {}

    def create_destination_instances(self, source, mapping, manager):
        values = source.to_dict()
        nombre = values.pop("categoria", None)
        nota = manager.create("Nota", values=values, source=source)
        if nombre:
            categoria = self.categorias.get(nombre)
            if categoria is None:
                categoria = self.categorias[nombre] = manager.create("Categoria", {"nombre": nombre})
            nota.add("categorias", categoria)
        return nota


class FetchStyle(cdmigrate.EntityMigrationPolicy):
    """create, apply_attribute_mappings, associate, fetch_destination by predicate per row."""

    def create_destination_instances(self, source, mapping, manager):
        nota = manager.create("Nota")
        manager.apply_attribute_mappings(source, nota)
        manager.associate(source, nota)
        nombre = source["categoria"]
        if nombre:
            found = manager.fetch_destination("Categoria", "nombre == %@", nombre, limit=1)
            if found:
                categoria = found[0]
            else:
                categoria = manager.create("Categoria")
                categoria["nombre"] = nombre
            nota.add("categorias", categoria)


def test_to_dict_style_gives_the_per_row_destination(tmp_path, notas_source):
    tables = same_both_ways(tmp_path, notas_source, ToDictStyle)
    assert tables["ZCATEGORIA"]


def test_fetch_style_gives_the_per_row_destination_across_batch_sizes(tmp_path, notas_source):
    for size in (1, 7, 5000):
        tables = same_both_ways(tmp_path, notas_source, FetchStyle, batch_size=size)
        names = [row[-1] for row in tables["ZCATEGORIA"]]
        assert len(names) == len(set(names)), "a fetch during a batch missed a Categoria made earlier in it"


def test_a_fetch_during_a_batch_sees_instances_made_earlier_in_it(tmp_path, notas_source):
    seen = []

    class Checking(FetchStyle):
        def create_destination_instances(self, source, mapping, manager):
            super().create_destination_instances(source, mapping, manager)
            nombre = source["categoria"]
            if nombre:
                # Another predicate (not kept in the binding) and a count: both see the batch.
                found = manager.fetch_destination("Categoria", "nombre ==[c] %@", nombre)
                seen.append((len(found), manager.count_destination("Categoria", "nombre == %@", nombre)))
                assert found[0]["nombre"] == nombre

    same_both_ways(tmp_path, notas_source, Checking, batch_size=50)
    assert seen and all(pair == (1, 1) for pair in seen)


def test_reads_of_instances_made_in_the_batch_see_what_was_set(tmp_path, notas_source):
    class Reading(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            nota = manager.create("Nota", values={"contenido": source["contenido"].upper(), "fecha": source["fecha"]})
            nota["etiquetas"] = f"#{source.object_id.primary_key}"
            assert nota["contenido"] == source["contenido"].upper()
            assert nota["etiquetas"] == f"#{source.object_id.primary_key}"
            manager.associate(source, nota)
            made = manager.destination_instances("NotaToNota", [source])
            assert made == [nota] and made[0]["etiquetas"] == nota["etiquetas"]
            assert nota.object_id.entity == "Nota"

    same_both_ways(tmp_path, notas_source, Reading)


def test_associations_and_relationships_are_seen_by_the_later_stages(tmp_path, notas_source):
    counts = []

    class Later(ToDictStyle):
        def end_instance_creation(self, mapping, manager):
            sources = manager.fetch_source("Nota", sort=["contenido"])
            made = manager.destination_instances("NotaToNota", sources)
            counts.append(len(made))
            for source, nota in zip(sources[:20], made[:20]):
                assert nota["contenido"] == source["contenido"]
                names = sorted(c["nombre"] for c in nota["categorias"])
                assert names == ([source["categoria"]] if source["categoria"] else [])

        def create_relationships(self, destination, mapping, manager):
            (source,) = manager.source_instances("NotaToNota", [destination])
            assert source["contenido"] == destination["contenido"]

    fast, slow = both_ways(Later)
    report_slow = run_notas(notas_source, str(tmp_path / "slow.sqlite"), slow)
    report_fast = run_notas(notas_source, str(tmp_path / "fast.sqlite"), fast)
    assert counts == [120, 120]
    assert dump(str(tmp_path / "fast.sqlite")) == dump(str(tmp_path / "slow.sqlite"))
    assert [(m.entity_mapping, m.source_instances, m.associations) for m in report_fast.mappings] == [
        (m.entity_mapping, m.source_instances, m.associations) for m in report_slow.mappings
    ]


def test_an_exception_in_the_hook_stops_the_run_the_same_way(tmp_path, notas_source):
    class Failing(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            manager.create("Nota", values={"contenido": "x", "fecha": dt.datetime(2020, 1, 1)}, source=source)
            if source.object_id.primary_key == 30:
                raise ValueError(
                    f"cannot migrate {source.object_id.entity} {source.object_id.primary_key}: {source['contenido']!r}"
                )

    messages = []
    for cls in both_ways(Failing):
        destination = str(tmp_path / f"{cls.__name__}.sqlite")
        with pytest.raises(ValueError) as caught:
            run_notas(notas_source, destination, cls)
        messages.append(str(caught.value))
        assert not os.path.exists(destination)
    assert messages[0] == messages[1] and messages[0].startswith("cannot migrate Nota 30: 'Nota 30:")


def test_a_value_validation_refuses_gives_the_same_error(tmp_path, kitchen_store, kitchen_models):
    v1, v2 = kitchen_models

    class Overflowing(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            values = source.to_dict()
            if source["i64"] == 17:
                values["i16"] = 70000  # beyond a 16-bit integer: stage 3 refuses it
            manager.create("Item", values=values, source=source)

    errors = []
    for cls in both_ways(Overflowing):
        with cdmigrate.MappingModel.from_json(copy_mapping(item_policy="P")) as m, cdmigrate.Migration(
            v1, v2, m
        ) as migration:
            migration.set_batch_size(8)
            with pytest.raises(cdmigrate.MigrationError) as caught:
                migration.run(kitchen_store, str(tmp_path / f"{cls.__name__}.sqlite"), policies={"P": cls})
        errors.append(caught.value)
    assert type(errors[0]) is type(errors[1])

    # The message names the destination instance by its URI, whose store UUID differs per run.
    def strip(e):
        return re.sub(r"//[0-9A-F-]+/", "//STORE/", str(e))

    assert strip(errors[0]) == strip(errors[1]) and "Item.i16" in str(errors[0])


def test_every_attribute_type_and_to_one_relationships_match(tmp_path, kitchen_store, kitchen_models):
    v1, v2 = kitchen_models

    class Copying(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            item = manager.create("Item")
            manager.apply_attribute_mappings(source, item)
            manager.associate(source, item)
            if source["i64"] % 5 == 0:
                values = source.to_dict()
                values["str"] = (values["str"] or "") + " (copia)"
                copy = manager.create("Item", values=values)
                copy["flag"] = not bool(values["flag"])
                item["box"] = None
                box = manager.create("Box", {"label": f"for {source['i64']}"})
                copy["box"] = box

    dumps = dumps_both_ways(Copying, v1, v2, copy_mapping(item_policy="P"), kitchen_store, tmp_path, batch_size=4)
    assert dumps[0] == dumps[1]
    assert len(dumps[0]["ZITEM"]) == 36 and len(dumps[0]["ZBOX"]) == 9


def test_instances_kept_across_batches_stay_usable_in_later_hooks(tmp_path, notas_source):
    class Keeping(ToDictStyle):
        def end_instance_creation(self, mapping, manager):
            for nombre, categoria in self.categorias.items():
                assert categoria["nombre"] == nombre
                assert categoria == manager.fetch_destination("Categoria", "nombre == %@", nombre)[0]
                categoria["nombre"] = nombre.upper()

    tables = same_both_ways(tmp_path, notas_source, Keeping)
    assert all(row[-1] == row[-1].upper() for row in tables["ZCATEGORIA"])


def test_a_policy_can_keep_the_engines_per_row_calls(tmp_path, notas_source):
    calls = []

    class PerRow(FetchStyle):
        row_batches = False

        def create_destination_instances(self, source, mapping, manager):
            calls.append(type(source))
            super().create_destination_instances(source, mapping, manager)

    run_notas(notas_source, str(tmp_path / "d.sqlite"), PerRow)
    assert calls and set(calls) == {cdmigrate.Instance}


ANIMALS_V1 = {
    "name": "Zoo",
    "versionIdentifier": "v1",
    "entities": [
        {"name": "Animal", "attributes": [{"name": "name", "type": "string", "optional": True}]},
        {"name": "Bird", "parent": "Animal", "attributes": [{"name": "wingspan", "type": "double", "optional": True}]},
    ],
}
ANIMALS_V2 = {
    "name": "Zoo",
    "versionIdentifier": "v2",
    "entities": [
        {
            "name": "Pet",
            "attributes": [
                {"name": "name", "type": "string", "optional": True},
                {"name": "kind", "type": "string", "optional": True},
            ],
        }
    ],
}
ANIMALS_MAPPING = {
    "name": "ZooV1ToV2",
    "entityMappings": [
        {
            "name": "AnimalToPet",
            "type": "custom",
            "sourceEntity": "Animal",
            "destinationEntity": "Pet",
            "policy": "P",
            "sourceExpression": 'FETCH(FUNCTION($manager, "fetchRequestForSourceEntityNamed:predicateString:", '
            '"Animal", "TRUEPREDICATE"), $manager.sourceContext, NO)',
            "attributeMappings": [{"name": "name", "valueExpression": "$source.name"}],
        }
    ],
}


def test_a_source_entity_with_subentities_gives_every_row_its_own_entity(tmp_path):
    import json as _json

    with cdmigrate.Model.from_json(_json.dumps(ANIMALS_V1)) as v1, cdmigrate.Model.from_json(
        _json.dumps(ANIMALS_V2)
    ) as v2:
        source = str(tmp_path / "zoo.sqlite")
        with cdmigrate.Store.create(v1, source) as store:
            for i in range(9):
                store.insert("Bird" if i % 3 == 0 else "Animal", name=f"animal {i}")
            store.save()

        class Kinds(cdmigrate.EntityMigrationPolicy):
            def create_destination_instances(self, source, mapping, manager):
                values = {"name": source["name"], "kind": source.entity_name}
                if source.entity_name == "Bird":
                    values["kind"] += f" {source['wingspan']}"
                manager.create("Pet", values=values, source=source)

        dumps = dumps_both_ways(Kinds, v1, v2, _json.dumps(ANIMALS_MAPPING), source, tmp_path, batch_size=4)
        assert dumps[0] == dumps[1]
        kinds = sorted(row[-2] for row in dumps[0]["ZPET"])  # (Z_PK, Z_ENT, Z_OPT, ZKIND, ZNAME)
        assert kinds.count("Animal") == 6 and kinds.count("Bird None") == 3


def test_a_released_source_and_an_instance_kept_into_stage_two(tmp_path, notas_source):
    kept = {}

    class Keeping(cdmigrate.EntityMigrationPolicy):
        def begin_entity_mapping(self, mapping, manager):
            kept.clear()  # each run keeps its own

        def create_destination_instances(self, source, mapping, manager):
            nota = manager.create(
                "Nota", values={"contenido": source["contenido"], "fecha": source["fecha"]}, source=source
            )
            kept.setdefault("first", (source, nota))
            if source.object_id.primary_key == 3:
                source.release()
                with pytest.raises(cdmigrate.MisuseError, match="no longer valid"):
                    source["contenido"]

        def end_instance_creation(self, mapping, manager):
            source, nota = kept["first"]
            assert nota["contenido"] == source["contenido"]
            assert manager.destination_instances("NotaToNota", [source]) == [nota]
            nota["etiquetas"] = "primera"

    tables = same_both_ways(tmp_path, notas_source, Keeping)
    assert [row for row in tables["ZNOTA"] if row[-1] == "primera"]


def test_every_attribute_type_given_back_by_to_dict_matches(tmp_path, kitchen_store, kitchen_models):
    v1, v2 = kitchen_models

    class Copying(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            manager.create("Item", values=source.to_dict(), source=source)

    dumps = dumps_both_ways(Copying, v1, v2, copy_mapping(item_policy="P"), kitchen_store, tmp_path, batch_size=7)
    assert dumps[0] == dumps[1]
    assert len(dumps[0]["ZITEM"]) == 30


def written_one_by_one(monkeypatch):
    """The entities whose new instances a batch writes as JSON rows (not by the batch's default)."""
    from cdmigrate import _row_batches as row_batches

    entities = []
    create_many = row_batches._create_many

    def recording(ctx, entity, values):
        entities.append(entity)
        return create_many(ctx, entity, values)

    monkeypatch.setattr(row_batches, "_create_many", recording)
    return entities


@pytest.mark.parametrize("style", [ToDictStyle, FetchStyle], ids=["to_dict", "fetch"])
def test_both_styles_write_their_notes_by_the_batch_default(tmp_path, notas_source, monkeypatch, style):
    # Reading a column the first time, fetching and creating during a batch must not write what
    # the batch holds early: the notes still go by the mapping's default, as one statement.
    entities = written_one_by_one(monkeypatch)
    same_both_ways(tmp_path, notas_source, style, batch_size=40)
    assert "Categoria" in entities and "Nota" not in entities


def test_copies_applied_and_not_yet_read_are_filled_when_read_set_or_fetched(tmp_path, notas_source):
    class Mixed(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            key = source.object_id.primary_key
            if key % 11 == 0:
                values = source.to_dict()
                values.pop("categoria")
                values["contenido"] = values["contenido"] + " (otra)"
                nota = manager.create("Nota", values=values)  # not the mappings' copy: written as JSON
            else:
                nota = manager.create("Nota")
                manager.apply_attribute_mappings(source, nota)  # kept as "row i's copy" until read
            manager.associate(source, nota)
            if key % 3 == 0:
                assert nota["contenido"].startswith(source["contenido"]) and nota["fecha"] == source["fecha"]
            if key % 4 == 0:
                nota["etiquetas"] = f"#{key}"  # set on a copy not read yet
            if key % 5 == 0:
                found = manager.fetch_destination("Nota", "contenido == %@", nota["contenido"])
                assert found == [nota] and found[0]["etiquetas"] == (f"#{key}" if key % 4 == 0 else source["etiquetas"])
            if key % 7 == 0:
                manager.apply_attribute_mappings(source, nota)  # applied again over a value set

    tables = same_both_ways(tmp_path, notas_source, Mixed, batch_size=9)
    assert any(row[-1] and row[-1].startswith("#") for row in tables["ZNOTA"])


def test_relationship_runs_switching_and_several_targets_match(tmp_path, notas_source):
    class Linking(cdmigrate.EntityMigrationPolicy):
        def __init__(self):
            self.categorias = {}

        def create_destination_instances(self, source, mapping, manager):
            nota = manager.create(
                "Nota", values={"contenido": source["contenido"], "fecha": source["fecha"]}, source=source
            )
            nombre = source["categoria"] or "ninguna"
            categoria = self.categorias.get(nombre)
            if categoria is None:
                categoria = self.categorias[nombre] = manager.create("Categoria", {"nombre": nombre})
            otra = manager.create("Categoria", {"nombre": f"{nombre} {source.object_id.primary_key}"})
            if source.object_id.primary_key % 2:
                nota.add("categorias", categoria, otra)  # two targets in one call
            else:
                categoria.add("notas", nota)  # the inverse: another run of relationships
                nota.add("categorias", otra)

    tables = same_both_ways(tmp_path, notas_source, Linking, batch_size=16)
    assert len(tables["ZCATEGORIA"]) > 120


def test_the_cyclic_collector_is_paused_for_a_batch_and_resumed_after_it_even_on_failure(tmp_path, notas_source):
    import gc

    seen = []

    class Watching(ToDictStyle):
        def create_destination_instances(self, source, mapping, manager):
            seen.append(gc.isenabled())
            if source.object_id.primary_key == 50:
                raise RuntimeError("stop")
            return super().create_destination_instances(source, mapping, manager)

    assert gc.isenabled()
    with pytest.raises(RuntimeError, match="stop"):
        run_notas(notas_source, str(tmp_path / "out.sqlite"), Watching)
    assert gc.isenabled() and seen and not any(seen)
    gc.disable()
    try:  # a host that keeps the collector off keeps it off
        run_notas(notas_source, str(tmp_path / "ok.sqlite"), ToDictStyle)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_whole_seconds_check_agrees_with_the_value_by_value_definition():
    from cdmigrate._row_batches import _whole

    def one(seconds):
        return seconds is None or (
            (type(seconds) is int or (type(seconds) is float and seconds.is_integer()))
            and -63_113_904_000 < seconds < 252_423_993_600
        )

    columns = [
        [],
        [None, None],
        [1, 2.0, None, -5],
        [0.5],
        [1, True],
        [float("nan")],
        [float("inf")],
        [-63_113_904_000],
        [252_423_993_599.0, -63_113_903_999],
        [252_423_993_600],
        ["1"],
    ]
    for column in columns:
        assert _whole(column) == all(map(one, column)), column


def test_a_date_column_out_of_datetimes_range_converts_value_by_value():
    from cdmigrate.batch import _dates

    column = [0, None, 86_400.5, 1e20, float("nan")]
    assert _dates(column)[:3] == [
        cdmigrate.date_from_reference_seconds(0),
        None,
        cdmigrate.date_from_reference_seconds(86_400.5),
    ]
    converted = _dates(column)
    assert [type(v) for v in converted[3:]] == [type(cdmigrate.date_from_reference_seconds(1e20))] * 2
    assert _dates([1.0, 2.0]) == [cdmigrate.date_from_reference_seconds(v) for v in (1.0, 2.0)]


def test_sources_and_new_instances_of_a_batch_are_instances_without_a_finalizer(tmp_path, notas_source):
    """A batch's sources and the instances its hook makes are Instances to every caller, and
    hold no library handle of their own: freeing one runs no __del__ (an Instance releases its
    handle in one)."""
    seen = []

    class Checking(ToDictStyle):
        def create_destination_instances(self, source, mapping, manager):
            nota = super().create_destination_instances(source, mapping, manager)
            seen.append((source, nota))
            return nota

    run_notas(notas_source, str(tmp_path / "d.sqlite"), Checking)
    assert len(seen) == 120
    assert hasattr(cdmigrate.Instance, "__del__")
    for source, nota in seen[:3]:
        for made in (source, nota):
            assert isinstance(made, cdmigrate.Instance) and issubclass(type(made), cdmigrate.Instance)
            assert not hasattr(type(made), "__del__")


class OtherKeys(ToDictStyle):
    """As many values as the mapping's copies, but not theirs: a key of a copy replaced by the
    to-many relationship (row % 3 == 1), or the note made without its source and associated
    afterwards (row % 3 == 2)."""

    def create_destination_instances(self, source, mapping, manager):
        key = source.object_id.primary_key
        if key % 3 == 0:
            return super().create_destination_instances(source, mapping, manager)
        values = source.to_dict()
        nombre = values.pop("categoria", None) or "ninguna"
        categoria = self.categorias.get(nombre)
        if categoria is None:
            categoria = self.categorias[nombre] = manager.create("Categoria", {"nombre": nombre})
        if key % 3 == 1:
            values.pop("etiquetas")
            values["categorias"] = [categoria]
            return manager.create("Nota", values=values, source=source)
        nota = manager.create("Nota", values=values)
        manager.associate(source, nota)
        nota.add("categorias", categoria)
        return nota


def test_values_other_than_the_rows_copy_are_not_written_by_the_batch_default(tmp_path, notas_source, monkeypatch):
    entities = written_one_by_one(monkeypatch)
    tables = same_both_ways(tmp_path, notas_source, OtherKeys, batch_size=10)
    assert "Nota" in entities  # the batches' notes go one by one, as JSON
    assert sum(1 for row in tables["ZNOTA"] if row[-1] is None) >= 40  # etiquetas left out on every third


def test_fetches_among_the_batchs_own_instances_follow_values_set_and_instances_made(tmp_path, notas_source):
    seen: dict = {}

    class Renaming(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            nota = manager.create("Nota")
            manager.apply_attribute_mappings(source, nota)
            manager.associate(source, nota)
            key = source.object_id.primary_key
            nombre = source["categoria"] or "ninguna"
            found = manager.fetch_destination("Categoria", "nombre == %@", nombre)
            # Every fifth row a duplicate: several instances match.
            categoria = manager.create("Categoria", {"nombre": nombre}) if key % 5 == 0 or not found else found[-1]
            if key % 7 == 0:
                categoria["nombre"] = nombre + " renombrada"  # no longer found by its old name
            if key % 3 == 0:
                # Another set: made without a name, then named (only then found by it).
                otra = manager.create("Categoria")
                otra["nombre"] = f"otra {key % 4}"
            sin = manager.create("Categoria") if key % 23 == 0 else None  # no name: the library's to know
            nota.add("categorias", categoria)
            record = [
                len(manager.fetch_destination("Categoria", "nombre == %@", name))
                for name in (nombre, nombre + " renombrada", f"otra {key % 4}")
            ]
            record.append(len(manager.fetch_destination("Categoria", "nombre == %@", nombre, limit=2)))
            record.append(manager.fetch_destination("Categoria", "nombre == %@", nombre, limit=1) == found[:1])
            seen.setdefault(type(self).row_batches, []).append(record)
            if sin is not None:
                sin["nombre"] = "sin nombre"

    same_both_ways(tmp_path, notas_source, Renaming, batch_size=30)
    assert seen[True] == seen[False] and len(seen[True]) == 120
    assert any(record[0] > 2 for record in seen[True]) and any(record[1] for record in seen[True])


def test_the_managers_methods_answered_by_the_batch_keep_their_results_errors_and_fallbacks(tmp_path, notas_source):
    managers = []
    outcomes: dict = {}

    class Calling(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            if not managers:
                managers.append(manager)
            nota = manager.create("Nota")
            record = [manager.apply_attribute_mappings(source, nota), manager.associate(source, nota)]
            for wrong in (manager.associate, manager.apply_attribute_mappings):
                try:
                    wrong(nota, source)  # the wrong way round
                except TypeError as error:
                    record.append(type(error).__name__)
            key = source.object_id.primary_key
            if key % 10 == 0:
                # A source instance found by the library: the manager's own path.
                found = manager.fetch_source("Nota", "contenido == %@", source["contenido"])
                record.append(len(found))
                manager.apply_attribute_mappings(found[0], nota)
                record.append(nota["contenido"] == source["contenido"])
            # Fetches the batch cannot answer itself: the library's, after writing what it holds.
            record.append(len(manager.fetch_destination("Nota", "contenido BEGINSWITH %@", source["contenido"])))
            record.append(
                len(manager.fetch_destination("Categoria", "nombre == %@", source["categoria"] or "", sort=["nombre"]))
            )
            outcomes.setdefault(type(self).row_batches, []).append(record)

    same_both_ways(tmp_path, notas_source, Calling, batch_size=25)
    assert outcomes[True] == outcomes[False] and len(outcomes[True]) == 120
    assert outcomes[True][0][:4] == [None, None, "TypeError", "TypeError"]
    stand_ins = ("create", "associate", "apply_attribute_mappings", "fetch_destination")
    assert not [name for name in stand_ins if name in vars(managers[0])]


def test_whole_second_dates_made_in_c_loops_match_the_value_by_value_conversion():
    from cdmigrate.batch import _dates, _whole_dates

    inside = [
        [0.0, 1.0, -1.0],
        [-63_113_904_000.0, 252_423_993_599.0],  # datetime's first and last whole seconds
        [441_763_200.0 + i for i in range(50)],
    ]
    for column in inside:
        made = _whole_dates(column)
        assert made == _dates(column) and all(d.tzinfo is dt.timezone.utc for d in made), column
    outside = [[252_423_993_600.0], [0.0, -63_113_904_001.0], [1e20, 0.0], [0.5], [float("nan")], [float("inf")]]
    for column in outside:
        assert _whole_dates(column) is None, column


def test_a_fetch_after_a_stored_instance_is_changed_through_the_library_sees_the_change(tmp_path, notas_source):
    seen: dict = {}

    class Renaming(FetchStyle):
        def create_destination_instances(self, source, mapping, manager):
            key = source.object_id.primary_key
            nombre = source["categoria"]
            if nombre and key % 10 == 0:
                manager.count_destination("Categoria")  # writes what the batch holds
                before = manager.fetch_destination("Categoria", "nombre == %@", nombre)
                for categoria in before:
                    categoria["nombre"] = f"{nombre} ({key})"  # a stored instance: through the library
                after = manager.fetch_destination("Categoria", "nombre == %@", nombre)
                seen.setdefault(type(self).row_batches, []).append((len(before), len(after)))
            super().create_destination_instances(source, mapping, manager)

    same_both_ways(tmp_path, notas_source, Renaming, batch_size=40)
    assert seen[True] == seen[False] and any(before for before, _ in seen[True])
    assert all(after == 0 for _, after in seen[True])


def copy_of_the_row(source, manager):
    """The note as the attribute mappings would make it, by to_dict and create (the batch default's)."""
    values = source.to_dict()
    values.pop("categoria", None)
    return manager.create("Nota", values=values, source=source)


class SetsAValue(cdmigrate.EntityMigrationPolicy):
    def create_destination_instances(self, source, mapping, manager):
        nota = copy_of_the_row(source, manager)
        if source.object_id.primary_key % 3 == 0:
            nota["etiquetas"] = "cambiada"


class MakesAnotherNoteWithoutValues(cdmigrate.EntityMigrationPolicy):
    def __init__(self):
        self.otras = []

    def create_destination_instances(self, source, mapping, manager):
        copy_of_the_row(source, manager)
        if source.object_id.primary_key % 4 == 0:
            # A fetch of notes first (kept in the binding): the entity is known to the batch then.
            assert manager.fetch_destination("Nota", "contenido == %@", "ninguna") == []
            self.otras.append(manager.create("Nota"))

    def end_instance_creation(self, mapping, manager):
        for otra in self.otras:  # their required values, set once every batch is written
            otra["contenido"], otra["fecha"] = "otra", dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)


class MakesAnotherNoteWithValues(cdmigrate.EntityMigrationPolicy):
    def create_destination_instances(self, source, mapping, manager):
        copy_of_the_row(source, manager)
        if source.object_id.primary_key % 4 == 0:
            manager.create("Nota", {"contenido": "otra", "fecha": dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc)})


class AppliesAnotherRowsMappings(cdmigrate.EntityMigrationPolicy):
    def __init__(self):
        self.previous = None

    def create_destination_instances(self, source, mapping, manager):
        nota = copy_of_the_row(source, manager)
        if self.previous is not None and source.object_id.primary_key % 5 == 0:
            manager.apply_attribute_mappings(self.previous, nota)  # the previous row's values
        self.previous = source


class CopiesSomeRowsTwiceAndOthersNot(cdmigrate.EntityMigrationPolicy):
    def create_destination_instances(self, source, mapping, manager):
        if source.object_id.primary_key % 2 == 0:  # as many notes as rows, not one a row
            copy_of_the_row(source, manager)
            copy_of_the_row(source, manager)


class AssociatesTwice(cdmigrate.EntityMigrationPolicy):
    def create_destination_instances(self, source, mapping, manager):
        nota = copy_of_the_row(source, manager)
        if source.object_id.primary_key % 6 == 0:
            manager.associate(source, nota)


@pytest.mark.parametrize(
    "style",
    [
        SetsAValue,
        MakesAnotherNoteWithoutValues,
        MakesAnotherNoteWithValues,
        AppliesAnotherRowsMappings,
        CopiesSomeRowsTwiceAndOthersNot,
        AssociatesTwice,
    ],
)
def test_a_batch_whose_rows_did_more_than_copy_themselves_is_not_written_by_the_default(tmp_path, style):
    source = str(tmp_path / "Notas-v2.sqlite")
    notas.generate_source(source, count=60)
    fast, slow = both_ways(style)
    for size in (7, 60):
        run_notas(source, str(tmp_path / f"slow-{size}.sqlite"), slow, size)
        run_notas(source, str(tmp_path / f"fast-{size}.sqlite"), fast, size)
        assert dump(str(tmp_path / f"fast-{size}.sqlite")) == dump(str(tmp_path / f"slow-{size}.sqlite"))
