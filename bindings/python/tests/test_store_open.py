"""Testing migrations on objects: a seed store of a model version made from a description
(Store.create(..., objects=...)), migrated, then opened through its own model cache
(Store.open) and read with fetch — instances, to-one and to-many relationships, ordered ones in
order; and Apple-written stores read the same way, checked against what SQLite shows."""

from __future__ import annotations

import datetime as dt
import decimal
import json
import os
import shutil
import sqlite3
import uuid
from contextlib import closing

import pytest
from conftest import ROOT

import cdmigrate
from cdmigrate import Store

APPLE = os.path.join(ROOT, "Tests", "Fixtures", "apple-stores")

LIBRARY_V1 = {
    "name": "Library",
    "versionIdentifier": "v1",
    "entities": [
        {
            "name": "Author",
            "attributes": [{"name": "name", "type": "string"}, {"name": "born", "type": "date"}],
            "relationships": [
                {"name": "books", "destination": "Book", "inverse": "author", "toMany": True, "ordered": True}
            ],
        },
        {
            "name": "Book",
            "attributes": [
                {"name": "title", "type": "string"},
                {"name": "year", "type": "integer 32"},
                {"name": "price", "type": "decimal"},
                {"name": "cover", "type": "binary"},
                {"name": "code", "type": "uuid"},
            ],
            "relationships": [{"name": "author", "destination": "Author", "inverse": "books"}],
        },
    ],
}
LIBRARY_V2 = json.loads(json.dumps(LIBRARY_V1))
LIBRARY_V2["versionIdentifier"] = "v2"
LIBRARY_V2["entities"][1]["attributes"].append({"name": "subtitle", "type": "string", "default": "none"})

CODE = uuid.UUID("123e4567-e89b-12d3-a456-426614174000")
SEED = [
    {
        "entity": "Book",
        "id": "b1",
        "values": {
            "title": "First",
            "year": 1999,
            "price": decimal.Decimal("9.99"),
            "cover": b"\x00\x01",
            "code": CODE,
        },
    },
    {
        "entity": "Author",
        "id": "ann",
        "values": {"name": "Ann", "born": dt.datetime(1970, 5, 1), "books": ["b2", "b1"]},
    },
    {"entity": "Book", "id": "b2", "values": {"title": "Second", "year": 2001}},
    {"entity": "Book", "values": {"title": "Orphan", "year": 2020}},
]


@pytest.fixture
def models():
    v1 = cdmigrate.Model.from_json(json.dumps(LIBRARY_V1))
    v2 = cdmigrate.Model.from_json(json.dumps(LIBRARY_V2))
    yield v1, v2
    v1.close()
    v2.close()


def test_seed_store_migrated_and_read_through_its_own_model(tmp_path, models):
    v1, v2 = models
    Store.create(v1, tmp_path / "v1.sqlite", objects=SEED).close()
    with cdmigrate.Migration(v1, v2, cdmigrate.MappingModel.infer(v1, v2)) as migration:
        migration.run(tmp_path / "v1.sqlite", tmp_path / "v2.sqlite")
    with Store.open(tmp_path / "v2.sqlite") as store:
        assert store.model.entity_names == ["Author", "Book"]
        assert store.count("Book") == 3
        books = store.fetch("Book", sort=[("year", False)])
        assert [b["title"] for b in books] == ["Orphan", "Second", "First"]
        assert [b["subtitle"] for b in books] == ["none"] * 3
        first = books[2]
        assert first["year"] == 1999
        assert first["price"] == decimal.Decimal("9.99")
        assert first["cover"] == b"\x00\x01"
        assert first["code"] == CODE
        author = first["author"]
        assert isinstance(author, cdmigrate.Instance) and author["name"] == "Ann"
        assert author["born"] == dt.datetime(1970, 5, 1, tzinfo=dt.timezone.utc)
        assert [b["title"] for b in author["books"]] == ["Second", "First"]  # ordered, as given
        assert books[0]["author"] is None
        assert first.object_id.primary_key == 1
        found = store.fetch("Book", "author.name == %@ AND year > $after", "Ann", variables={"after": 2000})
        assert [b["title"] for b in found] == ["Second"]
        assert len(store.fetch("Book", limit=2)) == 2
        assert store.count("Book", "author == nil") == 1


