"""Policy methods in relationship mappings through the Python binding: ``$manager`` passed as an
argument is the migration's MigrationManager (Core Data passes the NSMigrationManager), and a
method may return every kind of value a relationship mapping takes — one instance, None, a list or
tuple (ordered), a set (unordered), empty or not."""

from __future__ import annotations

import json
import sqlite3

import pytest

import cdmigrate


def folders_model(version: str) -> str:
    return json.dumps(
        {
            "name": "M",
            "versionIdentifier": version,
            "entities": [
                {
                    "name": "Folder",
                    "attributes": [{"name": "name", "type": "string"}],
                    "relationships": [
                        {
                            "name": "children",
                            "destination": "Folder",
                            "inverse": "parent",
                            "toMany": True,
                            "ordered": True,
                        },
                        {"name": "parent", "destination": "Folder", "inverse": "children"},
                        {"name": "related", "destination": "Folder", "inverse": "relatedBy", "toMany": True},
                        {"name": "relatedBy", "destination": "Folder", "inverse": "related", "toMany": True},
                        {"name": "best", "destination": "Folder"},
                        {"name": "also", "destination": "Folder", "toMany": True},
                    ],
                }
            ],
        }
    )


def mapping(relationships: dict) -> str:
    return json.dumps(
        {
            "entityMappings": [
                {
                    "name": "FolderToFolder",
                    "sourceEntity": "Folder",
                    "destinationEntity": "Folder",
                    "predicate": "TRUEPREDICATE",
                    "policy": "TreePolicy",
                    "attributeMappings": {"name": "$source.name"},
                    "relationshipMappings": relationships,
                }
            ]
        }
    )


@pytest.fixture
def source(tmp_path):
    path = str(tmp_path / "tree.sqlite")
    with cdmigrate.Model.from_json(folders_model("1")) as model, cdmigrate.Store.create(model, path) as store:
        root = store.insert("Folder", {"name": "root"})
        kids = [store.insert("Folder", {"name": n}) for n in "abc"]
        root.add("children", *kids)
        root.add("related", kids[0])
        store.save()
    return path


def run(tmp_path, source, relationships, policy, name="out.sqlite"):
    out = str(tmp_path / name)
    with cdmigrate.Model.from_json(folders_model("1")) as v1, cdmigrate.Model.from_json(
        folders_model("2")
    ) as v2, cdmigrate.MappingModel.from_json(mapping(relationships)) as m, cdmigrate.Migration(v1, v2, m) as migration:
        migration.run(source, out, policies={"TreePolicy": policy})
    return out


def names(db, sql, *args):
    return [row[0] for row in db.execute(sql, args)]


def test_manager_argument_and_every_kind_of_result(tmp_path, source):
    seen = []

    class TreePolicy(cdmigrate.EntityMigrationPolicy):
        def childrenFor_manager_(self, children, manager):
            seen.append(manager)
            assert manager.evaluate("$manager") is manager
            return tuple(reversed(manager.destination_instances("FolderToFolder", children)))

        def relatedFor_manager_(self, related, manager):
            return set()

        def firstOf_manager_(self, children, manager):
            found = manager.destination_instances("FolderToFolder", children)
            return found[0] if found else None

        def allOf_manager_(self, children, manager):
            return set(manager.destination_instances("FolderToFolder", children))

    out = run(
        tmp_path,
        source,
        {
            "children": 'FUNCTION($entityPolicy, "childrenFor:manager:", $source.children, $manager)',
            "related": 'FUNCTION($entityPolicy, "relatedFor:manager:", $source.related, $manager)',
            "best": 'FUNCTION($entityPolicy, "firstOf:manager:", $source.children, $manager)',
            "also": 'FUNCTION($entityPolicy, "allOf:manager:", $source.children, $manager)',
        },
        TreePolicy,
    )
    assert len(seen) == 4 and all(isinstance(m, cdmigrate.MigrationManager) for m in seen)
    with sqlite3.connect(out) as db:
        root = db.execute("SELECT Z_PK FROM ZFOLDER WHERE ZNAME = 'root'").fetchone()[0]
        assert names(db, "SELECT ZNAME FROM ZFOLDER WHERE ZPARENT = ? ORDER BY Z_FOK_PARENT", root) == ["c", "b", "a"]
        assert names(db, "SELECT b.ZNAME FROM ZFOLDER f JOIN ZFOLDER b ON b.Z_PK = f.ZBEST WHERE f.Z_PK = ?", root) == [
            "a"
        ]
        assert names(db, "SELECT ZNAME FROM ZFOLDER WHERE ZBEST IS NULL ORDER BY ZNAME") == ["a", "b", "c"]
        join = [
            t
            for (t,) in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%RELATED%' ESCAPE '\\'"
            )
        ]
        assert join and db.execute(f"SELECT COUNT(*) FROM {join[0]}").fetchone()[0] == 0, (
            "an empty set empties the relationship"
        )
        also = [c for (_, c, *_) in db.execute("PRAGMA table_info(ZFOLDER)") if c.endswith("ALSO")]
        assert also and sorted(names(db, f"SELECT ZNAME FROM ZFOLDER WHERE {also[0]} = ?", root)) == ["a", "b", "c"]


