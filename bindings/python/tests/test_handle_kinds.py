"""A handle of the wrong kind through ctypes (a mapping's raw pointer passed to a model function)
is refused with CDM_MISUSE naming both kinds, never a crash."""

from __future__ import annotations

import ctypes

from conftest import copy_mapping

import cdmigrate
from cdmigrate import _lib


def test_a_mapping_handle_passed_to_model_functions_is_misuse(kitchen_models):
    v1, v2 = kitchen_models
    lib = _lib.lib
    with cdmigrate.MappingModel.from_json(copy_mapping()) as mapping:
        count = ctypes.c_size_t(77)
        assert lib.cdm_model_entity_count(mapping._ptr, ctypes.byref(count)) == cdmigrate.errors.MISUSE
        assert count.value == 77
        assert b"is a cdm_mapping, not a cdm_model" in lib.cdm_last_errmsg()
        index = ctypes.c_int()
        assert (
            lib.cdm_model_attribute_index(mapping._ptr, b"Item", b"i16", ctypes.byref(index)) == cdmigrate.errors.MISUSE
        )
        assert lib.cdm_mapping_entity_mapping_count(v1._ptr, ctypes.byref(count)) == cdmigrate.errors.MISUSE
        assert b"is a cdm_model, not a cdm_mapping" in lib.cdm_last_errmsg()
        lib.cdm_model_free(mapping._ptr)  # the wrong free function frees nothing
        assert mapping.entity_mapping_names == ["BoxToBox", "ItemToItem"]
        with cdmigrate.Migration(v1, v2, mapping) as migration:
            assert lib.cdm_migration_run(v1._ptr, b"a", b"b") == cdmigrate.errors.MISUSE
            assert b"is a cdm_model, not a cdm_migration" in lib.cdm_last_errmsg()
            assert lib.cdm_model_entity_count(migration._ptr, ctypes.byref(count)) == cdmigrate.errors.MISUSE
            assert b"is a cdm_migration, not a cdm_model" in lib.cdm_last_errmsg()


def test_a_null_out_pointer_is_misuse():
    lib = _lib.lib
    assert lib.cdm_model_entity_count(None, None) == cdmigrate.errors.MISUSE
    model = cdmigrate.Model.from_json('{"entities": [{"name": "A"}]}')
    assert lib.cdm_model_attribute_count(model._ptr, b"NoSuchEntity", None) == cdmigrate.errors.MISUSE
    assert b"count pointer is NULL" in lib.cdm_last_errmsg()
    model.close()
