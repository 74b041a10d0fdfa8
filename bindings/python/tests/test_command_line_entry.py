"""The Python entry points run the library's command line (cdm_command_line_run), the executable's
own code: Python policy modules registered through the host's loader (their subclasses or their
POLICIES), fleet children that are the same entry point and get the modules, Ctrl-C that cancels
cleanly and leaves Python's own handler in place."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import types

import pytest
from conftest import ROOT, rows
from test_cli import ENTRY_POINTS, PEOPLE, POLICY_MODULE, SPLIT, mapping

import cdmigrate
from cdmigrate.__main__ import main
from cdmigrate._command_line import load_policy_module

# Registered through POLICIES, under a name that is not its class's.
POLICIES_MODULE = """
import cdmigrate

class Renamed(cdmigrate.EntityMigrationPolicy):
    def create_destination_instances(self, source, mapping, manager):
        swede = super().create_destination_instances(source, mapping, manager)
        swede["age"] = 7
        return swede

POLICIES = {"OlderSwedes": Renamed}
"""

# Ctrl-C in the middle of the run, from inside a policy.
INTERRUPTING_MODULE = """
import os, signal
import cdmigrate

class OlderSwedes(cdmigrate.EntityMigrationPolicy):
    def create_destination_instances(self, source, mapping, manager):
        os.kill(os.getpid(), signal.SIGINT)
        return super().create_destination_instances(source, mapping, manager)
"""


def make_people(folder, name):
    path = str(folder / name)
    with cdmigrate.Model.from_file(str(folder / "v1.json")) as model, cdmigrate.Store.create(model, path) as store:
        for person, country in (("Anna", "Sweden"), ("Matti", "Finland"), ("Ebba", "Sweden")):
            store.insert("Person", name=person, country=country, age=30)
        store.save()
    return path


@pytest.fixture
def people(tmp_path):
    for name, document in (("v1.json", PEOPLE), ("v2.json", SPLIT), ("policy-map.json", mapping("OlderSwedes"))):
        (tmp_path / name).write_text(json.dumps(document))
    (tmp_path / "olderswedes.py").write_text(POLICY_MODULE)
    (tmp_path / "renamed.py").write_text(POLICIES_MODULE)
    (tmp_path / "interrupting.py").write_text(INTERRUPTING_MODULE)
    return tmp_path


def models(folder):
    return [
        "--source-model",
        str(folder / "v1.json"),
        "--destination-model",
        str(folder / "v2.json"),
        "--mapping",
        str(folder / "policy-map.json"),
    ]


def run(entry, *arguments, cwd=None):
    command = ENTRY_POINTS[entry]
    if not os.access(command[0], os.X_OK):
        pytest.fail(f"{command[0]} is not installed: pip install the package (make -C bindings/python test)")
    return subprocess.run(
        [*command, *arguments],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)},
    )


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_a_fleet_runs_its_children_through_the_same_entry_point_with_the_policy_modules(people, entry):
    stores = people / "stores"
    stores.mkdir()
    for name in ("a.sqlite", "b.sqlite", "c.sqlite"):
        os.replace(make_people(people, name), stores / name)
    out = people / "out"
    result = run(
        entry,
        "migrate",
        str(stores),
        "--out-dir",
        str(out),
        "--jobs",
        "2",
        "--json",
        "--policies",
        str(people / "olderswedes.py"),
        *models(people),
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert sorted(line["status"] for line in lines if "status" in line) == ["migrated"] * 3
    for name in ("a.sqlite", "b.sqlite", "c.sqlite"):
        assert rows(str(out / name), "SELECT ZAGE FROM ZSWEDE") == [(99,), (99,)]
    # Without the module each child fails on its own, naming the policy.
    without = run(entry, "migrate", str(stores), "--out-dir", str(people / "without"), "--jobs", "2", *models(people))
    assert without.returncode == 1, without.stdout + without.stderr
    assert "OlderSwedes" in without.stdout


def test_a_module_registers_its_policies_dict_under_the_names_it_gives(people):
    destination = str(people / "out.sqlite")
    result = run(
        "python -m cdmigrate",
        "migrate",
        make_people(people, "people.sqlite"),
        "--to",
        destination,
        "--policies",
        str(people / "renamed.py"),
        *models(people),
    )
    assert result.returncode == 0, result.stderr
    assert rows(destination, "SELECT ZAGE FROM ZSWEDE") == [(7,), (7,)]


def test_a_module_that_cannot_be_imported_fails_with_the_io_status(people):
    result = run("python -m cdmigrate", "validate", "--policies", "no_such_module_anywhere", *models(people))
    assert result.returncode == 74
    assert "no_such_module_anywhere" in result.stderr


def test_ctrl_c_cancels_the_command_and_python_keeps_its_handler(people, capfd):
    # Python's own handler in place first: a test run started in the background inherits
    # SIGINT ignored, and an ignored signal would not show the handler coming back.
    inherited = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        ctrl_c_cancels_the_command_and_python_keeps_its_handler(people, capfd)
    finally:
        signal.signal(signal.SIGINT, inherited)


def ctrl_c_cancels_the_command_and_python_keeps_its_handler(people, capfd):
    before = signal.getsignal(signal.SIGINT)
    assert before is signal.default_int_handler
    destination = str(people / "out.sqlite")
    status = main(
        [
            "migrate",
            make_people(people, "people.sqlite"),
            "--to",
            destination,
            "--policies",
            str(people / "interrupting.py"),
            *models(people),
        ]
    )
    assert status == 130
    assert not os.path.exists(destination)
    assert "cancel" in capfd.readouterr().err.lower()
    assert signal.getsignal(signal.SIGINT) is before
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10_000_000):  # the handler runs at the next instruction boundary
            pass


# Holds its command inside the migration until the test lets it go (the gate is the test's).
GATED_MODULE = """
import command_line_gate
import cdmigrate

