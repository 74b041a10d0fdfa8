"""Scenario 4: UnCloudNotes — v3 → v4 with a custom policy and a child entity (ImageAttachment :
Attachment), and any store from v1 to v3 brought to v4 one version at a time."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import cdmigrate

from . import png
from .common import SeededGenerator, mapping, model, remove_store, summary
from .text import prefix_graphemes

DIRECTORY = "4-uncloudnotes"
CAPTION_LENGTH = 80
WORDS = [
    "remember",
    "the",
    "milk",
    "café",
    "naïve",
    "meeting",
    "at",
    "noon",
    "🎉",
    "photo",
    "of",
    "the",
    "whiteboard",
    "👩‍💻",
    "draft",
    "ideas",
]


class AttachmentToImageAttachmentMigrationPolicyV3toV4(cdmigrate.EntityMigrationPolicy):
    """The course's policy: makes an ImageAttachment, applies the mapping's own attribute value
    expressions (dateCreated, image), sets width and height from the PNG header, and caption to
    the first 80 characters of the note's body. Unlike the course's ``body.substring(to: 80)``, a
    shorter body (or no note) works. Characters are extended grapheme clusters, as Swift's
    Character and the C policy count them (text.py), so a flag, an emoji sequence or an accent is
    never cut."""

    def create_destination_instances(self, source, mapping, manager):
        attachment = manager.create("ImageAttachment")
        manager.apply_attribute_mappings(source, attachment)
        dimensions = png.size(source["image"])
        if dimensions is not None:
            attachment["width"], attachment["height"] = float(dimensions[0]), float(dimensions[1])
        body = source.get("note.body") or ""
        attachment["caption"] = prefix_graphemes(body, CAPTION_LENGTH)
        manager.associate(source, attachment)


POLICIES = {"AttachmentToImageAttachmentMigrationPolicyV3toV4": AttachmentToImageAttachmentMigrationPolicyV3toV4}


@dataclass
class GeneratedNote:
    title: str
    body: str
    date_created: float | None
    display_index: int
    #: v2: at most one image (on the note); v3: its attachments' images (None: an attachment without one).
    images: list[bytes | None] = field(default_factory=list)


def body(i: int, random: SeededGenerator) -> str:
    """Bodies of every length around the 80-character caption."""
    kind = i % 7
    if kind == 0:
        return ""
    if kind == 1:
        return f"Short note {i}"
    if kind == 2:
        return "x" * (79 - len(str(i))) + f"#{i}"
    if kind == 3:
        return "y" * (80 - len(str(i)) - 1) + f"#{i}" + "!"
    text = f"Note {i + 1}:"
    for _ in range(random.int(3, 60)):
        text += " " + random.pick(WORDS)
    return text


def generate_source(version: int, path: str, count: int = 240, seed: int = 4) -> list[GeneratedNote]:
    random = SeededGenerator(seed + version)
    generated: list[GeneratedNote] = []
    with model(DIRECTORY, f"UnCloudNotes_v{version}.model.json") as store_model, cdmigrate.Store.create(
        store_model, path
    ) as store:
        for i in range(count):
            note = store.insert("Note")
            g = GeneratedNote(f"Note {i + 1}", body(i, random), None, i)
            if version == 2 and random.chance(0.5):
                g.images = [png.encode(random.int(1, 160), random.int(1, 120), i % 256)]
            elif version == 3:
                for _ in range(random.int(0, 3)):
                    g.images.append(
                        png.encode(random.int(1, 160), random.int(1, 120), i % 256) if random.chance(0.8) else None
                    )
            if g.images or random.chance(0.7):
                g.date_created = 500_000_000 + i * 3_600 + random.int(0, 3_599)
            note.set_values(
                {
                    "title": g.title,
                    "body": g.body,
                    "displayIndex": g.display_index,
                    "dateCreated": None
                    if g.date_created is None
                    else cdmigrate.date_from_reference_seconds(g.date_created),
                }
            )
            if version == 2 and g.images:
                note["image"] = g.images[0]
            if version == 3:
                for k, image in enumerate(g.images):
                    attachment = store.insert(
                        "Attachment",
                        dateCreated=cdmigrate.date_from_reference_seconds((g.date_created or 500_000_000) + k),
                    )
                    if image is not None:
                        attachment["image"] = image
                    attachment["note"] = note
            generated.append(g)
        if version == 3:
            # Two attachments that belong to no note: their caption is empty.
            for k, image in enumerate([png.encode(7, 3), None]):
                attachment = store.insert(
                    "Attachment", dateCreated=cdmigrate.date_from_reference_seconds(400_000_000 + k)
                )
                if image is not None:
                    attachment["image"] = image
        store.save()
    return generated


def step(version: int, source: str, destination: str) -> cdmigrate.MigrationReport:
    """One step, version → version + 1 (MissingSourceModelError or IncompatibleVersionHashError
    when the store is not at `version`)."""
    with model(DIRECTORY, f"UnCloudNotes_v{version}.model.json") as old, model(
        DIRECTORY, f"UnCloudNotes_v{version + 1}.model.json"
    ) as new, mapping(
        DIRECTORY, f"UnCloudNotes_v{version}_to_v{version + 1}.mapping.json"
    ) as notes, cdmigrate.Migration(old, new, notes) as migration:
        return migration.run(source, destination, policies=POLICIES)


def migrate_to_v4(path: str, destination: str) -> list[tuple[str, cdmigrate.MigrationReport]]:
    """Brings a v1, v2 or v3 store to v4 one version at a time, through intermediate files that
    are removed afterwards. The store's version is the first whose step accepts it (the engine
    checks the version hashes before it writes anything)."""
    reports: list[tuple[str, cdmigrate.MigrationReport]] = []
    intermediates: list[str] = []
    current = path
    try:
        start = None
        for version in (3, 2, 1):
            target = destination if version == 3 else f"{destination}.v{version + 1}-step"
            try:
                reports.append((f"v{version} -> v{version + 1}", step(version, current, target)))
            except (cdmigrate.IncompatibleVersionHashError, cdmigrate.MissingSourceModelError):
                continue
            start = version
            if version < 3:
                intermediates.append(target)
            current = target
            break
        if start is None:
            raise cdmigrate.SourceStoreError(f"the store '{path}' matches none of the UnCloudNotes models v1–v3")
        for version in range(start + 1, 4):
            target = destination if version == 3 else f"{destination}.v{version + 1}-step"
            if version < 3:
                intermediates.append(target)
            reports.append((f"v{version} -> v{version + 1}", step(version, current, target)))
            current = target
    finally:
        for file in intermediates:
            remove_store(file)
    return reports


def run(directory: str) -> str:
    reports = []
    for version in (3, 1, 2):
        source = os.path.join(directory, f"UnCloudNotes-v{version}.sqlite")
        generate_source(version, source)
        reports += [
            r for _, r in migrate_to_v4(source, os.path.join(directory, f"UnCloudNotes-v{version}-to-v4.sqlite"))
        ]
    return summary(4, "UnCloudNotes: v3 -> v4 with inheritance, and any version up to v4", reports[:1])
