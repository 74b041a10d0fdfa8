"""Values a policy gives a transformable attribute: Core Data keeps what the attribute's value
transformer makes of them, an NSKeyedArchiver archive for Foundation's transformers and when none
is named. A policy method returning ``[]`` or a list of URLs (``[] as NSArray`` in an app's Swift
policy) reaches the store as that archive; one behind the app's own transformer needs its bytes."""

from __future__ import annotations

import json
import plistlib
import sqlite3

import pytest

import cdmigrate


def apps_model(version: str, screenshots_optional: bool) -> str:
    return json.dumps(
        {
            "name": "Apps",
            "versionIdentifier": version,
            "entities": [
                {
                    "name": "App",
                    "attributes": [
                        {"name": "name", "type": "string"},
                        {"name": "screenshotURLs", "type": "transformable", "optional": screenshots_optional},
                        {
                            "name": "icon",
                            "type": "transformable",
                            "optional": True,
                            "valueTransformerName": "ImageTransformer",
                        },
                    ],
                }
            ],
        }
    )


def app_mapping(policy: str, attribute_mappings: dict[str, str] | None = None) -> str:
    """App to App, every instance taken, by the policy named ``policy``."""
    mapping = {
        "name": "AppToApp",
        "sourceEntity": "App",
        "destinationEntity": "App",
        "predicate": "TRUEPREDICATE",
        "policy": policy,
    }
    if attribute_mappings is not None:
        mapping["attributeMappings"] = attribute_mappings
    return json.dumps({"entityMappings": [mapping]})


def migrate_apps(source: str, out: str, policy: type, attribute_mappings: dict[str, str] | None = None) -> None:
    """Migrates an Apps store from version 1 (screenshots optional) to 2 with ``policy``."""
    with cdmigrate.Model.from_json(apps_model("1", True)) as v1, cdmigrate.Model.from_json(
        apps_model("2", False)
    ) as v2, cdmigrate.MappingModel.from_json(
        app_mapping(policy.__name__, attribute_mappings)
    ) as m, cdmigrate.Migration(v1, v2, m) as migration:
        migration.run(source, out, policies={policy.__name__: policy})


class StoreAppPolicy(cdmigrate.EntityMigrationPolicy):
    def screenshotsFor_(self, name):
        return [] if name == "empty" else [f"https://example.org/{name}/1.png", 2]


def archived(blob: bytes):
    """The root of an NSKeyedArchiver archive, with arrays and their strings and numbers resolved."""
    archive = plistlib.loads(blob)
    assert archive["$archiver"] == "NSKeyedArchiver"
    objects = archive["$objects"]

    def resolve(uid):
        item = objects[uid.data] if isinstance(uid, plistlib.UID) else uid
        if isinstance(item, dict) and "NS.objects" in item:
            assert objects[item["$class"].data]["$classname"] == "NSArray"
            return [resolve(element) for element in item["NS.objects"]]
        return item

    return resolve(archive["$top"]["root"])


@pytest.fixture
def source(tmp_path):
    path = str(tmp_path / "apps.sqlite")
    with cdmigrate.Model.from_json(apps_model("1", True)) as model, cdmigrate.Store.create(model, path) as store:
        for name in ("empty", "alpha"):
            store.insert("App", {"name": name})
        store.save()
    return path


def test_a_policy_methods_list_reaches_a_transformable_attribute_as_its_keyed_archive(tmp_path, source):
    out = str(tmp_path / "out.sqlite")
    migrate_apps(
        source,
        out,
        StoreAppPolicy,
        {"name": "$source.name", "screenshotURLs": 'FUNCTION($entityPolicy, "screenshotsFor:", $source.name)'},
    )
    with sqlite3.connect(out) as db:
        rows = dict(db.execute("SELECT ZNAME, ZSCREENSHOTURLS FROM ZAPP"))
    assert archived(rows["empty"]) == []
    assert archived(rows["alpha"]) == ["https://example.org/alpha/1.png", 2]


