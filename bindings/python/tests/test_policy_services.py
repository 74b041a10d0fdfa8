"""The policy services, one by one, through the Python binding: querying the destination and the
source, changing destination instances made earlier, stable identities, introspection, the
dictionary view, the default behaviour as super, shared user info, and errors that name their
culprit and abort the migration cleanly."""

from __future__ import annotations

import datetime as dt
import decimal
import gc
import json
import re
import uuid
import weakref

import pytest
from conftest import ITEM_VALUES, KITCHEN_V2, copy_mapping, leftovers, rows, sha256
from test_library_migration import AUTHORS, BOOKS, LIB_V1, LIB_V2, STEP1, TRANSLATORS, make_v1, model

import cdmigrate

URI = re.compile(r"^x-coredata://[0-9A-F-]{36}/(\w+)/p(\d+)$")

# The kitchen's v2 with Box.items ordered, for ordered inserts.
KITCHEN_V2_ORDERED = json.loads(json.dumps(KITCHEN_V2))
KITCHEN_V2_ORDERED["entities"][1]["relationships"][0]["ordered"] = True


def run_kitchen(tmp_path, v1, store, policies, item_policy=None, box_policy=None, ordered=False, name="out.sqlite"):
    destination = str(tmp_path / name)
    with cdmigrate.Model.from_json(json.dumps(KITCHEN_V2_ORDERED)) if ordered else _borrow(
        v1[1]
    ) as v2, cdmigrate.MappingModel.from_json(
        copy_mapping(item_policy=item_policy, box_policy=box_policy)
    ) as mapping, cdmigrate.Migration(v1[0], v2, mapping) as migration:
        report = migration.run(store, destination, policies=policies)
    return destination, report


class _borrow:
    def __init__(self, model):
        self.model = model

    def __enter__(self):
        return self.model

    def __exit__(self, *exc):
        return False


def run_library_step1(tmp_path, policy):
    v1, v2 = str(tmp_path / "Library-v1.sqlite"), str(tmp_path / "Library-v2.sqlite")
    make_v1(v1)
    with model(LIB_V1) as a, model(LIB_V2) as b, cdmigrate.MappingModel.from_json(
        json.dumps(STEP1)
    ) as mapping, cdmigrate.Migration(a, b, mapping) as migration:
        return v1, v2, migration.run(v1, v2, policies={"GenrePolicy": policy})


# -- querying the destination and the source ---------------------------------------------------


