"""Migrations: runs, reports, policies (every hook, Core Data's order, per-mapping objects),
instances as mappings, the manager, host functions, progress and cancellation, and every way a
callback can fail — each failure leaves the source byte-identical and nothing at the destination."""

from __future__ import annotations

import datetime as dt
import decimal
import gc
import os
import threading
import traceback
import uuid
import weakref
from typing import ClassVar

import pytest
from conftest import ITEM_VALUES, copy_mapping, item_to_item, leftovers, rows, sha256

import cdmigrate
from cdmigrate import _run


def migration(kitchen_models, **kwargs):
    v1, v2 = kitchen_models
    mapping = cdmigrate.MappingModel.from_json(
        copy_mapping(item_policy=kwargs.pop("item_policy", None), box_policy=kwargs.pop("box_policy", None))
    )
    m = cdmigrate.Migration(v1, v2, mapping, **kwargs)
    mapping.close()  # the migration keeps what it needs
    return m


def test_declarative_run_copies_every_row(tmp_path, kitchen_models, kitchen_store):
    destination = str(tmp_path / "out.sqlite")
    with migration(kitchen_models) as m:
        report = m.run(kitchen_store, destination)
        assert m.report is report
    assert report.destination_counts == {"Box": 3, "Item": 30}
    assert report.untaken == {}
    assert [r.entity_mapping for r in report.mappings] == ["BoxToBox", "ItemToItem"]
    assert rows(destination, "SELECT COUNT(*) FROM ZITEM WHERE ZBOX IS NOT NULL") == [(20,)]
    source_rows = rows(
        kitchen_store,
        "SELECT ZI16, ZI32, ZI64, ZDEC, ZDBL, ZFLT, ZSTR, ZFLAG, ZWHEN, ZBLOB, ZIDENT, ZLINK, ZTHING "
        "FROM ZITEM ORDER BY ZI64",
    )
    destination_rows = rows(
        destination,
        "SELECT ZI16, ZI32, ZI64, ZDEC, ZDBL, ZFLT, ZSTR, ZFLAG, ZWHEN, ZBLOB, ZIDENT, ZLINK, ZTHING "
        "FROM ZITEM ORDER BY ZI64",
    )
    assert source_rows == destination_rows and len(source_rows) == 30


def test_migration_argument_errors(kitchen_models):
    v1, v2 = kitchen_models
    with pytest.raises(TypeError):
        cdmigrate.Migration(v1, "v2", [])
    with pytest.raises(TypeError):
        cdmigrate.Migration(v1, v2, ["mapping"])
    with pytest.raises(cdmigrate.MissingMappingModelError):
        cdmigrate.Migration(v1, v2, [])
    with migration(kitchen_models) as m:
        with pytest.raises(TypeError):
            m.register_policy("X", object())
        with pytest.raises(TypeError):
            m.register_policy("X", int)
        with pytest.raises(TypeError):
            m.register_policy("X", lambda: 42)
        with pytest.raises(TypeError):
            m.register_function("C", "s:", 42)
        with pytest.raises(TypeError):
            m.run("a", "b", functions={"no-dot": len})
        with pytest.raises(TypeError):
            m.set_progress(42)
        with pytest.raises(cdmigrate.InvalidArgumentError):
            m.set_progress(None, interval=0)
    with pytest.raises(cdmigrate.MisuseError):
        m.run("a", "b")
    assert repr(m) == "<Migration closed>"


def test_destination_that_exists_or_is_the_source(tmp_path, kitchen_models, kitchen_store):
    before = sha256(kitchen_store)
    existing = tmp_path / "exists.sqlite"
    existing.write_bytes(b"keep me")
    with migration(kitchen_models) as m:
        with pytest.raises(cdmigrate.DestinationStoreError) as error:
            m.run(kitchen_store, existing)
        assert error.value.code == 134160 and "exists.sqlite" in str(error.value)
        with pytest.raises(cdmigrate.DestinationStoreError):
            m.run(kitchen_store, kitchen_store)
        with pytest.raises(cdmigrate.MigrationError) as missing:
            m.run(tmp_path / "missing.sqlite", tmp_path / "x.sqlite")
        assert "missing.sqlite" in str(missing.value)
    assert existing.read_bytes() == b"keep me"
    assert sha256(kitchen_store) == before


