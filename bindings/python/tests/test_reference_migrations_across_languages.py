"""The five reference migrations give the same destination rows in Swift, C and Python.

For each example one small source store with edge values (NFC and NFD names, white space of
every kind, time stamps past year 9999, captions that end on flags, emoji sequences and combining
marks, city names that contain the replaced name) is made here once, then migrated by the Swift
runner (``cdmigrate-examples --scenario N --source S --destination D``, built by ``swift build``),
by the C example program (``examples/c/<name> --source S --destination D``, built by ``make
test-c``) and by the Python module. Every table of the three destinations is compared row by row,
all columns but Z_OPT; Z_METADATA's Z_UUID and Z_PLIST (which holds the UUID) are left out.
Primary keys are compared as they are: the three run the same engine, which numbers instances in
creation order, and the three policies create them in the same order.

The Swift and C programs are found in the checkout (.build/debug, examples/c); when one is missing
the test is skipped, unless CDMIGRATE_CROSS_LANGUAGE=required (scripts/test.sh sets it), which
makes a missing program a failure.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess

import pytest
from conftest import ROOT
from reference_migrations import common, events, notas, png, recipes, uncloudnotes, users

import cdmigrate

SWIFT_RUNNER = os.environ.get("CDMIGRATE_EXAMPLES_RUNNER") or os.path.join(
    ROOT, ".build", "debug", "cdmigrate-examples"
)
C_PROGRAMS = {1: "notas_categorias", 2: "recipes", 3: "events_two_passes", 4: "uncloudnotes", 5: "international_users"}
REQUIRED = os.environ.get("CDMIGRATE_CROSS_LANGUAGE") == "required"


def program(path: str) -> str:
    if not os.access(path, os.X_OK):
        message = f"{path} is not built (swift build; make test-c)"
        if REQUIRED:
            pytest.fail(message)
        pytest.skip(message)
    return path


def run_swift(number: int, source: str, destination: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [program(SWIFT_RUNNER), "--scenario", str(number), "--source", source, "--destination", destination],
        capture_output=True,
        text=True,
        timeout=120,
    )


def run_c(number: int, source: str, destination: str) -> subprocess.CompletedProcess:
    path = program(os.path.join(ROOT, "examples", "c", C_PROGRAMS[number]))
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0")
    return subprocess.run(
        [path, "--source", source, "--destination", destination], capture_output=True, text=True, timeout=120, env=env
    )


def dump(path: str) -> dict:
    """Every table's rows (sorted), all columns but Z_OPT; Z_METADATA without its UUID."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        tables = [t for (t,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")]
        result = {}
        for table in tables:
            columns = [c[1] for c in db.execute(f'PRAGMA table_info("{table}")')]
            if table == "Z_METADATA":
                columns = [c for c in columns if c not in ("Z_UUID", "Z_PLIST")]
            columns = [c for c in columns if c != "Z_OPT"]
            select = ", ".join(f'"{c}"' for c in columns)
            rows = db.execute(f'SELECT {select} FROM "{table}"').fetchall()
            result[table] = (columns, sorted(rows, key=repr))
        return result
    finally:
        db.close()


def migrate_in_all_three(number: int, source: str, tmp_path, python_migrate) -> dict:
    """Migrates source in Swift, C and Python; returns {language: destination path}, each checked to succeed."""
    out = {}
    for language in ("swift", "c", "python"):
        destination = str(tmp_path / f"{language}.sqlite")
        if language == "python":
            python_migrate(source, destination)
        else:
            done = (run_swift if language == "swift" else run_c)(number, source, destination)
            assert done.returncode == 0, f"{language}: {done.stderr}"
        out[language] = destination
    return out


def assert_same_rows(destinations: dict, suffix: str = "") -> dict:
    dumps = {language: dump(path + suffix) for language, path in destinations.items()}
    for language in ("swift", "c"):
        for table in sorted(set(dumps["python"]) | set(dumps[language])):
            assert dumps[language].get(table) == dumps["python"].get(table), f"{language} and python differ in {table}"
    return dumps["python"]


