"""Loading libcdmigrate.so and declaring the C API of include/cdmigrate.h for ctypes.

Everything here is private to the package: the public classes sit on top of it. The library is
found, in order, at the path in the ``CDMIGRATE_LIBRARY`` environment variable, then beside this
file (where ``make python-package`` copies it, and where the wheel carries it). It is
self-contained (the Swift runtime is linked in statically), so no Swift toolchain is needed at run
time.

The prototypes follow the header's type rules: lengths, counts and positions are size_t
(``c_size_t``), attribute indexes, host function argc and error offsets int. Error offsets are
UTF-8 byte offsets (as sqlite3_error_offset); the binding keeps them as ``byte_offset`` and gives
``offset`` as an index into the str it was given (errors.located).
"""

from __future__ import annotations

import ctypes
import os
from ctypes import (
    CFUNCTYPE,
    POINTER,
    Structure,
    c_char_p,
    c_double,
    c_int,
    c_int64,
    c_size_t,
    c_ubyte,
    c_void_p,
)

from ._version import VERSION_NUMBER

LIBRARY_ENV = "CDMIGRATE_LIBRARY"
LIBRARY_NAME = "libcdmigrate.so"

# The header's version this binding was written against (CDM_VERSION_NUMBER's major part must
# match); generated with the package's version from the repository's VERSION file.
HEADER_VERSION_NUMBER = VERSION_NUMBER


class LibraryNotFoundError(ImportError):
    """libcdmigrate.so could not be found or loaded."""


def library_path() -> str:
    """The path the package loads libcdmigrate.so from (the environment variable wins)."""
    override = os.environ.get(LIBRARY_ENV)
    if override:
        return override
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), LIBRARY_NAME)


def _load() -> ctypes.CDLL:
    path = library_path()
    if not os.path.exists(path):
        raise LibraryNotFoundError(
            f"libcdmigrate.so not found at '{path}': build it with `make -C bindings/python python-package` "
            f"(copies it into the package) or set {LIBRARY_ENV} to its path"
        )
    try:
        return ctypes.CDLL(path)
    except OSError as error:
        raise LibraryNotFoundError(f"cannot load '{path}': {error}") from error


lib = _load()

# Opaque handles are plain void pointers; short-lived ones are tokens checked by the library, so a
# stale one gives CDM_MISUSE instead of touching freed memory.
handle = c_void_p
handle_p = POINTER(c_void_p)


class cdm_policy(Structure):
    pass


class cdm_progress(Structure):
    _fields_ = [
        ("fraction", c_double),
        ("stage", c_int),
        ("pass_", c_int),
        ("entity_mapping", c_char_p),
        ("processed", c_int64),
        ("total", c_int64),
        ("run_processed", c_int64),
        ("run_total", c_int64),
        ("step", c_int),
        ("step_count", c_int),
    ]


class cdm_field(Structure):
    """A named value (predicate arguments, bulk reads and writes). `name` and `data` are plain
    pointers: names the library hands out are interned (cached by address), data is read with
    string_at and written from bytes objects the caller keeps alive during the call."""

    _fields_ = [
        ("name", c_void_p),
        ("index", c_int),
        ("type", c_int),
        ("integer", c_int64),
        ("number", c_double),
        ("data", c_void_p),
        ("length", c_size_t),
        ("object", c_void_p),
    ]


class cdm_attribute_info(Structure):
    _fields_ = [
        ("name", c_char_p),
        ("entity", c_char_p),
        ("index", c_int),
        ("type", c_int),
        ("is_optional", c_int),
        ("is_transient", c_int),
    ]


class cdm_relationship_info(Structure):
    _fields_ = [
        ("name", c_char_p),
        ("entity", c_char_p),
        ("destination_entity", c_char_p),
        ("inverse", c_char_p),
        ("index", c_int),
        ("is_to_many", c_int),
        ("is_ordered", c_int),
        ("is_optional", c_int),
        ("min_count", c_int),
        ("max_count", c_int),
    ]


class cdm_store_entity_info(Structure):
    _fields_ = [
        ("name", c_char_p),
        ("superentity", c_char_p),
        ("entity_number", c_int),
        ("row_count", c_int64),
        ("version_hash", POINTER(ctypes.c_uint8)),
        ("version_hash_length", c_size_t),
    ]


