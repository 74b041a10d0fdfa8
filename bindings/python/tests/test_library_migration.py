"""A library-shaped app, migrated in two model steps with policies written in Python, and
checked row by row with Python's own sqlite3 (the same app as Tests/c/library_test.c):

  step 1 (V1 → V2): ``Book.genre``, a free-text string, becomes a shared ``Genre`` entity that the
    policy finds with a destination fetch — no policy-side dictionary;
  step 2 (V2 → V3): two mapping models run as two passes; pass 1 makes genres and authors and
    keeps source object ID → destination URI in ``manager.user_info``; pass 2's policy finds the
    instances pass 1 made by their source object IDs and links them (ordered insert, remove).
"""

from __future__ import annotations

import gc
import json
import weakref
from typing import ClassVar

import pytest
from conftest import rows, sha256

import cdmigrate

AUTHOR_V1 = [
    {
        "name": "Author",
        "attributes": [{"name": "name", "type": "string"}],
        "relationships": [{"name": "books", "destination": "Book", "inverse": "authors", "toMany": True}],
    },
    {"name": "Translator", "parent": "Author", "attributes": [{"name": "language", "type": "string"}]},
]
BOOK_ATTRIBUTES = [
    {"name": "title", "type": "string", "optional": False},
    {"name": "year", "type": "integer32"},
    {"name": "isbn", "type": "string"},
    {"name": "price", "type": "decimal"},
]
LIB_V1 = {
    "name": "LibraryV1",
    "entities": [
        *AUTHOR_V1,
        {
            "name": "Book",
            "attributes": [*BOOK_ATTRIBUTES[:1], {"name": "genre", "type": "string"}, *BOOK_ATTRIBUTES[1:]],
            "relationships": [{"name": "authors", "destination": "Author", "inverse": "books", "toMany": True}],
        },
    ],
}
LIB_V2 = {
    "name": "LibraryV2",
    "entities": [
        *AUTHOR_V1,
        {
            "name": "Genre",
            "attributes": [{"name": "name", "type": "string"}],
            "relationships": [{"name": "books", "destination": "Book", "inverse": "genre", "toMany": True}],
        },
        {
            "name": "Book",
            "attributes": BOOK_ATTRIBUTES,
            "relationships": [
                {"name": "authors", "destination": "Author", "inverse": "books", "toMany": True},
                {"name": "genre", "destination": "Genre", "inverse": "books"},
            ],
        },
    ],
}
LIB_V3 = {
    "name": "LibraryV3",
    "entities": [
        {
            "name": "Author",
            "attributes": [{"name": "name", "type": "string"}, {"name": "sortName", "type": "string"}],
            "relationships": [{"name": "books", "destination": "Book", "inverse": "authors", "toMany": True}],
        },
        {"name": "Translator", "parent": "Author", "attributes": [{"name": "language", "type": "string"}]},
        {
            "name": "Genre",
            "attributes": [{"name": "name", "type": "string"}, {"name": "code", "type": "string"}],
            "relationships": [
                {"name": "books", "destination": "Book", "inverse": "genre", "toMany": True, "ordered": True}
            ],
        },
        {
            "name": "Book",
            "attributes": BOOK_ATTRIBUTES,
            "relationships": [
                {"name": "authors", "destination": "Author", "inverse": "books", "toMany": True},
                {"name": "genre", "destination": "Genre", "inverse": "books"},
            ],
        },
    ],
}


def _di(mapping: str, path: str) -> str:
    return f'FUNCTION($manager, "destinationInstancesForEntityMappingNamed:sourceInstances:", "{mapping}", {path})'


def _copy(*names):
    return [{"name": n, "valueExpression": f"$source.{n}"} for n in names]


