"""Library, models, mappings and stores: every public call and its error paths."""

from __future__ import annotations

import json
import os

import pytest
from conftest import KITCHEN_V1, copy_mapping, item_to_item

import cdmigrate


def test_library_versions_and_path():
    assert cdmigrate.library_version() == "0.1.0"
    assert cdmigrate.sqlite_version().startswith("3.")
    assert os.path.exists(cdmigrate.library_path())


def test_model_from_json_lists_entities_and_attributes(kitchen_models):
    v1, _ = kitchen_models
    assert v1.entity_names == ["Item", "Box"]
    assert v1.attribute_type("Item", "when") is cdmigrate.AttributeType.DATE
    assert v1.attribute_type("Item", "thing") == cdmigrate.AttributeType.TRANSFORMABLE
    assert v1.attribute_index("Item", "i16") == 0
    assert v1.attribute_index("Item", "thing") == 12
    assert "Item" in repr(v1)


def test_model_unknown_entity_or_attribute_is_not_found(kitchen_models):
    v1, _ = kitchen_models
    with pytest.raises(cdmigrate.NotFoundError) as error:
        v1.attribute_type("Nope", "x")
    assert "Nope" in str(error.value) and error.value.code == 102
    with pytest.raises(KeyError):
        v1.attribute_index("Item", "missing")


def test_model_from_file(tmp_path):
    path = tmp_path / "m.json"
    path.write_text(json.dumps(KITCHEN_V1))
    with cdmigrate.Model.from_file(path) as model:
        assert model.entity_names == ["Item", "Box"]
    assert model.closed


def test_model_invalid_json_has_code_and_message():
    with pytest.raises(cdmigrate.InvalidJSONError) as error:
        cdmigrate.Model.from_json("{ not json")
    assert error.value.code == 1 and error.value.message
    assert isinstance(error.value, ValueError)
    assert error.value.code_name


def test_model_invalid_lists_every_problem_with_paths():
    bad = {
        "name": "Bad",
        "entities": [
            {
                "name": "A",
                "attributes": [{"name": "x", "type": "nonsense"}, {"name": "n", "type": "integer16", "default": 40000}],
            }
        ],
    }
    with pytest.raises(cdmigrate.InvalidModelError) as error:
        cdmigrate.Model.from_json(json.dumps(bad))
    problems = error.value.problems
    assert len(problems) >= 2
    paths = [p.path for p in problems]
    assert "$.entities[0].attributes[0].type" in paths
    assert any("40000" in p.message for p in problems)
    assert "Problem(" in repr(problems[0])


def test_model_missing_file_is_io_error(tmp_path):
    with pytest.raises(cdmigrate.MigrationIOError) as error:
        cdmigrate.Model.from_file(tmp_path / "missing.json")
    assert "missing.json" in str(error.value) and error.value.code == 7


def test_invalid_utf8_is_encoding_error():
    with pytest.raises(cdmigrate.EncodingError) as error:
        cdmigrate.Model.from_json('{"name": "\ud800"}')
    assert error.value.code == 104


def test_model_wrong_argument_type():
    with pytest.raises(TypeError):
        cdmigrate.Model.from_json(b"{}")


def test_closed_model_is_misuse_not_crash(kitchen_models):
    model = cdmigrate.Model.from_json(json.dumps(KITCHEN_V1))
    model.close()
    model.close()  # harmless
    with pytest.raises(cdmigrate.MisuseError, match="closed"):
        _ = model.entity_names
    assert repr(model) == "<Model closed>"


def test_mapping_from_json_and_file(tmp_path, kitchen_models):
    v1, v2 = kitchen_models
    mapping = cdmigrate.MappingModel.from_json(copy_mapping())
    assert mapping.entity_mapping_names == ["BoxToBox", "ItemToItem"]
    mapping.validate(v1, v2)
    path = tmp_path / "map.json"
    path.write_text(copy_mapping())
    with cdmigrate.MappingModel.from_file(path) as again:
        assert "ItemToItem" in repr(again)
    mapping.close()
    with pytest.raises(cdmigrate.MisuseError):
        mapping.validate(v1, v2)


