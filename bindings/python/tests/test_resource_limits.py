"""The resource-limit suite: the largest and slowest inputs found for every reader (JSON, Xcode
XML, compiled models, binary property lists in store metadata, expressions, regular expressions),
each read in a child process under an address-space limit (``ulimit -v``, RLIMIT_AS) and a CPU-time
limit (RLIMIT_CPU), with a wall-clock timeout on the child. Each must end within those bounds with
the outcome named (a MigrationError with its code and a message fragment, or success): a hang or a
runaway allocation shows as a killed child, never as a slow test. No timed assertion: the limits
are generous ceilings, not measurements. docs/reliability.md lists the inputs and the limits.

CDMIGRATE_LIMIT_MEMORY_MB and CDMIGRATE_LIMIT_SECONDS override the ceilings."""

from __future__ import annotations

import json
import os
import plistlib
import resource
import sqlite3
import subprocess
import sys
import textwrap

import cdmigrate

# Generous ceilings for a debug-free library on a shared 2-core machine: each case needs a small
# fraction of them (docs/reliability.md has the measured peaks).
MEMORY_MB = int(os.environ.get("CDMIGRATE_LIMIT_MEMORY_MB", "512"))
SECONDS = int(os.environ.get("CDMIGRATE_LIMIT_SECONDS", "30"))


def _limits():
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_MB << 20, MEMORY_MB << 20))
    resource.setrlimit(resource.RLIMIT_CPU, (SECONDS, SECONDS + 5))


def run_bounded(code: str, *args: str) -> dict:
    """Runs `code` (with cdmigrate imported and `args` as ARGS) in a bounded child; its JSON result."""
    program = (
        "import json, sys, cdmigrate\nARGS = sys.argv[1:]\n"
        + textwrap.dedent(code)
        + textwrap.dedent("""
        try:
            result = {"ok": main()}
        except cdmigrate.MigrationError as error:
            result = {"code": error.code, "message": str(error)}
        # The child's own peak (VmHWM: ru_maxrss may carry the parent's over exec).
        with open("/proc/self/status") as status:
            result["peak_rss_kb"] = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
        print(json.dumps(result))
        """)
    )
    child = subprocess.run(
        [sys.executable, "-c", program, *args], capture_output=True, text=True, timeout=SECONDS * 2, preexec_fn=_limits
    )
    assert child.returncode == 0, (
        f"child ended with {child.returncode} (negative: killed by a signal)\n{child.stderr[-2000:]}"
    )
    result = json.loads(child.stdout.strip().splitlines()[-1])
    if os.environ.get("CDMIGRATE_LIMIT_REPORT"):
        print(
            f"\n{os.environ.get('PYTEST_CURRENT_TEST', '').split(' ')[0]}: peak RSS {result['peak_rss_kb'] // 1024} MiB"
        )
    del result["peak_rss_kb"]
    return result


def expect_error(result: dict, code: int, fragment: str):
    assert result.get("code") == code, result
    assert fragment in result["message"], result


def test_the_limits_stop_a_runaway_child():
    """The harness itself: a child allocating past the address-space limit, or spinning past the
    CPU limit, does not end normally."""
    grow = subprocess.run(
        [sys.executable, "-c", f"x = bytearray({MEMORY_MB + 64} << 20)"],
        capture_output=True,
        preexec_fn=_limits,
        timeout=SECONDS * 2,
    )
    assert grow.returncode != 0 and b"MemoryError" in grow.stderr
    spin = subprocess.run(
        [sys.executable, "-c", "import resource; resource.setrlimit(resource.RLIMIT_CPU, (1, 2))\nwhile True: pass"],
        capture_output=True,
        preexec_fn=_limits,
        timeout=SECONDS * 2,
    )
    assert spin.returncode < 0  # SIGXCPU


# MARK: JSON


def test_json_nested_100000_levels(tmp_path):
    path = tmp_path / "deep.json"
    path.write_text('{"entities": ' + "[" * 100_000 + "]" * 100_000 + "}")
    result = run_bounded("def main(): cdmigrate.Model.from_file(ARGS[0])", str(path))
    expect_error(result, cdmigrate.errors.INVALID_JSON, "JSON syntax error")