class cdm_version_difference(Structure):
    _fields_ = [
        ("entity", c_char_p),
        ("store_hash", POINTER(ctypes.c_uint8)),
        ("store_hash_length", c_size_t),
        ("model_hash", POINTER(ctypes.c_uint8)),
        ("model_hash_length", c_size_t),
    ]


HOOK = CFUNCTYPE(c_int, c_void_p, c_void_p)
INSTANCE_HOOK = CFUNCTYPE(c_int, c_void_p, c_void_p, c_void_p)
BATCH_HOOK = CFUNCTYPE(c_int, c_void_p, c_void_p, c_void_p)
FUNCTION = CFUNCTYPE(c_int, c_void_p, c_int, POINTER(c_void_p), c_void_p, c_void_p)
POLICY_METHOD = CFUNCTYPE(c_int, c_void_p, c_char_p, c_int, POINTER(c_void_p), c_void_p, c_void_p)
PROGRESS = CFUNCTYPE(c_int, POINTER(cdm_progress), c_void_p)
DESTROY = CFUNCTYPE(None, c_void_p)

cdm_policy._fields_ = [
    ("begin", HOOK),
    ("create_destination_instances", INSTANCE_HOOK),
    ("end_instance_creation", HOOK),
    ("create_relationships", INSTANCE_HOOK),
    ("end_relationship_creation", HOOK),
    ("perform_custom_validation", HOOK),
    ("end", HOOK),
    ("create_destination_instances_batch", BATCH_HOOK),
]

_out_ptr = POINTER(c_void_p)
_out_str = POINTER(c_char_p)
_out_int = POINTER(c_int)
_out_size = POINTER(c_size_t)
_fields = POINTER(cdm_field)
_objects = POINTER(POINTER(c_void_p))


class cdm_sort_descriptor(Structure):
    """An attribute key and a direction (non-zero ascending), for cdm_context_fetch."""

    _fields_ = [("key", c_char_p), ("ascending", c_int)]


# cdm_command_line_policy_loader: (user, name, migration, message out) -> result code.
COMMAND_LINE_POLICY_LOADER = CFUNCTYPE(c_int, c_void_p, c_char_p, c_void_p, POINTER(c_char_p))


class cdm_command_line_options(Structure):
    """What python -m cdmigrate and the console script give cdm_command_line_run."""

    _fields_ = [
        ("child_command", POINTER(c_char_p)),
        ("child_command_count", c_size_t),
        ("load_policies", COMMAND_LINE_POLICY_LOADER),
        ("user", c_void_p),
    ]