class OlderSwedes(cdmigrate.EntityMigrationPolicy):
    def create_destination_instances(self, source, mapping, manager):
        command_line_gate.inside.set()
        command_line_gate.go.wait(60)
        return super().create_destination_instances(source, mapping, manager)
"""


class SigAction(ctypes.Structure):
    """struct sigaction on Linux (glibc): the handler, the mask, the flags, the restorer."""

    _fields_ = [
        ("handler", ctypes.c_void_p),
        ("mask", ctypes.c_ulong * (128 // ctypes.sizeof(ctypes.c_ulong))),
        ("flags", ctypes.c_int),
        ("restorer", ctypes.c_void_p),
    ]


def python_sigint_action():
    """Python's own SIGINT action (put in place afresh): its handler and flags."""
    signal.signal(signal.SIGINT, signal.default_int_handler)
    return sigint_action()


def sigint_action():
    action = SigAction()
    assert ctypes.CDLL(None).sigaction(signal.SIGINT, None, ctypes.byref(action)) == 0
    return action.handler, action.flags


def migrate_arguments(folder, store, destination, policies):
    """``migrate`` of a new people store with a policy module."""
    source = make_people(folder, store)
    return ["migrate", source, "--to", str(folder / destination), "--policies", str(folder / policies), *models(folder)]


def test_commands_overlapping_on_two_threads_keep_ctrl_c_until_the_last_ends_then_python_has_it_back(
    people, monkeypatch
):
    """A command that ends while another runs on another thread leaves Ctrl-C to the one still
    running (it cancels it, not Python), and Python's own handler comes back whole (its C action
    with its flags, such as SA_ONSTACK) once both have ended."""
    gate = types.SimpleNamespace(inside=threading.Event(), go=threading.Event())
    monkeypatch.setitem(sys.modules, "command_line_gate", gate)
    (people / "gated.py").write_text(GATED_MODULE)
    before = python_sigint_action()
    statuses = {}

    def held():
        statuses["held"] = main(migrate_arguments(people, "held.sqlite", "held-out.sqlite", "gated.py"))

    thread = threading.Thread(target=held)
    thread.start()
    interrupted_python = False
    try:
        assert gate.inside.wait(60), "the held command never reached its policy"
        statuses["quick"] = main(migrate_arguments(people, "quick.sqlite", "quick-out.sqlite", "olderswedes.py"))
        try:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C while the held command still runs
            for _ in range(1_000_000):
                pass
        except KeyboardInterrupt:
            interrupted_python = True
    finally:
        gate.go.set()
        thread.join()
    assert not interrupted_python, "Ctrl-C reached Python while a command was still running"
    assert statuses == {"quick": 0, "held": 130}
    assert not os.path.exists(people / "held-out.sqlite")
    assert sigint_action() == before
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    with pytest.raises(KeyboardInterrupt):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10_000_000):  # the handler runs at the next instruction boundary
            pass


def test_a_command_gives_python_its_sigint_action_back_whole(people):
    before = python_sigint_action()
    assert main(migrate_arguments(people, "people.sqlite", "out.sqlite", "olderswedes.py")) == 0
    assert sigint_action() == before


C_POLICY = r"""
#include "cdmigrate.h"
static int swede_create(cdm_context *ctx, cdm_object *source, void *user) {
    cdm_object *swede = NULL;
    (void)user;
    int rc = cdm_context_default_create_destination_instances(ctx, source, &swede);
    return rc != CDM_OK ? rc : cdm_object_set_int64(swede, "age", 55);
}
int cdm_register_policies(cdm_migration *migration) {
    cdm_policy hooks = {0};
    hooks.create_destination_instances = swede_create;
    return cdm_migration_register_policy(migration, "OlderSwedes", &hooks, sizeof hooks, NULL, NULL);
}
"""