def test_json_string_of_16_mib(tmp_path):
    path = tmp_path / "long.json"
    path.write_text('{"entities": [{"name": "' + "N" * (16 << 20) + '"}]}')
    result = run_bounded("def main(): return len(cdmigrate.Model.from_file(ARGS[0]).entity_names)", str(path))
    assert result == {"ok": 1}  # an entity of a 16 MiB name: read, within the bounds


def test_json_model_of_2000_entities_reads(tmp_path):
    entities = [
        {"name": f"E{i}", "attributes": [{"name": f"a{j}", "type": "string", "optional": True} for j in range(10)]}
        for i in range(2000)
    ]
    path = tmp_path / "wide.json"
    path.write_text(json.dumps({"name": "Wide", "entities": entities}))
    result = run_bounded("def main(): return len(cdmigrate.Model.from_file(ARGS[0]).entity_names)", str(path))
    assert result == {"ok": 2000}


def test_json_latin1_file(tmp_path):
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"entities": [{"name": "Caf\xe9"}]}')
    result = run_bounded("def main(): cdmigrate.Model.from_file(ARGS[0])", str(path))
    expect_error(result, cdmigrate.errors.INVALID_JSON, "byte 0xE9 at line 1, byte offset 27")


# MARK: Xcode XML


def _xcdatamodel(tmp_path, name: str, text: str) -> str:
    folder = tmp_path / f"{name}.xcdatamodel"
    folder.mkdir()
    (folder / "contents").write_text(text)
    return str(folder)


def test_xml_quadratic_entity_expansion(tmp_path):
    # 150 KB: 20,000 references to one 50 KB internal entity in an attribute (1 GB expanded).
    text = (
        '<?xml version="1.0"?>\n<!DOCTYPE model [\n<!ENTITY e "' + "x" * 50_000 + '">\n]>\n'
        '<model><entity name="N" representedClassName="' + "&e;" * 20_000 + '"/></model>'
    )
    result = run_bounded("def main(): cdmigrate.Model.from_file(ARGS[0])", _xcdatamodel(tmp_path, "expansion", text))
    expect_error(result, cdmigrate.errors.INVALID_MODEL, "declares an XML entity at line 3")


def test_xml_element_with_100000_attributes(tmp_path):
    text = "<model><entity " + " ".join(f'a{i}="1"' for i in range(100_000)) + "/></model>"
    result = run_bounded("def main(): cdmigrate.Model.from_file(ARGS[0])", _xcdatamodel(tmp_path, "attributes", text))
    expect_error(result, cdmigrate.errors.INVALID_MODEL, "more than 256 attributes")


def test_xml_nested_100000_levels(tmp_path):
    text = "<model>" + "<a>" * 100_000 + "</a>" * 100_000 + "</model>"
    result = run_bounded("def main(): cdmigrate.Model.from_file(ARGS[0])", _xcdatamodel(tmp_path, "deep", text))
    expect_error(result, cdmigrate.errors.INVALID_MODEL, "")


def test_xml_file_above_64_mib(tmp_path):
    folder = tmp_path / "huge.xcdatamodel"
    folder.mkdir()
    with open(folder / "contents", "wb") as file:  # sparse: no disk used
        file.write(b"<model>")
        file.seek(65 << 20)
        file.write(b"</model>")
    result = run_bounded("def main(): cdmigrate.Model.from_file(ARGS[0])", str(folder))
    expect_error(result, cdmigrate.errors.INVALID_MODEL, "above the limit of 67108864 bytes")


# MARK: Compiled models (keyed archives)


def _keyed_archive(objects, root=1) -> bytes:
    return plistlib.dumps(
        {"$archiver": "NSKeyedArchiver", "$version": 100000, "$top": {"root": plistlib.UID(root)}, "$objects": objects},
        fmt=plistlib.FMT_BINARY,
    )


