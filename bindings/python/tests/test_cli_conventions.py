"""The command line's conventions through the Python entry points (``python -m cdmigrate`` and the
console script): ``--version``, ``--quiet``, a closed pipe, policy modules loaded one way (the
command line and ``migrate_many``) and refused when they register nothing, a Python policy's
exception named with its policy and hook, SIGTERM cleaning up; and a run's warnings through
Python's ``warnings`` module as ``cdmigrate.MigrationWarning``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import warnings

import pytest
from conftest import rows, sha256
from test_cli import ENTRY_POINTS, PEOPLE, SPLIT, mapping

import cdmigrate

RAISING_MODULE = """
import cdmigrate

class OlderSwedes(cdmigrate.EntityMigrationPolicy):
    def create_destination_instances(self, source, mapping, manager):
        return source["age"] + "years"
"""

# Slow enough that SIGTERM arrives during the run; says when the run has started.
SLOW_MODULE = """
import os, time
import cdmigrate

class OlderSwedes(cdmigrate.EntityMigrationPolicy):
    def create_destination_instances(self, source, mapping, manager):
        open(os.environ["CDMIGRATE_TEST_STARTED"], "w").close()
        time.sleep(0.05)
        return super().create_destination_instances(source, mapping, manager)
"""

SUBCLASS_ONLY_MODULE = """
import cdmigrate

class OlderSwedes(cdmigrate.EntityMigrationPolicy):
    def create_destination_instances(self, source, mapping, manager):
        swede = super().create_destination_instances(source, mapping, manager)
        swede["age"] = 99
        return swede