def test_a_list_result_keeps_its_order_and_a_non_instance_is_refused(tmp_path, source):
    class Listing(cdmigrate.EntityMigrationPolicy):
        def childrenFor_manager_(self, children, manager):
            found = manager.destination_instances("FolderToFolder", children)
            return [found[1], found[0], found[2]] if found else []

    out = run(
        tmp_path,
        source,
        {"children": 'FUNCTION($entityPolicy, "childrenFor:manager:", $source.children, $manager)'},
        Listing,
    )
    with sqlite3.connect(out) as db:
        root = db.execute("SELECT Z_PK FROM ZFOLDER WHERE ZNAME = 'root'").fetchone()[0]
        assert names(db, "SELECT ZNAME FROM ZFOLDER WHERE ZPARENT = ? ORDER BY Z_FOK_PARENT", root) == ["b", "a", "c"]

    class Wrong(cdmigrate.EntityMigrationPolicy):
        def childrenFor_manager_(self, children, manager):
            return ["not an instance"]

    # Plain values may fill a collection (a transformable attribute keeps them); a relationship
    # mapping refuses them, naming the relationship.
    with pytest.raises(
        cdmigrate.EntityMigrationPolicyError,
        match="relationship 'children': the expression gave a string value, not instances",
    ):
        run(
            tmp_path,
            source,
            {"children": 'FUNCTION($entityPolicy, "childrenFor:manager:", $source.children, $manager)'},
            Wrong,
            "wrong.sqlite",
        )


def test_a_host_function_gets_the_manager_too(tmp_path, source):
    seen = []

    class TreePolicy(cdmigrate.EntityMigrationPolicy):
        pass

    out = str(tmp_path / "host.sqlite")
    relationships = {"children": 'FUNCTION(CAST("Tree", "Class"), "kidsOf:manager:", $source.children, $manager)'}

    def kids_of(children, manager):
        seen.append(manager)
        return manager.destination_instances("FolderToFolder", children)

    with cdmigrate.Model.from_json(folders_model("1")) as v1, cdmigrate.Model.from_json(
        folders_model("2")
    ) as v2, cdmigrate.MappingModel.from_json(mapping(relationships)) as m, cdmigrate.Migration(v1, v2, m) as migration:
        migration.register_function("Tree", "kidsOf:manager:", kids_of)
        migration.run(source, out, policies={"TreePolicy": TreePolicy})
    assert seen and all(isinstance(m, cdmigrate.MigrationManager) for m in seen)
    with sqlite3.connect(out) as db:
        assert db.execute("SELECT COUNT(*) FROM ZFOLDER WHERE ZPARENT IS NOT NULL").fetchone()[0] == 3