def test_mapping_expression_syntax_error_has_offset():
    text = item_to_item([{"name": "str", "valueExpression": "$source.str +* 2"}])
    with pytest.raises(cdmigrate.ExpressionSyntaxError) as error:
        cdmigrate.MappingModel.from_json(text)
    assert error.value.code == 4
    assert error.value.offset is not None and error.value.offset >= 0


def test_expression_error_offset_is_an_index_into_the_str():
    # The end of this text is str index 12 ("👍🏽" is two code points), Swift character 11 and
    # UTF-8 byte 20: offset is the str index, byte_offset the C API's (as sqlite3_error_offset).
    expression = "'Grüße 👍🏽' +"
    text = item_to_item([{"name": "str", "valueExpression": expression}], ensure_ascii=False)
    with pytest.raises(cdmigrate.ExpressionSyntaxError) as error:
        cdmigrate.MappingModel.from_json(text)
    assert error.value.offset == len(expression) == 12
    assert error.value.byte_offset == 20
    assert expression[: error.value.offset] == expression
    assert expression.encode("utf-8")[: error.value.byte_offset].decode("utf-8") == expression


def test_mapping_json_offsets_index_the_string_at_each_problems_path():
    # Two problems, each in its own string of the document, each with text before the fault
    # that is not ASCII; the document itself escapes them (ensure_ascii), which does not matter.
    predicate = "str == 'é€' AND"
    expression = "FUNCTION($source.str, 'ça') +* 1"
    text = item_to_item({"str": expression}, predicate=predicate)
    with pytest.raises(cdmigrate.MigrationError) as error:
        cdmigrate.MappingModel.from_json(text)
    located = {p.path: p for p in error.value.problems if p.offset is not None}
    assert len(located) == 2, [(p.path, p.message) for p in error.value.problems]
    by_text = {}
    for path, problem in located.items():
        target = predicate if path.endswith(".predicate") else expression
        by_text[target] = problem
        assert problem.byte_offset == len(target[: problem.offset].encode("utf-8"))
    assert by_text[predicate].offset == len(predicate)
    assert by_text[predicate].byte_offset == len(predicate) + 3
    assert expression[by_text[expression].offset :].startswith("* 1")
    assert by_text[expression].byte_offset == by_text[expression].offset + 1


def test_located_finds_dotted_keys_and_leaves_what_it_cannot_find():
    from cdmigrate.errors import _member, located, str_index

    document = {"a.b": {"c": ["x", "é!"]}, "a": {"b": 1}}
    assert _member(document, "$.a.b.c[1]") == "é!"
    assert _member(document, "$.a.b") == {"c": ["x", "é!"]}
    assert _member(document, "$.nope") is None and _member(document, "$.a.b.c[5]") is None
    assert str_index("é€x", 5) == 2 and str_index("abc", 0) == 0
    error = cdmigrate.ExpressionSyntaxError("bad", 4, path="$.a.b.c[1]", offset=2)
    located(error, json.dumps(document), json_document=True)
    assert (error.offset, error.byte_offset) == (1, 2)
    missing = cdmigrate.ExpressionSyntaxError("bad", 4, path="$.elsewhere", offset=7)
    located(missing, json.dumps(document), json_document=True)
    assert (missing.offset, missing.byte_offset) == (7, 7)
    plain = cdmigrate.ExpressionSyntaxError("bad", 4, offset=3)
    assert located(plain, "ü +").offset == 2


def test_mapping_that_does_not_fit_the_models(kitchen_models):
    v1, v2 = kitchen_models
    text = item_to_item([{"name": "nope", "valueExpression": "$source.alsoNope"}], destinationEntity="Nowhere")
    with cdmigrate.MappingModel.from_json(text) as mapping:
        with pytest.raises(cdmigrate.InvalidMappingError) as error:
            mapping.validate(v1, v2)
        assert "Nowhere" in str(error.value) or any("Nowhere" in p.message for p in error.value.problems)
        with pytest.raises(cdmigrate.InvalidMappingError):
            cdmigrate.Migration(v1, v2, mapping)


