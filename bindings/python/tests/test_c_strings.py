"""Text and paths on their way to C: a NUL byte would cut them short, so they are refused with
ValueError as ``open()`` does; paths may be str, bytes or any os.PathLike."""

from __future__ import annotations

import json
import os
import pathlib

import pytest
from conftest import KITCHEN_V1, copy_mapping

import cdmigrate


class Where(os.PathLike):
    def __init__(self, path):
        self.path = path

    def __fspath__(self):
        return self.path


def test_a_path_with_a_nul_byte_is_refused_and_nothing_is_written(tmp_path, kitchen_models, kitchen_store):
    v1, v2 = kitchen_models
    with pytest.raises(ValueError, match="NUL byte"):
        cdmigrate.Store.create(v1, str(tmp_path / "out.sqlite") + "\x00x")
    assert not (tmp_path / "out.sqlite").exists()
    with cdmigrate.MappingModel.from_json(copy_mapping()) as mapping, cdmigrate.Migration(v1, v2, mapping) as m:
        with pytest.raises(ValueError, match="destination path"):
            m.run(kitchen_store, str(tmp_path / "out.sqlite") + "\x00x")
        with pytest.raises(ValueError, match="source path"):
            m.run(kitchen_store + "\x00x", tmp_path / "out.sqlite")
        with pytest.raises(ValueError):
            m.run_in_place(kitchen_store.encode() + b"\x00")
    assert not (tmp_path / "out.sqlite").exists()
    with pytest.raises(ValueError):
        cdmigrate.Model.from_file(str(tmp_path / "m.json") + "\x00")
    with pytest.raises(ValueError):
        cdmigrate.MappingModel.from_file(Where(str(tmp_path / "m.json") + "\x00"))


def test_text_with_a_nul_byte_is_refused(kitchen_models, tmp_path):
    v1, _ = kitchen_models
    with pytest.raises(ValueError, match="model JSON"):
        cdmigrate.Model.from_json(json.dumps(KITCHEN_V1) + "\x00garbage")
    with pytest.raises(ValueError, match="mapping JSON"):
        cdmigrate.MappingModel.from_json(copy_mapping() + "\x00")
    with pytest.raises(ValueError, match="entity"):
        v1.attribute_index("Item\x00Box", "i16")
    with pytest.raises(ValueError, match="attribute"):
        v1.attribute_type("Item", "i16\x00x")
    with pytest.raises(ValueError):
        v1.entity("Box\x00")
    with cdmigrate.Store.create(v1, tmp_path / "s.sqlite") as store:
        with pytest.raises(ValueError):
            store.insert("Box\x00Item")
        box = store.insert("Box")
        with pytest.raises(ValueError):
            box["label\x00x"] = "y"
        with pytest.raises(ValueError):
            box.get("label\x00x")
        box["label"] = "with \x00 inside"  # values go with their length: kept whole
        assert box["label"] == "with \x00 inside"


def test_paths_may_be_pathlike_str_or_bytes(tmp_path, kitchen_models, kitchen_store):
    v1, v2 = kitchen_models
    model_file = tmp_path / "v1.json"
    model_file.write_text(json.dumps(KITCHEN_V1))
    mapping_file = tmp_path / "m.json"
    mapping_file.write_text(copy_mapping())
    for path in (model_file, Where(str(model_file)), str(model_file), os.fsencode(str(model_file))):
        cdmigrate.Model.from_file(path).close()
    mapping = cdmigrate.MappingModel.from_file(Where(str(mapping_file)))
    with cdmigrate.Migration(v1, v2, mapping) as m:
        m.run(pathlib.Path(kitchen_store), Where(str(tmp_path / "a.sqlite")))
        m.run(os.fsencode(kitchen_store), os.fsencode(str(tmp_path / "b.sqlite")))
    mapping.close()
    with cdmigrate.Store.create(v1, Where(str(tmp_path / "s.sqlite"))) as store:
        store.save()
    with pytest.raises(TypeError):
        cdmigrate.Model.from_file(42)
