"""Dictionaries a policy sets on a transformable attribute: Core Data archives the NSDictionary the
app's code sets (an app's ``[Int: URL]``) with its transformer, NSKeyedArchiver for Foundation's
and when none is named. A ``dict`` set on an instance, given to ``manager.create(values=…)`` or
``set_values``, or returned by a policy method reaches the store as that archive, and the
migrated store reads it back as the same ``dict`` (``cdmigrate.URL`` for NSURL values)."""

from __future__ import annotations

import datetime as dt
import json
import plistlib
import sqlite3

import pytest

import cdmigrate
from cdmigrate import URL


def gallery_model(version: str) -> str:
    return json.dumps(
        {
            "name": "Galleries",
            "versionIdentifier": version,
            "entities": [
                {
                    "name": "Gallery",
                    "attributes": [
                        {"name": "gid", "type": "string"},
                        {"name": "title", "type": "string", "optional": True},
                        {"name": "previewURLs", "type": "transformable", "optional": True},
                        {"name": "thumbnailURLs", "type": "transformable", "optional": True},
                        {"name": "meta", "type": "transformable", "optional": True},
                    ],
                }
            ],
        }
    )


def mapping(policy: str, attribute_mappings: dict | None = None) -> str:
    entity_mapping = {
        "name": "GalleryToGallery",
        "sourceEntity": "Gallery",
        "destinationEntity": "Gallery",
        "predicate": "TRUEPREDICATE",
        "policy": policy,
    }
    if attribute_mappings:
        entity_mapping["attributeMappings"] = attribute_mappings
    return json.dumps({"entityMappings": [entity_mapping]})


PREVIEWS = {1: URL("https://a/1.jpg"), 2: URL("https://a/2.jpg")}
META = {
    "tags": ["artist:x", 3, 2.5, True, None],
    "posted": dt.datetime(2021, 5, 1, 12, 30, tzinfo=dt.timezone.utc),
    "cover": b"\x89PNG",
    "nested": {7: {"deep": [URL("https://b/"), "https://b/"]}},
}


@pytest.fixture
def source(tmp_path):
    path = str(tmp_path / "galleries.sqlite")
    with cdmigrate.Model.from_json(gallery_model("1")) as model, cdmigrate.Store.create(model, path) as store:
        for gid in ("g1", "g2"):
            # A source store made with a dict too (Store.insert sets values as set_values does).
            store.insert(
                "Gallery", {"gid": gid, "title": f"Gallery {gid}", "thumbnailURLs": {5: URL(f"https://s/{gid}")}}
            )
        store.save()
    return path


def migrate(source: str, out: str, text: str, policies: dict) -> None:
    with cdmigrate.Model.from_json(gallery_model("1")) as v1, cdmigrate.Model.from_json(
        gallery_model("2")
    ) as v2, cdmigrate.MappingModel.from_json(text) as m, cdmigrate.Migration(v1, v2, m) as migration:
        migration.run(source, out, policies=policies)


def read_back(out: str) -> dict[str, dict]:
    with cdmigrate.Model.from_json(gallery_model("2")) as model, cdmigrate.Store.open(out, model) as store:
        return {g["gid"]: {k: g[k] for k in ("previewURLs", "thumbnailURLs", "meta")} for g in store.fetch("Gallery")}


def class_names(blob: bytes) -> set[str]:
    """The classes an NSKeyedArchiver archive names."""
    objects = plistlib.loads(blob)["$objects"]
    return {o["$classname"] for o in objects if isinstance(o, dict) and "$classname" in o}


class GalleryPolicy(cdmigrate.EntityMigrationPolicy):
    def create_destination_instances(self, source, mapping, manager):
        assert source["thumbnailURLs"] == {5: URL(f"https://s/{source['gid']}")}
        if source["gid"] == "g1":
            # All in the create call, as setValuesForKeysWithDictionary: does.
            gallery = manager.create(
                "Gallery", {"gid": source["gid"], "previewURLs": PREVIEWS, "meta": META}, source=source
            )
            gallery.set_values({"thumbnailURLs": {0: URL("https://t/0.jpg")}})
        else:
            gallery = manager.create("Gallery", {"gid": source["gid"]}, source=source)
            gallery["previewURLs"] = {}  # setValue:forKey: with an empty dictionary
            gallery["meta"] = [{"k": "v"}]  # an array of dictionaries
        # Read back on the destination instance before the store is written.
        assert gallery["previewURLs"] == (PREVIEWS if source["gid"] == "g1" else {})
        return gallery


