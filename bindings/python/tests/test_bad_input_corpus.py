"""The bad-input corpus (Tests/BadInput/corpus.json) through the Python binding: every case must
give exactly its result code (as the MigrationError's ``code``) and a message with its fragment,
or the Python exception the case names where the binding refuses the input itself (a NUL byte:
ValueError). The C test Tests/c/bad_input_test.c runs the same list."""

from __future__ import annotations

import ctypes
import json
import os
import sqlite3
from ctypes import c_char_p, c_int, c_size_t, c_void_p

import pytest
from abi_checker import HEADERS, abi
from conftest import ROOT

import cdmigrate
from cdmigrate import errors
from cdmigrate._text import c_text

CORPUS_PATH = os.path.join(ROOT, "Tests", "BadInput", "corpus.json")
with open(CORPUS_PATH, encoding="utf-8") as _file:
    CORPUS = json.load(_file)
CASES = CORPUS["cases"]
CALLBACK_OPS = ("evaluate", "fetch")
PYTHON_ERRORS = {"ValueError": ValueError, "TypeError": TypeError}

# The raw cases pass NULL and handles of the wrong kind, so they call the C functions through a
# library object of their own (the binding's declarations stay untouched), declared from the header
# itself: scalars by their width, text as c_char_p, every other pointer as c_void_p.
RAW = ctypes.CDLL(cdmigrate._lib.library_path())
_HEADER = abi.parse_header(HEADERS)
for _name in _HEADER.functions:
    getattr(RAW, _name).restype, getattr(RAW, _name).argtypes = abi.ctypes_signature(_HEADER, _name)


def _out(kind=c_void_p):
    return ctypes.byref(kind())


class Fixtures:
    """The corpus's model and mapping, a migration, and a store with one Folder and one Note."""

    def __init__(self, directory: str):
        self.directory = directory
        self.model = cdmigrate.Model.from_json(json.dumps(CORPUS["models"]["notes"]))
        self.mapping = cdmigrate.MappingModel.from_json(json.dumps(CORPUS["mapping"]))
        self.migration = cdmigrate.Migration(self.model, self.model, self.mapping)
        self.source = os.path.join(directory, "source.sqlite")
        self.store = cdmigrate.Store.create(self.model, self.source)
        folder = self.store.insert("Folder")
        self.note = self.store.insert("Note", title="first", folder=folder)
        self.store.save()
        self.callback_results = None

    def handle(self, kind: str):
        return {
            "null": None,
            "model": self.model._ptr,
            "mapping": self.mapping._ptr,
            "migration": self.migration._ptr,
            "store": self.store._ptr,
            "object": self.note._h,
        }[kind]

    def run_callback_cases(self):
        """Runs the cases that need a callback in one migration, inside the Probe policy."""
        results = {}
        cases = [c for c in CASES if c["op"] in CALLBACK_OPS]

        class Probe(cdmigrate.EntityMigrationPolicy):
            def create_destination_instances(self, source, mapping, manager):
                if not results:
                    for case in cases:
                        try:
                            if case["op"] == "evaluate":
                                manager.evaluate(case["expression"], source=source)
                            else:
                                manager.fetch_source(case["entity"], case["predicate"])
                            results[case["name"]] = None
                        except Exception as error:
                            results[case["name"]] = error
                manager.default_create_destination_instances(source)

        self.migration.run(self.source, os.path.join(self.directory, "probed.sqlite"), policies={"Probe": Probe})
        self.callback_results = results

    def close(self):
        for item in (self.store, self.migration, self.mapping, self.model):
            item.close()


@pytest.fixture(scope="module")
def fixtures(tmp_path_factory):
    made = Fixtures(str(tmp_path_factory.mktemp("bad-input")))
    yield made
    made.close()