STEP1 = {
    "name": "V1toV2",
    "entityMappings": [
        {
            "name": "AuthorToAuthor",
            "sourceEntity": "Author",
            "destinationEntity": "Author",
            "predicate": "TRUEPREDICATE",
            "attributeMappings": _copy("name"),
            "relationshipMappings": [{"name": "books", "valueExpression": _di("BookToBook", "$source.books")}],
        },
        {
            "name": "TranslatorToTranslator",
            "sourceEntity": "Translator",
            "destinationEntity": "Translator",
            "predicate": "TRUEPREDICATE",
            "attributeMappings": _copy("name", "language"),
            "relationshipMappings": [{"name": "books", "valueExpression": _di("BookToBook", "$source.books")}],
        },
        {
            "name": "BookToBook",
            "type": "custom",
            "sourceEntity": "Book",
            "destinationEntity": "Book",
            "predicate": "TRUEPREDICATE",
            "policy": "GenrePolicy",
            "userInfo": {"modelVersion": "2", "genreEntity": "Genre"},
            "attributeMappings": _copy("title", "year", "isbn", "price"),
            "relationshipMappings": [{"name": "genre"}],
        },
    ],
}
STEP2_PASS1 = {
    "name": "V2toV3-people-and-genres",
    "entityMappings": [
        {
            "name": "GenreToGenre",
            "type": "custom",
            "sourceEntity": "Genre",
            "destinationEntity": "Genre",
            "predicate": "name != nil",
            "policy": "RememberPolicy",
            "userInfo": {"copy": "fields"},
        },
        {
            "name": "AuthorToAuthor",
            "sourceEntity": "Author",
            "destinationEntity": "Author",
            "predicate": "TRUEPREDICATE",
            "policy": "RememberPolicy",
            "attributeMappings": _copy("name"),
        },
        {
            "name": "TranslatorToTranslator",
            "sourceEntity": "Translator",
            "destinationEntity": "Translator",
            "predicate": "TRUEPREDICATE",
            "policy": "RememberPolicy",
            "attributeMappings": _copy("name", "language"),
        },
    ],
}
STEP2_PASS2 = {
    "name": "V2toV3-books",
    "entityMappings": [
        {
            "name": "BookToBook",
            "sourceEntity": "Book",
            "destinationEntity": "Book",
            "predicate": "isbn != nil",
            "policy": "LinkPolicy",
            "attributeMappings": _copy("title", "year", "isbn", "price"),
        }
    ],
}

# The generated library: deterministic, with messy genre strings.
BOOKS, AUTHORS, TRANSLATORS = 120, 12, 3
RAW_GENRES = ["fiction", " Fiction", "FICTION ", "history", "History", "science", " poetry", None, "Science "]
FIRST = [
    "Ana",
    "Bruno",
    "Carla",
    "Diego",
    "Elena",
    "Felipe",
    "Gloria",
    "Hugo",
    "Irene",
    "Jorge",
    "Karen",
    "Luis",
    "Marta",
    "Nico",
    "Olga",
]
LAST = [
    "Alonso",
    "Benitez",
    "Castro",
    "Duran",
    "Escobar",
    "Flores",
    "Garcia",
    "Herrera",
    "Ibarra",
    "Jimenez",
    "Kuri",
    "Lopez",
    "Mora",
    "Nunez",
    "Ortiz",
]


def book_author(i: int, k: int) -> int:
    return i % (AUTHORS + TRANSLATORS) if k == 0 else (i * 7 + 3) % (AUTHORS + TRANSLATORS)


def withdrawn(i: int) -> bool:
    return i % 17 == 0


def person(a: int) -> str:
    return f"{FIRST[a]} {LAST[a]}"


def normalize_genre(raw):
    """ "  fiction " → "Fiction"; None for nothing."""
    text = (raw or "").strip()
    return text[:1].upper() + text[1:].lower() if text else None


def model(document) -> cdmigrate.Model:
    return cdmigrate.Model.from_json(json.dumps(document))