def set_date(instance, key: str, seconds: float) -> None:
    """A date of any year (datetime stops at 9999)."""
    instance[key] = cdmigrate.CoreDataDate(seconds)


# ---- 1. Notas: NFC and NFD names are one Categoria, stored NFC.

CATEGORIAS = [
    "Música",
    "Mu\u0301sica",
    "Año nuevo",
    "An\u0303o nuevo",
    "Cumpleaños",
    "Trabajo",
    "trabajo",
    " Trabajo",
    "",
    None,
    "🎵 Música",
    "Ca\u0300fe\u0301",
    "Cafè\u0301",
    "한국",
    "\u1112\u1161\u11ab\u1100\u116e\u11a8",
]


def test_1_notas_gives_the_same_rows_in_swift_c_and_python(tmp_path):
    source = str(tmp_path / "source.sqlite")
    with common.model(notas.DIRECTORY, "NotasV2.model.json") as v2, cdmigrate.Store.create(v2, source) as store:
        for i in range(60):
            nota = store.insert("Nota", contenido=f"Nota {i}", fecha=cdmigrate.date_from_reference_seconds(1000.0 * i))
            categoria = CATEGORIAS[i % len(CATEGORIAS)]
            if categoria is not None:
                nota["categoria"] = categoria
            if i % 3:
                nota["etiquetas"] = "a, b"
        set_date(store.insert("Nota", contenido="far", categoria="Música"), "fecha", 299_985_683_696.75)
        store.save()
    rows = assert_same_rows(migrate_in_all_three(1, source, tmp_path, notas.migrate))
    columns, categorias = rows["ZCATEGORIA"]
    names = sorted(r[columns.index("ZNOMBRE")] for r in categorias)
    assert names == sorted({notas.nfc(c) for c in CATEGORIAS if c})  # one per NFC name, stored NFC
    assert "Música" in names and "Mu\u0301sica" not in names and "한국" in names and "한국" in names


# ---- 2. Recipes: names trimmed and split on every White_Space character.

CHEF_NAMES = [
    "  Gordon   Ramsay ",
    "Jiro\tOno",
    "山田\u3000太郎",
    "\u3000\u3000小野\u3000\u3000二郎\u3000",
    "Nigella",
    "",
    "   ",
    "Ana\u00a0María  López",
    "Zero\u200bWidth Space",
    "Line\nBreak",
    "Em\u2003Space",
    "Trailing\u3000",
    None,
    "Josée\u0301 Combining",
    "Thin\u2009Space\u202fNarrow",
    "Next\u0085Line",
]


# Canonically equivalent spellings are one Cuisine (the engine's == and Swift's String agree), named as first seen.
CUISINES = ["Japanese", "和食", "Péruvian", "Pe\u0301ruvian", "Thai", " Thai", "thai"]


def test_2_recipes_gives_the_same_rows_in_swift_c_and_python(tmp_path):
    source = str(tmp_path / "source.sqlite")
    with common.model(recipes.DIRECTORY, "RecipesV1.model.json") as v1, cdmigrate.Store.create(v1, source) as store:
        chefs = []
        for name in CHEF_NAMES:
            chef = store.insert("Chef", training="x")
            if name is not None:
                chef["name"] = name
            chefs.append(chef)
        ingredients = [store.insert("Ingredient", name=f"ingredient {i}", amount="1") for i in range(5)]
        for i in range(40):
            recipe = store.insert("Recipe", name=f"Recipe {i}", directions="d")
            if i % 7:
                recipe["cuisine"] = CUISINES[i % len(CUISINES)] if i % 5 else ""
            if i % 4:
                recipe["chef"] = chefs[i % len(chefs)]
            recipe.add("ingredients", *ingredients[: 1 + i % 5])
        store.save()
    rows = assert_same_rows(migrate_in_all_three(2, source, tmp_path, recipes.migrate))
    columns, chef_rows = rows["ZCHEF"]
    first, last = columns.index("ZFIRSTNAME"), columns.index("ZLASTNAME")
    split = {(r[first], r[last]) for r in chef_rows}
    assert ("Gordon", "Ramsay") in split and ("小野", "二郎") in split and ("Ana", "María  López") in split
    assert ("", "") in split and ("Zero\u200bWidth", "Space") in split and ("Next", "Line") in split
    columns, cuisines = rows["ZCUISINE"]
    used = {CUISINES[i % len(CUISINES)] for i in range(40) if i % 7 and i % 5}
    assert sorted(r[columns.index("ZNAME")] for r in cuisines) == sorted({notas.nfc(c) for c in used})
    assert "Pe\u0301ruvian" in used and "Péruvian" in used