def _raw(case, fixtures):
    """The C call of a raw case: (code, message)."""
    op = case["op"]
    if op == "model_call":
        model, f = fixtures.model._ptr, case["function"]
        entity = c_text(case["entity"], "the entity") if "entity" in case else None
        prop = c_text(case["property"], "the property") if "property" in case else None
        index = case.get("index", 0)
        code = {
            "attribute_index": lambda: RAW.cdm_model_attribute_index(model, entity, prop, _out(c_int)),
            "attribute_type": lambda: RAW.cdm_model_attribute_type(model, entity, prop, _out(c_int)),
            "relationship_info": lambda: RAW.cdm_model_relationship_info(
                model, entity, prop, _out(cdmigrate._lib.cdm_relationship_info)
            ),
            "entity_name": lambda: RAW.cdm_model_entity_at(model, index, _out(c_char_p)),
            "attribute_at": lambda: RAW.cdm_model_attribute_at(
                model, entity, index, _out(cdmigrate._lib.cdm_attribute_info)
            ),
            "attribute_count": lambda: RAW.cdm_model_attribute_count(model, entity, _out(c_size_t)),
        }[f]()
    elif op == "store_call":
        note, f = fixtures.note._h, case["function"]
        code = {
            "insert": lambda: RAW.cdm_store_insert(
                fixtures.store._ptr, c_text(case.get("entity", ""), "the entity"), _out()
            ),
            "set_text": lambda: RAW.cdm_object_set_text(
                note, c_text(case["key"], "the key"), c_text(case["text"], "the text"), -1
            ),
            "set_int64": lambda: RAW.cdm_object_set_int64(note, c_text(case["key"], "the key"), case["value"]),
            "get_text": lambda: RAW.cdm_object_get_text(
                note, c_text(case["key"], "the key"), _out(), _out(c_size_t), None
            ),
        }[f]()
    elif op == "handle":
        h, f = fixtures.handle(case["handle"]), case["function"]
        code = {
            "model_entity_count": lambda: RAW.cdm_model_entity_count(h, _out(c_size_t)),
            "mapping_entity_mapping_count": lambda: RAW.cdm_mapping_entity_mapping_count(h, _out(c_size_t)),
            "migration_set_progress_interval": lambda: RAW.cdm_migration_set_progress_interval(h, 10),
            "store_save": lambda: RAW.cdm_store_save(h),
            "object_entity_name": lambda: RAW.cdm_object_entity_name(h, _out(c_char_p)),
        }[f]()
    elif op == "null_out":
        m, mp, s, o = fixtures.model._ptr, fixtures.mapping._ptr, fixtures.store._ptr, fixtures.note._h
        code = {
            "model_entity_count": lambda: RAW.cdm_model_entity_count(m, None),
            "model_entity_name": lambda: RAW.cdm_model_entity_at(m, 0, None),
            "model_attribute_index": lambda: RAW.cdm_model_attribute_index(m, b"Note", b"title", None),
            "model_attribute_type": lambda: RAW.cdm_model_attribute_type(m, b"Note", b"title", None),
            "model_attribute_count": lambda: RAW.cdm_model_attribute_count(m, b"Note", None),
            "model_relationship_count": lambda: RAW.cdm_model_relationship_count(m, b"Note", None),
            "model_entity_parent": lambda: RAW.cdm_model_entity_parent(m, b"Note", None),
            "mapping_entity_mapping_count": lambda: RAW.cdm_mapping_entity_mapping_count(mp, None),
            "mapping_entity_mapping_name": lambda: RAW.cdm_mapping_entity_mapping_at(mp, 0, None),
            "store_insert": lambda: RAW.cdm_store_insert(s, b"Note", None),
            "object_entity_name": lambda: RAW.cdm_object_entity_name(o, None),
            "object_uri": lambda: RAW.cdm_object_uri(o, None),
            "object_get_text": lambda: RAW.cdm_object_get_text(o, b"title", None, None, None),
            "migration_report_json": lambda: RAW.cdm_migration_report_json(fixtures.migration._ptr, None),
        }[case["function"]]()
    else:
        raise AssertionError(f"unknown op {op}")
    return code, (RAW.cdm_last_errmsg() or b"").decode("utf-8", "replace") if code else ""


def _make_source(fixture: str, path: str, sql: str) -> str:
    """A copy of the fixture store with the case's SQL applied (bad data Core Data's API cannot write)."""
    with sqlite3.connect(fixture) as original:
        original.execute("VACUUM INTO ?", (path,))
    original.close()
    made = sqlite3.connect(path)
    made.executescript(sql)
    made.close()
    return path