def test_a_dict_set_by_a_policy_reaches_the_store_as_an_nsdictionary_archive(tmp_path, source):
    out = str(tmp_path / "out.sqlite")
    migrate(source, out, mapping("GalleryPolicy"), {"GalleryPolicy": GalleryPolicy})
    galleries = read_back(out)
    g1 = galleries["g1"]
    assert g1["previewURLs"] == PREVIEWS
    assert all(type(key) is int for key in g1["previewURLs"])
    assert all(type(url) is URL for url in g1["previewURLs"].values())
    assert g1["thumbnailURLs"] == {0: "https://t/0.jpg"}
    meta = g1["meta"]
    assert meta["tags"] == ["artist:x", 3, 2.5, True, None]
    assert meta["posted"] == META["posted"] and meta["cover"] == b"\x89PNG"
    assert meta["nested"] == {7: {"deep": ["https://b/", "https://b/"]}}
    assert [type(u) for u in meta["nested"][7]["deep"]] == [URL, str]  # NSURL and NSString kept apart
    assert galleries["g2"] == {"previewURLs": {}, "thumbnailURLs": None, "meta": [{"k": "v"}]}
    with sqlite3.connect(out) as db:
        blobs = dict(db.execute("SELECT ZGID, ZPREVIEWURLS FROM ZGALLERY"))
        (meta_blob,) = db.execute("SELECT ZMETA FROM ZGALLERY WHERE ZGID = 'g1'").fetchone()
    assert class_names(blobs["g1"]) == {"NSDictionary", "NSURL"}
    assert class_names(blobs["g2"]) == {"NSDictionary"}
    # Strings, numbers and data are plist objects of their own in an archive; the rest name classes.
    assert class_names(meta_blob) == {"NSDictionary", "NSArray", "NSDate", "NSNull", "NSURL"}


class MethodPolicy(cdmigrate.EntityMigrationPolicy):
    def previewsFor_(self, gid):
        return {1: URL(f"https://a/{gid}.jpg"), "name": gid}


def test_a_policy_method_returns_a_dict_for_a_transformable_attribute(tmp_path, source):
    out = str(tmp_path / "out.sqlite")
    text = mapping(
        "MethodPolicy", {"gid": "$source.gid", "previewURLs": 'FUNCTION($entityPolicy, "previewsFor:", $source.gid)'}
    )
    migrate(source, out, text, {"MethodPolicy": MethodPolicy})
    galleries = read_back(out)
    assert galleries["g1"]["previewURLs"] == {1: "https://a/g1.jpg", "name": "g1"}
    assert type(galleries["g2"]["previewURLs"][1]) is URL


def test_a_dict_no_archive_holds_is_refused_with_the_attribute_named(tmp_path, source):
    problems = []

    class BadPolicy(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            gallery = manager.create("Gallery", {"gid": source["gid"]}, source=source)
            for key, value in (
                ("previewURLs", {(1, 2): "a tuple key is an array"}),
                ("previewURLs", {1: object()}),
                ("previewURLs", {1: source}),
                ("title", {1: "a"}),
            ):
                with pytest.raises(cdmigrate.MigrationError) as raised:
                    gallery[key] = value
                problems.append(str(raised.value))
            deep: dict = {}
            for _ in range(70):
                deep = {"k": deep}
            with pytest.raises(cdmigrate.MigrationError, match="64 deep"):
                gallery["meta"] = deep
            # 60 levels are taken: each member's change goes up its containers once per level.
            deep = {"end": [1]}
            for _ in range(59):
                deep = {"k": deep}
            gallery["meta"] = deep
            assert gallery["meta"] == deep
            return gallery

    migrate(source, str(tmp_path / "out.sqlite"), mapping("BadPolicy"), {"BadPolicy": BadPolicy})
    assert len(problems) == 8
    assert "dictionary's key" in problems[0] and "previewURLs" in problems[0]
    assert "object" in problems[1]
    assert "instance" in problems[2] and "previewURLs" in problems[2]
    assert "title" in problems[3]