def test_wrong_source_version_is_refused(tmp_path, kitchen_models, kitchen_store):
    _v1, _v2 = kitchen_models
    destination = str(tmp_path / "v2.sqlite")
    with migration(kitchen_models) as m:
        m.run(kitchen_store, destination)
        with pytest.raises(cdmigrate.MigrationError) as error:
            m.run(destination, tmp_path / "again.sqlite")  # a v2 store is not a v1 store
    assert error.value.code in (134100, 134130)
    assert not os.path.exists(tmp_path / "again.sqlite")


def test_run_in_place_replaces_the_store(tmp_path, kitchen_models, kitchen_store):
    with migration(kitchen_models) as m:
        report = m.run_in_place(kitchen_store)
    assert report.destination_counts["Item"] == 30
    assert rows(kitchen_store, "SELECT COUNT(*) FROM ZBOX") == [(3,)]
    assert "ZNOTE" in [r[1] for r in rows(kitchen_store, "PRAGMA table_info(ZBOX)")]


class Recorder(cdmigrate.EntityMigrationPolicy):
    calls: ClassVar[list] = []

    def begin_entity_mapping(self, mapping, manager):
        Recorder.calls.append(("begin", mapping.name, id(self)))

    def create_destination_instances(self, source, mapping, manager):
        Recorder.calls.append(("create", mapping.name, id(self)))
        return super().create_destination_instances(source, mapping, manager)

    def end_instance_creation(self, mapping, manager):
        Recorder.calls.append(("end_instance_creation", mapping.name, id(self)))

    def create_relationships(self, destination, mapping, manager):
        Recorder.calls.append(("relationships", mapping.name, id(self)))

    def end_relationship_creation(self, mapping, manager):
        Recorder.calls.append(("end_relationship_creation", mapping.name, id(self)))

    def perform_custom_validation(self, mapping, manager):
        Recorder.calls.append(("validate", mapping.name, id(self)))

    def end_entity_mapping(self, mapping, manager):
        Recorder.calls.append(("end", mapping.name, id(self)))


def test_every_hook_in_core_datas_order_one_policy_object_per_mapping(tmp_path, kitchen_models, kitchen_store):
    Recorder.calls = []
    with migration(kitchen_models, item_policy="Recorder", box_policy="Recorder") as m:
        m.run(kitchen_store, tmp_path / "out.sqlite", policies={"Recorder": Recorder})
    kinds = [(c[0], c[1]) for c in Recorder.calls]
    compact = []
    for k in kinds:
        if not compact or compact[-1] != k:
            compact.append(k)
    assert compact == [
        ("begin", "BoxToBox"),
        ("create", "BoxToBox"),
        ("end_instance_creation", "BoxToBox"),
        ("begin", "ItemToItem"),
        ("create", "ItemToItem"),
        ("end_instance_creation", "ItemToItem"),
        ("relationships", "BoxToBox"),
        ("end_relationship_creation", "BoxToBox"),
        ("relationships", "ItemToItem"),
        ("end_relationship_creation", "ItemToItem"),
        ("validate", "BoxToBox"),
        ("end", "BoxToBox"),
        ("validate", "ItemToItem"),
        ("end", "ItemToItem"),
    ]
    assert kinds.count(("create", "ItemToItem")) == 30 and kinds.count(("relationships", "ItemToItem")) == 30
    objects = {(c[1], c[2]) for c in Recorder.calls}
    assert len({o for _, o in objects}) == 2  # one object per entity mapping, through all stages
    # create_relationships was overridden without calling the default: no relationships were made.
    assert rows(str(tmp_path / "out.sqlite"), "SELECT COUNT(*) FROM ZITEM WHERE ZBOX IS NOT NULL") == [(0,)]