def test_the_apps_own_transformer_takes_bytes_only(tmp_path, source):
    class IconPolicy(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            app = manager.create("App", {"name": source["name"], "screenshotURLs": b"\x00"})
            with pytest.raises(cdmigrate.MigrationError, match=r"'App\.icon' is transformed by 'ImageTransformer'"):
                app["icon"] = "icon.png"
            app["icon"] = b"\x89PNG"
            manager.associate(source, app)
            return app

    out = str(tmp_path / "icons.sqlite")
    migrate_apps(source, out, IconPolicy)
    with sqlite3.connect(out) as db:
        assert sorted(row[0] for row in db.execute("SELECT ZICON FROM ZAPP")) == [b"\x89PNG", b"\x89PNG"]


def keyed_archive(text: str) -> bytes:
    """An NSString as NSKeyedArchiver (Core Data's default transformer) archives it."""
    return plistlib.dumps(
        {
            "$version": 100000,
            "$archiver": "NSKeyedArchiver",
            "$top": {"root": plistlib.UID(1)},
            "$objects": ["$null", text],
        },
        fmt=plistlib.FMT_BINARY,
    )


def test_a_policy_reads_a_transformable_attribute_as_the_object_its_archive_holds(tmp_path):
    # Written the way the app wrote it: the column holds the archive, and the icon the app's own
    # transformer's bytes.
    path = str(tmp_path / "typed.sqlite")
    with cdmigrate.Model.from_json(apps_model("1", True)) as model, cdmigrate.Store.create(model, path) as store:
        store.insert(
            "App",
            {
                "name": "alpha",
                "screenshotURLs": keyed_archive("https://example.org/a.png"),
                "icon": keyed_archive("not mine to read"),
            },
        )
        store.save()
    seen = []

    class ReadingPolicy(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            seen.append((source["screenshotURLs"], source.to_dict()["screenshotURLs"], source["icon"]))
            return super().create_destination_instances(source, mapping, manager)

        def firstOf_(self, value):
            seen.append(value)
            return [value]

    out = str(tmp_path / "out.sqlite")
    migrate_apps(
        path,
        out,
        ReadingPolicy,
        {
            "name": "$source.name",
            "icon": "$source.icon",
            "screenshotURLs": 'FUNCTION($entityPolicy, "firstOf:", $source.screenshotURLs)',
        },
    )
    assert seen == [
        ("https://example.org/a.png", "https://example.org/a.png", keyed_archive("not mine to read")),
        "https://example.org/a.png",
    ]
    with sqlite3.connect(out) as db:
        screenshots, icon = db.execute("SELECT ZSCREENSHOTURLS, ZICON FROM ZAPP").fetchone()
    assert archived(screenshots) == ["https://example.org/a.png"]
    assert icon == keyed_archive("not mine to read"), "a copy keeps the bytes"


def keyed_archive_of_dictionary(entries: dict) -> bytes:
    """An NSDictionary of strings under integer keys as NSKeyedArchiver archives it: keys first,
    then objects, under ``NS.keys`` and ``NS.objects``."""
    keys = list(entries)
    objects: list = ["$null", None]
    objects += keys + [entries[k] for k in keys]
    uids = range(2, 2 + len(keys))
    objects[1] = {
        "$class": plistlib.UID(len(objects)),
        "NS.keys": [plistlib.UID(i) for i in uids],
        "NS.objects": [plistlib.UID(i + len(keys)) for i in uids],
    }
    objects.append({"$classname": "NSDictionary", "$classes": ["NSDictionary", "NSObject"]})
    return plistlib.dumps(
        {"$version": 100000, "$archiver": "NSKeyedArchiver", "$top": {"root": plistlib.UID(1)}, "$objects": objects},
        fmt=plistlib.FMT_BINARY,
    )


def test_a_policy_reads_a_transformable_dictionary_as_a_dict(tmp_path):
    # A gallery's previews as an app keeps them: an archived [Int: String].
    path = str(tmp_path / "galleries.sqlite")
    previews = keyed_archive_of_dictionary({1: "https://a/1.jpg", 2: "not a url"})
    with cdmigrate.Model.from_json(apps_model("1", True)) as model, cdmigrate.Store.create(model, path) as store:
        store.insert("App", {"name": "gallery", "screenshotURLs": previews})
        store.save()
    seen = []

    class PreviewPolicy(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            seen.append(source["screenshotURLs"])
            seen.append(source.to_dict()["screenshotURLs"])
            app = manager.create("App", {"name": source["name"], "screenshotURLs": b"\x00"})
            manager.associate(source, app)
            return app

    out = str(tmp_path / "out.sqlite")
    migrate_apps(path, out, PreviewPolicy)
    assert seen == [{1: "https://a/1.jpg", 2: "not a url"}] * 2
    assert all(isinstance(key, int) for key in seen[0])
