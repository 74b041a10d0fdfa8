"""``python -m cdmigrate inspect --dot``, ``plan --dot`` and ``import`` of whole model sets: the
structure of the graphs and of the imported folder, and — where the Swift ``cdmigrate`` is built
(``.build/debug/cdmigrate``, or ``CDMIGRATE_CLI``) — the same bytes as the Swift command for the
same input. Without the Swift command those comparisons are skipped, unless
CDMIGRATE_CROSS_LANGUAGE=required (scripts/test.sh sets it), which makes its absence a failure."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import EXAMPLES, KITCHEN_V1, RENAMES, ROOT, renames_store

import cdmigrate
from cdmigrate.__main__ import main

FIXTURES = os.path.join(ROOT, "Tests", "Fixtures")
UNCLOUDNOTES_XCODE = os.path.join(FIXTURES, "xcode", "UnCloudNotes")
UNCLOUDNOTES_BUNDLE = os.path.join(UNCLOUDNOTES_XCODE, "UnCloudNotesDataModel.xcdatamodeld")
XCODESERVER_MOMD = os.path.join(FIXTURES, "xcode", "XcodeServer", "1_1_0", "XcodeServer.momd_precompiled")
UNCLOUDNOTES_JSON = os.path.join(EXAMPLES, "4-uncloudnotes")
SWIFT_CLI = os.environ.get("CDMIGRATE_CLI") or os.path.join(ROOT, ".build", "debug", "cdmigrate")
REQUIRED = os.environ.get("CDMIGRATE_CROSS_LANGUAGE") == "required"

# Inheritance (an abstract root with two levels below it), a to-one, a to-many, an ordered
# to-many, required and transient attributes, and names DOT must escape.
ZOO = {
    "name": 'Zoo "v1"',
    "entities": [
        {
            "name": "Keeper",
            "attributes": [{"name": "name", "type": "string", "optional": False}],
            "relationships": [
                {"name": "animals", "destination": "Animal", "toMany": True, "ordered": True, "inverse": "keeper"}
            ],
        },
        {
            "name": "Animal",
            "abstract": True,
            "attributes": [{"name": "born", "type": "date"}, {"name": "mood", "type": "string", "transient": True}],
            "relationships": [
                {"name": "keeper", "destination": "Keeper", "inverse": "animals"},
                {"name": "friends", "destination": "Animal", "toMany": True, "inverse": "friends"},
            ],
        },
        {"name": "Reptile", "parent": "Animal", "attributes": [{"name": "scales", "type": "integer16"}]},
        {"name": "Bird", "parent": "Animal", "attributes": [{"name": "wingspan", "type": "double"}]},
        {"name": "Parrot", "parent": "Bird", "attributes": [{"name": "words", "type": "integer32"}]},
    ],
}


def swift_cli() -> str:
    if not os.access(SWIFT_CLI, os.X_OK):
        message = f"{SWIFT_CLI} is not built (swift build)"
        if REQUIRED:
            pytest.fail(message)
        pytest.skip(message)
    return SWIFT_CLI


def run_python(arguments, cwd=None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cdmigrate", *arguments], capture_output=True, text=True, timeout=120, cwd=cwd
    )


def run_swift(arguments) -> subprocess.CompletedProcess:
    return subprocess.run([swift_cli(), *arguments], capture_output=True, text=True, timeout=120)


def write_json(tmp_path, name, document) -> str:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return str(path)


def uncloudnotes_store(tmp_path, version="v1") -> str:
    """An empty UnCloudNotes store at a version of examples/4-uncloudnotes (the same models as the Xcode bundle)."""
    path = str(tmp_path / f"notes-{version}.sqlite")
    model = cdmigrate.Model.from_file(os.path.join(UNCLOUDNOTES_JSON, f"UnCloudNotes_{version}.model.json"))
    with cdmigrate.Store.create(model, path) as store:
        store.save()
    return path


def statements(dot: str):
    lines = dot.splitlines()
    assert lines[0].startswith("digraph ") and lines[0].endswith("{") and lines[-1] == "}", dot
    return lines[1:-1]


# -- inspect --dot: the structure --------------------------------------------------------------


def test_inspect_dot_draws_entities_relationships_and_inheritance(tmp_path, capfd):
    model = write_json(tmp_path, "zoo.json", ZOO)
    assert main(["inspect", "--dot", "--model", model]) == 0
    dot = capfd.readouterr().out
    assert dot.startswith('digraph "Zoo \\"v1\\"" {\n') and dot.endswith("}\n")
    body = statements(dot)
    nodes = [line for line in body if "[label=" in line and "->" not in line]
    # Entities in store order: roots by name, each followed depth-first by its subentities by name.
    assert [line.split('"')[1] for line in nodes] == ["Animal", "Bird", "Parrot", "Reptile", "Keeper"]
    assert '  "Animal" [label="{Animal\\n(abstract)|born: date\\lmood: string (transient)\\l}"];' in body
    assert '  "Keeper" [label="{Keeper|name: string (required)\\l}"];' in body
    assert '  "Parrot" [label="{Parrot|words: integer32\\l}"];' in body  # own attributes only
    assert '  "Keeper" -> "Animal" [label="animals (to-many, ordered)", arrowhead=crow];' in body
    assert '  "Animal" -> "Keeper" [label="keeper", arrowhead=normal];' in body
    assert '  "Animal" -> "Animal" [label="friends (to-many)", arrowhead=crow];' in body
    inherits = sorted(line for line in body if "inherits" in line)
    assert inherits == [
        '  "Bird" -> "Animal" [style=dashed, arrowhead=empty, label="inherits"];',
        '  "Parrot" -> "Bird" [style=dashed, arrowhead=empty, label="inherits"];',
        '  "Reptile" -> "Animal" [style=dashed, arrowhead=empty, label="inherits"];',
    ]
    assert len([line for line in body if "->" in line]) == 6


def test_inspect_dot_of_a_model_without_a_name_is_titled_by_its_path(tmp_path, capfd):
    model = write_json(tmp_path, "anonymous.json", {"entities": [{"name": "A", "attributes": []}]})
    assert main(["inspect", "--dot", "--model", model]) == 0
    assert capfd.readouterr().out == (
        f"digraph {json.dumps(model)} {{\n  rankdir=LR;\n"
        '  node [shape=record, fontname="Helvetica", fontsize=10];\n'
        '  edge [fontname="Helvetica", fontsize=9];\n  "A" [label="{A|}"];\n}\n'
    )


def test_inspect_dot_arguments_are_checked(tmp_path):
    model = write_json(tmp_path, "zoo.json", ZOO)
    assert main(["inspect", "--dot"]) == 64
    assert main(["inspect", "--dot", "--json", "--model", model]) == 64
    assert main(["inspect", "--dot", "--models", model, "some.sqlite"]) == 64
    assert main(["inspect", "--dot", str(tmp_path / "missing.sqlite")]) == 74
    assert main(["inspect", "--dot", "--model", str(tmp_path / "missing.json")]) == 74


def notes_store(tmp_path) -> str:
    """A copy of the macOS Notes store: an empty model cache, so its model is rebuilt from its schema."""
    folder = os.path.join(FIXTURES, "apple-stores", "macos-notes")
    for suffix in ("", "-wal", "-shm"):
        shutil.copyfile(
            os.path.join(folder, "NotesV7.storedata" + suffix), str(tmp_path / "NotesV7.storedata") + suffix
        )
    return str(tmp_path / "NotesV7.storedata")


def test_inspect_dot_of_a_store_draws_its_own_model(tmp_path, capfd):
    store = renames_store(tmp_path, "1.1.0")
    assert main(["inspect", store, "--dot"]) == 0
    drawn = capfd.readouterr().out
    assert drawn.startswith("digraph ")
    assert "v1_1_0_name" in drawn  # the cached model keeps the names' case
    store = notes_store(tmp_path)
    assert main(["inspect", store, "--dot"]) == 0
    drawn = capfd.readouterr().out
    assert f"digraph {json.dumps(store)} {{" in drawn  # a rebuilt model has no name: titled by the store
    assert '"Account"' in drawn and "username" in drawn


def test_inspect_dot_of_a_file_that_is_no_store_fails(tmp_path, capfd):
    garbage = tmp_path / "garbage.sqlite"
    garbage.write_bytes(b"not a database " * 64)
    assert main(["inspect", str(garbage), "--dot"]) != 0
    assert capfd.readouterr().out == ""
    import sqlite3

    connection = sqlite3.connect(tmp_path / "plain.sqlite")
    connection.execute("CREATE TABLE t (x)")
    connection.commit()
    connection.close()
    assert main(["inspect", str(tmp_path / "plain.sqlite"), "--dot"]) == 65
    assert "not a Core Data SQLite store" in capfd.readouterr().err


def test_inspect_with_model_says_whether_the_store_is_at_its_version(tmp_path, capfd):
    store = renames_store(tmp_path, "1.0.0")
    same = os.path.join(FIXTURES, "json-models", "renames-v1.0.0.json")
    other = os.path.join(FIXTURES, "json-models", "renames-v2.0.0.json")
    assert main(["inspect", store, "--model", same]) == 0
    assert capfd.readouterr().out.splitlines()[-1] == f"at the version of {same}"
    assert main(["inspect", store, "--model", other]) == 0
    last = capfd.readouterr().out.splitlines()[-1]
    assert last.startswith(f"not at the version of {other}: BasicEntity: store hash ")
    assert main(["inspect", store, "--model", other, "--json"]) == 0
    document = json.loads(capfd.readouterr().out)
    assert document["compatible"] is False and document["differences"][0].startswith("BasicEntity: store hash ")
    assert main(["inspect", store, "--model", str(tmp_path / "missing.json")]) == 74


def test_inspect_with_models_names_the_version_that_wrote_the_store(tmp_path, capfd):
    store = renames_store(tmp_path, "1.1.0")
    bundle = os.path.join(RENAMES, "Model.xcdatamodeld")
    assert main(["inspect", store, "--models", bundle]) == 0
    last = capfd.readouterr().out.splitlines()[-1]
    assert last.startswith("written with version ") and f" of {bundle} (current: " in last
    assert main(["inspect", store, "--models", bundle, "--json"]) == 0
    document = json.loads(capfd.readouterr().out)
    assert document["version"] is not None and document["currentVersion"]
    other = uncloudnotes_store(tmp_path, "v1")
    assert main(["inspect", other, "--models", bundle, "--json"]) == 0
    assert json.loads(capfd.readouterr().out)["version"] is None
    assert main(["inspect", store, "--models", str(tmp_path / "missing.xcdatamodeld")]) != 0


def test_model_dot_takes_a_model_or_its_json():
    with cdmigrate.Model.from_json(json.dumps(KITCHEN_V1)) as model:
        assert cdmigrate.graphs.model_dot(model) == cdmigrate.graphs.model_dot(json.loads(model.to_json()))
        assert '  "Box" -> "Item" [label="items (to-many)", arrowhead=crow];' in cdmigrate.graphs.model_dot(model)


# -- plan --dot: the structure ----------------------------------------------------------------


def test_plan_dot_draws_versions_and_dashed_inferred_steps(tmp_path, capfd):
    store = renames_store(tmp_path, "1.1.0")
    assert main(["plan", store, "--models", os.path.join(RENAMES, "Model.xcdatamodeld"), "--dot"]) == 0
    body = statements(capfd.readouterr().out)
    assert body[:2] == ["  rankdir=LR;", "  node [shape=box];"]
    assert '  "v1.0.0";' in body
    assert '  "v1.1.0" [style=filled, fillcolor=lightblue, xlabel="store"];' in body
    assert '  "v2.0.0" [peripheries=2];' in body
    assert [line for line in body if "->" in line] == [
        '  "v1.1.0" -> "v1.1.2" [label="inferred", style=dashed];',
        '  "v1.1.2" -> "v1.2.0" [label="inferred", style=dashed];',
        '  "v1.2.0" -> "v2.0.0" [label="inferred", style=dashed];',
    ]


def test_plan_dot_labels_steps_with_their_mapping_models(tmp_path, capfd):
    store = uncloudnotes_store(tmp_path, "v2")
    assert main(["plan", store, "--models", UNCLOUDNOTES_JSON, "--dot", "--to-version", "UnCloudNotes_v3"]) == 0
    body = statements(capfd.readouterr().out)
    assert '  "UnCloudNotes_v2" [style=filled, fillcolor=lightblue, xlabel="store"];' in body
    assert '  "UnCloudNotes_v3" [peripheries=2];' in body
    assert '  "UnCloudNotes_v4";' in body
    assert [line for line in body if "->" in line] == [
        '  "UnCloudNotes_v2" -> "UnCloudNotes_v3" [label="UnCloudNotes_v2_to_v3"];'
    ]
    assert main(["plan", store, "--models", UNCLOUDNOTES_JSON, "--dot", "--json"]) == 64


# -- import of a model set: the structure ------------------------------------------------------


def test_import_of_an_xcdatamodeld_writes_every_version_its_mappings_and_current_version(tmp_path):
    folder = tmp_path / "models"
    result = run_python(["import", UNCLOUDNOTES_BUNDLE, "-o", str(folder)])
    assert result.returncode == 0, result.stderr
    assert "wrote 4 version(s) and 2 mapping model(s)" in result.stderr
    assert sorted(os.listdir(folder)) == [
        "UnCloudNotesDataModel.json",
        "UnCloudNotesDataModel_v2.json",
        "UnCloudNotesDataModel_v3.json",
        "UnCloudNotesDataModel_v4.json",
        "UnCloudNotesMappingModel_v2_to_v3.mapping.json",
        "UnCloudNotesMappingModel_v3_to_v4.mapping.json",
        "current-version",
    ]
    assert (folder / "current-version").read_text() == "UnCloudNotesDataModel_v4\n"
    mapping = json.loads((folder / "UnCloudNotesMappingModel_v3_to_v4.mapping.json").read_text())
    assert all("sourceEntityVersionHash" in m for m in mapping["entityMappings"] if m.get("sourceEntity"))
    # Read back, the folder is the same set: a v1 store takes the same steps through it as through the bundle.
    store = uncloudnotes_store(tmp_path, "v1")
    through_bundle = cdmigrate.ModelSet(UNCLOUDNOTES_BUNDLE).plan(store)
    through_folder = cdmigrate.ModelSet(str(folder)).plan(store)
    steps = [
        (s.source_version, s.destination_version, s.inferred, s.mapping_models, s.policies)
        for s in through_folder.steps
    ]
    assert steps == [
        (s.source_version, s.destination_version, s.inferred, s.mapping_models, s.policies)
        for s in through_bundle.steps
    ]
    assert [s[3] for s in steps] == [
        ["inferred"],
        ["UnCloudNotesMappingModel_v2_to_v3"],
        ["UnCloudNotesMappingModel_v3_to_v4"],
    ]


def test_import_of_a_bundle_reports_json_and_needs_a_folder(tmp_path):
    folder = tmp_path / "compiled"
    result = run_python(["import", XCODESERVER_MOMD, "-o", str(folder), "--json"])
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert document == {
        "ok": True,
        "versions": ["XcodeServer"],
        "currentVersion": "XcodeServer",
        "mappingModels": [],
        "folder": str(folder),
    }
    assert sorted(os.listdir(folder)) == ["XcodeServer.json", "current-version"]
    assert run_python(["import", XCODESERVER_MOMD]).returncode == 64
    assert run_python(["import", UNCLOUDNOTES_BUNDLE, "-o", "-"]).returncode == 64
    assert (
        run_python(["import", UNCLOUDNOTES_BUNDLE, "-o", str(tmp_path / "x"), "--source-model", "a.json"]).returncode
        == 64
    )


def test_model_set_json_files_names_each_mappings_step(tmp_path):
    files = cdmigrate.ModelSet(UNCLOUDNOTES_BUNDLE).json_files()
    assert files.current_version == "UnCloudNotesDataModel_v4"
    assert files.mapping_models == {
        "UnCloudNotesMappingModel_v2_to_v3": ("UnCloudNotesDataModel_v2", "UnCloudNotesDataModel_v3"),
        "UnCloudNotesMappingModel_v3_to_v4": ("UnCloudNotesDataModel_v3", "UnCloudNotesDataModel_v4"),
    }
    assert [name for name, _ in files.files][-1] == "current-version"
    written = cdmigrate.ModelSet(UNCLOUDNOTES_BUNDLE).write_json(tmp_path / "set")
    assert sorted(os.listdir(tmp_path / "set")) == sorted(name for name, _ in files.files)
    assert (tmp_path / "set" / "current-version").read_text() == "UnCloudNotesDataModel_v4\n"
    assert written.mapping_models == files.mapping_models
    with pytest.raises(cdmigrate.MigrationError):
        cdmigrate.ModelSet(os.path.join(FIXTURES, "no-such.xcdatamodeld")).json_files()


# -- the same bytes as the Swift command --------------------------------------------------------

MODELS_TO_DRAW = [
    os.path.join(UNCLOUDNOTES_BUNDLE, "UnCloudNotesDataModel_v4.xcdatamodel"),
    os.path.join(UNCLOUDNOTES_JSON, "UnCloudNotes_v3.model.json"),
    os.path.join(XCODESERVER_MOMD, "XcodeServer.mom"),
    os.path.join(FIXTURES, "json-models", "notes-v7.json"),
]


@pytest.mark.parametrize("model", [*MODELS_TO_DRAW, "zoo"], ids=lambda p: os.path.basename(p))
def test_inspect_dot_is_the_swift_commands(tmp_path, model):
    if model == "zoo":
        model = write_json(tmp_path, "zoo.json", ZOO)
    swift = run_swift(["inspect", "--dot", "--model", model])
    assert swift.returncode == 0, swift.stderr
    python = run_python(["inspect", "--dot", "--model", model])
    assert python.returncode == 0, python.stderr
    assert python.stdout == swift.stdout


def test_inspect_store_dot_is_the_swift_commands(tmp_path):
    for store in [renames_store(tmp_path, "1.0.0"), renames_store(tmp_path, "2.0.0"), notes_store(tmp_path)]:
        swift = run_swift(["inspect", store, "--dot"])
        assert swift.returncode == 0, swift.stderr
        python = run_python(["inspect", store, "--dot"])
        assert python.returncode == 0, python.stderr
        assert python.stdout == swift.stdout


def test_inspect_model_and_models_are_the_swift_commands(tmp_path):
    store = renames_store(tmp_path, "1.1.0")
    cases = [
        ["--model", os.path.join(FIXTURES, "json-models", "renames-v1.1.0.json")],
        ["--model", os.path.join(FIXTURES, "json-models", "renames-v2.0.0.json")],
        ["--models", os.path.join(RENAMES, "Model.xcdatamodeld")],
        ["--models", UNCLOUDNOTES_JSON],
    ]
    for extra in cases:
        swift = run_swift(["inspect", store, *extra])
        python = run_python(["inspect", store, *extra])
        assert (python.returncode, python.stdout, python.stderr) == (swift.returncode, swift.stdout, swift.stderr)
        swift = run_swift(["inspect", store, *extra, "--json"])
        python = run_python(["inspect", store, *extra, "--json"])
        assert python.returncode == swift.returncode
        assert json.loads(python.stdout) == json.loads(swift.stdout)


def test_plan_dot_is_the_swift_commands(tmp_path):
    v2 = uncloudnotes_store(tmp_path, "v2")
    cases = [
        (renames_store(tmp_path, "1.0.0"), os.path.join(RENAMES, "Model.xcdatamodeld"), []),
        (uncloudnotes_store(tmp_path, "v1"), UNCLOUDNOTES_JSON, []),
        (v2, UNCLOUDNOTES_BUNDLE, []),
        (v2, UNCLOUDNOTES_JSON, ["--to-version", "UnCloudNotes_v3"]),
    ]
    for store, models, extra in cases:
        arguments = ["plan", store, "--models", models, "--dot", *extra]
        swift = run_swift(arguments)
        assert swift.returncode == 0, swift.stderr
        python = run_python(arguments)
        assert python.returncode == 0, python.stderr
        assert python.stdout == swift.stdout, arguments


@pytest.mark.parametrize(
    "bundle", [UNCLOUDNOTES_BUNDLE, XCODESERVER_MOMD, os.path.join(RENAMES, "Model.xcdatamodeld")], ids=os.path.basename
)
def test_import_of_a_model_set_is_the_swift_commands(tmp_path, bundle):
    swift_folder, python_folder = tmp_path / "swift", tmp_path / "python"
    swift = run_swift(["import", bundle, "-o", str(swift_folder)])
    assert swift.returncode == 0, swift.stderr
    python = run_python(["import", bundle, "-o", str(python_folder)])
    assert python.returncode == 0, python.stderr
    assert python.stderr.replace(str(python_folder), "DIR") == swift.stderr.replace(str(swift_folder), "DIR")
    assert sorted(os.listdir(python_folder)) == sorted(os.listdir(swift_folder))
    for name in os.listdir(swift_folder):
        assert (python_folder / name).read_bytes() == (swift_folder / name).read_bytes(), name
    swift_json = json.loads(run_swift(["import", bundle, "-o", str(swift_folder), "--json"]).stdout)
    python_json = json.loads(run_python(["import", bundle, "-o", str(swift_folder), "--json"]).stdout)
    assert python_json == swift_json


def test_inspect_counts_external_binary_data_as_the_swift_command(tmp_path):
    # The external data fixture: files in .photos_SUPPORT/_EXTERNAL_DATA, one of them missing.
    shutil.copytree(os.path.join(FIXTURES, "external-data"), str(tmp_path / "external-data"))
    store = str(tmp_path / "external-data" / "photos.sqlite")
    swift = run_swift(["inspect", store])
    python = run_python(["inspect", store])
    assert "external binary data:" in swift.stdout and "missing" in swift.stderr
    assert (python.returncode, python.stdout, python.stderr) == (swift.returncode, swift.stdout, swift.stderr)
    swift = run_swift(["inspect", store, "--json"])
    python = run_python(["inspect", store, "--json"])
    census = json.loads(swift.stdout)["externalData"]
    assert census["missing"] == 1 and census["references"] > census["missing"]
    assert json.loads(python.stdout) == json.loads(swift.stdout)


# -- cdmigrate.graphs: the command's Graphviz text, drawn in Python ------------------------------


@pytest.mark.parametrize("model", [*MODELS_TO_DRAW, "zoo"], ids=lambda p: os.path.basename(p))
def test_model_dot_is_the_librarys_inspect_dot(tmp_path, capfd, model):
    if model == "zoo":
        model = write_json(tmp_path, "zoo.json", ZOO)
    assert main(["inspect", "--dot", "--model", model]) == 0
    drawn_by_the_library = capfd.readouterr().out
    with cdmigrate.Model.from_file(model) as opened:
        assert cdmigrate.graphs.model_dot(opened, title=model) == drawn_by_the_library


def test_plan_dot_is_the_librarys_plan_dot(tmp_path, capfd):
    v2 = uncloudnotes_store(tmp_path, "v2")
    cases = [
        (renames_store(tmp_path, "1.0.0"), os.path.join(RENAMES, "Model.xcdatamodeld"), None),
        (uncloudnotes_store(tmp_path, "v1"), UNCLOUDNOTES_JSON, None),
        (v2, UNCLOUDNOTES_BUNDLE, None),
        (v2, UNCLOUDNOTES_JSON, "UnCloudNotes_v3"),
    ]
    for store, models, to_version in cases:
        extra = ["--to-version", to_version] if to_version else []
        assert main(["plan", store, "--models", models, "--dot", *extra]) == 0
        drawn_by_the_library = capfd.readouterr().out
        plan = cdmigrate.ModelSet(models).plan(store, to_version)
        assert cdmigrate.graphs.plan_dot(plan) == drawn_by_the_library, (store, models)


def test_plan_dot_labels_a_direct_step_inferred_directly():
    # Core Data's one inferred step over the versions between, as `cdmigrate plan --dot` labels it.
    direct = cdmigrate.MigrationStep("v1", "v3", True, ["inferred"], direct=True)
    plan = cdmigrate.MigrationPlan("s.sqlite", "v1", "v3", "v3", ["v1", "v2", "v3"], [direct], [])
    assert '  "v1" -> "v3" [label="inferred directly", style=dashed];' in statements(cdmigrate.graphs.plan_dot(plan))
