"""The binding reads and behaves like Python's standard library (sqlite3 as the yardstick): one
argument order (source first), the MutableMapping contract of Instance, registrations given to
run() lasting for that run, reports as plain data with to_dict()/to_json(), I/O errors as OSError
with errno and filename, one checked-call helper."""

from __future__ import annotations

import errno
import json
import os
import pathlib
import re
import signal
from collections.abc import MutableMapping

import pytest
from conftest import copy_mapping, item_to_item, rows

import cdmigrate

PACKAGE = os.path.dirname(cdmigrate.__file__)


def migration(models, **kwargs):
    v1, v2 = models
    mapping = cdmigrate.MappingModel.from_json(copy_mapping(item_policy=kwargs.pop("item_policy", None)))
    return cdmigrate.Migration(v1, v2, mapping, **kwargs)


# -- one argument order: source first -------------------------------------------------------------


def test_every_method_taking_a_source_and_a_destination_takes_the_source_first():
    import inspect

    for cls in (cdmigrate.MigrationManager, cdmigrate.Migration, cdmigrate.MappingModel):
        for name, method in inspect.getmembers(cls, inspect.isfunction):
            parameters = [p for p in inspect.signature(method).parameters if p in ("source", "destination")]
            if len(parameters) == 2:
                assert parameters == ["source", "destination"], f"{cls.__name__}.{name}"
    parameters = list(inspect.signature(cdmigrate.MigrationManager.apply_attribute_mappings).parameters)
    assert parameters[1:3] == ["source", "destination"]