def test_fetch_errors(tmp_path, models):
    v1, _ = models
    Store.create(v1, tmp_path / "s.sqlite", objects=SEED).close()
    with Store.open(tmp_path / "s.sqlite", v1) as store:
        with pytest.raises(cdmigrate.NotFoundError, match="did you mean 'Book'"):
            store.fetch("Bok")
        with pytest.raises(cdmigrate.ExpressionSyntaxError) as raised:
            store.fetch("Book", "year > 1 AND (")
        assert raised.value.offset is not None and 0 <= raised.value.offset <= len("year > 1 AND (")
        with pytest.raises(cdmigrate.InvalidArgumentError, match="sort descriptor 1"):
            store.fetch("Book", sort=["author"])
        with pytest.raises(cdmigrate.InvalidArgumentError, match="read-only"):
            store.insert("Book", title="x")
        with pytest.raises(ValueError):
            store.fetch("Book", limit=-1)
    with pytest.raises(cdmigrate.MisuseError):
        store.fetch("Book")


def test_model_of_an_opened_store_is_usable_while_it_is_open(tmp_path, models):
    v1, _ = models
    Store.create(v1, tmp_path / "s.sqlite").close()
    store = Store.open(tmp_path / "s.sqlite")
    model = store.model
    assert model.entity_names == ["Author", "Book"]
    store.close()
    with pytest.raises(cdmigrate.MisuseError, match="closed store"):
        _ = model.entity_names


def test_seed_descriptions_from_json_text_and_files(tmp_path, models):
    v1, _ = models
    text = json.dumps(
        {
            "objects": [
                {"entity": "Author", "id": "a", "values": {"name": "Ann"}},
                {"entity": "Book", "values": {"title": "T", "author": "a"}},
            ]
        }
    )
    (tmp_path / "seed.json").write_text(text)
    for i, objects in enumerate([text, str(tmp_path / "seed.json"), tmp_path / "seed.json"]):
        Store.create(v1, tmp_path / f"s{i}.sqlite", objects=objects).close()
        with Store.open(tmp_path / f"s{i}.sqlite") as store:
            assert store.fetch("Book")[0]["author"]["name"] == "Ann"


def test_seed_errors_name_their_json_path_and_leave_no_store(tmp_path, models):
    v1, _ = models
    target = tmp_path / "bad.sqlite"
    with pytest.raises(cdmigrate.InvalidArgumentError) as raised:
        Store.create(v1, target, objects=[{"entity": "Book", "values": {"author": "nobody"}}])
    assert raised.value.path == "$[0].values.author"
    assert not target.exists()
    with pytest.raises(cdmigrate.InvalidArgumentError, match="did you mean 'title'"):
        Store.create(v1, target, objects=[{"entity": "Book", "values": {"titel": "x"}}])
    with pytest.raises(TypeError, match="cannot hold a object"):
        Store.create(v1, target, objects=[{"entity": "Book", "values": {"title": object()}}])
    assert not target.exists()


def test_store_without_model_cache_needs_a_model(tmp_path):
    folder = tmp_path / "notes"
    folder.mkdir()
    for suffix in ("", "-wal", "-shm"):
        shutil.copyfile(
            os.path.join(APPLE, "macos-notes", "NotesV7.storedata" + suffix), folder / ("NotesV7.storedata" + suffix)
        )
    path = str(folder / "NotesV7.storedata")
    with pytest.raises(cdmigrate.MissingSourceModelError, match="keeps no model"):
        Store.open(path)
    with pytest.raises(cdmigrate.MigrationIOError):
        Store.open(tmp_path / "missing.sqlite")
    # Through the model rebuilt from its schema: each note's folder and body are the rows SQLite shows.
    with cdmigrate.Model.from_store(path) as model, Store.open(path, model) as store:
        with closing(sqlite3.connect(f"file:{path}?mode=ro", uri=True)) as db:
            rows = db.execute("SELECT Z_PK, ZFOLDER, ZBODY, ZTITLE FROM ZNOTE ORDER BY Z_PK").fetchall()
        notes = store.fetch("Note")
        assert len(notes) == len(rows) > 0
        for note, (key, folder_key, body_key, title) in zip(notes, rows):
            assert note.object_id.primary_key == key
            assert note["folder"].object_id.primary_key == folder_key
            assert note["body"].object_id.primary_key == body_key
            assert note["title"] == title


def test_apple_store_opens_through_its_model_cache(tmp_path):
    for suffix in ("", "-wal", "-shm"):
        source = os.path.join(APPLE, "renames", "Example_v2.0.0.sqlite" + suffix)
        if os.path.exists(source):
            shutil.copyfile(source, tmp_path / ("Example_v2.0.0.sqlite" + suffix))
    with Store.open(tmp_path / "Example_v2.0.0.sqlite") as store:
        objects = store.fetch("BasicEntity")
        assert [o["v2_0_0_name"] for o in objects] == ["A Known Value"]