def _through_the_binding(case, fixtures):
    """The public API call of a case; raises what the binding raises."""
    op = case["op"]
    here = os.path.dirname(CORPUS_PATH)
    if op == "model_json":
        cdmigrate.Model.from_json(case["text"]).close()
    elif op == "model_file":
        cdmigrate.Model.from_file(os.path.join(here, case["path"])).close()
    elif op == "mapping_json":
        cdmigrate.MappingModel.from_json(case["text"]).close()
    elif op == "mapping_file":
        cdmigrate.MappingModel.from_file(os.path.join(here, case["path"])).close()
    elif op in ("migration", "run"):
        mappings = [cdmigrate.MappingModel.from_json(case["mapping"])] if case.get("mapping") else []
        try:
            with cdmigrate.Migration(fixtures.model, fixtures.model, mappings) as migration:
                if op == "run":
                    migration.schema_changes = case.get("schema_changes", True)
                    source = os.path.join(fixtures.directory, case["source"]) if "source" in case else fixtures.source
                    destination = os.path.join(fixtures.directory, f"run-{CASES.index(case)}.sqlite")
                    if "source_sql" in case:
                        source = _make_source(
                            fixtures.source,
                            os.path.join(fixtures.directory, f"source-{CASES.index(case)}.sqlite"),
                            case["source_sql"],
                        )
                    succeeded = False
                    try:
                        migration.run(source, destination)
                        succeeded = True
                    finally:
                        # A failed run leaves nothing at the destination; a run that succeeds, the store.
                        assert os.path.exists(destination) == succeeded
        finally:
            for mapping in mappings:
                mapping.close()
    elif op == "fifo":
        # A FIFO where a file is read: refused before it is opened (an open would block).
        fifo = os.path.join(fixtures.directory, f"fifo-{CASES.index(case)}")
        os.mkfifo(fifo)
        try:
            call = case["call"]
            if call == "model_file":
                cdmigrate.Model.from_file(fifo).close()
            elif call == "mapping_file":
                cdmigrate.MappingModel.from_file(fifo).close()
            elif call == "model_from_store":
                cdmigrate.Model.from_store(fifo).close()
            elif call == "store_metadata":
                cdmigrate.StoreMetadata.read(fifo).close()
            elif call == "run":
                with cdmigrate.MappingModel.from_json(case["mapping"]) as mapping, cdmigrate.Migration(
                    fixtures.model, fixtures.model, [mapping]
                ) as migration:
                    try:
                        migration.run(fifo, fifo + ".sqlite")
                    finally:
                        assert not os.path.exists(fifo + ".sqlite")
        finally:
            os.unlink(fifo)
    elif op in CALLBACK_OPS:
        if fixtures.callback_results is None:
            fixtures.run_callback_cases()
        error = fixtures.callback_results[case["name"]]
        if error is not None:
            raise error
    else:
        code, message = _raw(case, fixtures)
        if code:
            raise errors.error_class(code)(message, code)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_bad_input(case, fixtures):
    expected = {**case, **case.get("python", {})}
    if "skip" in expected:
        pytest.skip(expected["skip"])
    if "error" in expected:
        with pytest.raises(PYTHON_ERRORS[expected["error"]]) as raised:
            _through_the_binding(case, fixtures)
        assert not isinstance(raised.value, cdmigrate.MigrationError), "refused by the binding, before C"
        assert expected["message"] in str(raised.value)
        return
    code = getattr(errors, expected["code"][len("CDM_") :])
    if code == errors.OK:
        _through_the_binding(case, fixtures)
        return
    with pytest.raises(cdmigrate.MigrationError) as raised:
        _through_the_binding(case, fixtures)
    assert raised.value.code == code, f"{raised.value!r}"
    assert expected["message"] in str(raised.value)


def test_the_corpus_is_large_and_names_are_unique():
    assert len(CASES) >= 60
    assert len({c["name"] for c in CASES}) == len(CASES)
    assert {c["op"] for c in CASES} >= {
        "model_json",
        "mapping_json",
        "migration",
        "evaluate",
        "fetch",
        "handle",
        "null_out",
    }