"""


@pytest.fixture
def people(tmp_path):
    for name, document in (
        ("v1.json", PEOPLE),
        ("v2.json", SPLIT),
        ("map.json", mapping()),
        ("policy-map.json", mapping("OlderSwedes")),
    ):
        (tmp_path / name).write_text(json.dumps(document))
    (tmp_path / "raising.py").write_text(RAISING_MODULE)
    (tmp_path / "slow.py").write_text(SLOW_MODULE)
    (tmp_path / "subclassonly.py").write_text(SUBCLASS_ONLY_MODULE)
    (tmp_path / "empty.py").write_text("NOTHING_HERE = 1\n")
    return tmp_path


def make_store(folder, name="people.sqlite", people=(("Anna", "Sweden"), ("Matti", "Finland"), ("Ebba", "Sweden"))):
    path = str(folder / name)
    with cdmigrate.Model.from_file(str(folder / "v1.json")) as model, cdmigrate.Store.create(model, path) as store:
        for person, country in people:
            store.insert("Person", name=person, country=country, age=30)
        store.save()
    return path


def step(folder, mapping_file="policy-map.json"):
    return [
        "--source-model",
        str(folder / "v1.json"),
        "--destination-model",
        str(folder / "v2.json"),
        "--mapping",
        str(folder / mapping_file),
    ]


@pytest.fixture(params=sorted(ENTRY_POINTS))
def entry(request):
    command = ENTRY_POINTS[request.param]
    if not os.access(command[0], os.X_OK):
        if os.environ.get("CDMIGRATE_NO_CONSOLE_SCRIPT"):
            pytest.skip(f"{command[0]} is not installed")
        pytest.fail(f"{command[0]} is not installed: pip install the package (make -C bindings/python test)")
    return command


def environment(**extra):
    return {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p), **extra}


def cli(entry, *arguments, cwd=None):
    return subprocess.run([*entry, *arguments], capture_output=True, text=True, cwd=cwd, timeout=300, env=environment())


def test_version_prints_the_librarys_version(entry):
    result = cli(entry, "--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == cdmigrate.library_version()
    assert result.stderr == ""


def test_quiet_prints_errors_only(entry, people):
    store = make_store(people)
    for arguments in (
        ["validate", *step(people, "map.json")],
        ["inspect", store, "--model", str(people / "v2.json")],
        ["migrate", store, "--to", str(people / "quiet.sqlite"), *step(people, "map.json")],
    ):
        result = cli(entry, *arguments, "--quiet")
        assert result.returncode == 0, result.stderr
        assert (result.stdout, result.stderr) == ("", ""), arguments
    failed = cli(entry, "inspect", str(people / "missing.sqlite"), "--quiet")
    assert failed.returncode == 74
    assert "cdmigrate: error" in failed.stderr


def test_a_pipe_closed_early_prints_no_traceback(entry, people):
    entities = [{"name": f"Entity{i}", "attributes": [{"name": "title", "type": "string"}]} for i in range(1500)]
    (people / "large.json").write_text(json.dumps({"entities": entities}))
    command = " ".join(f"'{part}'" for part in entry)
    result = subprocess.run(
        ["/bin/sh", "-c", f"{command} inspect --dot --model '{people / 'large.json'}' | head -n 1"],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment(),
    )
    assert result.returncode == 0
    assert result.stdout.startswith("digraph ") and result.stdout.count("\n") == 1
    assert result.stderr == ""


def test_a_module_that_registers_nothing_fails_up_front_naming_it(entry, people):
    store = make_store(people)
    before = sha256(store)
    destination = people / "out.sqlite"
    for arguments in (["validate", *step(people)], ["migrate", store, "--to", str(destination), *step(people)]):
        result = cli(entry, *arguments, "--policies", str(people / "empty.py"))
        assert result.returncode == 65, result.stderr
        assert "policies module 'empty'" in result.stderr and "registers nothing" in result.stderr, result.stderr
    assert not destination.exists()
    assert sha256(store) == before


def test_a_python_policys_exception_names_the_policy_the_hook_and_the_exception(entry, people):
    store = make_store(people)
    destination = people / "out.sqlite"
    result = cli(
        entry, "migrate", store, "--to", str(destination), "--policies", str(people / "raising.py"), *step(people)
    )
    assert result.returncode == 1, result.stderr
    assert (
        "policy 'OlderSwedes' hook create_destination_instances (entity mapping 'PersonToSwede') raised TypeError: "
        in result.stderr
    ), result.stderr
    assert "unsupported operand" in result.stderr, result.stderr
    assert not destination.exists()


def test_sigterm_leaves_the_destination_absent_and_the_source_untouched(people):
    store = make_store(people, people=[(f"Person {i}", "Sweden") for i in range(400)])
    before = sha256(store)
    destination = people / "out.sqlite"
    started = people / "started"
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cdmigrate",
            "migrate",
            store,
            "--to",
            str(destination),
            "--policies",
            str(people / "slow.py"),
            *step(people),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment(CDMIGRATE_TEST_STARTED=str(started)),
    )
    try:
        while not started.exists() and process.poll() is None:
            time.sleep(0.02)
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGTERM)
        _out, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 143, err
    assert not destination.exists()
    assert [name for name in os.listdir(people) if ".cdmigrate-" in name] == []
    assert sha256(store) == before


def test_migrate_many_loads_a_policies_module_as_the_command_line_does(people):
    stores = [make_store(people, f"s{i}.sqlite") for i in range(2)]
    # Its subclasses by class name (no POLICIES dict), from a .py file as --policies takes it.
    results = cdmigrate.migrate_many(
        stores,
        people / "out",
        source_model=people / "v1.json",
        destination_model=people / "v2.json",
        mappings=[people / "policy-map.json"],
        policies_module=str(people / "subclassonly.py"),
        jobs=1,
    )
    assert [r.ok for r in results] == [True, True], [r.message for r in results]
    assert rows(str(people / "out" / "s0.sqlite"), "SELECT ZAGE FROM ZSWEDE") == [(99,), (99,)]
    # A module that registers nothing fails the whole run before any store.
    with pytest.raises(cdmigrate.InvalidArgumentError, match="registers nothing"):
        cdmigrate.migrate_many(
            stores,
            people / "none",
            source_model=people / "v1.json",
            destination_model=people / "v2.json",
            mappings=[people / "policy-map.json"],
            policies_module=str(people / "empty.py"),
            jobs=1,
        )
    assert not (people / "none").exists()


def test_a_runs_warnings_go_through_the_warnings_module(people):
    store = make_store(people)
    # Finn's age is not mapped though the source has one: a warning before and in the run.
    unmapped = mapping()
    del unmapped["entityMappings"][1]["attributeMappings"]["age"]
    (people / "map.json").write_text(json.dumps(unmapped))
    with cdmigrate.Migration(
        cdmigrate.Model.from_file(str(people / "v1.json")),
        cdmigrate.Model.from_file(str(people / "v2.json")),
        cdmigrate.MappingModel.from_file(str(people / "map.json")),
    ) as migration, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        report = migration.run(store, str(people / "out.sqlite"))
    assert report.warnings, "the run has warnings to give"
    given = [str(w.message) for w in caught if issubclass(w.category, cdmigrate.MigrationWarning)]
    assert given == list(dict.fromkeys(report.warnings))
    assert all(w.filename == __file__ for w in caught if issubclass(w.category, cdmigrate.MigrationWarning)), [
        w.filename for w in caught
    ]
    # As errors, when a program asks for it: the store is written, then the warning raised.
    with cdmigrate.Migration(
        cdmigrate.Model.from_file(str(people / "v1.json")),
        cdmigrate.Model.from_file(str(people / "v2.json")),
        cdmigrate.MappingModel.from_file(str(people / "map.json")),
    ) as migration, warnings.catch_warnings():
        warnings.simplefilter("error", cdmigrate.MigrationWarning)
        with pytest.raises(cdmigrate.MigrationWarning):
            migration.run(store, str(people / "again.sqlite"))
