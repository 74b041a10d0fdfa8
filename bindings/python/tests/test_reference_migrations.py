"""The five reference migrations of examples/scenarios.md with their Python policies
(examples/python/reference_migrations), each destination checked row by row with Python's own
sqlite3 module."""

from __future__ import annotations

import collections
import os

import pytest
from conftest import entity_number, leftovers, rows, sha256
from reference_migrations import events, notas, png, recipes, uncloudnotes, users
from reference_migrations.text import prefix_graphemes

import cdmigrate

REF = cdmigrate.UNIX_TO_REFERENCE


def test_1_notas_each_distinct_categoria_string_becomes_one_categoria(tmp_path):
    source, destination = str(tmp_path / "Notas-v2.sqlite"), str(tmp_path / "Notas-v3.sqlite")
    notas.generate_source(source)
    before = sha256(source)
    notas.migrate(source, destination)
    assert sha256(source) == before
    old = rows(source, "SELECT ZCONTENIDO, ZFECHA, ZETIQUETAS, ZCATEGORIA FROM ZNOTA")
    categorias = dict(rows(destination, "SELECT Z_PK, ZNOMBRE FROM ZCATEGORIA"))
    assert sorted(categorias.values()) == sorted({c for *_, c in old if c})  # one per distinct string, no duplicates
    join = next(
        r
        for r in rows(
            destination, "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'Z\\_%' ESCAPE '\\'"
        )
        if r[0] not in ("Z_PRIMARYKEY", "Z_METADATA", "Z_MODELCACHE")
    )[0]
    columns = [c[1] for c in rows(destination, f"PRAGMA table_info({join})")]
    nota_column = next(c for c in columns if c.endswith("NOTAS"))
    categoria_column = next(c for c in columns if c.endswith("CATEGORIAS"))
    links = collections.defaultdict(list)
    for nota, categoria in rows(destination, f"SELECT {nota_column}, {categoria_column} FROM {join}"):
        links[nota].append(categorias[categoria])
    new = {
        pk: (contenido, fecha, etiquetas)
        for pk, contenido, fecha, etiquetas in rows(
            destination, "SELECT Z_PK, ZCONTENIDO, ZFECHA, ZETIQUETAS FROM ZNOTA"
        )
    }
    assert len(new) == len(old) == 800
    by_content = {v[0]: (pk, v) for pk, v in new.items()}
    for contenido, fecha, etiquetas, categoria in old:
        pk, values = by_content[contenido]
        assert values == (contenido, fecha, etiquetas)
        assert links.get(pk, []) == ([categoria] if categoria else [])


def test_2_recipes_names_split_relationships_repointed_one_cuisine_per_string(tmp_path):
    source, destination = str(tmp_path / "Recipes-v1.sqlite"), str(tmp_path / "Recipes-v2.sqlite")
    recipes.generate_source(source)
    recipes.migrate(source, destination)
    chefs = rows(source, "SELECT ZNAME FROM ZCHEF ORDER BY Z_PK")
    new_chefs = rows(destination, "SELECT ZFIRSTNAME, ZLASTNAME FROM ZCHEF ORDER BY Z_PK")
    assert new_chefs == [(recipes.get_first_name(n), recipes.get_last_name(n)) for (n,) in chefs]
    cuisines = rows(destination, "SELECT ZNAME FROM ZCUISINE")
    assert sorted(c for (c,) in cuisines) == sorted({c for (c,) in rows(source, "SELECT ZCUISINE FROM ZRECIPE") if c})


def test_split_name():
    assert recipes.split_name("Juan Mari Arzak") == ("Juan", "Mari Arzak")
    assert recipes.split_name("Madonna") == ("Madonna", "")
    assert recipes.split_name("") == ("", "")
    assert recipes.split_name("山田\u3000太郎") == ("山田", "太郎")
    assert recipes.split_name("  Gordon   Ramsay ") == ("Gordon", "Ramsay")
    assert recipes.split_name("\tJiro\u00a0\u3000Ono\n") == ("Jiro", "Ono")  # every White_Space character
    assert recipes.split_name("Zero\u200bWidth") == ("Zero\u200bWidth", "")  # U+200B is not white space
    assert recipes.split_name("File\x1cSeparator") == ("File\x1cSeparator", "")  # nor U+001C (str.isspace says it is)
    assert recipes.get_first_name(None) is None and recipes.get_last_name(None) is None