def test_a_shared_policy_object_and_a_factory(tmp_path, kitchen_models, kitchen_store):
    made = []

    class Counting(cdmigrate.EntityMigrationPolicy):
        def __init__(self):
            self.count = 0
            made.append(self)

        def create_destination_instances(self, source, mapping, manager):
            self.count += 1
            return super().create_destination_instances(source, mapping, manager)

    shared = Counting()
    with migration(kitchen_models, item_policy="P", box_policy="P") as m:
        m.run(kitchen_store, tmp_path / "a.sqlite", policies={"P": shared})
        assert shared.count == 33 and len(made) == 1
        m.run(kitchen_store, tmp_path / "b.sqlite", policies={"P": lambda: Counting()})
    assert sorted(p.count for p in made[1:]) == [3, 30]


def test_instances_read_and_write_every_type(tmp_path, kitchen_models, kitchen_store):
    seen = {}

    class Inspect(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            if source["i64"] == 4:
                seen["values"] = dict(source)
                seen["to_dict"] = source.to_dict()
                seen["keys"] = list(source)
                seen["len"] = len(source)
                seen["box"] = source["box"]["label"]
                seen["box.label"] = source.get("box.label")
                seen["items of box"] = len(source["box.items"])
                seen["missing"] = source.get("missing", "default")
                seen["contains"] = ("str" in source, "box" in source, "missing" in source, 3 in source)
                seen["subset"] = source.to_dict(["str", "box.label"])
                seen["entity"] = source.entity_name
                seen["equal"] = source == manager.source_instances("ItemToItem", [])[:0] or source == source
                with pytest.raises(cdmigrate.NotFoundError) as error:
                    source["missing"]
                seen["error"] = str(error.value)
            if source["i64"] == 29:
                seen["nil"] = (source["str"], source.get("str"))
            destination = super().create_destination_instances(source, mapping, manager)
            if source["i64"] == 5:
                destination["str"] = "changed"
                destination["when"] = dt.date(2021, 2, 3)
                destination["dec"] = 7
                destination["dbl"] = 2
                destination["ident"] = uuid.UUID(int=99)
                destination["blob"] = bytearray(b"ba")
                destination["flag"] = False
                destination["i16"] = None
                destination["i32"] = None
                skipped = destination.set_values({"flt": 0.5, "unknown": 1, "link": "x:y"})
                seen["skipped"] = skipped
                with pytest.raises(KeyError):
                    destination.set_values({"unknown": 1}, skip_unknown=False)
                with pytest.raises(cdmigrate.MismatchError) as error:
                    destination["i64"] = "text"
                seen["mismatch"] = str(error.value)
                with pytest.raises(cdmigrate.MismatchError):
                    destination["str"] = object()
                with pytest.raises(OverflowError):
                    destination["i64"] = 2**70
                with pytest.raises(TypeError):
                    destination[3]
            return destination

    destination = str(tmp_path / "out.sqlite")
    with migration(kitchen_models, item_policy="Inspect") as m:
        m.run(kitchen_store, destination, policies={"Inspect": Inspect})
    values = seen["values"]
    for key, expected in ITEM_VALUES.items():
        if key != "i64":
            assert values[key] == expected, key
    assert values["i64"] == 4 and values["dec"] == decimal.Decimal("16.5")
    assert values["when"] == dt.datetime(2020, 1, 5, 0, 0, 0, 250000, tzinfo=dt.timezone.utc)
    assert values["ident"] == uuid.UUID(int=5) and values["thing"] == b"\x04"
    assert seen["to_dict"] == values
    assert seen["keys"][:3] == ["i16", "i32", "i64"] and seen["len"] == 13
    assert seen["box"] == "box 1" and seen["box.label"] == "box 1" and seen["items of box"] == 10
    assert seen["missing"] == "default" and seen["contains"] == (True, True, False, False)
    assert seen["subset"] == {"str": "héllo ✓", "box.label": "box 1"}
    assert seen["entity"] == "Item" and seen["equal"]
    assert "missing" in seen["error"] and "Item" in seen["error"]
    assert seen["nil"] == (None, None)
    assert seen["skipped"] == ["unknown"]
    assert "i64" in seen["mismatch"]
    row = rows(
        destination,
        "SELECT ZSTR, ZWHEN, ZDEC, ZDBL, ZFLAG, ZI16, ZI32, ZFLT, ZLINK, ZBLOB, ZIDENT FROM ZITEM WHERE ZI64 = 5",
    )[0]
    assert row[0] == "changed"
    assert row[1] == cdmigrate.reference_seconds(dt.datetime(2021, 2, 3))
    assert float(row[2]) == 7 and row[3] == 2.0 and row[4] == 0 and row[5] is None and row[6] is None
    assert row[7] == 0.5 and row[8] == "x:y" and row[9] == b"ba" and row[10] == uuid.UUID(int=99).bytes


def test_kept_instances_stay_valid_until_released_or_the_run_ends(tmp_path, kitchen_models, kitchen_store):
    kept = []

    class Keep(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            kept.append(source)
            destination = super().create_destination_instances(source, mapping, manager)
            kept.append(destination)
            if len(kept) == 4:
                # The previous call's instances were kept (referenced), so they still work.
                assert kept[0]["str"] == kept[1]["str"]
                assert manager.source_instances("ItemToItem", kept[1]) == [kept[0]]
                source.release()
                with pytest.raises(cdmigrate.MisuseError, match="no longer valid"):
                    source["str"]
                with pytest.raises(cdmigrate.MisuseError):
                    manager.associate(source, destination)
            return destination

    with migration(kitchen_models, item_policy="Keep") as m:
        m.run(kitchen_store, tmp_path / "out.sqlite", policies={"Keep": Keep})
    assert len(kept) == 60
    # after the run every handle is stale
    for instance in kept:
        with pytest.raises(cdmigrate.MisuseError):
            instance["str"]
        with pytest.raises(cdmigrate.MisuseError):
            instance["str"] = "x"
        with pytest.raises(cdmigrate.MisuseError):
            _ = instance.uri
        instance.release()  # harmless


def test_manager_services(tmp_path, kitchen_models, kitchen_store):
    seen = {}

    class Services(cdmigrate.EntityMigrationPolicy):
        def begin_entity_mapping(self, mapping, manager):
            seen.setdefault("mappings", []).append(
                (
                    mapping.name,
                    mapping.source_entity_name,
                    mapping.destination_entity_name,
                    mapping.pass_index,
                    manager.current_pass,
                    manager.current_entity_mapping.name,
                )
            )
            manager.user_info.setdefault("begun", []).append(mapping.name)
            manager.user_info["object"] = self

        def create_destination_instances(self, source, mapping, manager):
            destination = super().create_destination_instances(source, mapping, manager)
            if mapping.name == "ItemToItem" and source["i64"] == 1:
                box = source["box"]
                made = manager.destination_instances("BoxToBox", [box])
                seen["made"] = (len(made), made[0]["label"], made[0].entity_name)
                seen["single"] = manager.destination_instances("BoxToBox", box)[0] == made[0]
                seen["back"] = manager.source_instances("ItemToItem", destination)[0] == source
                seen["evaluate"] = manager.evaluate("FUNCTION($source.str, 'uppercaseString')", source)
                seen["evaluate dest"] = manager.evaluate("$destination.i64 + 1", None, destination)
                seen["evaluate list"] = (
                    manager.evaluate("$source.box.label", source),
                    len(manager.evaluate("$source.box.items", source)),
                )
                seen["evaluate date"] = manager.evaluate("$source.when", source)
                seen["created"] = manager.create("Box").entity_name
                with pytest.raises(cdmigrate.ExpressionSyntaxError) as error:
                    manager.evaluate("$source.str +* 1", source)
                seen["offset"] = error.value.offset
                with pytest.raises(cdmigrate.NotFoundError, match="Nowhere"):
                    manager.create("Nowhere")
                with pytest.raises(cdmigrate.NotFoundError, match="NoMapping"):
                    manager.destination_instances("NoMapping", [source])
                with pytest.raises(cdmigrate.MismatchError):
                    manager.destination_instances("BoxToBox", ["not an instance"])
                seen["queries"] = (
                    manager.count_destination("Box"),
                    len(manager.fetch_destination("Box")),
                    manager.count_source("Box"),
                    len(manager.fetch_source("Box")),
                    manager.instance_for_uri(source.uri) == source,
                    mapping.user_info,
                )
                seen["shared"] = manager.user_info["object"] is self and manager.user_info["begun"] == [
                    "BoxToBox",
                    "ItemToItem",
                ]
            return destination

    with migration(kitchen_models, item_policy="S", box_policy="S") as m:
        m.run(kitchen_store, tmp_path / "out.sqlite", policies={"S": Services})
    assert seen["mappings"] == [
        ("BoxToBox", "Box", "Box", 0, 0, "BoxToBox"),
        ("ItemToItem", "Item", "Item", 0, 0, "ItemToItem"),
    ]
    assert seen["made"] == (1, "box 1", "Box") and seen["single"] and seen["back"]
    assert seen["evaluate"] == "HÉLLO ✓" and seen["evaluate dest"] == 2 and seen["evaluate list"] == ("box 1", 10)
    assert seen["evaluate date"] == dt.datetime(2020, 1, 2, 0, 0, 0, 250000, tzinfo=dt.timezone.utc)
    assert seen["created"] == "Box" and seen["offset"] is not None and seen["shared"]
    assert seen["queries"] == (4, 4, 3, 3, True, {})  # three copied boxes and the one created above


def test_manager_outside_a_callback_is_misuse(tmp_path, kitchen_models, kitchen_store):
    saved = {}

    class Save(cdmigrate.EntityMigrationPolicy):
        def end_entity_mapping(self, mapping, manager):
            saved["manager"] = manager
            saved["user_info"] = manager.user_info
            manager.user_info["x"] = 1

    with migration(kitchen_models, box_policy="Save") as m:
        m.run(kitchen_store, tmp_path / "out.sqlite", policies={"Save": Save})
    with pytest.raises(cdmigrate.MisuseError):
        saved["manager"].create("Box")
    assert saved["user_info"] == {}  # released when the run ended


def test_host_functions_get_python_values_and_return_them(tmp_path, kitchen_models, kitchen_store):
    v1, v2 = kitchen_models
    calls = []

    def describe(*args):
        calls.append(args)
        return args[0]

    results = {
        "i16": 5,
        "i32": True,
        "dbl": 1,
        "flt": 2.5,
        "str": "1.25",
        "blob": b"\x01",
        "when": dt.datetime(2030, 1, 1),
        "dec": decimal.Decimal("1.25"),
        "link": uuid.UUID(int=3),
        "i64": None,
    }
    attribute_mappings = [
        {"name": k, "valueExpression": f'FUNCTION(CAST("Py", "Class"), "f:", "{k}")'} for k in results
    ]
    attribute_mappings.append(
        {
            "name": "thing",
            "valueExpression": 'FUNCTION(CAST("Py", "Class"), "d:a:b:c:e:f:g:h:i:", $source.when, $source.i64, '
            "$source.str, $source.flag, $source.dec, $source.blob, $source.ident, $source.box, $source.dbl)",
        }
    )
    text = item_to_item(attribute_mappings, predicate="TRUEPREDICATE")
    with cdmigrate.MappingModel.from_json(text) as mapping, cdmigrate.Migration(v1, v2, mapping) as m:
        m.register_function("Py", "d:a:b:c:e:f:g:h:i:", lambda *a: describe(*a) and b"ok")
        m.run(kitchen_store, tmp_path / "out.sqlite", functions={"Py.f:": lambda key: results[key]})
    first = sorted(calls, key=lambda c: c[1])[1]
    assert first[0] == dt.datetime(2020, 1, 2, 0, 0, 0, 250000, tzinfo=dt.timezone.utc)
    assert first[1:5] == (1, "héllo ✓", True, decimal.Decimal("13.5"))
    assert first[5] == ITEM_VALUES["blob"] and first[6] == uuid.UUID(int=2)
    assert isinstance(first[7], cdmigrate.Instance) and first[8] == 3.25
    row = rows(
        str(tmp_path / "out.sqlite"),
        "SELECT ZI16, ZI32, ZDBL, ZFLT, ZSTR, ZBLOB, ZWHEN, ZDEC, ZLINK, ZI64, ZTHING FROM ZITEM LIMIT 1",
    )[0]
    assert row[:6] == (5, 1, 1.0, 2.5, "1.25", b"\x01")
    assert row[6] == cdmigrate.reference_seconds(dt.datetime(2030, 1, 1))
    assert float(row[7]) == 1.25 and row[8] == str(uuid.UUID(int=3)) and row[9] is None and row[10] == b"ok"


def test_unknown_host_function_names_itself(tmp_path, kitchen_models, kitchen_store):
    v1, v2 = kitchen_models
    text = item_to_item(
        [{"name": "str", "valueExpression": 'FUNCTION(CAST("Nobody", "Class"), "nothing:", 1)'}],
        predicate="TRUEPREDICATE",
    )
    with cdmigrate.MappingModel.from_json(text) as mapping, cdmigrate.Migration(v1, v2, mapping) as m:
        with pytest.raises(cdmigrate.ExpressionEvaluationError, match="Nobody"):
            m.run(kitchen_store, tmp_path / "out.sqlite")
    assert not leftovers(str(tmp_path), "out.sqlite")


class Boom(Exception):
    pass


def _failing_policy(after: int):
    class HalfWay(cdmigrate.EntityMigrationPolicy):
        seen = 0

        def create_destination_instances(self, source, mapping, manager):
            HalfWay.seen += 1
            if HalfWay.seen == after:
                raise Boom(f"row {after} is bad")
            return super().create_destination_instances(source, mapping, manager)

    return HalfWay


def test_a_policy_raising_half_way_reraises_with_traceback_and_leaves_the_source_untouched(
    tmp_path, kitchen_models, kitchen_store
):
    before = sha256(kitchen_store)
    source_files = sorted(os.listdir(tmp_path))
    with migration(kitchen_models, item_policy="HalfWay") as m:
        with pytest.raises(Boom, match="row 15 is bad") as error:
            m.run(kitchen_store, tmp_path / "out.sqlite", policies={"HalfWay": _failing_policy(15)})
        frames = [frame.name for frame in traceback.extract_tb(error.value.__traceback__)]
        assert "create_destination_instances" in frames
        # the same migration runs fine afterwards
        m.run(kitchen_store, tmp_path / "ok.sqlite", policies={"HalfWay": _failing_policy(10**6)})
    assert sha256(kitchen_store) == before
    assert not leftovers(str(tmp_path), "out.sqlite")
    assert sorted(os.listdir(tmp_path)) == sorted(
        source_files + [f for f in os.listdir(tmp_path) if f.startswith("ok.sqlite")]
    )


@pytest.mark.parametrize(
    "hook",
    [
        "begin_entity_mapping",
        "end_instance_creation",
        "create_relationships",
        "end_relationship_creation",
        "perform_custom_validation",
        "end_entity_mapping",
    ],
)
def test_every_hook_can_fail_cleanly(tmp_path, kitchen_models, kitchen_store, hook):
    before = sha256(kitchen_store)

    def fail(self, *args):
        raise Boom(hook)

    Policy = type("Failing", (cdmigrate.EntityMigrationPolicy,), {hook: fail})
    with migration(kitchen_models, item_policy="F") as m, pytest.raises(Boom, match=hook):
        m.run(kitchen_store, tmp_path / "out.sqlite", policies={"F": Policy})
    assert sha256(kitchen_store) == before and not leftovers(str(tmp_path), "out.sqlite")


def test_engine_errors_inside_a_policy_keep_their_class(tmp_path, kitchen_models, kitchen_store):
    class Wrong(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            manager.create("Nowhere")

    with migration(kitchen_models, item_policy="W") as m, pytest.raises(cdmigrate.NotFoundError, match="Nowhere"):
        m.run(kitchen_store, tmp_path / "out.sqlite", policies={"W": Wrong})


def test_a_host_function_raising_reaches_the_caller(tmp_path, kitchen_models, kitchen_store):
    v1, v2 = kitchen_models
    text = item_to_item(
        [{"name": "str", "valueExpression": 'FUNCTION(CAST("Py", "Class"), "f:", $source.i64)'}],
        predicate="TRUEPREDICATE",
    )

    def f(i):
        if i == 3:
            raise Boom("function failed")
        return str(i)

    with cdmigrate.MappingModel.from_json(text) as mapping, cdmigrate.Migration(v1, v2, mapping) as m:
        with pytest.raises(Boom, match="function failed"):
            m.run(kitchen_store, tmp_path / "a.sqlite", functions={("Py", "f:"): f})
        with pytest.raises(cdmigrate.MismatchError, match="object"):
            m.run(kitchen_store, tmp_path / "b.sqlite", functions={("Py", "f:"): lambda i: object()})
    assert not leftovers(str(tmp_path), "a.sqlite") and not leftovers(str(tmp_path), "b.sqlite")


def test_an_exception_caught_by_the_policy_does_not_resurface(tmp_path, kitchen_models, kitchen_store):
    v1, v2 = kitchen_models

    class Catching(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            destination = manager.create("Item")
            try:
                manager.apply_attribute_mappings(source, destination)
            except cdmigrate.MigrationError:
                destination["str"] = "recovered"
            manager.associate(source, destination)

    text = item_to_item(
        [{"name": "str", "valueExpression": 'FUNCTION(CAST("Py", "Class"), "f:", 1)'}],
        type="custom",
        policy="C",
        predicate="TRUEPREDICATE",
    )

    def f(_):
        raise Boom("nested")

    with cdmigrate.MappingModel.from_json(text) as mapping, cdmigrate.Migration(v1, v2, mapping) as m:
        report = m.run(kitchen_store, tmp_path / "out.sqlite", policies={"C": Catching}, functions={("Py", "f:"): f})
    assert report.destination_counts["Item"] == 30
    assert rows(str(tmp_path / "out.sqlite"), "SELECT DISTINCT ZSTR FROM ZITEM") == [("recovered",)]


def test_progress_is_reported_and_false_cancels(tmp_path, kitchen_models, kitchen_store):
    before = sha256(kitchen_store)
    seen = []
    with migration(kitchen_models, progress_interval=5) as m:
        m.run(kitchen_store, tmp_path / "a.sqlite", progress=seen.append)
        assert seen[0].fraction == 0.0 and seen[-1].fraction == 1.0
        assert {p.stage for p in seen} == {1, 2, 3} and all(p.pass_index == 0 for p in seen)
        assert any(p.entity_mapping == "ItemToItem" and p.total == 30 and p.processed > 0 for p in seen)
        with pytest.raises(cdmigrate.MigrationCancelledError) as error:
            m.run(kitchen_store, tmp_path / "b.sqlite", progress=lambda p: p.fraction < 0.4)
        assert error.value.code == 134120
        m.set_progress(None)
        m.run(kitchen_store, tmp_path / "c.sqlite")
    assert sha256(kitchen_store) == before and not leftovers(str(tmp_path), "b.sqlite")


def test_progress_carries_the_whole_runs_rows(tmp_path, kitchen_models, kitchen_store):
    seen = []
    with migration(kitchen_models, progress_interval=5) as m:
        m.run(kitchen_store, tmp_path / "schema.sqlite", progress=seen.append)
        # Done as schema changes on a copy of the file (docs/schema-step.md): the rows the scan
        # counted, 3 boxes and 30 items through three stages, known from the first call.
        assert m.report.by_schema_changes and {p.run_total for p in seen} == {3 * 33}
        schema_done = [p.run_processed for p in seen]
        assert schema_done == sorted(schema_done) and schema_done[0] == 0
        assert seen[-1].run_processed == 3 * 33 and seen[-1].run_fraction == 1.0
        seen.clear()
        m.schema_changes = False  # row by row: 3 boxes and 30 items, each through three stages
        m.run(kitchen_store, tmp_path / "a.sqlite", progress=seen.append)
    done = [p.run_processed for p in seen]
    assert done == sorted(done) and all(p.run_processed <= p.run_total for p in seen)
    first = next(p for p in seen if p.entity_mapping)
    assert first.run_total > 0 and first.run_processed == 0, "known before the first row"
    assert seen[-1].run_processed == seen[-1].run_total == 3 * 33 and seen[-1].run_fraction == 1.0
    assert {(p.step, p.step_count) for p in seen} == {(0, 1)}
    assert cdmigrate.Progress(0.0, 1, 0, "", 0, 0).run_fraction is None


def test_keyboard_interrupt_cancels_cleanly_and_is_reraised(tmp_path, kitchen_models, kitchen_store):
    before = sha256(kitchen_store)

    def interrupt(p):
        if p.stage == 2:
            raise KeyboardInterrupt

    with migration(kitchen_models) as m:
        with pytest.raises(KeyboardInterrupt):
            m.run(kitchen_store, tmp_path / "a.sqlite", progress=interrupt)
        with pytest.raises(ZeroDivisionError):
            m.run(kitchen_store, tmp_path / "b.sqlite", progress=lambda p: 1 / 0)

    class Interrupting(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            raise KeyboardInterrupt

    with migration(kitchen_models, item_policy="I") as m, pytest.raises(KeyboardInterrupt):
        m.run(kitchen_store, tmp_path / "c.sqlite", policies={"I": Interrupting})
    assert sha256(kitchen_store) == before
    assert not [f for f in os.listdir(tmp_path) if f[:2] in ("a.", "b.", "c.")]


def test_reentrant_use_from_a_callback_is_misuse(tmp_path, kitchen_models, kitchen_store):
    errors = []

    class Reenter(cdmigrate.EntityMigrationPolicy):
        def begin_entity_mapping(self, mapping, manager):
            for action in (
                lambda: holder[0].run(kitchen_store, tmp_path / "inner.sqlite"),
                lambda: holder[0].close(),
                lambda: holder[0].register_policy("X", Reenter),
                lambda: holder[0].set_progress(None),
            ):
                try:
                    action()
                except cdmigrate.MisuseError as error:
                    errors.append(str(error))

    holder = [migration(kitchen_models, box_policy="R")]
    with holder[0] as m:
        m.run(kitchen_store, tmp_path / "out.sqlite", policies={"R": Reenter})
    assert len(errors) == 4
    assert not os.path.exists(tmp_path / "inner.sqlite")


def test_callbacks_are_kept_alive_and_released_with_the_migration(tmp_path, kitchen_models, kitchen_store):
    class Policy(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            return super().create_destination_instances(source, mapping, manager)

    def function(x):
        return x

    before = len(_run.registry)
    m = migration(
        kitchen_models, item_policy="P", policies={"P": Policy}, functions={("A", "b:"): function}, progress=print
    )
    function_ref = weakref.ref(function)
    del function
    gc.collect()
    # the policy (its hooks and its methods for $entityPolicy), the function, the progress callback
    assert function_ref() is not None and len(_run.registry) == before + 4
    m.run(kitchen_store, tmp_path / "out.sqlite")
    m.register_function("A", "b:", len)  # replacing a registration releases the old one
    gc.collect()
    assert function_ref() is None
    m.close()
    assert len(_run.registry) == before
    # a migration dropped without close() is freed by the garbage collector, with its callbacks
    m = migration(kitchen_models, policies={"P": Policy})
    state = weakref.ref(m._state)
    del m
    gc.collect()
    assert state() is None and len(_run.registry) == before


def test_migrations_run_in_parallel_threads(tmp_path, kitchen_models, kitchen_store):
    errors = []

    def work(n):
        try:
            with migration(kitchen_models, item_policy="P", policies={"P": _failing_policy(10**6)}) as m:
                for k in range(3):
                    m.run(kitchen_store, tmp_path / f"t{n}-{k}.sqlite")
        except Exception as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(n,)) for n in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert rows(str(tmp_path / "t2-2.sqlite"), "SELECT COUNT(*) FROM ZITEM") == [(30,)]


def test_one_migration_is_refused_to_a_second_thread_while_running(tmp_path, kitchen_models, kitchen_store):
    results = []
    started, release = threading.Event(), threading.Event()

    class Slow(cdmigrate.EntityMigrationPolicy):
        def begin_entity_mapping(self, mapping, manager):
            started.set()
            release.wait(10)

    m = migration(kitchen_models, box_policy="S", policies={"S": Slow})
    thread = threading.Thread(target=lambda: results.append(m.run(kitchen_store, tmp_path / "a.sqlite")))
    thread.start()
    started.wait(10)
    with pytest.raises(cdmigrate.MisuseError, match="already running"):
        m.run(kitchen_store, tmp_path / "b.sqlite")
    release.set()
    thread.join()
    m.close()
    assert len(results) == 1