# ---- 3. Events: any year prints, 11507 too.

STAMPS = [
    0.0,
    -0.5,
    1e-9,
    -1e-9,
    86_399.999,
    252_423_993_599.999,
    252_423_993_600.0,
    299_985_683_696.75,
    -63_113_904_000.0,
    -978_307_200.5,
    604_627_200 + 3_600 * 13 + 0.25,
    1e12,
]


def test_3_events_gives_the_same_rows_in_swift_c_and_python(tmp_path):
    source = str(tmp_path / "source.sqlite")
    events.write_source(source, STAMPS)
    rows = assert_same_rows(migrate_in_all_three(3, source, tmp_path, events.migrate))
    columns, printed_rows = rows["ZPRINTEDEVENT"]
    printed = {r[columns.index("ZPRINTEDDATE")] for r in printed_rows}
    assert "Mar 4, 11507 at 12:34:56 PM" in printed and "Jan 1, 10000 at 12:00:00 AM" in printed
    assert "Dec 31, 9999 at 11:59:59 PM" in printed and "Jan 1, 1 at 12:00:00 AM" in printed


def test_3_a_time_stamp_no_calendar_prints_fails_the_same_way_in_swift_c_and_python(tmp_path):
    source = str(tmp_path / "source.sqlite")
    events.write_source(source, [0.0, 1e300])
    assert run_swift(3, source, str(tmp_path / "swift.sqlite")).stderr.startswith("error 5:")
    assert run_c(3, source, str(tmp_path / "c.sqlite")).stderr.startswith("error 5:")
    # The policy's own exception ends the Python run, as every exception from a callback does.
    with pytest.raises(ValueError) as raised:
        events.migrate(source, str(tmp_path / "python.sqlite"))
    assert "out of range" in str(raised.value)
    assert not os.path.exists(str(tmp_path / "python.sqlite"))


# ---- 4. UnCloudNotes: captions are the first 80 extended grapheme clusters.

PIECES = [
    "🇸🇪",
    "🇫🇮",
    "👩‍💻",
    "👨‍👩‍👧‍👦",
    "👍🏽",
    "❤️",
    "1️⃣",
    "e\u0301",
    "a\u0323\u0302",
    "한",
    "\u1112\u1161\u11ab",
    "\r\n",
    "🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
    "x",
    "ñ",
]


def bodies():
    """For each piece, bodies whose 80th character is that piece, starts or follows it."""
    out = ["", "short"]
    for piece in PIECES:
        for before in (78, 79, 80):
            out.append("x" * before + piece * 3 + "tail")
        out.append(piece * 100)
    out.append("🇸🇪🇫" + "🇮" * 90)  # an odd run of regional indicators
    return out