def test_destination_and_source_fetch_and_count(tmp_path):
    seen = {}

    class Probe(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            book = super().create_destination_instances(source, mapping, manager)
            if "done" in seen:
                return book
            seen["done"] = True
            # Made by earlier entity mappings of this pass, and unflushed ones made just now.
            seen["authors"] = (
                manager.count_destination("Author"),
                manager.count_destination("Author", include_subentities=False),
                len(manager.fetch_destination("Translator")),
            )
            genre = manager.create("Genre", {"name": "Unflushed"})
            found = manager.fetch_destination("Genre", "name == %@", "Unflushed")
            seen["unflushed"] = (
                found == [genre],
                found[0]["name"],
                manager.count_destination("Book", "title == %@", book["title"]),
            )
            seen["variables"] = manager.count_source(
                "Book", "year >= $FROM AND year <= $TO", variables={"FROM": 1960, "$TO": 1964}
            )
            seen["limit"] = len(manager.fetch_source("Book", "year > %@", 1900, limit=3))
            seen["none"] = manager.fetch_source("Book", "year > 2030")
            seen["self"] = manager.count_source("Book", "SELF == %@", source)
            seen["decimal"] = manager.count_source("Book", "price == %@", decimal.Decimal("5.99"))
            seen["begins"] = [a["name"] for a in manager.fetch_source("Author", "name BEGINSWITH %@", "A")]
            seen["source subentities"] = (
                manager.count_source("Author"),
                manager.count_source("Author", include_subentities=False),
            )
            # Found instances can be read and changed: the change lands in the destination store.
            olga = manager.fetch_destination("Author", "name == $N", variables={"N": "Olga Ortiz"})[0]
            olga["name"] = "Olga Ortiz (tr.)"
            seen["olga"] = (olga.entity_name, olga.entity.parent)
            with pytest.raises(cdmigrate.NotFoundError, match="Nope"):
                manager.fetch_destination("Nope")
            with pytest.raises(cdmigrate.ExpressionSyntaxError) as error:
                manager.count_destination("Book", "title == ")
            seen["syntax"] = ("Book" in error.value.message, error.value.offset is not None)
            with pytest.raises(cdmigrate.MigrationError, match="colour"):
                manager.fetch_destination("Book", "colour == 'red'")
            with pytest.raises(cdmigrate.MismatchError, match="argument 1"):
                manager.fetch_source("Book", "title == %@", object())
            with pytest.raises(cdmigrate.MigrationError):
                manager.fetch_source("Book", "title == %@")  # a missing argument
            with pytest.raises(ValueError):
                manager.fetch_source("Book", limit=-1)
            return book

    _, v2, _ = run_library_step1(tmp_path, Probe)
    assert seen["authors"] == (AUTHORS + TRANSLATORS, AUTHORS, TRANSLATORS)
    assert seen["unflushed"] == (True, "Unflushed", 1)
    assert seen["variables"] == 10 and seen["limit"] == 3 and seen["none"] == [] and seen["self"] == 1
    assert seen["decimal"] == len([i for i in range(BOOKS) if i % 20 == 0])
    assert seen["begins"] == ["Ana Alonso"] and seen["source subentities"] == (AUTHORS + TRANSLATORS, AUTHORS)
    assert seen["olga"] == ("Translator", "Author") and seen["syntax"] == (True, True)
    assert rows(v2, "SELECT ZNAME FROM ZAUTHOR WHERE ZNAME LIKE 'Olga%'") == [("Olga Ortiz (tr.)",)]
    assert rows(v2, "SELECT COUNT(*) FROM ZGENRE WHERE ZNAME = 'Unflushed'") == [(1,)]


def test_fetch_arguments_of_every_type(tmp_path, kitchen_models, kitchen_store):
    seen = {}

    class Probe(cdmigrate.EntityMigrationPolicy):
        def begin_entity_mapping(self, mapping, manager):
            if mapping.name != "ItemToItem":
                return
            when = dt.datetime(2020, 1, 11, tzinfo=dt.timezone.utc)
            box = manager.fetch_source("Box", "label == %@", "box 1")[0]
            seen["counts"] = [
                manager.count_source("Item", "when > %@", when),
                manager.count_source("Item", "dec >= %@", decimal.Decimal("40.5")),
                manager.count_source("Item", "ident == %@", uuid.UUID(int=3)),
                manager.count_source("Item", "flag == %@", True),
                manager.count_source("Item", "dbl == %@", 3.25),
                manager.count_source("Item", "i64 < %@ AND str != %@", 5, None),
                manager.count_source("Item", "box == %@", box),
                manager.count_source("Item", "box == %@", None),
                manager.count_source("Item", "str == %@", "héllo ✓"),
            ]

    run_kitchen(tmp_path, kitchen_models, kitchen_store, {"P": Probe}, item_policy="P")
    assert seen["counts"] == [20, 2, 1, 30, 30, 5, 10, 10, 29]


# -- changing destination instances made earlier ----------------------------------------------


def test_changing_destination_instances_made_earlier(tmp_path, kitchen_models, kitchen_store):
    kept = {}

    class Change(cdmigrate.EntityMigrationPolicy):
        def end_relationship_creation(self, mapping, manager):
            # Instances made by another mapping (BoxToBox) and by this one, long before (after
            # BoxToBox's own relationship mapping has set the boxes' items).
            box0, box1, box2 = (manager.fetch_destination("Box", "label == %@", f"box {b}")[0] for b in range(3))
            box1["note"] = "changed later"
            items = {i["i64"]: i for i in manager.fetch_destination("Item")}
            items[0]["box"] = box1  # to-one
            box2.add("items", items[3])  # add to a to-many
            box0.add("items", items[6], items[9], items[12])
            box0.remove("items", items[9])  # remove from a to-many
            box0.remove("items", items[27])  # (not there: harmless)
            box0.insert("items", 0, items[15])  # ordered insert
            box0.insert("items", 1, items[12])  # a member moves
            box0.insert("items", 99, items[18])  # clamped to the end
            items[22]["box"] = None
            box2["items"] = [items[24], items[3]]  # the whole contents
            kept["order"] = [i["i64"] for i in box0["items"]]
            with pytest.raises(cdmigrate.MismatchError):
                box0.insert("label", 0, items[1])
            with pytest.raises(cdmigrate.NotFoundError, match="nope"):
                box0.add("nope", items[1])
            with pytest.raises(IndexError):
                box0.insert("items", -1, items[1])
            with pytest.raises(cdmigrate.MismatchError):
                box0.remove("items", "not an instance")

        def create_relationships(self, destination, mapping, manager):
            pass  # keep what end_instance_creation set (the default would apply the mapping's box)

    path, _ = run_kitchen(tmp_path, kitchen_models, kitchen_store, {"C": Change}, item_policy="C", ordered=True)
    boxes = dict(rows(path, "SELECT ZLABEL, Z_PK FROM ZBOX"))
    assert rows(path, "SELECT ZNOTE FROM ZBOX WHERE ZLABEL = 'box 1'") == [("changed later",)]
    order_column = next(c[1] for c in rows(path, "PRAGMA table_info(ZITEM)") if c[1].startswith("Z_FOK"))
    members = {}
    for i64, box, position in rows(path, f"SELECT ZI64, ZBOX, {order_column} FROM ZITEM WHERE ZBOX IS NOT NULL"):
        members.setdefault(box, []).append((position, i64))
    assert kept["order"] == [15, 12, 6, 18]
    assert [i for _, i in sorted(members[boxes["box 0"]])] == [15, 12, 6, 18]
    assert sorted(i for _, i in members[boxes["box 2"]]) == [3, 24]
    assert sorted(i for _, i in members[boxes["box 1"]]) == sorted([0] + [i for i in range(1, 30, 3) if i != 22])


# -- stable identities ------------------------------------------------------------------------


def test_object_ids_and_uris(tmp_path, kitchen_models, kitchen_store):
    seen = {"sources": {}}

    class Ids(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            destination = super().create_destination_instances(source, mapping, manager)
            # As dictionary keys, valid for the whole run (kept past this callback).
            manager.user_info.setdefault("made", {})[source.object_id] = (destination.object_id, destination.uri)
            seen["sources"][source.uri] = source["i64"]
            if source["i64"] == 0:
                seen["uris"] = (source.uri, destination.uri)
                seen["same"] = (
                    manager.instance_for_uri(source.uri) == source,
                    manager.instance_for_uri(destination.uri) == destination,
                    {source: 1, destination: 2}[destination],
                    source != destination,
                )
                seen["unflushed"] = manager.instance_for_uri(destination.uri)["i64"]
            return destination

        def end_relationship_creation(self, mapping, manager):
            made = manager.user_info["made"]
            found = 0
            for source_id, (destination_id, destination_uri) in made.items():
                source = manager.instance_with_id(source_id)
                by_id, by_uri = manager.instance_with_id(destination_id), manager.instance_for_uri(destination_uri)
                found += (
                    by_id == by_uri and by_id["i64"] == source["i64"] and manager.instance_for_uri(source_id) == source
                )
                assert source.object_id.store == "source" and by_id.object_id.store == "destination"
            seen["found"] = found
            missing = cdmigrate.ObjectID("destination", "Item", 999_999)
            seen["missing"] = (
                manager.instance_with_id(missing),
                manager.instance_for_uri(re.sub(r"p\d+$", "p999999", destination_uri)),
            )
            with pytest.raises(cdmigrate.InvalidArgumentError, match="not a uri"):
                manager.instance_for_uri("not a uri")
            with pytest.raises(cdmigrate.InvalidArgumentError):
                manager.instance_for_uri("x-coredata://ABC/Item/p1")
            with pytest.raises(cdmigrate.MismatchError):
                manager.instance_with_id(cdmigrate.ObjectID("store", "Item", 1))
            with pytest.raises(TypeError):
                manager.instance_for_uri(42)

    run_kitchen(tmp_path, kitchen_models, kitchen_store, {"I": Ids}, item_policy="I")
    source_uri, destination_uri = seen["uris"]
    assert URI.match(source_uri).group(1) == "Item" and URI.match(destination_uri).group(1) == "Item"
    assert source_uri.split("/")[2] != destination_uri.split("/")[2]  # distinct store UUIDs
    assert seen["same"] == (True, True, 2, True) and seen["unflushed"] == 0
    assert seen["found"] == 30 and seen["missing"] == (None, None)
    assert sorted(seen["sources"].values()) == list(range(30))


# -- introspection ----------------------------------------------------------------------------


def test_mapping_user_info_keeps_the_types_it_was_written_with(tmp_path):
    seen = {}

    class Look(cdmigrate.EntityMigrationPolicy):
        def begin_entity_mapping(self, mapping, manager):
            seen["info"] = mapping.user_info

    step = json.loads(json.dumps(STEP1))
    step["entityMappings"][2]["userInfo"] = {
        "count": 2,
        "label": "2",
        "ratio": 0.5,
        "whole": 2.0,
        "strict": True,
        "when": {"date": "2024-05-01T12:00:00Z"},
        "bytes": {"data": "AQID"},
        "price": {"decimal": "12.30"},
    }
    v1, v2 = str(tmp_path / "Library-v1.sqlite"), str(tmp_path / "Library-v2.sqlite")
    make_v1(v1)
    with model(LIB_V1) as a, model(LIB_V2) as b, cdmigrate.MappingModel.from_json(
        json.dumps(step)
    ) as mapping, cdmigrate.Migration(a, b, mapping) as migration:
        migration.run(v1, v2, policies={"GenrePolicy": Look})
    info = seen["info"]
    assert {k: type(v) for k, v in info.items()} == {
        "count": int,
        "label": str,
        "ratio": float,
        "whole": float,
        "strict": bool,
        "when": dt.datetime,
        "bytes": bytes,
        "price": decimal.Decimal,
    }
    assert (
        info["count"] == 2
        and info["label"] == "2"
        and info["ratio"] == 0.5
        and info["whole"] == 2.0
        and info["strict"] is True
    )
    assert info["when"] == dt.datetime(2024, 5, 1, 12, 0, tzinfo=dt.timezone.utc)
    assert info["bytes"] == b"\x01\x02\x03" and info["price"] == decimal.Decimal("12.30")


def test_introspection_of_entities_and_the_current_mapping(tmp_path):
    seen = {}

    class Look(cdmigrate.EntityMigrationPolicy):
        def begin_entity_mapping(self, mapping, manager):
            seen["mapping"] = (
                mapping.name,
                mapping.source_entity_name,
                mapping.destination_entity_name,
                mapping.pass_index,
                mapping.user_info,
            )
            seen["attribute mappings"] = {n: m.value_expression for n, m in mapping.attribute_mappings.items()}
            seen["relationship mappings"] = {n: m.value_expression for n, m in mapping.relationship_mappings.items()}
            translator = manager.destination_entity("Translator")
            seen["translator"] = (
                translator.parent,
                list(translator.attributes),
                list(translator.relationships),
                translator.attributes["name"].entity,
                translator.relationships["books"].to_many,
                translator.relationships["books"].destination_entity,
            )
            with pytest.raises(cdmigrate.NotFoundError, match="Nope"):
                manager.source_entity("Nope")
            seen["kept"] = mapping

        def create_destination_instances(self, source, mapping, manager):
            book = super().create_destination_instances(source, mapping, manager)
            if "book" not in seen:
                entity = book.entity
                seen["book"] = {n: (a.type, a.optional) for n, a in entity.attributes.items()}
                seen["book relationships"] = {
                    n: (r.destination_entity, r.to_many, r.optional, r.inverse, r.max_count)
                    for n, r in entity.relationships.items()
                }
                seen["source book"] = list(source.entity.attributes)
                seen["names"] = (book.attribute_names(), book.relationship_names(), list(book))
            return book

    _, _, _ = run_library_step1(tmp_path, Look)
    assert seen["mapping"] == ("BookToBook", "Book", "Book", 0, {"modelVersion": "2", "genreEntity": "Genre"})
    assert seen["attribute mappings"] == {
        "title": "$source.title",
        "year": "$source.year",
        "isbn": "$source.isbn",
        "price": "$source.price",
    }
    assert seen["relationship mappings"] == {"genre": None}
    assert seen["translator"] == ("Author", ["name", "language"], ["books"], "Author", True, "Book")
    T = cdmigrate.AttributeType
    assert seen["book"] == {
        "title": (T.STRING, False),
        "year": (T.INTEGER32, True),
        "isbn": (T.STRING, True),
        "price": (T.DECIMAL, True),
    }
    assert seen["book relationships"] == {
        "authors": ("Author", True, True, "books", 0),
        "genre": ("Genre", False, True, "books", 1),
    }
    assert seen["source book"] == ["title", "genre", "year", "isbn", "price"]
    assert seen["names"] == (
        ["title", "year", "isbn", "price"],
        ["authors", "genre"],
        ["title", "year", "isbn", "price"],
    )
    # Read in its own callbacks, the mapping's details are kept; a fresh read outside is refused.
    assert seen["kept"].user_info["modelVersion"] == "2"
    with model(LIB_V1) as v1:
        assert list(v1.entity("Translator").attributes) == ["name", "language"]
        with pytest.raises(cdmigrate.NotFoundError, match="Nope"):
            v1.entity("Nope")


def test_a_mapping_read_from_another_mappings_callback_is_misuse(tmp_path, kitchen_models, kitchen_store):
    seen = {}

    class Keep(cdmigrate.EntityMigrationPolicy):
        def begin_entity_mapping(self, mapping, manager):
            if mapping.name == "BoxToBox":
                seen["box"] = mapping
            else:
                with pytest.raises(cdmigrate.MisuseError, match="BoxToBox"):
                    _ = seen["box"].user_info
                seen["ok"] = True

    run_kitchen(tmp_path, kitchen_models, kitchen_store, {"K": Keep}, item_policy="K", box_policy="K")
    assert seen["ok"]


# -- the dictionary view ----------------------------------------------------------------------


def test_dictionary_view_and_setting_from_a_dictionary(tmp_path, kitchen_models, kitchen_store):
    seen = {}

    class Dicts(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            row = source.to_dict()
            assert row == {key: source[key] for key in source}  # the bulk read agrees with the typed getters
            destination = manager.create(values={**row, "unknown": 1}, source=source, skip_unknown=True)
            if source["i64"] == 2:
                seen["row"] = row
                seen["keys"] = source.to_dict(["str", "box.label", "i64"])
                seen["back"] = destination.to_dict() == row
                seen["skipped"] = destination.set_values({"str": "set", "flt": 0.5, "nothere": 1, "box": None})
                seen["after"] = destination.to_dict(["str", "flt", "box"])
                with pytest.raises(cdmigrate.NotFoundError, match="nothere"):
                    destination.set_values({"nothere": 1}, skip_unknown=False)
                with pytest.raises(cdmigrate.MismatchError, match="i64"):
                    destination.set_values({"i64": "not a number"})
                with pytest.raises(cdmigrate.MismatchError, match="object"):
                    destination.set_values({"str": object()})
                with pytest.raises(cdmigrate.NotFoundError, match="nothere"):
                    manager.create("Item", {"nothere": 1})
            return destination

    path, _ = run_kitchen(tmp_path, kitchen_models, kitchen_store, {"D": Dicts}, item_policy="D")
    row = seen["row"]
    assert row["i64"] == 2 and row["dec"] == decimal.Decimal("14.50") and row["ident"] == uuid.UUID(int=3)
    assert row["when"] == dt.datetime(2020, 1, 3, 0, 0, 0, 250000, tzinfo=dt.timezone.utc)
    assert (
        row["flag"] is True
        and isinstance(row["dbl"], float)
        and row["blob"] == ITEM_VALUES["blob"]
        and row["thing"] == bytes([2])
    )
    assert seen["keys"] == {"str": "héllo ✓", "box.label": "box 2", "i64": 2}
    assert seen["back"] and seen["skipped"] == ["nothere"]
    assert seen["after"] == {"str": "set", "flt": 0.5, "box": None}
    assert rows(path, "SELECT ZSTR, ZFLT FROM ZITEM WHERE ZI64 = 2") == [("set", 0.5)]
    assert rows(path, "SELECT COUNT(*) FROM ZITEM") == [(31,)]  # the failed create's instance stays made (as in C)


# -- the default behaviour as super -----------------------------------------------------------


def test_super_in_every_hook(tmp_path, kitchen_models, kitchen_store):
    calls = []

    class Super(cdmigrate.EntityMigrationPolicy):
        def begin_entity_mapping(self, mapping, manager):
            calls.append(("begin", super().begin_entity_mapping(mapping, manager)))

        def create_destination_instances(self, source, mapping, manager):
            made = super().create_destination_instances(source, mapping, manager)
            if made["str"] is not None:
                made["str"] = f"{made['str']}!"  # adjust the default's result
            calls.append(("create", made.entity_name))
            return made

        def end_instance_creation(self, mapping, manager):
            calls.append(("end creation", super().end_instance_creation(mapping, manager)))

        def create_relationships(self, destination, mapping, manager):
            super().create_relationships(destination, mapping, manager)  # the mapping's box relationship
            if destination["box"] is not None:
                destination["box"]["note"] = f"has {destination['i64']}"
            calls.append(("relationships", destination["box"] is not None))

        def end_relationship_creation(self, mapping, manager):
            calls.append(("end relationships", super().end_relationship_creation(mapping, manager)))

        def perform_custom_validation(self, mapping, manager):
            calls.append(("validation", super().perform_custom_validation(mapping, manager)))

        def end_entity_mapping(self, mapping, manager):
            calls.append(("end", super().end_entity_mapping(mapping, manager)))

    path, _ = run_kitchen(tmp_path, kitchen_models, kitchen_store, {"S": Super}, item_policy="S")
    assert calls.count(("create", "Item")) == 30 and calls.count(("relationships", True)) == 20
    assert ("begin", None) in calls and ("end", None) in calls and ("validation", None) in calls
    assert rows(path, "SELECT COUNT(*) FROM ZITEM WHERE ZBOX IS NOT NULL") == [(20,)]
    assert sorted(s for (s,) in rows(path, "SELECT ZSTR FROM ZITEM") if s) == ["héllo ✓!"] * 29
    notes = dict(rows(path, "SELECT ZLABEL, ZNOTE FROM ZBOX"))
    assert notes["box 0"] is None and notes["box 1"].startswith("has ") and notes["box 2"].startswith("has ")


# -- shared state -----------------------------------------------------------------------------


class Payload:
    pass


def test_user_info_is_shared_by_all_policies_and_released_when_the_run_ends(tmp_path, kitchen_models, kitchen_store):
    refs = []

    class Box(cdmigrate.EntityMigrationPolicy):
        def begin_entity_mapping(self, mapping, manager):
            payload = Payload()
            refs.append(weakref.ref(payload))
            manager.user_info["payload"] = payload
            manager.user_info["lambda"] = lambda x: x * 2

    class Item(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            assert isinstance(manager.user_info["payload"], Payload) and manager.user_info["lambda"](2) == 4
            return super().create_destination_instances(source, mapping, manager)

    run_kitchen(tmp_path, kitchen_models, kitchen_store, {"B": Box, "I": Item}, item_policy="I", box_policy="B")
    gc.collect()
    assert refs and refs[0]() is None

    class Failing(Item):
        def create_destination_instances(self, source, mapping, manager):
            super().create_destination_instances(source, mapping, manager)
            raise RuntimeError("stop")

    with pytest.raises(RuntimeError):
        run_kitchen(
            tmp_path,
            kitchen_models,
            kitchen_store,
            {"B": Box, "I": Failing},
            item_policy="I",
            box_policy="B",
            name="x.sqlite",
        )
    gc.collect()
    assert len(refs) == 2 and refs[1]() is None


# -- errors abort cleanly -----------------------------------------------------------------------


@pytest.mark.parametrize("failure", ["fetch", "count", "uri", "set_values", "insert", "super", "mapping"])
def test_errors_inside_a_policy_abort_the_migration_cleanly(tmp_path, kitchen_models, kitchen_store, failure):
    class Fails(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            made = super().create_destination_instances(source, mapping, manager)
            if source["i64"] == 15:
                if failure == "fetch":
                    manager.fetch_destination("Item", "colour == %@", "red")
                elif failure == "count":
                    manager.count_source("Nowhere")
                elif failure == "uri":
                    manager.instance_for_uri("x-coredata://nope")
                elif failure == "set_values":
                    made.set_values({"i32": "thirty"})
                elif failure == "insert":
                    made.insert("box", 0, made)
                elif failure == "super":
                    manager.default_create_relationships(source)  # a source instance is not a destination
                else:
                    manager.evaluate("$source.nothere", source)
            return made

    before = sha256(kitchen_store)
    with pytest.raises(cdmigrate.MigrationError) as error:
        run_kitchen(tmp_path, kitchen_models, kitchen_store, {"F": Fails}, item_policy="F")
    culprit = {
        "fetch": "entity 'Item' has no property 'colour'",
        "count": "Nowhere",
        "uri": "x-coredata://nope",
        "set_values": "i32",
        "insert": "'Item.box' is to-one: set it with instance['box']",
        "super": "read-only",
        "mapping": "nothere",
    }[failure]
    assert culprit in error.value.message
    assert sha256(kitchen_store) == before
    assert leftovers(str(tmp_path), "out") == []