@pytest.mark.parametrize("entry", sorted(ENTRY_POINTS))
def test_a_c_policy_library_built_against_the_header_alone_loads_as_in_the_executable(people, entry):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.fail("a C compiler is needed to build the policy library")
    (people / "swedes.c").write_text(C_POLICY)
    library = str(people / "libswedes.so")
    subprocess.run(
        [compiler, "-shared", "-fPIC", "-I", os.path.join(ROOT, "include"), "-o", library, str(people / "swedes.c")],
        check=True,
    )
    destination = str(people / "out.sqlite")
    result = run(
        entry,
        "migrate",
        make_people(people, "people.sqlite"),
        "--to",
        destination,
        "--policies",
        library,
        *models(people),
    )
    assert result.returncode == 0, result.stderr
    assert rows(destination, "SELECT ZAGE FROM ZSWEDE") == [(55,), (55,)]


REPORT_KEYS = {
    "mappings",
    "destinationCounts",
    "untakenSourceInstances",
    "warnings",
    "missingExternalDataFiles",
    "losses",
    "bySchemaChanges",
    "schemaChanges",
    "schemaChangesNotDone",
}
MAPPING_KEYS = {"pass", "entityMapping", "sourceInstances", "associations", "instancesBySQL", "relationshipsBySQL"}


def test_the_command_line_and_the_library_give_one_report_json(people):
    store = make_people(people, "people.sqlite")
    command = run(
        "python -m cdmigrate",
        "migrate",
        store,
        "--to",
        str(people / "cli.sqlite"),
        "--json",
        "--policies",
        str(people / "olderswedes.py"),
        *models(people),
    )
    assert command.returncode == 0, command.stderr
    printed = json.loads(command.stdout)["report"]
    with cdmigrate.Model.from_file(str(people / "v1.json")) as source, cdmigrate.Model.from_file(
        str(people / "v2.json")
    ) as destination, cdmigrate.MappingModel.from_file(str(people / "policy-map.json")) as mapping:
        policies = load_policy_module(str(people / "olderswedes.py"))
        with cdmigrate.Migration(
            source, destination, [mapping], policies={"OlderSwedes": policies.OlderSwedes}
        ) as migration:
            report = migration.run(store, str(people / "api.sqlite"))
    assert set(printed) == set(report.raw) == REPORT_KEYS
    assert (
        {key for m in printed["mappings"] for key in m}
        == {key for m in report.raw["mappings"] for key in m}
        == MAPPING_KEYS
    )
    assert printed == report.raw
    assert report.untaken == printed["untakenSourceInstances"] == {}  # every person is a Swede or a Finn
    assert report.destination_counts == printed["destinationCounts"] == {"Swede": 2, "Finn": 1}


def test_a_chain_report_nests_each_steps_report_as_the_command_line_prints_it(tmp_path):
    from reference_migrations import uncloudnotes
    from test_chain import UNCLOUDNOTES

    store = str(tmp_path / "v1.sqlite")
    uncloudnotes.generate_source(1, store, count=5)
    command = run(
        "python -m cdmigrate",
        "migrate",
        store,
        "--to",
        str(tmp_path / "cli.sqlite"),
        "--models",
        UNCLOUDNOTES,
        "--to-version",
        "UnCloudNotes_v2",
        "--json",
    )
    assert command.returncode == 0, command.stderr
    printed = json.loads(command.stdout)
    report = cdmigrate.migrate_store(store, UNCLOUDNOTES, str(tmp_path / "api.sqlite"), to_version="UnCloudNotes_v2")
    assert set(report.raw) <= set(printed)
    assert (
        [set(step) for step in printed["steps"]]
        == [set(step) for step in report.raw["steps"]]
        == [{"from", "to", "inferred", "mappingModels", "direct", "fusedSteps", "report"}]
    )
    assert set(report.raw["steps"][0]["report"]) == REPORT_KEYS
    assert report.steps[0].destination_counts == printed["steps"][0]["report"]["destinationCounts"]


def test_run_command_runs_a_command_in_this_process_with_its_exit_status(people, capfd):
    assert cdmigrate.run_command(["--version"]) == 0
    assert capfd.readouterr().out.strip().endswith(cdmigrate.__version__)
    store = make_people(people, "people.sqlite")
    assert cdmigrate.run_command(["inspect", store, "--json"]) == 0
    assert "Person" in json.dumps(json.loads(capfd.readouterr().out))
    assert cdmigrate.run_command(["inspect", str(people / "missing.sqlite")]) != 0
    assert "missing.sqlite" in capfd.readouterr().err
