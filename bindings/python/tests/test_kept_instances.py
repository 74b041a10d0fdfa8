"""Instances policies keep across hooks and passes (a name → Author dict, as Core Data policies
keep managed objects), memory that stays flat for policies that keep nothing, and validation errors
that name the instance and property that failed."""

from __future__ import annotations

import gc
import json

import pytest
from conftest import rows

import cdmigrate
from cdmigrate import _lib

SHELF_V1 = {
    "name": "Shelf1",
    "entities": [
        {"name": "Book", "attributes": [{"name": "title", "type": "string"}, {"name": "authorName", "type": "string"}]}
    ],
}

SHELF_V2 = {
    "name": "Shelf2",
    "entities": [
        {
            "name": "Author",
            "attributes": [{"name": "name", "type": "string"}, {"name": "rank", "type": "integer32"}],
            "relationships": [{"name": "books", "destination": "Book", "inverse": "author", "toMany": True}],
        },
        {
            "name": "Book",
            "attributes": [{"name": "title", "type": "string", "optional": False}],
            "relationships": [{"name": "author", "destination": "Author", "inverse": "books"}],
        },
    ],
}

BOOKS_PASS = {
    "name": "books",
    "entityMappings": [
        {
            "name": "BookToBook",
            "type": "custom",
            "sourceEntity": "Book",
            "destinationEntity": "Book",
            "predicate": "TRUEPREDICATE",
            "policy": "AuthorTable",
            "attributeMappings": [{"name": "title", "valueExpression": "$source.title"}],
            "relationshipMappings": [{"name": "author"}],
        }
    ],
}

RANK_PASS = {"name": "ranks", "entityMappings": [{"name": "Rank", "type": "custom", "policy": "Ranker"}]}

AUTHORS = 4


def author_of(i: int) -> str:
    return f"Author {i % AUTHORS}"


@pytest.fixture
def shelf(tmp_path):
    v1 = cdmigrate.Model.from_json(json.dumps(SHELF_V1))
    v2 = cdmigrate.Model.from_json(json.dumps(SHELF_V2))

    def make(books: int) -> str:
        path = str(tmp_path / f"shelf-{books}.sqlite")
        with cdmigrate.Store.create(v1, path) as store:
            for i in range(books):
                store.insert("Book", title=f"Book {i}", authorName=author_of(i))
            store.save()
        return path

    yield v1, v2, make
    v1.close()
    v2.close()


def run(v1, v2, mappings, source, destination, policies):
    models = [cdmigrate.MappingModel.from_json(json.dumps(m)) for m in mappings]
    try:
        with cdmigrate.Migration(v1, v2, models) as migration:
            return migration.run(source, destination, policies=policies)
    finally:
        for model in models:
            model.close()


def test_a_policy_keeps_a_name_to_author_dict_across_hooks_and_passes(tmp_path, shelf):
    v1, v2, make = shelf
    source = make(30)
    seen = {"related": 0, "ranked": 0}
    kept = []

    class AuthorTable(cdmigrate.EntityMigrationPolicy):
        def begin_entity_mapping(self, mapping, manager):
            self.authors = {}

        def create_destination_instances(self, source, mapping, manager):
            book = super().create_destination_instances(source, mapping, manager)
            name = source["authorName"]
            if name not in self.authors:
                # Made once per name, kept as an Instance (not an object ID) for later hooks.
                self.authors[name] = manager.create("Author", {"name": name})
            return book

        def create_relationships(self, destination, mapping, manager):
            [source] = manager.source_instances("BookToBook", destination)
            author = self.authors[source["authorName"]]
            assert author["name"] == source["authorName"]
            assert author.object_id.store == "destination" and source.object_id.store == "source"
            assert manager.instance_with_id(author.object_id) == author
            destination["author"] = author
            seen["related"] += 1

        def end_entity_mapping(self, mapping, manager):
            # Shared with the next pass through the manager's user info.
            manager.user_info["authors"] = self.authors
            kept.extend(self.authors.values())

    class Ranker(cdmigrate.EntityMigrationPolicy):
        def begin_entity_mapping(self, mapping, manager):
            assert manager.current_pass == 1
            for rank, (_name, author) in enumerate(sorted(manager.user_info["authors"].items()), start=1):
                author["rank"] = rank
                assert len(author["books"]) in (7, 8)
                seen["ranked"] += 1

    destination = str(tmp_path / "out.sqlite")
    run(v1, v2, [BOOKS_PASS, RANK_PASS], source, destination, {"AuthorTable": AuthorTable, "Ranker": Ranker})
    assert seen == {"related": 30, "ranked": AUTHORS}
    assert rows(destination, "SELECT COUNT(*) FROM ZAUTHOR") == [(AUTHORS,)]
    assert rows(destination, "SELECT ZNAME, ZRANK FROM ZAUTHOR ORDER BY ZRANK") == [
        (author_of(i), i + 1) for i in range(AUTHORS)
    ]
    linked = rows(destination, "SELECT b.ZTITLE, a.ZNAME FROM ZBOOK b JOIN ZAUTHOR a ON b.ZAUTHOR = a.Z_PK")
    assert sorted(linked) == sorted((f"Book {i}", author_of(i)) for i in range(30))
    # After the run the kept instances are gone: MisuseError, never a crash.
    assert len(kept) == AUTHORS
    for author in kept:
        with pytest.raises(cdmigrate.MisuseError, match="no longer valid") as caught:
            author["name"]
        assert "until instance.release() or the end of its migration run" in str(caught.value)
        assert "cdm_object_retain" not in str(caught.value)
        with pytest.raises(cdmigrate.MisuseError):
            author["rank"] = 1
        author.release()  # harmless