def test_compiled_model_with_a_cycle(tmp_path):
    # A model whose entities dictionary holds the model itself.
    objects = [
        "$null",
        {"$class": plistlib.UID(3), "NSEntities": plistlib.UID(2)},
        {"$class": plistlib.UID(4), "NS.keys": [plistlib.UID(5)], "NS.objects": [plistlib.UID(1)]},
        {"$classname": "NSManagedObjectModel", "$classes": ["NSManagedObjectModel", "NSObject"]},
        {"$classname": "NSDictionary", "$classes": ["NSDictionary", "NSObject"]},
        "Loop",
    ]
    path = tmp_path / "cycle.mom"
    path.write_bytes(_keyed_archive(objects))
    result = run_bounded("def main(): cdmigrate.Model.from_file(ARGS[0])", str(path))
    expect_error(
        result, cdmigrate.errors.INVALID_MODEL, "object 1 is a NSManagedObjectModel, not an NSEntityDescription"
    )


def test_compiled_model_with_a_million_objects(tmp_path):
    objects = [
        "$null",
        {"$class": plistlib.UID(2), "NSEntities": plistlib.UID(3)},
        {"$classname": "NSManagedObjectModel", "$classes": ["NSManagedObjectModel", "NSObject"]},
        {"$class": plistlib.UID(4), "NS.keys": [], "NS.objects": []},
        {"$classname": "NSDictionary", "$classes": ["NSDictionary", "NSObject"]},
    ] + [f"s{i}" for i in range(1_000_000)]
    path = tmp_path / "big.mom"
    path.write_bytes(_keyed_archive(objects))
    result = run_bounded("def main(): return len(cdmigrate.Model.from_file(ARGS[0]).entity_names)", str(path))
    assert result == {"ok": 0}  # an empty model, read within the bounds


# MARK: Binary property lists (store metadata)


def _store_with_plist(tmp_path, name: str, plist: bytes) -> str:
    model = cdmigrate.Model.from_json(
        json.dumps(
            {
                "name": "M",
                "entities": [{"name": "Note", "attributes": [{"name": "t", "type": "string", "optional": True}]}],
            }
        )
    )
    path = str(tmp_path / f"{name}.sqlite")
    cdmigrate.Store.create(model, path).close()
    model.close()
    with sqlite3.connect(path) as db:
        db.execute("UPDATE Z_METADATA SET Z_PLIST = ?", (plist,))
    db.close()
    return path


def _bplist(objects: list, top: int, ref_size: int = 4, count_claim: int | None = None) -> bytes:
    """A bplist00 of already-encoded objects, with an offset table and trailer (count may lie)."""
    body = bytearray(b"bplist00")
    offsets = []
    for obj in objects:
        offsets.append(len(body))
        body += obj
    table = len(body)
    for offset in offsets:
        body += offset.to_bytes(4, "big")
    body += (
        bytes(6)
        + bytes([4, ref_size])
        + (count_claim or len(objects)).to_bytes(8, "big")
        + top.to_bytes(8, "big")
        + table.to_bytes(8, "big")
    )
    return bytes(body)


def test_binary_plist_array_containing_itself(tmp_path):
    # Object 0: an array of one element, object 0.
    path = _store_with_plist(tmp_path, "cycle", _bplist([bytes([0xA1]) + (0).to_bytes(4, "big")], 0))
    result = run_bounded("def main(): cdmigrate.StoreMetadata.read(ARGS[0]).close()", path)
    expect_error(result, cdmigrate.errors.MIGRATION_MANAGER_SOURCE_STORE, "object 0 contains itself")


def test_binary_plist_chain_of_100000_nested_arrays(tmp_path):
    objects = [bytes([0xA1]) + (i + 1).to_bytes(4, "big") for i in range(99_999)] + [bytes([0xA0])]
    path = _store_with_plist(tmp_path, "deep", _bplist(objects, 0))
    result = run_bounded("def main(): cdmigrate.StoreMetadata.read(ARGS[0]).close()", path)
    expect_error(result, cdmigrate.errors.MIGRATION_MANAGER_SOURCE_STORE, "nested deeper than 512")