def test_4_uncloudnotes_gives_the_same_rows_in_swift_c_and_python(tmp_path):
    source = str(tmp_path / "source.sqlite")
    texts = bodies()
    with common.model(uncloudnotes.DIRECTORY, "UnCloudNotes_v3.model.json") as v3, cdmigrate.Store.create(
        v3, source
    ) as store:
        for i, text in enumerate(texts):
            note = store.insert(
                "Note",
                title=f"Note {i}",
                body=text,
                displayIndex=i,
                dateCreated=cdmigrate.date_from_reference_seconds(500_000_000 + i),
            )
            attachment = store.insert(
                "Attachment",
                dateCreated=cdmigrate.date_from_reference_seconds(500_000_000 + i),
                image=png.encode(1 + i % 7, 1 + i % 5, i % 256),
            )
            attachment["note"] = note
        store.save()
    rows = assert_same_rows(migrate_in_all_three(4, source, tmp_path, lambda s, d: uncloudnotes.migrate_to_v4(s, d)))
    columns, attachments = rows["ZATTACHMENT"]
    captions = {r[columns.index("ZCAPTION")] for r in attachments}
    assert "🇸🇪" * 80 in captions and "x" * 79 + "🇸🇪" in captions and "x" * 78 + "👩‍💻" * 2 in captions
    assert "e\u0301" * 80 in captions


# ---- 5. International users: literal replacement everywhere in the city; a nil city stays nil.

USERS = [
    ("Sweden", "Trosa"),
    ("Sweden", "Östra Trosa"),
    ("Sweden", "TrosaTrosa"),
    ("Sweden", "trosa"),
    ("Sweden", "Turku"),
    ("Sweden", ""),
    ("Sweden", "Malmo\u0308"),
    ("Sweden", "Trosa\u0301"),
    ("Sweden", "xTrosa\u0301Trosa"),
    ("Sweden", "🇸🇪Trosa👍🏽"),
    ("Finland", "Turku\u200dTurku"),
    ("Finland", "Turku"),
    ("Finland", "Turkuturku Turku"),
    ("Finland", "Trosa"),
    ("Finland", "Åbo"),
    ("Norway", "Trosa"),
    ("sweden", "Trosa"),
    (" Sweden", "Trosa"),
    ("Estonia", "Turku"),
]


def make_users(path: str, users_: list) -> None:
    with common.model(users.DIRECTORY, "UsersV1.model.json") as v1, cdmigrate.Store.create(v1, path) as store:
        for i, (country, city) in enumerate(users_):
            user = store.insert("InternationalUser", name=f"User {i}", country=country)
            if city is not None:
                user["city"] = city
        store.save()


def test_5_international_users_gives_the_same_rows_in_swift_c_and_python(tmp_path):
    source = str(tmp_path / "source.sqlite")
    make_users(source, USERS)

    def both(s, d):
        users.migrate(s, d)
        users.migrate(s, d + ".no-code", with_code=False)

    destinations = migrate_in_all_three(5, source, tmp_path, both)
    with_policies = assert_same_rows(destinations)
    assert assert_same_rows(destinations, ".no-code") == with_policies  # the policies and no code agree too
    columns, swedes = with_policies["ZSWEDENUSER"]
    cities = {r[columns.index("ZCITY")] for r in swedes}
    assert cities == {
        "Nora",
        "Östra Nora",
        "NoraNora",
        "trosa",
        "Turku",
        "",
        "Malmo\u0308",
        "Trosa\u0301",
        "xTrosa\u0301Nora",
        "🇸🇪Nora👍🏽",
    }


def test_5_a_nil_city_fails_validation_in_swift_c_and_python_with_and_without_code(tmp_path):
    source = str(tmp_path / "source.sqlite")
    make_users(source, [("Sweden", "Trosa"), ("Sweden", None)])
    assert run_swift(5, source, str(tmp_path / "swift.sqlite")).stderr.startswith("error 1570:")
    assert run_c(5, source, str(tmp_path / "c.sqlite")).stderr.startswith("error 1570:")
    for with_code in (True, False):
        with pytest.raises(cdmigrate.MigrationError) as raised:
            users.migrate(source, str(tmp_path / f"python-{with_code}.sqlite"), with_code=with_code)
        assert raised.value.code == 1570