def make_v1(path: str) -> None:
    import decimal

    with model(LIB_V1) as v1, cdmigrate.Store.create(v1, path) as store:
        people = [
            store.insert(
                "Translator" if a >= AUTHORS else "Author",
                name=person(a),
                **({"language": "es"} if a >= AUTHORS else {}),
            )
            for a in range(AUTHORS + TRANSLATORS)
        ]
        for i in range(BOOKS):
            book = store.insert("Book")
            book.set_values(
                {
                    "title": f"{'Withdrawn ' if withdrawn(i) else ''}Book {i}",
                    "genre": RAW_GENRES[i % len(RAW_GENRES)],
                    "year": 1950 + i % 70,
                    "isbn": f"978-{i:06d}",
                    "price": decimal.Decimal(f"{5 + i % 20}.99"),
                },
                skip_unknown=False,
            )
            book.add("authors", people[book_author(i, 0)])
            if book_author(i, 1) != book_author(i, 0):
                book.add("authors", people[book_author(i, 1)])
        store.save()


class Sentinel:
    """Something held in manager.user_info, to see it released when the run ends."""


# -- step 1 ------------------------------------------------------------------------------------


class GenrePolicy(cdmigrate.EntityMigrationPolicy):
    """BookToBook: the default behaviour (super), then the book's Genre — found with a destination
    fetch or made the first time its normalized name is seen."""

    def begin_entity_mapping(self, mapping, manager):
        self.version = int(mapping.user_info["modelVersion"])
        self.genre_entity = mapping.user_info["genreEntity"]
        self.genre_is_text = manager.source_entity("Book").attributes["genre"].type == cdmigrate.AttributeType.STRING
        self.stats = manager.user_info.setdefault("stats", {"fetches": 0, "made": 0, "books": 0})
        manager.user_info["sentinel"] = Sentinel()

    def create_destination_instances(self, source, mapping, manager):
        book = super().create_destination_instances(source, mapping, manager)
        assert self.version == 2 and self.genre_is_text
        self.stats["books"] += 1
        name = normalize_genre(source["genre"])
        if name is None:
            return book
        found = manager.fetch_destination(self.genre_entity, "name == %@", name, limit=1)
        self.stats["fetches"] += 1
        if found:
            genre = found[0]
        else:
            genre = manager.create(self.genre_entity, {"name": name})
            self.stats["made"] += 1
        book["genre"] = genre
        return book

    def create_relationships(self, destination, mapping, manager):
        super().create_relationships(destination, mapping, manager)  # the (empty) genre mapping: keeps what we set


# -- step 2 ------------------------------------------------------------------------------------


class RememberPolicy(cdmigrate.EntityMigrationPolicy):
    """Pass 1: makes genres (a generic copy of the fields, in two C calls) and authors (super, then
    a sortName), keeping source object ID → destination URI in the manager's user info."""

    def create_destination_instances(self, source, mapping, manager):
        if mapping.user_info.get("copy") == "fields":
            row = source.to_dict()
            destination = manager.create(values=row, source=source, skip_unknown=True)
            destination["code"] = row["name"][:3].upper()
        else:
            destination = super().create_destination_instances(source, mapping, manager)
            first, _, last = destination["name"].partition(" ")
            destination["sortName"] = f"{last}, {first}" if last else first
        manager.user_info.setdefault("ids", {})[source.object_id] = destination.uri
        return destination


class LinkPolicy(cdmigrate.EntityMigrationPolicy):
    """Pass 2: finds what pass 1 made by the source object IDs and links each book to it."""

    def begin_entity_mapping(self, mapping, manager):
        olga = manager.fetch_destination("Author", "name == $NAME", variables={"NAME": "Olga Ortiz"})
        manager.user_info["begin"] = (
            mapping.pass_index,
            manager.count_destination("Genre"),
            len(olga),
            olga[0].entity_name if olga else None,
            olga[0]["sortName"] if olga else None,
        )

    def lookup(self, manager, source_instance):
        uri = manager.user_info["ids"][source_instance.object_id]
        found = manager.instance_for_uri(uri)
        assert found is not None, uri
        return found

    def create_relationships(self, destination, mapping, manager):
        super().create_relationships(destination, mapping, manager)  # no relationship mappings here
        (source,) = manager.source_instances("BookToBook", destination)
        source_genre = source["genre"]
        if source_genre is not None:
            genre = self.lookup(manager, source_genre)
            destination["genre"] = genre
            genre.insert("books", 0, destination)  # newest first
        authors = [self.lookup(manager, a) for a in source["authors"]]
        destination.add("authors", *authors)
        if destination["title"].startswith("Withdrawn"):
            for author in authors:  # withdrawn books lose their authors, from the author's side
                author.remove("books", destination)
            manager.user_info["removed"] = manager.user_info.get("removed", 0) + 1

    def end_relationship_creation(self, mapping, manager):
        order = []
        for genre in manager.fetch_destination("Genre"):
            keys = [book.object_id.primary_key for book in genre["books"]]
            order.append(keys == sorted(keys, reverse=True) and len(keys) > 0)
        manager.user_info["order"] = order


