"""One mapping model shared by migrations between different models: checking it for one
migration never changes what another one runs."""

from __future__ import annotations

import json

from conftest import KITCHEN_V1, copy_mapping, rows

import cdmigrate

# The same entities as KITCHEN_V2 with the attributes in another order, so that a mapping bound
# to one model's entities would write the other's columns.
KITCHEN_V3 = json.loads(json.dumps(KITCHEN_V1))
KITCHEN_V3["versionIdentifier"] = "v3"
KITCHEN_V3["entities"][0]["attributes"].reverse()
KITCHEN_V3["entities"][1]["attributes"].insert(0, {"name": "note", "type": "string", "optional": True})


def test_migrations_sharing_a_mapping_each_migrate_every_attribute(tmp_path, kitchen_models, kitchen_store):
    v1, v2 = kitchen_models
    v3 = cdmigrate.Model.from_json(json.dumps(KITCHEN_V3))
    mapping = cdmigrate.MappingModel.from_json(copy_mapping())
    first = cdmigrate.Migration(v1, v2, mapping)
    second = cdmigrate.Migration(v1, v3, mapping)
    mapping.validate(v1, v3)
    try:
        for migration, name in ((first, "first.sqlite"), (second, "second.sqlite")):
            report = migration.run(kitchen_store, tmp_path / name)
            assert report.destination_counts == {"Box": 3, "Item": 30}, name
            out = str(tmp_path / name)
            assert rows(out, "SELECT count(*) FROM ZITEM WHERE ZI16 = -7 AND ZSTR = 'héllo ✓'") == [(29,)], name
            assert rows(out, "SELECT count(*) FROM ZBOX WHERE ZLABEL LIKE 'box %'") == [(3,)], name
    finally:
        first.close()
        second.close()
        mapping.close()
        v3.close()