def test_mapping_invalid_json():
    with pytest.raises(cdmigrate.InvalidJSONError):
        cdmigrate.MappingModel.from_json("[")
    with pytest.raises(cdmigrate.MigrationIOError):
        cdmigrate.MappingModel.from_file("/nonexistent/map.json")


def test_store_create_insert_save_and_read_back(tmp_path, kitchen_models):
    from conftest import rows

    v1, _ = kitchen_models
    path = str(tmp_path / "s.sqlite")
    with cdmigrate.Store.create(v1, path) as store:
        box = store.insert("Box", {"label": "a"})
        item = store.insert("Item", str="x", box=box)
        assert item["box"] == box and box["items"] == [item]
        assert item.entity_name == "Item" and item.uri.startswith("x-coredata://")
        store.save()
    assert rows(path, "SELECT ZLABEL FROM ZBOX") == [("a",)]
    assert rows(path, "SELECT ZSTR, ZBOX FROM ZITEM") == [("x", 1)]
    with pytest.raises(cdmigrate.MisuseError):
        item["str"]  # the store is closed: its instances are gone
    assert "no longer valid" in repr(item)


def test_store_errors(tmp_path, kitchen_models):
    v1, _ = kitchen_models
    path = str(tmp_path / "s.sqlite")
    cdmigrate.Store.create(v1, path).close()
    with pytest.raises(cdmigrate.MigrationError) as error:
        cdmigrate.Store.create(v1, path)
    assert "s.sqlite" in str(error.value)
    with cdmigrate.Store.create(v1, str(tmp_path / "t.sqlite")) as store:
        with pytest.raises(cdmigrate.NotFoundError, match="Nope"):
            store.insert("Nope")
        with pytest.raises(cdmigrate.NotFoundError):
            store.insert("Item", nope=1)
    with pytest.raises(cdmigrate.MisuseError):
        store.save()
    assert repr(store) == "<Store closed>"


def test_error_classes_by_code():
    assert cdmigrate.error_class(134120) is cdmigrate.MigrationCancelledError
    assert cdmigrate.error_class(1570) is cdmigrate.ValidationError
    assert cdmigrate.error_class(424242) is cdmigrate.MigrationError
    error = cdmigrate.MigrationError("boom", 42)
    assert error.code == 42 and str(error) == "boom" and "42" in repr(error)


def test_io_errors_are_os_errors(tmp_path):
    assert issubclass(cdmigrate.MigrationIOError, OSError)
    with pytest.raises(OSError) as error:
        cdmigrate.Model.from_file(tmp_path / "missing.json")
    assert isinstance(error.value, cdmigrate.MigrationIOError) and error.value.code == 7
    assert "missing.json" in str(error.value)


def test_xcode_model_with_an_empty_uniqueness_constraint_loads_with_a_warning(tmp_path):
    # Xcode leaves <uniquenessConstraint/> for a constraint row added and never filled; momc
    # builds such a model, so it loads: the empty constraint is left out, with a warning.
    folder = tmp_path / "Model 2.xcdatamodel"
    folder.mkdir()
    (folder / "contents").write_text(
        """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<model type="com.apple.IDECoreDataModeler.DataModel" documentVersion="1.0">
    <entity name="User" representedClassName="User" syncable="YES">
        <attribute name="name" attributeType="String" defaultValueString=""/>
        <uniquenessConstraints>
            <uniquenessConstraint/>
        </uniquenessConstraints>
    </entity>
    <entity name="Album" representedClassName="Album" syncable="YES">
        <attribute name="uuid" attributeType="String" defaultValueString=""/>
        <uniquenessConstraints>
            <uniquenessConstraint>
                <constraint value="uuid"/>
            </uniquenessConstraint>
        </uniquenessConstraints>
    </entity>
</model>
""",
        encoding="utf-8",
    )
    model = cdmigrate.Model.from_file(folder)
    assert any("empty uniqueness constraint of entity 'User'" in w and "line 6" in w for w in model.warnings), (
        model.warnings
    )
    entities = {e["name"]: e for e in json.loads(model.to_json())["entities"]}
    assert not entities["User"].get("uniquenessConstraints")
    assert entities["Album"]["uniquenessConstraints"] == [["uuid"]]