# name: (restype, argtypes). c_char_p results are turned into bytes by ctypes (a copy), which is
# what we want for strings the library owns only until its next call.
_PROTOTYPES = {
    "cdm_libversion": (c_char_p, []),
    "cdm_libversion_number": (c_int, []),
    "cdm_sqlite_version": (c_char_p, []),
    "cdm_free": (None, [c_void_p]),
    "cdm_errstr": (c_char_p, [c_int]),
    "cdm_error_code": (c_int, [c_void_p]),
    "cdm_error_message": (c_char_p, [c_void_p]),
    "cdm_error_path": (c_char_p, [c_void_p]),
    "cdm_error_offset": (c_int, [c_void_p]),
    "cdm_error_count": (c_size_t, [c_void_p]),
    "cdm_error_at": (c_void_p, [c_void_p, c_size_t]),
    "cdm_error_entity": (c_char_p, [c_void_p]),
    "cdm_error_object_uri": (c_char_p, [c_void_p]),
    "cdm_error_primary_key": (c_int64, [c_void_p]),
    "cdm_error_key": (c_char_p, [c_void_p]),
    "cdm_last_errcode": (c_int, []),
    "cdm_last_errmsg": (c_char_p, []),
    "cdm_last_error": (c_void_p, []),
    # models
    "cdm_model_from_json": (c_int, [c_char_p, _out_ptr]),
    "cdm_model_from_file": (c_int, [c_char_p, _out_ptr]),
    "cdm_model_from_store": (c_int, [c_char_p, _out_ptr]),
    "cdm_model_warnings_json": (c_int, [c_void_p, POINTER(c_void_p)]),
    "cdm_model_free": (None, [c_void_p]),
    "cdm_model_error": (c_void_p, [c_void_p]),
    "cdm_model_entity_count": (c_int, [c_void_p, _out_size]),
    "cdm_model_entity_at": (c_int, [c_void_p, c_size_t, _out_str]),
    "cdm_model_attribute_index": (c_int, [c_void_p, c_char_p, c_char_p, _out_int]),
    "cdm_model_attribute_type": (c_int, [c_void_p, c_char_p, c_char_p, _out_int]),
    "cdm_model_json": (c_int, [c_void_p, POINTER(c_void_p)]),
    # mappings
    "cdm_mapping_from_json": (c_int, [c_char_p, _out_ptr]),
    "cdm_mapping_from_file": (c_int, [c_char_p, _out_ptr]),
    "cdm_mapping_from_xcode_file": (c_int, [c_char_p, c_void_p, c_void_p, _out_ptr]),
    "cdm_mapping_free": (None, [c_void_p]),
    "cdm_mapping_validate": (c_int, [c_void_p, c_void_p, c_void_p]),
    "cdm_mapping_error": (c_void_p, [c_void_p]),
    "cdm_mapping_entity_mapping_count": (c_int, [c_void_p, _out_size]),
    "cdm_mapping_entity_mapping_at": (c_int, [c_void_p, c_size_t, _out_str]),
    "cdm_mapping_infer": (c_int, [c_void_p, c_void_p, _out_ptr]),
    "cdm_mapping_json": (c_int, [c_void_p, POINTER(c_void_p)]),
    # migrations
    "cdm_migration_new": (c_int, [c_void_p, c_void_p, POINTER(c_void_p), c_size_t, _out_ptr]),
    "cdm_migration_free": (c_int, [c_void_p]),
    "cdm_migration_set_batch_size": (c_int, [c_void_p, c_size_t]),
    # batches (a policy's batch hook)
    "cdm_batch_count": (c_int, [c_void_p, _out_size]),
    "cdm_batch_source_keys": (c_int, [c_void_p, POINTER(POINTER(c_int64)), _out_size]),
    "cdm_batch_column_json": (c_int, [c_void_p, c_char_p, _out_str]),
    "cdm_batch_apply_default": (c_int, [c_void_p, POINTER(POINTER(c_int64)), _out_size]),
    "cdm_batch_apply_default_numbered": (c_int, [c_void_p, POINTER(POINTER(c_int64)), _out_size]),
    "cdm_batch_associate": (c_int, [c_void_p, c_char_p, POINTER(c_int64), POINTER(c_int64), c_size_t]),
    "cdm_context_create_instances_json": (c_int, [c_void_p, c_char_p, c_char_p, POINTER(POINTER(c_int64)), _out_size]),
    "cdm_context_relate": (c_int, [c_void_p, c_char_p, c_char_p, POINTER(c_int64), POINTER(c_int64), c_size_t]),
    "cdm_batch_columns": (
        c_int,
        [
            c_void_p,
            POINTER(c_char_p),
            c_size_t,
            POINTER(c_int),
            POINTER(c_void_p),
            POINTER(c_char_p),
            POINTER(POINTER(c_int64)),
            POINTER(c_size_t),
            _out_size,
        ],
    ),
    "cdm_migration_register_policy": (c_int, [c_void_p, c_char_p, POINTER(cdm_policy), c_size_t, c_void_p, DESTROY]),
    "cdm_migration_register_function": (c_int, [c_void_p, c_char_p, c_char_p, FUNCTION, c_void_p, DESTROY]),
    "cdm_migration_register_policy_method": (c_int, [c_void_p, c_char_p, c_char_p, POLICY_METHOD, c_void_p, DESTROY]),
    "cdm_migration_set_progress": (c_int, [c_void_p, PROGRESS, c_void_p, DESTROY]),
    "cdm_migration_set_progress_interval": (c_int, [c_void_p, c_size_t]),
    "cdm_migration_run": (c_int, [c_void_p, c_char_p, c_char_p]),
    "cdm_migration_run_in_place": (c_int, [c_void_p, c_char_p]),
    "cdm_migration_report_json": (c_int, [c_void_p, POINTER(c_void_p)]),
    "cdm_chain_plan": (c_int, [c_char_p, c_char_p, c_char_p, POINTER(c_void_p)]),
    "cdm_model_set_json": (c_int, [c_char_p, POINTER(c_void_p)]),
    "cdm_migrate_chain": (c_int, [c_char_p, c_char_p, c_char_p, c_char_p, POINTER(c_void_p)]),
    "cdm_migration_warnings_json": (c_int, [c_void_p, POINTER(c_void_p)]),
    "cdm_migration_set_model_versions": (c_int, [c_void_p, c_char_p]),
    "cdm_migration_set_source_version_check": (c_int, [c_void_p, c_int]),
    "cdm_migration_set_fail_on_unintended_loss": (c_int, [c_void_p, c_int]),
    "cdm_migration_set_schema_changes": (c_int, [c_void_p, c_int]),
    "cdm_migration_new_chain": (c_int, [c_char_p, c_char_p, POINTER(c_void_p)]),
    "cdm_chain_plan_with_mappings": (c_int, [c_char_p, POINTER(c_char_p), c_char_p, c_char_p, POINTER(c_void_p)]),
    "cdm_migrate_chain_with_mappings": (
        c_int,
        [c_char_p, POINTER(c_char_p), c_char_p, c_char_p, c_char_p, POINTER(c_void_p)],
    ),
    "cdm_model_set_json_with_mappings": (c_int, [c_char_p, POINTER(c_char_p), POINTER(c_void_p)]),
    "cdm_migration_new_chain_with_mappings": (c_int, [c_char_p, POINTER(c_char_p), c_char_p, POINTER(c_void_p)]),
    "cdm_migration_set_fuse_steps": (c_int, [c_void_p, c_int]),
    "cdm_chain_plan_with_options": (
        c_int,
        [c_char_p, POINTER(c_char_p), c_char_p, c_char_p, c_int, POINTER(c_void_p)],
    ),
    "cdm_migrate_chain_with_options": (
        c_int,
        [c_char_p, POINTER(c_char_p), c_char_p, c_char_p, c_char_p, c_int, POINTER(c_void_p)],
    ),
    "cdm_migration_error": (c_void_p, [c_void_p]),
    # contexts
    "cdm_context_error": (c_void_p, [c_void_p]),
    "cdm_context_fail": (c_int, [c_void_p, c_int, c_char_p]),
    "cdm_context_entity_mapping_name": (c_int, [c_void_p, _out_str]),
    "cdm_context_source_entity_name": (c_int, [c_void_p, _out_str]),
    "cdm_context_destination_entity_name": (c_int, [c_void_p, _out_str]),
    "cdm_context_pass": (c_int, [c_void_p, _out_int]),
    "cdm_context_create_instance": (c_int, [c_void_p, c_char_p, _out_ptr]),
    "cdm_context_apply_attribute_mappings": (c_int, [c_void_p, c_void_p, c_void_p]),
    "cdm_context_associate": (c_int, [c_void_p, c_void_p, c_void_p]),
    "cdm_context_destination_instances": (
        c_int,
        [c_void_p, c_char_p, POINTER(c_void_p), c_size_t, POINTER(POINTER(c_void_p)), _out_size],
    ),
    "cdm_context_source_instances": (
        c_int,
        [c_void_p, c_char_p, POINTER(c_void_p), c_size_t, POINTER(POINTER(c_void_p)), _out_size],
    ),
    "cdm_context_evaluate": (c_int, [c_void_p, c_char_p, c_void_p, c_void_p, _out_ptr]),
    # objects
    "cdm_object_entity_name": (c_int, [c_void_p, _out_str]),
    "cdm_object_attribute_index": (c_int, [c_void_p, c_char_p, _out_int]),
    "cdm_object_attribute_type": (c_int, [c_void_p, c_char_p, _out_int]),
    "cdm_object_uri": (c_int, [c_void_p, _out_str]),
    "cdm_object_get_int64_at": (c_int, [c_void_p, c_int, POINTER(c_int64), _out_int]),
    "cdm_object_get_double_at": (c_int, [c_void_p, c_int, POINTER(c_double), _out_int]),
    "cdm_object_get_bool_at": (c_int, [c_void_p, c_int, _out_int, _out_int]),
    "cdm_object_get_date_at": (c_int, [c_void_p, c_int, POINTER(c_double), _out_int]),
    "cdm_object_get_text_at": (c_int, [c_void_p, c_int, POINTER(c_void_p), _out_size, _out_int]),
    "cdm_object_get_blob_at": (c_int, [c_void_p, c_int, POINTER(c_void_p), _out_size, _out_int]),
    "cdm_object_get_uuid_at": (c_int, [c_void_p, c_int, POINTER(c_ubyte * 16), _out_int]),
    "cdm_object_get_value": (c_int, [c_void_p, c_char_p, _out_ptr]),
    "cdm_object_get_object": (c_int, [c_void_p, c_char_p, _out_ptr]),
    "cdm_object_get_objects": (c_int, [c_void_p, c_char_p, POINTER(POINTER(c_void_p)), _out_size]),
    "cdm_object_set_null": (c_int, [c_void_p, c_char_p]),
    "cdm_object_set_int64": (c_int, [c_void_p, c_char_p, c_int64]),
    "cdm_object_set_double": (c_int, [c_void_p, c_char_p, c_double]),
    "cdm_object_set_bool": (c_int, [c_void_p, c_char_p, c_int]),
    "cdm_object_set_date": (c_int, [c_void_p, c_char_p, c_double]),
    "cdm_object_set_text": (c_int, [c_void_p, c_char_p, c_char_p, c_size_t]),
    "cdm_object_set_blob": (c_int, [c_void_p, c_char_p, c_char_p, c_size_t]),
    "cdm_object_set_uuid": (c_int, [c_void_p, c_char_p, POINTER(c_ubyte * 16)]),
    "cdm_object_set_null_at": (c_int, [c_void_p, c_int]),
    "cdm_object_set_int64_at": (c_int, [c_void_p, c_int, c_int64]),
    "cdm_object_set_double_at": (c_int, [c_void_p, c_int, c_double]),
    "cdm_object_set_bool_at": (c_int, [c_void_p, c_int, c_int]),
    "cdm_object_set_date_at": (c_int, [c_void_p, c_int, c_double]),
    "cdm_object_set_text_at": (c_int, [c_void_p, c_int, c_char_p, c_size_t]),
    "cdm_object_set_blob_at": (c_int, [c_void_p, c_int, c_char_p, c_size_t]),
    "cdm_object_set_uuid_at": (c_int, [c_void_p, c_int, POINTER(c_ubyte * 16)]),
    "cdm_object_set_object": (c_int, [c_void_p, c_char_p, c_void_p]),
    "cdm_object_add_object": (c_int, [c_void_p, c_char_p, c_void_p]),
    "cdm_object_to_json": (c_int, [c_void_p, POINTER(c_void_p)]),
    "cdm_object_release": (None, [c_void_p]),
    "cdm_object_retain": (c_int, [c_void_p]),
    # values
    "cdm_value_type": (c_int, [c_void_p]),
    "cdm_value_int64": (c_int, [c_void_p, POINTER(c_int64)]),
    "cdm_value_double": (c_int, [c_void_p, POINTER(c_double)]),
    "cdm_value_bool": (c_int, [c_void_p, _out_int]),
    "cdm_value_date": (c_int, [c_void_p, POINTER(c_double)]),
    "cdm_value_text": (c_int, [c_void_p, POINTER(c_void_p), _out_size]),
    "cdm_value_blob": (c_int, [c_void_p, POINTER(c_void_p), _out_size]),
    "cdm_value_uuid": (c_int, [c_void_p, POINTER(c_ubyte * 16)]),
    "cdm_value_object": (c_int, [c_void_p, _out_ptr]),
    "cdm_value_count": (c_int, [c_void_p, _out_size]),
    "cdm_value_element_at": (c_int, [c_void_p, c_size_t, _out_ptr]),
    "cdm_value_dictionary_count": (c_int, [c_void_p, _out_size]),
    "cdm_value_dictionary_key_at": (c_int, [c_void_p, c_size_t, _out_ptr]),
    "cdm_value_dictionary_value_at": (c_int, [c_void_p, c_size_t, _out_ptr]),
    "cdm_value_set_dictionary": (c_int, [c_void_p]),
    "cdm_value_set_uri": (c_int, [c_void_p, c_char_p, c_size_t]),
    "cdm_value_dictionary_add_new": (c_int, [c_void_p, POINTER(c_void_p), POINTER(c_void_p)]),
    "cdm_object_new_value": (c_int, [c_void_p, POINTER(c_void_p)]),
    "cdm_object_set_value": (c_int, [c_void_p, c_char_p, c_void_p]),
    "cdm_value_to_json": (c_int, [c_void_p, POINTER(c_void_p)]),
    "cdm_value_set_null": (c_int, [c_void_p]),
    "cdm_value_set_int64": (c_int, [c_void_p, c_int64]),
    "cdm_value_set_double": (c_int, [c_void_p, c_double]),
    "cdm_value_set_bool": (c_int, [c_void_p, c_int]),
    "cdm_value_set_date": (c_int, [c_void_p, c_double]),
    "cdm_value_set_text": (c_int, [c_void_p, c_char_p, c_size_t]),
    "cdm_value_set_decimal": (c_int, [c_void_p, c_char_p]),
    "cdm_value_set_blob": (c_int, [c_void_p, c_char_p, c_size_t]),
    "cdm_value_set_object": (c_int, [c_void_p, c_void_p]),
    "cdm_value_set_collection": (c_int, [c_void_p]),
    "cdm_value_append_object": (c_int, [c_void_p, c_void_p]),
    "cdm_value_append": (c_int, [c_void_p, c_void_p]),
    "cdm_value_append_new": (c_int, [c_void_p, POINTER(c_void_p)]),
    # stores
    "cdm_store_create": (c_int, [c_void_p, c_char_p, _out_ptr]),
    "cdm_store_insert": (c_int, [c_void_p, c_char_p, _out_ptr]),
    "cdm_store_save": (c_int, [c_void_p]),
    "cdm_store_close": (None, [c_void_p]),
    "cdm_store_error": (c_void_p, [c_void_p]),
    "cdm_store_open": (c_int, [c_char_p, c_void_p, _out_ptr]),
    "cdm_store_model": (c_int, [c_void_p, _out_ptr]),
    "cdm_store_fetch": (
        c_int,
        [
            c_void_p,
            c_char_p,
            c_char_p,
            _fields,
            c_size_t,
            POINTER(cdm_sort_descriptor),
            c_size_t,
            c_int,
            c_size_t,
            _out_ptr,
        ],
    ),
    "cdm_store_count": (c_int, [c_void_p, c_char_p, c_char_p, _fields, c_size_t, c_int, _out_size]),
    "cdm_store_insert_json": (c_int, [c_void_p, c_char_p]),
    "cdm_store_validate": (c_int, [c_void_p]),
    # store metadata
    "cdm_store_metadata_read": (c_int, [c_char_p, _out_ptr]),
    "cdm_store_metadata_free": (None, [c_void_p]),
    "cdm_store_metadata_error": (c_void_p, [c_void_p]),
    "cdm_store_metadata_uuid": (c_int, [c_void_p, _out_str]),
    "cdm_store_metadata_type": (c_int, [c_void_p, _out_str]),
    "cdm_store_metadata_is_empty": (c_int, [c_void_p, _out_int]),
    "cdm_store_metadata_identifier_count": (c_int, [c_void_p, _out_size]),
    "cdm_store_metadata_identifier_at": (c_int, [c_void_p, c_size_t, _out_str]),
    "cdm_store_metadata_entity_count": (c_int, [c_void_p, _out_size]),
    "cdm_store_metadata_entity_at": (c_int, [c_void_p, c_size_t, POINTER(cdm_store_entity_info)]),
    "cdm_store_metadata_check_model": (c_int, [c_void_p, c_void_p, _out_int, _out_size]),
    "cdm_store_metadata_difference_at": (c_int, [c_void_p, c_size_t, POINTER(cdm_version_difference)]),
    "cdm_store_metadata_version_in": (c_int, [c_void_p, c_char_p, _out_str]),
    # test hooks (include/cdmigrate_internal.h, not part of the API): the layout checks below
    "cdm_internal_abi_check": (c_int, [c_size_t, c_size_t]),
    "cdm_internal_struct_size": (c_size_t, [c_char_p]),
    "cdm_internal_handle_count": (c_size_t, []),
    # model introspection
    "cdm_model_entity_parent": (c_int, [c_void_p, c_char_p, _out_str]),
    "cdm_model_attribute_count": (c_int, [c_void_p, c_char_p, _out_size]),
    "cdm_model_attribute_at": (c_int, [c_void_p, c_char_p, c_size_t, POINTER(cdm_attribute_info)]),
    "cdm_model_attribute_info": (c_int, [c_void_p, c_char_p, c_char_p, POINTER(cdm_attribute_info)]),
    "cdm_model_relationship_count": (c_int, [c_void_p, c_char_p, _out_size]),
    "cdm_model_relationship_at": (c_int, [c_void_p, c_char_p, c_size_t, POINTER(cdm_relationship_info)]),
    "cdm_model_relationship_info": (c_int, [c_void_p, c_char_p, c_char_p, POINTER(cdm_relationship_info)]),
    # the current entity mapping, the models, super
    "cdm_context_mapping_user_info": (c_int, [c_void_p, c_char_p, _out_str]),
    "cdm_context_mapping_user_info_count": (c_int, [c_void_p, _out_size]),
    "cdm_context_mapping_user_info_at": (c_int, [c_void_p, c_size_t, _out_str, _out_str]),
    "cdm_context_mapping_user_info_value": (c_int, [c_void_p, c_char_p, _out_ptr]),
    "cdm_context_mapping_user_info_value_at": (c_int, [c_void_p, c_size_t, _out_str, _out_ptr]),
    "cdm_context_property_mapping_count": (c_int, [c_void_p, c_int, _out_size]),
    "cdm_context_property_mapping_at": (c_int, [c_void_p, c_int, c_size_t, _out_str, _out_str]),
    "cdm_context_property_mapping": (c_int, [c_void_p, c_int, c_char_p, _out_str]),
    "cdm_context_model": (c_int, [c_void_p, c_int, _out_ptr]),
    "cdm_context_default_create_destination_instances": (c_int, [c_void_p, c_void_p, _out_ptr]),
    "cdm_context_default_create_relationships": (c_int, [c_void_p, c_void_p]),
    "cdm_context_create_instance_with_fields": (
        c_int,
        [c_void_p, c_char_p, _fields, c_size_t, c_int, c_void_p, _out_ptr],
    ),
    # queries and identities
    "cdm_context_fetch_destination": (
        c_int,
        [c_void_p, c_char_p, c_char_p, _fields, c_size_t, c_int, c_size_t, _out_ptr],
    ),
    "cdm_context_fetch_source": (c_int, [c_void_p, c_char_p, c_char_p, _fields, c_size_t, c_int, c_size_t, _out_ptr]),
    "cdm_context_fetch": (
        c_int,
        [
            c_void_p,
            c_int,
            c_char_p,
            c_char_p,
            _fields,
            c_size_t,
            POINTER(cdm_sort_descriptor),
            c_size_t,
            c_int,
            c_size_t,
            _out_ptr,
        ],
    ),
    "cdm_context_count_destination": (c_int, [c_void_p, c_char_p, c_char_p, _fields, c_size_t, c_int, _out_size]),
    "cdm_context_count_source": (c_int, [c_void_p, c_char_p, c_char_p, _fields, c_size_t, c_int, _out_size]),
    "cdm_list_count": (c_int, [c_void_p, _out_size]),
    "cdm_list_objects": (c_int, [c_void_p, _objects, _out_size]),
    "cdm_list_release": (None, [c_void_p]),
    "cdm_context_instance_for_uri": (c_int, [c_void_p, c_char_p, _out_ptr]),
    "cdm_context_instance_with_id": (c_int, [c_void_p, c_int, c_char_p, c_int64, _out_ptr]),
    # instances
    "cdm_object_remove_object": (c_int, [c_void_p, c_char_p, c_void_p]),
    "cdm_object_insert_object": (c_int, [c_void_p, c_char_p, c_void_p, c_size_t]),
    "cdm_object_id": (c_int, [c_void_p, _out_int, POINTER(c_void_p), POINTER(c_int64)]),
    "cdm_object_get_fields": (c_int, [c_void_p, _fields, c_size_t, _out_size]),
    "cdm_object_set_fields": (c_int, [c_void_p, _fields, c_size_t, c_int]),
    # what a policy sees of its migration: version identifiers, the mapping model, property mappings
    "cdm_model_version_identifier": (c_int, [c_void_p, _out_str]),
    "cdm_model_entity_version_hash": (c_int, [c_void_p, c_char_p, POINTER(POINTER(ctypes.c_uint8)), _out_size]),
    "cdm_context_mapping_model_name": (c_int, [c_void_p, _out_str]),
    "cdm_context_entity_mapping_count": (c_int, [c_void_p, _out_size]),
    "cdm_context_entity_mapping_at": (c_int, [c_void_p, c_size_t, _out_str]),
    "cdm_context_entity_mapping_entities_at": (c_int, [c_void_p, c_size_t, _out_str, _out_str]),
    "cdm_context_entity_mapping_type": (c_int, [c_void_p, _out_str]),
    "cdm_context_property_mapping_user_info_value": (c_int, [c_void_p, c_int, c_char_p, c_char_p, _out_ptr]),
    "cdm_context_property_mapping_user_info_count": (c_int, [c_void_p, c_int, c_char_p, _out_size]),
    "cdm_context_property_mapping_user_info_value_at": (
        c_int,
        [c_void_p, c_int, c_char_p, c_size_t, _out_str, _out_ptr],
    ),
    "cdm_context_set_property_mapping_expression": (c_int, [c_void_p, c_int, c_char_p, c_char_p]),
    "cdm_command_line_run": (c_int, [c_int, POINTER(c_char_p), POINTER(cdm_command_line_options), c_size_t]),
}