def test_create_store_command_through_the_python_entry_point(tmp_path, models):
    import subprocess
    import sys

    (tmp_path / "v1.json").write_text(json.dumps(LIBRARY_V1))
    (tmp_path / "objects.json").write_text(
        json.dumps(
            {
                "objects": [
                    {"entity": "Author", "id": "a", "values": {"name": "Ann", "born": "2001-01-02T00:00:00Z"}},
                    {"entity": "Book", "values": {"title": "T", "author": "a", "price": "1.50"}},
                ]
            }
        )
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    made = subprocess.run(
        [
            sys.executable,
            "-m",
            "cdmigrate",
            "create-store",
            str(tmp_path / "v1.json"),
            "--objects",
            str(tmp_path / "objects.json"),
            "-o",
            str(tmp_path / "s.sqlite"),
            "--json",
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert made.returncode == 0, made.stderr
    assert json.loads(made.stdout)["objects"] == 2
    with Store.open(tmp_path / "s.sqlite") as store:
        book = store.fetch("Book")[0]
        assert book["price"] == decimal.Decimal("1.50")
        assert book["author"]["born"] == dt.datetime(2001, 1, 2, tzinfo=dt.timezone.utc)
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "cdmigrate",
            "create-store",
            str(tmp_path / "v1.json"),
            "-o",
            str(tmp_path / "s.sqlite"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert again.returncode == 74


UNCLOUDNOTES = os.path.join(ROOT, "examples", "4-uncloudnotes")


@pytest.mark.parametrize("version", [1, 2, 3])
def test_seed_of_each_released_version_reaches_the_current_one(tmp_path, version):
    """docs/ci.md's test per released version, on the UnCloudNotes model set (v1 to v4, a Python
    policy for v3 → v4): a seed store per version, migrated, then read through its own model."""
    from reference_migrations import png, uncloudnotes

    image = png.encode(12, 7)
    note = {
        "entity": "Note",
        "id": "n",
        "values": {
            "title": "Groceries",
            "body": "remember the milk",
            "displayIndex": 0,
            "dateCreated": "2017-01-01T00:00:00Z",
        },
    }
    objects = [note]
    if version == 2:
        note["values"]["image"] = image
    if version == 3:
        objects.append({"entity": "Attachment", "values": {"dateCreated": 500_000_000, "image": image, "note": "n"}})
    model = cdmigrate.Model.from_file(os.path.join(UNCLOUDNOTES, f"UnCloudNotes_v{version}.model.json"))
    Store.create(model, tmp_path / "seed.sqlite", objects=objects).close()
    report = cdmigrate.migrate_store(
        tmp_path / "seed.sqlite", UNCLOUDNOTES, to=tmp_path / "current.sqlite", policies=uncloudnotes.POLICIES
    )
    assert report.store_version == f"UnCloudNotes_v{version}" and report.target_version == "UnCloudNotes_v4"
    with Store.open(tmp_path / "current.sqlite") as store:
        assert store.model.version_identifier == "v4" and "ImageAttachment" in store.model.entity_names
        notes = store.fetch("Note")
        assert [n["title"] for n in notes] == ["Groceries"]
        assert notes[0]["dateCreated"] == dt.datetime(2017, 1, 1, tzinfo=dt.timezone.utc)
        attachments = notes[0]["attachments"]
        assert len(attachments) == (0 if version == 1 else 1)
        for attachment in attachments:
            assert attachment.entity_name == "ImageAttachment"
            assert (attachment["width"], attachment["height"]) == (12.0, 7.0)
            assert attachment["caption"] == "remember the milk"
            assert attachment["note"] == notes[0]
        assert store.count("ImageAttachment", "caption BEGINSWITH %@", "remember") == len(attachments)


def test_seed_stores_are_validated_unless_told_not(tmp_path):
    model = cdmigrate.Model.from_file(os.path.join(UNCLOUDNOTES, "UnCloudNotes_v1.model.json"))
    objects = [{"entity": "Note", "values": {"title": "no body"}}]
    with pytest.raises(cdmigrate.ValidationError, match=r"Note\.body") as raised:
        Store.create(model, tmp_path / "v.sqlite", objects=objects)
    assert raised.value.code == 1570
    assert not (tmp_path / "v.sqlite").exists()
    with Store.create(model, tmp_path / "v.sqlite", objects=objects, validate=False) as store:
        assert store.count("Note", "body == nil") == 1
        with pytest.raises(cdmigrate.ValidationError):
            store.validate()