def test_a_released_instance_is_misuse_and_others_stay(tmp_path, shelf):
    v1, v2, make = shelf
    source = make(6)
    seen = []

    class Keep(cdmigrate.EntityMigrationPolicy):
        def begin_entity_mapping(self, mapping, manager):
            self.previous = None

        def create_destination_instances(self, source, mapping, manager):
            book = super().create_destination_instances(source, mapping, manager)
            if self.previous is not None:
                # The previous call's source is still usable: it was kept.
                seen.append(self.previous["title"])
                self.previous.release()
                with pytest.raises(cdmigrate.MisuseError, match="no longer valid"):
                    self.previous["title"]
            self.previous = source
            return book

        def create_relationships(self, destination, mapping, manager):
            pass

    run(v1, v2, [BOOKS_PASS], source, str(tmp_path / "out.sqlite"), {"AuthorTable": Keep})
    assert len(seen) == 5 and set(seen) < {f"Book {i}" for i in range(6)}


def test_memory_stays_flat_for_policies_that_keep_nothing(tmp_path, shelf):
    v1, v2, make = shelf
    source = make(3000)
    counts = []

    class KeepNothing(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            book = super().create_destination_instances(source, mapping, manager)
            book["title"] = source["title"] + "!"
            manager.fetch_source("Book", "title == %@", source["title"], limit=1)
            counts.append(_lib.lib.cdm_internal_handle_count())
            return book

        def create_relationships(self, destination, mapping, manager):
            destination["title"]
            counts.append(_lib.lib.cdm_internal_handle_count())

    gc.disable()  # only reference counting frees the instances: what hosts without cycles get
    try:
        run(v1, v2, [BOOKS_PASS], source, str(tmp_path / "out.sqlite"), {"AuthorTable": KeepNothing})
    finally:
        gc.enable()
    assert len(counts) == 6000
    # Every Instance's handle goes with it: the live handles do not grow with the rows.
    assert max(counts) - min(counts[:10]) < 16, (min(counts), max(counts))
    assert _lib.lib.cdm_internal_handle_count() == 0


def test_validation_errors_name_each_instance_and_property(tmp_path, shelf):
    v1, v2, make = shelf
    source = make(5)
    untitled = {
        "name": "untitled",
        "entityMappings": [
            {"name": "BookToBook", "sourceEntity": "Book", "destinationEntity": "Book", "predicate": "TRUEPREDICATE"}
        ],
    }
    with pytest.raises(cdmigrate.ValidationError) as caught:
        run(v1, v2, [untitled], source, str(tmp_path / "out.sqlite"), {})
    error = caught.value
    assert error.code == cdmigrate.errors.VALIDATION_MULTIPLE_ERRORS
    assert len(error.errors) == 5
    keys = []
    for one in error.errors:
        assert one.code == cdmigrate.errors.VALIDATION_MISSING_MANDATORY_PROPERTY
        assert (one.entity, one.key) == ("Book", "title")
        assert one.object_id == cdmigrate.ObjectID("destination", "Book", one.primary_key)
        assert one.uri.startswith("x-coredata://") and one.uri.endswith(f"/Book/p{one.primary_key}")
        assert one.uri in one.message
        keys.append(one.primary_key)
    assert sorted(keys) == keys and len(set(keys)) == 5

    # A single failure is the error itself, and errors holds it alone.
    make_one = make(1)
    with pytest.raises(cdmigrate.ValidationError) as caught:
        run(v1, v2, [untitled], make_one, str(tmp_path / "one.sqlite"), {})
    single = caught.value
    assert single.code == cdmigrate.errors.VALIDATION_MISSING_MANDATORY_PROPERTY
    assert [(e.code, e.entity, e.key, e.object_id) for e in single.errors] == [
        (single.code, "Book", "title", cdmigrate.ObjectID("destination", "Book", 1))
    ]
    # Other errors name no instance.
    other = cdmigrate.MigrationError("x", cdmigrate.errors.MIGRATION)
    assert other.errors == []