def test_3_events_two_passes_double_the_rows_and_convert_exactly(tmp_path):
    source, migrated = str(tmp_path / "Events.sqlite"), str(tmp_path / "Events-v2.sqlite")
    stamps = events.generate_source(source)
    before = sha256(source)
    with events.migration() as migration:
        report = migration.run(source, migrated, policies=events.POLICIES)
    assert sha256(source) == before  # the destination is never the source
    assert report.destination_counts == {"NumericEvent": 2000, "PrintedEvent": 2000}
    assert [m.pass_index for m in report.mappings] == [0, 1]
    assert [m.entity_mapping for m in report.mappings] == ["EventToPrintedEvent", "EventToNumericEvent"]
    stored = [t for (t,) in rows(source, "SELECT ZTIMESTAMP FROM ZEVENT ORDER BY Z_PK")]
    assert stored == stamps
    numeric = sorted(t for (t,) in rows(migrated, "SELECT ZTIMESTAMP FROM ZNUMERICEVENT"))
    assert numeric == sorted(t + REF for t in stamps)  # exactly
    printed = collections.Counter(p for (p,) in rows(migrated, "SELECT ZPRINTEDDATE FROM ZPRINTEDEVENT"))
    assert printed == collections.Counter(events.medium_date(t) for t in stamps)
    assert events.medium_date(0) == "Jan 1, 2001 at 12:00:00 AM"
    assert events.medium_date(43_200) == "Jan 1, 2001 at 12:00:00 PM"
    assert events.medium_date(-978_307_200.5) == "Dec 31, 1969 at 11:59:59 PM"
    assert events.medium_date(86_399.999) == "Jan 1, 2001 at 11:59:59 PM"
    assert events.medium_date(299_985_683_696.75) == "Mar 4, 11507 at 12:34:56 PM"  # past datetime's year 9999
    assert events.medium_date(float("inf")) is None and events.medium_date(1e300) is None
    # after success the old store can be replaced by the new one
    events.replace_store(source, migrated)
    assert not os.path.exists(migrated)
    assert rows(source, "SELECT COUNT(*) FROM ZPRINTEDEVENT") == [(2000,)]
    with events.migration(step_one_in_ranges=True) as migration:
        again = str(tmp_path / "again.sqlite")
        events.generate_source(str(tmp_path / "Events2.sqlite"))
        migration.run(str(tmp_path / "Events2.sqlite"), again, policies=events.POLICIES)
    assert sorted(t for (t,) in rows(again, "SELECT ZTIMESTAMP FROM ZNUMERICEVENT")) == numeric


def test_3_events_in_place(tmp_path):
    source = str(tmp_path / "Events.sqlite")
    events.generate_source(source, count=300)
    with events.migration() as migration:
        migration.run_in_place(source, policies=events.POLICIES)
    assert rows(source, "SELECT COUNT(*) FROM ZNUMERICEVENT") == [(300,)]
    assert leftovers(str(tmp_path), "Events") == ["Events.sqlite"] or all(
        f.startswith("Events.sqlite") for f in leftovers(str(tmp_path), "Events")
    )


def test_3_printed_date_rejects_non_dates():
    with pytest.raises(TypeError):
        events.printed_date("yesterday")
    with pytest.raises(TypeError):
        events.printed_date(0)
    assert events.printed_date(None) is None and events.printed_date(cdmigrate.CoreDataDate(0)) == events.medium_date(0)


def _v4_attachments(path):
    image_ent = entity_number(path, "ImageAttachment")
    return rows(
        path,
        f"""SELECT a.Z_ENT = {image_ent}, a.ZDATECREATED, a.ZIMAGE, n.ZTITLE, a.ZCAPTION, a.ZWIDTH, a.ZHEIGHT
                          FROM ZATTACHMENT a LEFT JOIN ZNOTE n ON n.Z_PK = a.ZNOTE""",
    )


def test_4_uncloudnotes_v3_to_v4_image_attachments_with_size_and_caption(tmp_path):
    source, destination = str(tmp_path / "v3.sqlite"), str(tmp_path / "v4.sqlite")
    uncloudnotes.generate_source(3, source)
    before = sha256(source)
    reports = uncloudnotes.migrate_to_v4(source, destination)
    assert [label for label, _ in reports] == ["v3 -> v4"] and sha256(source) == before
    expected = []
    for date, image, title, body in rows(
        source,
        """SELECT a.ZDATECREATED, a.ZIMAGE, n.ZTITLE, n.ZBODY
                                                    FROM ZATTACHMENT a LEFT JOIN ZNOTE n ON n.Z_PK = a.ZNOTE""",
    ):
        if image is None:
            expected.append((0, date, None, title, None, None, None))
        else:
            width, height = png.size(image)
            expected.append((1, date, image, title, prefix_graphemes(body or "", 80), float(width), float(height)))
    actual = _v4_attachments(destination)
    assert sorted(actual, key=repr) == sorted(expected, key=repr)
    captions = [a[4] for a in actual if a[0]]
    assert "" in captions and any(len(c) == 80 for c in captions) and any(0 < len(c) < 80 for c in captions)
    assert any(a[3] is None for a in actual if a[0])  # the attachment without a note has an empty caption
    assert rows(destination, "SELECT COUNT(*) FROM ZNOTE") == [(240,)]