def test_binary_plist_claiming_2_to_the_40_objects(tmp_path):
    path = _store_with_plist(tmp_path, "claim", _bplist([bytes([0x50])], 0, count_claim=1 << 40))
    result = run_bounded("def main(): cdmigrate.StoreMetadata.read(ARGS[0]).close()", path)
    expect_error(result, cdmigrate.errors.MIGRATION_MANAGER_SOURCE_STORE, "objects do not fit in the offset table")


def test_binary_plist_array_claiming_2_to_the_60_elements(tmp_path):
    # An array whose length (an int object after the 0xAF marker) is 2**60.
    array = bytes([0xAF, 0x13]) + (1 << 60).to_bytes(8, "big")
    path = _store_with_plist(tmp_path, "long", _bplist([array], 0))
    result = run_bounded("def main(): cdmigrate.StoreMetadata.read(ARGS[0]).close()", path)
    expect_error(result, cdmigrate.errors.MIGRATION_MANAGER_SOURCE_STORE, "run past the objects")


# MARK: Expressions and regular expressions, in a migration


MIGRATE = """
def main():
    model = cdmigrate.Model.from_json(ARGS[0])
    mapping = cdmigrate.MappingModel.from_json(ARGS[1])
    with cdmigrate.Migration(model, model, mapping) as migration:
        migration.run(ARGS[2], ARGS[3])
"""


def _migration_args(tmp_path, name: str, title: str, attribute_mapping: str, predicate: str = "TRUEPREDICATE"):
    model_json = json.dumps(
        {
            "name": "M",
            "entities": [{"name": "Note", "attributes": [{"name": "title", "type": "string", "optional": True}]}],
        }
    )
    model = cdmigrate.Model.from_json(model_json)
    source = str(tmp_path / f"{name}.sqlite")
    with cdmigrate.Store.create(model, source) as store:
        store.insert("Note", title=title)
        store.save()
    model.close()
    mapping = json.dumps(
        {
            "entityMappings": [
                {
                    "name": "NoteToNote",
                    "sourceEntity": "Note",
                    "destinationEntity": "Note",
                    "predicate": predicate,
                    "attributeMappings": {"title": attribute_mapping},
                }
            ]
        }
    )
    return model_json, mapping, source, str(tmp_path / f"{name}-out.sqlite")


def test_expression_growing_a_string_to_4_3e9_characters(tmp_path):
    grow = "$source.title"
    for _ in range(8):
        grow = f"FUNCTION({grow}, 'stringByReplacingOccurrencesOfString:withString:', 'a', 'aaaaaaaaaaaaaaaa')"
    result = run_bounded(MIGRATE, *_migration_args(tmp_path, "grow", "ab", grow))
    expect_error(result, cdmigrate.errors.EXPRESSION_EVALUATION, "above the limit of 16777216 bytes")


def test_expression_splitting_into_more_than_a_million_members(tmp_path):
    split = "FUNCTION(FUNCTION($source.title, 'componentsSeparatedByString:', ','), 'count')"
    result = run_bounded(MIGRATE, *_migration_args(tmp_path, "split", "," * 2_000_000, split))
    expect_error(result, cdmigrate.errors.EXPRESSION_EVALUATION, "more than 1000000 members")


def test_regular_expression_with_nested_repetition_on_a_long_text(tmp_path):
    # (a|aa)*c against a megabyte of a's: exponential for a backtracking matcher.
    args = _migration_args(tmp_path, "regex", "a" * (1 << 20), "$source.title", predicate="title MATCHES '(a|aa)*c'")
    result = run_bounded(MIGRATE, *args)
    assert result == {"ok": None}  # no backtracking: linear in the text (no row matches, nothing is migrated)


def test_regular_expression_of_many_alternatives(tmp_path):
    pattern = "|".join(f"w{i}" for i in range(5000))
    args = _migration_args(
        tmp_path, "alternatives", "w4999" * 20_000, "$source.title", predicate=f"title MATCHES '({pattern})*'"
    )
    result = run_bounded(MIGRATE, *args)
    expect_error(result, cdmigrate.errors.EXPRESSION_EVALUATION, "it unrolls to more than 20000 states")