def test_apply_attribute_mappings_takes_the_source_first_and_refuses_them_swapped(
    tmp_path, kitchen_models, kitchen_store
):
    seen = {}

    class Copy(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            made = manager.create("Item")
            with pytest.raises(TypeError, match="source comes first"):
                manager.apply_attribute_mappings(made, source)
            with pytest.raises(TypeError, match="source comes first"):
                manager.associate(made, source)
            manager.apply_attribute_mappings(source=source, destination=made)
            manager.associate(source, made)
            seen.setdefault("copied", made["str"] == source["str"])

    with migration(kitchen_models, item_policy="Copy") as m:
        report = m.run(kitchen_store, tmp_path / "out.sqlite", policies={"Copy": Copy})
    assert seen == {"copied": True}
    assert report.destination_counts["Item"] == 30
    assert rows(str(tmp_path / "out.sqlite"), "SELECT COUNT(*) FROM ZITEM WHERE ZSTR = 'héllo ✓'") == [(29,)]


# -- Instance is a MutableMapping that keeps the contract -------------------------------------------


class _Hang(Exception):
    pass


def _within(seconds, call):
    """`call()` with a time limit: an operation that loops forever fails instead of hanging."""

    def alarm(signum, frame):
        raise _Hang(f"{call} did not return within {seconds} s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.alarm(seconds)
    try:
        return call()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_instance_keeps_the_mutable_mapping_contract(tmp_path, kitchen_models):
    v1, _ = kitchen_models
    with cdmigrate.Store.create(v1, str(tmp_path / "s.sqlite")) as store:
        box = store.insert("Box", label="a")
        item = store.insert("Item", i16=1, str="x", box=box)
        assert isinstance(item, MutableMapping)
        names = [a["name"] for a in __import__("conftest").KITCHEN_V1["entities"][0]["attributes"]]
        # reading
        assert list(item) == names and len(item) == len(names) and list(item.keys()) == names
        assert item["i16"] == 1 and item.get("i16") == 1 and item.get("nope") is None and item.get("nope", 5) == 5
        assert "str" in item and "nope" not in item and 3 not in item and "box" in item
        assert dict(item.items())["str"] == "x" and list(item.values())[names.index("str")] == "x"
        # writing: __setitem__, update, setdefault
        item["i32"] = 7
        item.update({"i64": 8}, dbl=1.5)
        assert (item["i32"], item["i64"], item["dbl"]) == (7, 8, 1.5)
        assert item.setdefault("i32", 99) == 7
        with pytest.raises(KeyError):
            item.setdefault("nope", 1)
        with pytest.raises(KeyError):
            item["nope"] = 1
        # setting None makes a value nil: the key stays
        item["str"] = None
        assert "str" in item and item["str"] is None
        # removing: refused, and `k in i` stays what it was
        with pytest.raises(TypeError, match=r"cannot be removed.*= None"):
            del item["i32"]
        assert "i32" in item and item["i32"] == 7
        with pytest.raises(KeyError):
            del item["nope"]
        with pytest.raises(TypeError, match="cannot be removed"):
            item.pop("i32")
        assert item.pop("nope", "default") == "default"
        with pytest.raises(KeyError):
            item.pop("nope")
        with pytest.raises(TypeError, match="cannot be removed"):
            _within(5, item.popitem)
        with pytest.raises(TypeError, match="cannot be removed"):
            _within(5, item.clear)  # MutableMapping.clear looped forever when del only set None
        assert list(item) == names and item["i32"] == 7 and item["box"] == box
        # making everything nil is a plain update
        item.update(dict.fromkeys(item, None))
        assert all(item[name] is None for name in names)
        store.save()


# -- registrations given to run() last for that run -------------------------------------------------


def test_policies_given_to_run_are_not_kept_for_later_runs(tmp_path, kitchen_models, kitchen_store):
    made = []

    class Mark(cdmigrate.EntityMigrationPolicy):
        def create_destination_instances(self, source, mapping, manager):
            made.append(1)
            return super().create_destination_instances(source, mapping, manager)

    with migration(kitchen_models, item_policy="Mark") as m:
        m.run(kitchen_store, tmp_path / "a.sqlite", policies={"Mark": Mark})
        assert len(made) == 30
        with pytest.raises(cdmigrate.EntityMigrationPolicyError, match=r"'Mark'.*not registered.*only for that run"):
            m.run(kitchen_store, tmp_path / "b.sqlite")
        assert not os.path.exists(tmp_path / "b.sqlite") and len(made) == 30
        # Registered on the migration, it stays: a run's own one replaces it for that run only.
        m.register_policy("Mark", Mark)
        m.run(kitchen_store, tmp_path / "c.sqlite")
        assert len(made) == 60

        class Other(Mark):
            def create_destination_instances(self, source, mapping, manager):
                made.append(2)
                return super().create_destination_instances(source, mapping, manager)

        m.run(kitchen_store, tmp_path / "d.sqlite", policies={"Mark": Other})
        assert made.count(2) == 30
        m.run(kitchen_store, tmp_path / "e.sqlite")
        assert made.count(2) == 30 and len(made) == 150


def test_functions_and_progress_given_to_run_are_not_kept_for_later_runs(tmp_path, kitchen_models, kitchen_store):
    text = item_to_item(
        [{"name": "str", "valueExpression": 'FUNCTION(CAST("Py", "Class"), "f:", $source.i64)'}],
        predicate="TRUEPREDICATE",
    )
    v1, v2 = kitchen_models
    seen = []
    with cdmigrate.MappingModel.from_json(text) as mapping, cdmigrate.Migration(v1, v2, mapping) as m:
        m.run(kitchen_store, tmp_path / "a.sqlite", functions={"Py.f:": str}, progress=seen.append)
        assert seen
        count = len(seen)
        with pytest.raises(cdmigrate.ExpressionEvaluationError, match=r"not registered|no function"):
            m.run(kitchen_store, tmp_path / "b.sqlite")
        assert len(seen) == count  # the run's progress callback was not called again
        m.register_function("Py", "f:", lambda i: f"#{i}")
        m.run(kitchen_store, tmp_path / "c.sqlite")
        assert sorted(rows(str(tmp_path / "c.sqlite"), "SELECT ZSTR FROM ZITEM"))[:2] == [("#0",), ("#1",)]
        assert len(seen) == count


# -- reports ----------------------------------------------------------------------------------------


def test_reports_are_dataclasses_with_snake_case_to_dict_and_json_text(tmp_path, kitchen_models, kitchen_store):
    with migration(kitchen_models) as m:
        report = m.run(kitchen_store, tmp_path / "out.sqlite")
    first = report.mappings[0]
    assert isinstance(first, cdmigrate.EntityMappingReport)
    assert (first.pass_index, first.entity_mapping, first.source_instances) == (0, "BoxToBox", 3)
    document = report.to_dict()
    assert set(document) == {
        "mappings",
        "destination_counts",
        "untaken",
        "warnings",
        "missing_external_data_files",
        "losses",
        "by_schema_changes",
        "schema_changes",
        "schema_changes_not_done",
    }
    assert document["mappings"][1] == {
        "pass_index": 0,
        "entity_mapping": "ItemToItem",
        "source_instances": 30,
        "associations": 30,
    }
    text = report.to_json()
    assert isinstance(text, str) and json.loads(text) == document
    assert "raw" not in repr(report)


def test_staged_reports_and_plans_have_to_dict_and_to_json():
    for cls in (cdmigrate.MigrationPlan, cdmigrate.StagedMigrationReport, cdmigrate.MigrationStep):
        assert callable(cls.to_dict) and callable(cls.to_json)
    step = cdmigrate.MigrationStep("v1", "v2", True, ["inferred"])
    assert json.loads(step.to_json()) == step.to_dict() and step.to_dict()["source_version"] == "v1"
    report = cdmigrate.StagedMigrationReport("v1", "v2", False, False, [step], {"storeVersion": "v1"})
    assert set(report.to_dict()) == {"store_version", "target_version", "already_at_target", "copied", "steps"}


def test_instance_to_json_is_json_text_and_to_dict_the_values(tmp_path, kitchen_models):
    v1, _ = kitchen_models
    with cdmigrate.Store.create(v1, str(tmp_path / "s.sqlite")) as store:
        box = store.insert("Box", label="a")
        text = box.to_json()
        assert isinstance(text, str)
        assert json.loads(text)["entity"] == "Box" and json.loads(text)["attributes"]["label"] == "a"
        assert box.to_dict() == {"label": "a"}


def test_io_errors_carry_errno_and_filename(tmp_path):
    missing = str(tmp_path / "missing.json")
    with pytest.raises(OSError) as error:
        cdmigrate.Model.from_file(missing)
    assert isinstance(error.value, cdmigrate.MigrationIOError)
    assert error.value.errno == errno.ENOENT and error.value.filename == missing
    assert error.value.strerror == os.strerror(errno.ENOENT)
    other = cdmigrate.MigrationIOError("something else went wrong")
    assert other.errno is None and other.filename is None and isinstance(other, OSError)


# -- one checked-call helper, no dead code ----------------------------------------------------------


def test_failed_calls_raise_through_the_one_checked_call_helper():
    sources = {
        name: pathlib.Path(PACKAGE, name).read_text(encoding="utf-8")
        for name in os.listdir(PACKAGE)
        if name.endswith(".py")
    }
    for name, text in sources.items():
        assert not re.search(r"def _check\(", text), name
        assert "if False:" not in text, name
        assert "fetch_available" not in text and "FeatureUnavailableError" not in text, name
    # errors.check is the one place a result code becomes an exception.
    raising = [name for name, text in sources.items() for _ in re.finditer(r"if code:\s*\n\s*raise last_error", text)]
    assert raising == ["errors.py"]
    assert not hasattr(cdmigrate, "FeatureUnavailableError")


def test_the_package_type_checks_with_mypy_where_it_is_installed():
    api = pytest.importorskip("mypy.api")
    out, err, status = api.run(["--cache-dir", os.devnull, "--no-error-summary", PACKAGE])
    assert status == 0, out + err