def migrate(source: str, destination: str, to, mappings, policies):
    with model(LIB_V1 if to is LIB_V2 else LIB_V2) as a, model(to) as b:
        made = [cdmigrate.MappingModel.from_json(json.dumps(m)) for m in mappings]
        try:
            with cdmigrate.Migration(a, b, made) as migration:
                return migration.run(source, destination, policies=policies)
        finally:
            for m in made:
                m.close()


def test_library_in_two_steps_row_by_row(tmp_path):
    v1, v2, v3 = (str(tmp_path / f"Library-v{n}.sqlite") for n in (1, 2, 3))
    make_v1(v1)
    before = sha256(v1)
    seen = {}

    class Watching(GenrePolicy):
        def end_entity_mapping(self, mapping, manager):
            seen["stats"] = dict(self.stats)
            seen["sentinel"] = weakref.ref(manager.user_info["sentinel"])

    report = migrate(v1, v2, LIB_V2, [STEP1], {"GenrePolicy": Watching})
    gc.collect()
    assert seen["sentinel"]() is None  # the manager's user info was released when the run ended
    assert sha256(v1) == before
    assert report.destination_counts == {"Author": AUTHORS, "Translator": TRANSLATORS, "Genre": 4, "Book": BOOKS}
    with_genre = sum(1 for i in range(BOOKS) if normalize_genre(RAW_GENRES[i % len(RAW_GENRES)]))
    assert seen["stats"] == {"fetches": with_genre, "made": 4, "books": BOOKS}

    # Step 1, row by row: one Genre per normalized name, each book linked to its own.
    genres = dict(rows(v2, "SELECT Z_PK, ZNAME FROM ZGENRE"))
    assert sorted(genres.values()) == ["Fiction", "History", "Poetry", "Science"]
    books = rows(v2, "SELECT ZISBN, ZTITLE, ZYEAR, ZPRICE, ZGENRE FROM ZBOOK ORDER BY ZISBN")
    assert len(books) == BOOKS
    for i, (isbn, title, year, price, genre) in enumerate(books):
        assert (isbn, title, year) == (f"978-{i:06d}", f"{'Withdrawn ' if withdrawn(i) else ''}Book {i}", 1950 + i % 70)
        assert price == pytest.approx(5 + i % 20 + 0.99)
        assert (genres[genre] if genre is not None else None) == normalize_genre(RAW_GENRES[i % len(RAW_GENRES)])

    # Step 2: two mapping models, two passes.
    report = migrate(
        v2, v3, LIB_V3, [STEP2_PASS1, STEP2_PASS2], {"RememberPolicy": RememberPolicy, "LinkPolicy": Watching2}
    )
    assert report.destination_counts == {"Author": AUTHORS, "Translator": TRANSLATORS, "Genre": 4, "Book": BOOKS}
    assert [m.pass_index for m in report.mappings] == [0, 0, 0, 1]
    assert Watching2.seen["begin"] == (1, 4, 1, "Translator", "Ortiz, Olga")
    assert Watching2.seen["order"] == [True] * 4
    assert Watching2.seen["removed"] == len([i for i in range(BOOKS) if withdrawn(i)])
    assert Watching2.seen["ids"] == 4 + AUTHORS + TRANSLATORS

    authors = dict(rows(v3, "SELECT Z_PK, ZNAME FROM ZAUTHOR"))
    assert sorted(rows(v3, "SELECT ZNAME, ZSORTNAME FROM ZAUTHOR")) == sorted(
        (person(a), f"{LAST[a]}, {FIRST[a]}") for a in range(AUTHORS + TRANSLATORS)
    )
    genres = {pk: (name, code) for pk, name, code in rows(v3, "SELECT Z_PK, ZNAME, ZCODE FROM ZGENRE")}
    assert sorted(genres.values()) == [("Fiction", "FIC"), ("History", "HIS"), ("Poetry", "POE"), ("Science", "SCI")]
    join = [
        t
        for (t,) in rows(v3, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\'")
        if t not in ("Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE")
    ]
    assert len(join) == 1
    columns = [c[1] for c in rows(v3, f"PRAGMA table_info({join[0]})")]
    author_column = next(c for c in columns if c.endswith("AUTHORS"))
    book_column = next(c for c in columns if c.endswith("BOOKS"))
    links = {}
    for author, book in rows(v3, f"SELECT {author_column}, {book_column} FROM {join[0]}"):
        links.setdefault(book, []).append(authors[author])
    book_columns = [c[1] for c in rows(v3, "PRAGMA table_info(ZBOOK)")]
    order_column = [c for c in book_columns if c.startswith("Z_FOK")]
    assert order_column, book_columns  # Genre.books is ordered
    by_isbn = rows(
        v3, f"SELECT Z_PK, ZISBN, ZTITLE, ZYEAR, ZPRICE, ZGENRE, {order_column[0]} FROM ZBOOK ORDER BY ZISBN"
    )
    assert len(by_isbn) == BOOKS
    positions = {}
    for i, (pk, isbn, title, year, price, genre, position) in enumerate(by_isbn):
        assert (isbn, title, year) == (f"978-{i:06d}", f"{'Withdrawn ' if withdrawn(i) else ''}Book {i}", 1950 + i % 70)
        assert price == pytest.approx(5 + i % 20 + 0.99)
        expected_genre = normalize_genre(RAW_GENRES[i % len(RAW_GENRES)])
        assert (genres[genre][0] if genre is not None else None) == expected_genre
        expected_authors = [] if withdrawn(i) else sorted({person(book_author(i, 0)), person(book_author(i, 1))})
        assert sorted(links.get(pk, [])) == expected_authors
        if genre is not None:
            positions.setdefault(genre, []).append((position, pk))
    for members in positions.values():  # inserted at 0 one after the other: newest (highest Z_PK) first
        assert [pk for _, pk in sorted(members)] == sorted((pk for _, pk in members), reverse=True)


class Watching2(LinkPolicy):
    seen: ClassVar[dict] = {}

    def end_entity_mapping(self, mapping, manager):
        type(self).seen = {k: manager.user_info.get(k) for k in ("begin", "order", "removed")}
        type(self).seen["ids"] = len(manager.user_info["ids"])


def test_library_step_failing_in_pass_2_releases_user_info_and_leaves_nothing(tmp_path):
    v1, v2, v3 = (str(tmp_path / f"Library-v{n}.sqlite") for n in (1, 2, 3))
    make_v1(v1)
    migrate(v1, v2, LIB_V2, [STEP1], {"GenrePolicy": GenrePolicy})
    kept = []

    class Remember(RememberPolicy):
        def create_destination_instances(self, source, mapping, manager):
            if "sentinel" not in manager.user_info:
                manager.user_info["sentinel"] = Sentinel()
                kept.append(weakref.ref(manager.user_info["sentinel"]))
            return super().create_destination_instances(source, mapping, manager)

    class Broken(LinkPolicy):
        def create_relationships(self, destination, mapping, manager):
            manager.fetch_destination("Genre", "name ==", "x")  # a predicate that does not parse

    with pytest.raises(cdmigrate.ExpressionSyntaxError) as error:
        migrate(v2, v3, LIB_V3, [STEP2_PASS1, STEP2_PASS2], {"RememberPolicy": Remember, "LinkPolicy": Broken})
    assert "Genre" in error.value.message and "name ==" in error.value.message and error.value.offset is not None
    gc.collect()
    assert kept and kept[0]() is None
    assert not (tmp_path / "Library-v3.sqlite").exists()
