"""Scenario 5: InternationalUser split into SwedenUser and FinlandUser — with two custom policies
(the blog's SwedenUserMapping and FinlandUserMapping), and with no code at all (source predicates
and a value expression)."""

from __future__ import annotations

import os

import cdmigrate

from .common import SeededGenerator, mapping, model, summary
from .text import replace_all

DIRECTORY = "5-international-users"
CITIES_BY_COUNTRY = [
    ("Sweden", 0.35, ["Stockholm", "Göteborg", "Malmö", "Uppsala", "Trosa", "Trosa", "Nora", "Västerås", "Örebro"]),
    # A few Finns live in Trosa: their city must stay Trosa.
    ("Finland", 0.30, ["Helsinki", "Espoo", "Tampere", "Turku", "Turku", "Oulu", "Vaasa", "Trosa"]),
    # Norwegians and others are not migrated, even from Trosa or Turku.
    ("Norway", 0.15, ["Oslo", "Bergen", "Trondheim", "Trosa"]),
    ("Denmark", 0.12, ["København", "Aarhus", "Odense"]),
    ("Estonia", 0.08, ["Tallinn", "Tartu", "Turku"]),
]
FIRST_NAMES = [
    "Astrid",
    "Lars",
    "Ingrid",
    "Björn",
    "Aino",
    "Mikko",
    "Sanna",
    "Jukka",
    "Nora",
    "Erik",
    "Freja",
    "Kari",
    "Liis",
    "Mads",
    "Åsa",
    "Päivi",
]
LAST_NAMES = [
    "Andersson",
    "Lindqvist",
    "Virtanen",
    "Korhonen",
    "Nieminen",
    "Hansen",
    "Nielsen",
    "Tamm",
    "Berg",
    "Öberg",
    "Mäkinen",
    "Johansson",
]


class CountryUserMapping(cdmigrate.EntityMigrationPolicy):
    """Makes `entity` only for users of `country`, copying the name and replacing one city (a
    literal replacement, as stringByReplacingOccurrencesOfString:withString: does). Users it does
    not make an instance for are not associated, so the report counts them as not taken. The
    replacement takes whole characters only (text.replace_all), as Swift and the no-code mapping."""

    country = ""
    entity = ""
    city_to_replace = ""
    replacement = ""

    def create_destination_instances(self, source, mapping, manager):
        if source["country"] != self.country:
            return
        user = manager.create(self.entity)
        user["name"] = source["name"]
        city = source["city"]
        # A nil city stays nil, as the no-code mapping's FUNCTION gives: v2's city is not
        # optional, so such a user fails validation (1570) in every language.
        user["city"] = None if city is None else replace_all(city, self.city_to_replace, self.replacement)
        manager.associate(source, user)


class SwedenUserMapping(CountryUserMapping):
    """Sweden: SwedenUser, Trosa becomes Nora."""

    country, entity, city_to_replace, replacement = "Sweden", "SwedenUser", "Trosa", "Nora"


class FinlandUserMapping(CountryUserMapping):
    """Finland: FinlandUser, Turku becomes Åbo (its Swedish name)."""

    country, entity, city_to_replace, replacement = "Finland", "FinlandUser", "Turku", "Åbo"


POLICIES = {"SwedenUserMapping": SwedenUserMapping, "FinlandUserMapping": FinlandUserMapping}


def generate_source(path: str, count: int = 2000, seed: int = 5) -> None:
    random = SeededGenerator(seed)
    with model(DIRECTORY, "UsersV1.model.json") as source_model, cdmigrate.Store.create(source_model, path) as store:
        for i in range(count):
            roll = random.unit()
            entry = CITIES_BY_COUNTRY[-1]
            for candidate in CITIES_BY_COUNTRY:
                if roll < candidate[1]:
                    entry = candidate
                    break
                roll -= candidate[1]
            name = f"{random.pick(FIRST_NAMES)} {random.pick(LAST_NAMES)} {i + 1}"
            store.insert("InternationalUser", name=name, city=random.pick(entry[2]), country=entry[0])
        store.save()


def migrate(source: str, destination: str, with_code: bool = True, progress=None) -> cdmigrate.MigrationReport:
    """With the policies (``with_code``) or with the no-code mapping."""
    name = "UsersV1ToV2.mapping.json" if with_code else "UsersV1ToV2NoCode.mapping.json"
    with model(DIRECTORY, "UsersV1.model.json") as v1, model(DIRECTORY, "UsersV2.model.json") as v2, mapping(
        DIRECTORY, name
    ) as users_mapping, cdmigrate.Migration(v1, v2, users_mapping) as migration:
        return migration.run(source, destination, policies=POLICIES if with_code else None, progress=progress)


def run(directory: str) -> str:
    source = os.path.join(directory, "Users.sqlite")
    generate_source(source)
    reports = [
        migrate(source, os.path.join(directory, "Users-v2.sqlite")),
        migrate(source, os.path.join(directory, "Users-v2-nocode.sqlite"), with_code=False),
    ]
    return summary(5, "International users split by country (policies, then no code)", reports)