@pytest.mark.parametrize("version", [1, 2])
def test_4_uncloudnotes_any_version_reaches_v4(tmp_path, version):
    source, destination = str(tmp_path / f"v{version}.sqlite"), str(tmp_path / "v4.sqlite")
    generated = uncloudnotes.generate_source(version, source)
    reports = uncloudnotes.migrate_to_v4(source, destination)
    assert [label for label, _ in reports] == [f"v{v} -> v{v + 1}" for v in range(version, 4)]
    assert sorted(os.listdir(tmp_path)) == sorted(
        set(os.listdir(tmp_path))
        & {f for f in os.listdir(tmp_path) if f.startswith(("v4.sqlite", f"v{version}.sqlite"))}
    )
    notes = rows(destination, "SELECT ZTITLE, ZBODY, ZDISPLAYINDEX FROM ZNOTE ORDER BY ZDISPLAYINDEX")
    assert notes == [(g.title, g.body, g.display_index) for g in generated]
    images = [(a[3], a[2], a[5], a[6], a[4]) for a in _v4_attachments(destination) if a[0]]
    bodies = {g.title: g.body for g in generated}
    expected = [
        (g.title, img, float(png.size(img)[0]), float(png.size(img)[1]), prefix_graphemes(g.body, 80))
        for g in generated
        for img in g.images
        if img
    ]
    assert sorted(images, key=repr) == sorted(expected, key=repr)
    assert len(images) == sum(1 for g in generated for img in g.images if img) and bodies


def test_4_a_store_of_no_known_version_is_refused(tmp_path, kitchen_models, kitchen_store):
    with pytest.raises(cdmigrate.SourceStoreError, match="none of the UnCloudNotes models"):
        uncloudnotes.migrate_to_v4(kitchen_store, str(tmp_path / "v4.sqlite"))
    assert not os.path.exists(tmp_path / "v4.sqlite")


@pytest.mark.parametrize("with_code", [True, False])
def test_5_international_users_split_by_country(tmp_path, with_code):
    source, destination = str(tmp_path / "Users.sqlite"), str(tmp_path / "Users-v2.sqlite")
    users.generate_source(source)
    before = sha256(source)
    report = users.migrate(source, destination, with_code=with_code)
    assert sha256(source) == before
    old = rows(source, "SELECT ZNAME, ZCITY, ZCOUNTRY FROM ZINTERNATIONALUSER")
    sweden = sorted((n, c.replace("Trosa", "Nora")) for n, c, country in old if country == "Sweden")
    finland = sorted((n, c.replace("Turku", "Åbo")) for n, c, country in old if country == "Finland")
    assert sorted(rows(destination, "SELECT ZNAME, ZCITY FROM ZSWEDENUSER")) == sweden
    assert sorted(rows(destination, "SELECT ZNAME, ZCITY FROM ZFINLANDUSER")) == finland
    assert report.destination_counts == {"SwedenUser": len(sweden), "FinlandUser": len(finland)}
    others = sum(1 for *_, country in old if country not in ("Sweden", "Finland"))
    assert report.untaken == {"InternationalUser": others} and others > 0
    assert any(c == "Trosa" for _, c in finland)  # Trosa replaced only for Swedish users
    assert not any(c == "Trosa" for _, c in sweden)


def test_5_a_policy_failing_half_way_leaves_the_source_byte_identical_and_no_destination(tmp_path):
    source, destination = str(tmp_path / "Users.sqlite"), str(tmp_path / "Users-v2.sqlite")
    users.generate_source(source, count=500)
    before = sha256(source)
    seen = []

    class Failing(users.FinlandUserMapping):
        def create_destination_instances(self, source, mapping, manager):
            seen.append(source["name"])
            if len(seen) == 250:
                raise RuntimeError(f"cannot migrate {source['name']}")
            super().create_destination_instances(source, mapping, manager)

    with users.model(users.DIRECTORY, "UsersV1.model.json") as v1, users.model(
        users.DIRECTORY, "UsersV2.model.json"
    ) as v2, users.mapping(users.DIRECTORY, "UsersV1ToV2.mapping.json") as mapping, cdmigrate.Migration(
        v1, v2, mapping
    ) as m, pytest.raises(RuntimeError, match="cannot migrate"):
        m.run(source, destination, policies={**users.POLICIES, "FinlandUserMapping": Failing})
    assert len(seen) == 250
    assert sha256(source) == before
    assert leftovers(str(tmp_path), "Users") == ["Users.sqlite"]


def test_examples_runner_runs_every_scenario(tmp_path, capsys):
    from reference_migrations.__main__ import main

    assert main(["--keep", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert all(f"{n}. " in out for n in range(1, 6)) and "Categoria" in out and "SwedenUser" in out
    assert os.path.exists(tmp_path / "scenario-5" / "Users-v2-nocode.sqlite")
    assert os.path.exists(tmp_path / "scenario-1" / "Notas-v3.sqlite")
