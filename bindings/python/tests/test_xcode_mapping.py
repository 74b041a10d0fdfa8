"""MappingModel.from_xcode: the course's Xcode mapping model (.xcmappingmodel) compiled against the
UnCloudNotes models of reference migration 4, run with the Python policy, and malformed documents."""

from __future__ import annotations

import os

import pytest
from conftest import EXAMPLES, ROOT, entity_number, rows
from reference_migrations import uncloudnotes
from reference_migrations.text import prefix_graphemes

import cdmigrate

FIXTURES = os.environ.get("CDMIGRATE_FIXTURES", os.path.join(ROOT, "Tests", "Fixtures"))
V3_TO_V4 = os.path.join(FIXTURES, "xcode", "UnCloudNotes", "UnCloudNotesMappingModel_v3_to_v4.xcmappingmodel")


def model(version):
    return cdmigrate.Model.from_file(os.path.join(EXAMPLES, "4-uncloudnotes", f"UnCloudNotes_v{version}.model.json"))


def test_from_xcode_reads_the_folder_and_the_file_in_mappingnumber_order():
    with model(3) as v3, model(4) as v4:
        for path in (V3_TO_V4, os.path.join(V3_TO_V4, "xcmapping.xml")):
            with cdmigrate.MappingModel.from_xcode(path, v3, v4) as mapping:
                assert mapping.entity_mapping_names == [
                    "AttachmentToAttachment",
                    "NoteToNote",
                    "AttachmentToImageAttachment",
                ]
                mapping.validate(v3, v4)
        # Models that do not fit (v4 -> v3): every problem is named.
        with pytest.raises(cdmigrate.InvalidMappingError):
            cdmigrate.MappingModel.from_xcode(V3_TO_V4, v4, v3)


def test_from_xcode_migrates_with_the_policy_under_its_xcode_name(tmp_path):
    source, destination = str(tmp_path / "v3.sqlite"), str(tmp_path / "v4.sqlite")
    generated = uncloudnotes.generate_source(3, source, count=40)
    policy = uncloudnotes.AttachmentToImageAttachmentMigrationPolicyV3toV4
    with model(3) as v3, model(4) as v4, cdmigrate.MappingModel.from_xcode(
        V3_TO_V4, v3, v4
    ) as mapping, cdmigrate.Migration(v3, v4, mapping) as migration:
        migration.run(
            source, destination, policies={"UnCloudNotes.AttachmentToImageAttachmentMigrationPolicyV3toV4": policy}
        )
    attachments = sum(len(g.images) for g in generated) + 2
    image_entity = entity_number(destination, "ImageAttachment")
    assert rows(destination, "SELECT COUNT(*) FROM ZNOTE") == [(40,)]
    # The course's file filters neither Attachment mapping: every attachment becomes both a plain
    # Attachment and an ImageAttachment, as Core Data would make them.
    assert rows(destination, f"SELECT COUNT(*) FROM ZATTACHMENT WHERE Z_ENT = {image_entity}") == [(attachments,)]
    assert rows(destination, f"SELECT COUNT(*) FROM ZATTACHMENT WHERE Z_ENT != {image_entity}") == [(attachments,)]
    captions = rows(
        destination,
        f"""SELECT a.ZCAPTION, n.ZBODY FROM ZATTACHMENT a JOIN ZNOTE n ON n.Z_PK = a.ZNOTE
                                    WHERE a.Z_ENT = {image_entity}""",
    )
    assert captions and all(caption == prefix_graphemes(body or "", 80) for caption, body in captions)


def test_from_xcode_names_the_object_and_line_of_a_malformed_document(tmp_path):
    folder = tmp_path / "Broken.xcmappingmodel"
    folder.mkdir()
    with open(os.path.join(V3_TO_V4, "xcmapping.xml"), encoding="utf-8") as f:
        text = f.read()
    (folder / "xcmapping.xml").write_text(
        text.replace(
            '<attribute name="mappingnumber" type="int16">2</attribute>',
            '<attribute name="mappingnumber" type="int16">two</attribute>',
        ),
        encoding="utf-8",
    )
    with model(3) as v3, model(4) as v4:
        with pytest.raises(cdmigrate.InvalidMappingError, match=r"z117.*line"):
            cdmigrate.MappingModel.from_xcode(folder, v3, v4)
        (folder / "xcmapping.xml").write_text("<database><object type=", encoding="utf-8")
        with pytest.raises(cdmigrate.InvalidMappingError):
            cdmigrate.MappingModel.from_xcode(folder, v3, v4)
        with pytest.raises(cdmigrate.MigrationIOError):
            cdmigrate.MappingModel.from_xcode(tmp_path / "Missing.xcmappingmodel", v3, v4)


def test_a_side_file_beside_the_mapping_model_declares_intended_losses(tmp_path):
    """<mapping model>.cdmigrate.json gives entity mappings cdmigrate.intendedLosses (docs/loss-report.md):
    a valid one loads, a mistaken one is an InvalidMappingError naming the side file."""
    import shutil

    original = os.path.join(FIXTURES, "xcode", "UnCloudNotes", "UnCloudNotesMappingModel_v2_to_v3.xcmappingmodel")
    path = str(tmp_path / "UnCloudNotes_v2_to_v3.xcmappingmodel")
    shutil.copytree(original, path)
    side = path + ".cdmigrate.json"
    with model(2) as v2, model(3) as v3:
        with open(side, "w") as f:
            f.write('{"entityMappings": {"NoteToNote": {"cdmigrate.intendedLosses": "dateCreated"}}}')
        with cdmigrate.MappingModel.from_xcode(path, v2, v3) as mapping:
            assert "NoteToNote" in mapping.entity_mapping_names
        for text, expected in [
            (
                '{"entityMappings": {"NoteToNotes": {"cdmigrate.intendedLosses": "dateCreated"}}}',
                "is not in the mapping model",
            ),
            ('{"entityMappings": {"NoteToNote": {"cdmigrate.intendedLosses": "colour"}}}', "names 'colour'"),
        ]:
            with open(side, "w") as f:
                f.write(text)
            with pytest.raises(cdmigrate.InvalidMappingError) as caught:
                cdmigrate.MappingModel.from_xcode(path, v2, v3)
            assert expected in str(caught.value) + "".join(
                str(e) for e in getattr(caught.value, "underlying", []) or []
            )
