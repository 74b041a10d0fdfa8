"""Shared fixtures: the repository's examples on sys.path, a model with every attribute type, and
small stores made through the binding itself."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
EXAMPLES = os.path.join(ROOT, "examples")
sys.path.insert(0, os.path.join(EXAMPLES, "python"))

import cdmigrate  # noqa: E402

# Every attribute type, a to-one and a to-many relationship, and a child entity.
KITCHEN_V1 = {
    "name": "Kitchen",
    "versionIdentifier": "v1",
    "entities": [
        {
            "name": "Item",
            "attributes": [
                {"name": "i16", "type": "integer16", "optional": True},
                {"name": "i32", "type": "integer32", "optional": True},
                {"name": "i64", "type": "integer64", "optional": True},
                {"name": "dec", "type": "decimal", "optional": True},
                {"name": "dbl", "type": "double", "optional": True},
                {"name": "flt", "type": "float", "optional": True},
                {"name": "str", "type": "string", "optional": True},
                {"name": "flag", "type": "boolean", "optional": True},
                {"name": "when", "type": "date", "optional": True},
                {"name": "blob", "type": "binary", "optional": True},
                {"name": "ident", "type": "uuid", "optional": True},
                {"name": "link", "type": "uri", "optional": True},
                {"name": "thing", "type": "transformable", "optional": True},
            ],
            "relationships": [
                {"name": "box", "destination": "Box", "inverse": "items", "toMany": False, "optional": True},
            ],
        },
        {
            "name": "Box",
            "attributes": [{"name": "label", "type": "string", "optional": True}],
            "relationships": [{"name": "items", "destination": "Item", "inverse": "box", "toMany": True}],
        },
    ],
}

KITCHEN_V2 = json.loads(json.dumps(KITCHEN_V1))
KITCHEN_V2["versionIdentifier"] = "v2"
KITCHEN_V2["entities"][1]["attributes"].append({"name": "note", "type": "string", "optional": True})


def copy_mapping(name="KitchenV1ToV2", item_policy=None, box_policy=None):
    """A mapping that copies everything (Item and Box), with optional policies."""
    item_attributes = [a["name"] for a in KITCHEN_V1["entities"][0]["attributes"]]
    item = {
        "name": "ItemToItem",
        "type": "transform",
        "sourceEntity": "Item",
        "destinationEntity": "Item",
        "predicate": "TRUEPREDICATE",
        "attributeMappings": [{"name": a, "valueExpression": f"$source.{a}"} for a in item_attributes],
        "relationshipMappings": [
            {
                "name": "box",
                "valueExpression": 'FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", '
                '"BoxToBox", $source.box)',
            }
        ],
    }
    box = {
        "name": "BoxToBox",
        "type": "transform",
        "sourceEntity": "Box",
        "destinationEntity": "Box",
        "predicate": "TRUEPREDICATE",
        "attributeMappings": [{"name": "label", "valueExpression": "$source.label"}],
        "relationshipMappings": [
            {
                "name": "items",
                "valueExpression": 'FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", '
                '"ItemToItem", $source.items)',
            }
        ],
    }
    if item_policy:
        item["policy"] = item_policy
        item["type"] = "custom"
    if box_policy:
        box["policy"] = box_policy
        box["type"] = "custom"
    return json.dumps({"name": name, "entityMappings": [box, item]})


def item_to_item(attribute_mappings, *, ensure_ascii=True, **fields) -> str:
    """The JSON of mapping model "M" of one entity mapping, ItemToItem: a transform from Item to
    Item with ``attribute_mappings`` (a list or a dict), other ``fields`` (``predicate``,
    ``policy``, ``type``, ``destinationEntity``, …) as given."""
    mapping = {"name": "ItemToItem", "type": "transform", "sourceEntity": "Item", "destinationEntity": "Item"}
    mapping.update(fields)
    mapping["attributeMappings"] = attribute_mappings
    return json.dumps({"name": "M", "entityMappings": [mapping]}, ensure_ascii=ensure_ascii)


@pytest.fixture
def kitchen_models():
    v1 = cdmigrate.Model.from_json(json.dumps(KITCHEN_V1))
    v2 = cdmigrate.Model.from_json(json.dumps(KITCHEN_V2))
    yield v1, v2
    v1.close()
    v2.close()


ITEM_VALUES = {
    "i16": -7,
    "i32": 123456,
    "i64": 2**40,
    "dbl": 3.25,
    "flt": 1.5,
    "str": "héllo ✓",
    "flag": True,
    "blob": b"\x00\x01binary\xff",
    "link": "https://example.com/a",
}


@pytest.fixture
def kitchen_store(tmp_path, kitchen_models):
    """A v1 store with 3 boxes and 30 items (every third without box, some with nil values)."""
    import datetime as dt
    import decimal
    import uuid

    v1, _ = kitchen_models
    path = str(tmp_path / "kitchen.sqlite")
    with cdmigrate.Store.create(v1, path) as store:
        boxes = [store.insert("Box", label=f"box {b}") for b in range(3)]
        for i in range(30):
            item = store.insert("Item", ITEM_VALUES)
            item["i64"] = i
            item["dec"] = decimal.Decimal("12.50") + i
            item["when"] = dt.datetime(2020, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(days=i, milliseconds=250)
            item["ident"] = uuid.UUID(int=i + 1)
            item["thing"] = bytes([i])
            if i % 3:
                item["box"] = boxes[i % 3]
            if i == 29:
                item["str"] = None
        store.save()
    return path


# Apple's stores of the renames model, written by Core Data, and the model's Xcode bundle.
RENAMES = os.path.join(ROOT, "Tests", "Fixtures", "apple-stores", "renames")
RENAMES_MODELS = os.path.join(RENAMES, "Model.xcdatamodeld")


def renames_store(tmp_path, version: str = "1.0.0") -> str:
    """A writable copy of Apple's store of the renames model at ``version``, with its -wal and
    -shm, alone in a folder ``store-<version>`` of ``tmp_path``."""
    folder = tmp_path / f"store-{version}"
    folder.mkdir()
    target = folder / f"Example_v{version}.sqlite"
    for suffix in ("", "-wal", "-shm"):
        source = os.path.join(RENAMES, f"Example_v{version}.sqlite{suffix}")
        if os.path.exists(source):
            shutil.copyfile(source, str(target) + suffix)
    return str(target)


def sha256(path: str) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def rows(path: str, sql: str, *args):
    """Rows of a query on a store, read with Python's own sqlite3 (read-only)."""
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return connection.execute(sql, args).fetchall()
    finally:
        connection.close()


def entity_number(path: str, entity: str) -> int:
    return rows(path, "SELECT Z_ENT FROM Z_PRIMARYKEY WHERE Z_NAME = ?", entity)[0][0]


def leftovers(directory: str, name: str):
    return [f for f in os.listdir(directory) if f.startswith(name)]