# Functions of later versions of the C API, bound when the library has them (none at the moment).
_OPTIONAL: dict = {}

missing: list = []


def _declare() -> None:
    for name, (restype, argtypes) in _PROTOTYPES.items():
        try:
            function = getattr(lib, name)
        except AttributeError:
            missing.append(name)
            continue
        function.restype = restype
        function.argtypes = argtypes
    for name, (restype, argtypes) in _OPTIONAL.items():
        function = getattr(lib, name, None)
        if function is not None:
            function.restype = restype
            function.argtypes = argtypes


_declare()
if missing:
    raise LibraryNotFoundError(
        f"'{library_path()}' lacks {', '.join(missing[:5])}: it is not a libcdmigrate of this version"
    )

if lib.cdm_libversion_number() // 1_000_000 != HEADER_VERSION_NUMBER // 1_000_000:
    raise LibraryNotFoundError(
        f"libcdmigrate {lib.cdm_libversion().decode()} does not match the binding (written for {HEADER_VERSION_NUMBER})"
    )

if lib.cdm_internal_abi_check(ctypes.sizeof(cdm_policy), ctypes.sizeof(cdm_progress)) != 0:
    raise LibraryNotFoundError("libcdmigrate's cdm_policy/cdm_progress layout differs from the binding's")

for _struct in (
    cdm_field,
    cdm_attribute_info,
    cdm_relationship_info,
    cdm_sort_descriptor,
    cdm_store_entity_info,
    cdm_version_difference,
    cdm_command_line_options,
):
    if lib.cdm_internal_struct_size(_struct.__name__.encode()) != ctypes.sizeof(_struct):
        raise LibraryNotFoundError(f"libcdmigrate's {_struct.__name__} layout differs from the binding's")


def has(name: str) -> bool:
    """Whether the loaded library has an (optional) C function."""
    return getattr(lib, name, None) is not None


def take_string(pointer: int | None) -> str:
    """A string the caller frees with cdm_free: decoded, then freed."""
    if not pointer:
        return ""
    try:
        return ctypes.string_at(pointer).decode("utf-8")
    finally:
        lib.cdm_free(pointer)
