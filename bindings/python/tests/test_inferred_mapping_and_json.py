"""Model.to_json, MappingModel.to_json, MappingModel.infer (Core Data's inferred mapping model) and
Migration.check_source_version (skipping the comparison of the store's hashes with the model's)."""

from __future__ import annotations

import json

import pytest
from conftest import rows

import cdmigrate

V1 = {
    "name": "Shop",
    "versionIdentifier": "1",
    "entities": [
        {"name": "Item", "attributes": [{"name": "title", "type": "string"}, {"name": "price", "type": "double"}]}
    ],
}
# Inferable: a new optional attribute.
V2 = {
    "name": "Shop",
    "versionIdentifier": "2",
    "entities": [
        {
            "name": "Item",
            "attributes": [
                {"name": "title", "type": "string"},
                {"name": "price", "type": "double"},
                {"name": "note", "type": "string"},
            ],
        }
    ],
}
# Not inferable: a new required attribute without a default value.
STRICT = {
    "name": "Shop",
    "versionIdentifier": "3",
    "entities": [
        {
            "name": "Item",
            "attributes": [
                {"name": "title", "type": "string"},
                {"name": "price", "type": "double"},
                {"name": "rank", "type": "integer32", "optional": False},
            ],
        }
    ],
}
# V1's tables with another version hash.
V1_MODIFIED = {
    "name": "Shop",
    "versionIdentifier": "1b",
    "entities": [
        {
            "name": "Item",
            "versionHashModifier": "b",
            "attributes": [{"name": "title", "type": "string"}, {"name": "price", "type": "double"}],
        }
    ],
}


def model(document):
    return cdmigrate.Model.from_json(json.dumps(document))


def make_store(path, document=V1):
    with model(document) as m, cdmigrate.Store.create(m, path) as store:
        for title in ("pen", "ink"):
            store.insert("Item", title=title, price=2.5)
        store.save()


def test_model_json_reads_back_with_the_same_entities_and_hashes(tmp_path):
    with model(V1) as v1:
        text = v1.to_json()
        document = json.loads(text)
        assert [e["name"] for e in document["entities"]] == ["Item"]
        assert len(document["entities"][0]["versionHash"]) == 44
        with cdmigrate.Model.from_json(text) as again:
            assert again.entity_names == v1.entity_names
            store = str(tmp_path / "shop.sqlite")
            make_store(store)
            assert again.is_compatible(store)


def test_infer_gives_core_datas_entity_mappings_and_json_that_migrates(tmp_path):
    source, destination = str(tmp_path / "v1.sqlite"), str(tmp_path / "v2.sqlite")
    make_store(source)
    with model(V1) as v1, model(V2) as v2:
        with cdmigrate.MappingModel.infer(v1, v2) as inferred:
            assert inferred.entity_mapping_names == ["IEM_Transform_Item"]
            text = inferred.to_json()
        assert "IEM_Transform_Item" in json.loads(text)["entityMappings"][0]["name"]
        with cdmigrate.MappingModel.from_json(text) as mapping, cdmigrate.Migration(v1, v2, mapping) as migration:
            report = migration.run(source, destination)
    assert report.destination_counts == {"Item": 2}
    assert sorted(r[0] for r in rows(destination, "SELECT ZTITLE FROM ZITEM")) == ["ink", "pen"]


def test_infer_names_what_cannot_be_inferred():
    with model(V1) as v1, model(STRICT) as strict, pytest.raises(cdmigrate.InferredMappingModelError) as caught:
        cdmigrate.MappingModel.infer(v1, strict)
    assert caught.value.code == 134190
    assert "rank" in str(caught.value)
    with model(V1) as v1, pytest.raises(TypeError):
        cdmigrate.MappingModel.infer(v1, "v2.json")  # type: ignore[arg-type]


def test_check_source_version_can_be_turned_off(tmp_path):
    source = str(tmp_path / "v1.sqlite")
    make_store(source)
    with model(V1_MODIFIED) as modified, model(V2) as v2, cdmigrate.MappingModel.infer(modified, v2) as mapping:
        with cdmigrate.Migration(modified, v2, mapping) as migration:
            assert migration.check_source_version is True
            with pytest.raises(cdmigrate.MissingSourceModelError):
                migration.run(source, str(tmp_path / "checked.sqlite"))
            migration.check_source_version = False
            assert migration.check_source_version is False
            assert migration.run(source, str(tmp_path / "unchecked.sqlite")).destination_counts == {"Item": 2}
        with cdmigrate.Migration(modified, v2, mapping, check_source_version=False) as migration:
            assert migration.check_source_version is False
            assert migration.run(source, str(tmp_path / "flag.sqlite")).destination_counts == {"Item": 2}
