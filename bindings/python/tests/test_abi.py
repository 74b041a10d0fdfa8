"""The C header is the one source of the ABI: scripts/check-abi.py checks the Swift @_cdecl functions,
the binding's ctypes prototypes and Structures against it. Here the checker runs on this repository
(it must find nothing) and on a small header/Swift/Python trio of its own, broken one way at a time
(it must name each break)."""

from __future__ import annotations

import ctypes
import importlib.util
import itertools
import os
import subprocess

import pytest
from abi_checker import HEADERS, abi
from conftest import ROOT

from cdmigrate import _lib

# --- This repository -----------------------------------------------------------------------------


def test_every_declared_function_has_a_swift_function_of_the_same_signature():
    header = abi.parse_header(HEADERS)
    assert len(header.functions) > 200
    assert (
        abi.check_swift(
            header,
            abi.parse_swift(
                os.path.join(ROOT, "Sources", "CDMigrateCAPI"), os.path.join(ROOT, "Sources", "CDMigrateCommandLine")
            ),
        )
        == []
    )


def test_the_bindings_prototypes_and_structures_agree_with_the_header():
    header = abi.parse_header(HEADERS)
    errors = abi.check_python(
        header,
        _lib,
        os.path.join(ROOT, "bindings", "python", "cdmigrate"),
        abi.read_unbound(os.path.join(ROOT, "scripts", "check-abi-unbound.txt")),
        abi.layouts(header),
    )
    assert errors == []


def test_the_library_lays_out_every_struct_as_the_c_compiler_does():
    # cdm_internal_struct_size gives the Swift mirror's stride; C's sizeof must equal it.
    header = abi.parse_header(HEADERS)
    for tag, (size, _) in abi.layouts(header).items():
        assert _lib.lib.cdm_internal_struct_size(tag.encode()) == size, tag


def test_the_header_reads_as_c_declares_it():
    header = abi.parse_header(HEADERS)
    migration_new = header.functions["cdm_migration_new"]
    assert [p.text for p in migration_new.params] == [
        "const cdm_model *source",
        "const cdm_model *destination",
        "cdm_mapping *const *mappings",
        "size_t count",
        "cdm_migration **out",
    ]
    mappings = migration_new.params[2].type
    assert mappings == abi.Ptr(abi.Ptr(abi.Struct("cdm_mapping"), False), True)
    assert header.functions["cdm_object_get_uuid"].params[2].type == abi.Ptr(abi.Scalar("u8"), False, 16)
    hook = header.structs["cdm_policy"].fields[0].type
    assert hook == abi.Ptr(
        abi.Fn(abi.Scalar("i32"), (abi.Ptr(abi.Struct("cdm_context"), False), abi.Ptr(abi.Scalar("void"), False))),
        False,
    )
    assert "cdm_field_text" not in header.functions  # a static inline helper is no part of the ABI
    assert header.enums["cdm_result"]["CDM_MIGRATION_CANCELLED"] == 134120
    assert header.is_opaque("cdm_model") and not header.is_opaque("cdm_field")


def test_scalars_of_every_width_read_as_c_declares_them(tmp_path):
    path = tmp_path / "widths.h"
    path.write_text(
        "#include <stdint.h>\n#include <stddef.h>\n"
        "int f(unsigned x, unsigned int y, const unsigned char *z, uint64_t w, float v, size_t n);\n"
    )
    params = abi.parse_header([str(path)]).functions["f"].params
    assert [(p.text, str(p.type)) for p in params] == [
        ("unsigned x", "uint32_t"),
        ("unsigned int y", "uint32_t"),
        ("const unsigned char *z", "const unsigned char *"),
        ("uint64_t w", "uint64_t"),
        ("float v", "float"),
        ("size_t n", "size_t"),
    ]


# --- A trio of its own ----------------------------------------------------------------------------

MINI_H = """\
#include <stddef.h>
#include <stdint.h>
/* A handle, a struct, an enum, a callback; a static inline helper the checker skips. */
typedef struct mini_handle mini_handle;
typedef struct mini_info {
    const char *name;
    int count;
    int64_t total;
} mini_info;
enum mini_kind { MINI_A = 1, MINI_B = 2 };
typedef int (*mini_callback)(mini_handle *handle, void *user);
int mini_open(const char *path, mini_handle **out);
int mini_info_at(const mini_handle *handle, size_t i, mini_info *info);
int mini_each(mini_handle *handle, enum mini_kind kind, mini_callback callback, void *user);
int mini_names(mini_handle *handle, const char *const **names, size_t *count);
const char *mini_name(const mini_handle *handle);
void mini_free(mini_handle *handle);
static inline int mini_twice(int v) { return 2 * v; }
"""

MINI_SWIFT = """\
public typealias MiniCallback = @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32

/// `mini_info` of mini.h.
struct MiniInfo {
    var name: UnsafePointer<CChar>?
    var count: Int32
    var total: Int64
}

@_cdecl("mini_open")
public func mini_open(_ path: UnsafePointer<CChar>?, _ out: UnsafeMutablePointer<OpaquePointer?>?) -> Int32 { 0 }
@_cdecl("mini_info_at")
public func mini_info_at(_ handle: OpaquePointer?, _ i: Int, _ info: UnsafeMutableRawPointer?) -> Int32 { 0 }
@_cdecl("mini_each")
public func mini_each(_ handle: OpaquePointer?, _ kind: Int32, _ callback: MiniCallback?,
                      _ user: UnsafeMutableRawPointer?) -> Int32 { 0 }
@_cdecl("mini_names")
public func mini_names(_ handle: OpaquePointer?, _ names: UnsafeMutablePointer<UnsafePointer<UnsafePointer<CChar>?>?>?,
                       _ count: UnsafeMutablePointer<Int>?) -> Int32 { 0 }
@_cdecl("mini_name")
public func mini_name(_ handle: OpaquePointer?) -> UnsafePointer<CChar>? { nil }
@_cdecl("mini_free")
public func mini_free(_ handle: OpaquePointer?) {}
"""

MINI_PY = """\
from ctypes import CFUNCTYPE, POINTER, Structure, c_char_p, c_int, c_int64, c_size_t, c_void_p


class mini_info(Structure):
    _fields_ = [("name", c_char_p), ("count", c_int), ("total", c_int64)]


CALLBACK = CFUNCTYPE(c_int, c_void_p, c_void_p)

_PROTOTYPES = {
    "mini_open": (c_int, [c_char_p, POINTER(c_void_p)]),
    "mini_info_at": (c_int, [c_void_p, c_size_t, POINTER(mini_info)]),
    "mini_each": (c_int, [c_void_p, c_int, CALLBACK, c_void_p]),
    "mini_names": (c_int, [c_void_p, POINTER(POINTER(c_char_p)), POINTER(c_size_t)]),
    "mini_name": (c_char_p, [c_void_p]),
}
"""

MINI_UNBOUND = "mini_free   closed by the host's own code\n"

_counter = itertools.count()


def _check(tmp_path, header=MINI_H, swift=MINI_SWIFT, python=MINI_PY, unbound=MINI_UNBOUND, user_code=""):
    """The checker's complaints about the trio (with one file changed)."""
    folder = tmp_path / f"trio{next(_counter)}"
    (folder / "swift").mkdir(parents=True)
    (folder / "binding").mkdir()
    (folder / "mini.h").write_text(header)
    (folder / "swift" / "Mini.swift").write_text(swift)
    (folder / "binding" / "_lib.py").write_text(python)
    (folder / "binding" / "user.py").write_text(user_code)
    (folder / "unbound.txt").write_text(unbound)
    spec = importlib.util.spec_from_file_location(f"mini_lib_{folder.name}", folder / "binding" / "_lib.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    parsed = abi.parse_header([str(folder / "mini.h")])
    return abi.check_swift(parsed, abi.parse_swift(str(folder / "swift"))) + abi.check_python(
        parsed, module, str(folder / "binding"), abi.read_unbound(str(folder / "unbound.txt")), abi.layouts(parsed)
    )


def _one(errors, *fragments):
    """Exactly the complaints expected: each names all of its fragments."""
    assert errors, "the checker found nothing"
    for error in errors:
        assert all(fragment in error for fragment in fragments), (fragments, errors)


def test_the_trio_as_written_agrees(tmp_path):
    assert _check(tmp_path) == []


def test_a_swift_parameter_of_another_width_is_named(tmp_path):
    errors = _check(tmp_path, swift=MINI_SWIFT.replace("_ i: Int,", "_ i: Int32,"))
    _one(errors, "mini_info_at", "parameter 2 (size_t i)", "C size_t is not Swift Int32")


def test_a_swift_function_with_a_parameter_missing_is_named(tmp_path):
    errors = _check(tmp_path, swift=MINI_SWIFT.replace(",\n                      _ user: UnsafeMutableRawPointer?", ""))
    _one(errors, "mini_each", "the header declares 4 parameters, Swift has 3")


def test_a_swift_pointer_that_is_not_optional_is_named(tmp_path):
    errors = _check(tmp_path, swift=MINI_SWIFT.replace("_ path: UnsafePointer<CChar>?", "_ path: UnsafePointer<CChar>"))
    _one(errors, "mini_open", "parameter 1", "non-Optional pointer")


def test_a_swift_pointer_of_other_constness_is_named(tmp_path):
    errors = _check(
        tmp_path,
        swift=MINI_SWIFT.replace(
            "UnsafeMutablePointer<UnsafePointer<UnsafePointer<CChar>?>?>?",
            "UnsafeMutablePointer<UnsafeMutablePointer<UnsafePointer<CChar>?>?>?",
        ),
    )
    _one(errors, "mini_names", "parameter 2", "is const", "is not const")


def test_a_swift_callback_of_another_signature_is_named(tmp_path):
    errors = _check(
        tmp_path,
        swift=MINI_SWIFT.replace(
            "(OpaquePointer?, UnsafeMutableRawPointer?) -> Int32", "(OpaquePointer?, Int32) -> Int32"
        ),
    )
    _one(errors, "mini_each", "parameter 3", "function pointer parameter 2")


def test_a_swift_function_the_header_lacks_is_named(tmp_path):
    errors = _check(tmp_path, swift=MINI_SWIFT + '@_cdecl("mini_extra")\npublic func mini_extra() -> Int32 { 0 }\n')
    _one(errors, "mini_extra", "declared in no header")


def test_a_header_function_swift_lacks_is_named(tmp_path):
    errors = _check(
        tmp_path, header=MINI_H + "int mini_close(mini_handle *handle);\n", unbound=MINI_UNBOUND + "mini_close  test\n"
    )
    _one(errors, "mini_close", 'no @_cdecl("mini_close")')


def test_a_swift_mirror_with_fields_in_another_order_is_named(tmp_path):
    errors = _check(
        tmp_path,
        swift=MINI_SWIFT.replace(
            "    var count: Int32\n    var total: Int64\n", "    var total: Int64\n    var count: Int32\n"
        ),
    )
    _one(errors, "struct mini_info", "MiniInfo", "fields")


def test_a_python_argument_of_another_width_is_named(tmp_path):
    errors = _check(
        tmp_path,
        python=MINI_PY.replace("[c_void_p, c_size_t, POINTER(mini_info)]", "[c_void_p, c_int, POINTER(mini_info)]"),
    )
    _one(errors, "_lib.py: mini_info_at: parameter 2 (size_t i)", "C size_t is not c_int")


def test_a_python_result_of_another_type_is_named(tmp_path):
    errors = _check(tmp_path, python=MINI_PY.replace('"mini_name": (c_char_p,', '"mini_name": (c_int,'))
    _one(errors, "_lib.py: mini_name: result")


def test_a_python_pointer_one_level_short_is_named(tmp_path):
    errors = _check(tmp_path, python=MINI_PY.replace("POINTER(POINTER(c_char_p))", "POINTER(c_char_p)"))
    _one(errors, "_lib.py: mini_names: parameter 2", "no text")


def test_a_python_callback_of_another_signature_is_named(tmp_path):
    errors = _check(
        tmp_path, python=MINI_PY.replace("CFUNCTYPE(c_int, c_void_p, c_void_p)", "CFUNCTYPE(c_int, c_void_p)")
    )
    _one(errors, "_lib.py: mini_each: parameter 3", "2 parameters in C, 1 in its CFUNCTYPE")


def test_a_python_structure_field_of_another_width_is_named(tmp_path):
    errors = _check(tmp_path, python=MINI_PY.replace('("count", c_int)', '("count", c_int64)'))
    _one(errors, "_lib.py: Structure mini_info: field count", "C int is not c_long")


def test_a_python_structure_laid_out_otherwise_is_named_with_its_size_and_offsets(tmp_path):
    # The same fields, packed: only the compiled C program's sizeof and offsetof can tell.
    errors = _check(
        tmp_path,
        python=MINI_PY.replace("class mini_info(Structure):\n", "class mini_info(Structure):\n    _pack_ = 1\n"),
    )
    assert sorted(errors) == [
        "_lib.py: Structure mini_info: ctypes size 20, C sizeof 24",
        "_lib.py: Structure mini_info: field total at offset 12, C offsetof 16",
    ]


def test_a_header_struct_change_is_named_in_swift_and_python(tmp_path):
    errors = _check(tmp_path, header=MINI_H.replace("    int count;\n", "    size_t count;\n"))
    assert any("MiniInfo" in e and "field count" in e for e in errors), errors
    assert any("_lib.py: Structure mini_info: field count" in e for e in errors), errors


def test_a_python_structure_with_a_field_missing_is_named(tmp_path):
    errors = _check(tmp_path, python=MINI_PY.replace(', ("total", c_int64)', ""))
    _one(errors, "Structure mini_info", "fields ['name', 'count']")


def test_a_header_function_neither_bound_nor_listed_is_named(tmp_path):
    errors = _check(tmp_path, unbound="")
    _one(errors, "mini_free", "neither declared in _lib.py")


def test_a_listed_function_the_binding_declares_after_all_is_named(tmp_path):
    errors = _check(tmp_path, unbound=MINI_UNBOUND + "mini_name  stale\n")
    _one(errors, "mini_name", "bound in _lib.py after all")


def test_a_call_of_an_undeclared_function_is_named(tmp_path):
    errors = _check(tmp_path, user_code="def close(lib, handle):\n    lib.mini_free(handle)\n")
    _one(errors, "user.py:2", "calls mini_free", "does not declare")


def test_the_result_codes_of_swift_and_python_agree_with_the_header():
    header = abi.parse_header(HEADERS)
    codes = [
        os.path.join(ROOT, "Sources", "CDMigrate", "Core", "MigrationError.swift"),
        os.path.join(ROOT, "Sources", "CDMigrateCAPI", "CAPIError.swift"),
    ]
    assert abi.check_swift_codes(header, codes) == []
    assert abi.check_python_constants(header, os.path.join(ROOT, "bindings", "python", "cdmigrate")) == []


def test_a_result_code_of_another_value_is_named_in_swift_and_python(tmp_path):
    header_path = tmp_path / "codes.h"
    header_path.write_text("enum mini_result { MINI_OK = 0, MINI_NOT_FOUND = 7, MINI_GONE = 8 };\n")
    header = abi.parse_header([str(header_path)])
    swift = tmp_path / "Codes.swift"
    swift.write_text(
        "extension MigrationError.Code {\n    static let notFound = MigrationError.Code(rawValue: 7)\n"
        "    static let gone = Code(rawValue: 8)\n}\n"
    )
    assert abi.check_swift_codes(header, [str(swift)], "mini_result") == []
    swift.write_text(swift.read_text().replace("rawValue: 8", "rawValue: 9"))
    assert abi.check_swift_codes(header, [str(swift)], "mini_result") == [
        "enum mini_result: MINI_GONE is 8, Swift's Code.gone 9"
    ]
    swift.write_text("extension MigrationError.Code {\n    static let gone = Code(rawValue: 8)\n}\n")
    _one(abi.check_swift_codes(header, [str(swift)], "mini_result"), "MINI_NOT_FOUND has no Swift MigrationError.Code")
    package = tmp_path / "package"
    package.mkdir()
    (package / "errors.py").write_text("OK = 0\nNOT_FOUND = 7\nGONE = 8\nOTHER = 9\n")
    assert abi.check_python_constants(header, str(package)) == []
    (package / "errors.py").write_text("OK = 0\nNOT_FOUND = 6\n")
    assert abi.check_python_constants(header, str(package)) == [
        "errors.py:2: NOT_FOUND = 6, but the header's MINI_NOT_FOUND is 7"
    ]


def test_python_enums_and_commented_tuples_are_held_to_the_header_enum_they_name(tmp_path):
    header_path = tmp_path / "kinds.h"
    header_path.write_text("enum mini_kind { MINI_KIND_A = 1, MINI_KIND_B = 2 };\n")
    header = abi.parse_header([str(header_path)])
    package = tmp_path / "package"
    package.mkdir()
    enum_class = 'import enum\n\n\nclass Kind(enum.IntEnum):\n    """Kinds (enum mini_kind)."""\n    A = 1\n    B = 2\n'
    (package / "kinds.py").write_text(enum_class + "_A, _B = 1, 2  # enum mini_kind\n")
    assert abi.check_python_constants(header, str(package)) == []
    (package / "kinds.py").write_text(
        enum_class.replace("B = 2", "B = 3\n    C = 4") + "_A, _B = 2, 2  # enum mini_kind\n"
    )
    assert abi.check_python_constants(header, str(package)) == [
        "kinds.py:7: Kind.B = 3, but the header's MINI_KIND_B is 2",
        "kinds.py:8: Kind.C = 4 is no constant of enum mini_kind",
        "kinds.py:9: _A = 2, but the header's MINI_KIND_A is 1",
    ]
    (package / "kinds.py").write_text(enum_class.replace("    B = 2\n", ""))
    assert abi.check_python_constants(header, str(package)) == ["kinds.py:4: Kind lacks B (MINI_KIND_B = 2)"]


def _shared_library(tmp_path, name: str, source: str, symbols: str) -> str:
    """A small shared library with the SONAME libmini.so.0 and the version node MINI_0 (each under
    a file name of its own: the dynamic loader keeps a library once loaded)."""
    (tmp_path / "lib.c").write_text(source)
    (tmp_path / "lib.map").write_text(f"MINI_0 {{ global: {symbols}; local: *; }};\n")
    library = str(tmp_path / name)
    subprocess.run(
        [
            "cc",
            "-shared",
            "-fPIC",
            "-o",
            library,
            str(tmp_path / "lib.c"),
            "-Wl,-soname,libmini.so.0",
            "-Wl,--version-script=" + str(tmp_path / "lib.map"),
        ],
        check=True,
    )
    return library


def test_the_library_check_names_a_wrong_soname_stray_exports_missing_functions_and_struct_sizes(tmp_path):
    header_path = tmp_path / "mini.h"
    header_path.write_text(
        "#include <stddef.h>\ntypedef struct cdm_pair { int a; double b; } cdm_pair;\n"
        "typedef struct cdm_one_int { int a; } cdm_one_int;\n"
        "int cdm_one(void);\nint cdm_two(void);\nsize_t cdm_internal_struct_size(const char *name);\n"
    )
    header = abi.parse_header([str(header_path)])
    good = (
        "#include <string.h>\nint cdm_one(void) { return 1; }\nint cdm_two(void) { return 2; }\n"
        "size_t cdm_internal_struct_size(const char *name) {\n"
        '    return strcmp(name, "cdm_pair") == 0 ? 16 : strcmp(name, "cdm_one_int") == 0 ? 4 : 0;\n}\n'
    )
    library = _shared_library(tmp_path, "libgood.so", good, "cdm_*")
    assert abi.check_library(header, library, "libmini.so.0", "MINI_0", abi.layouts(header)) == []
    broken = (
        good.replace("int cdm_two(void) { return 2; }", "int helper(void) { return 2; }")
        .replace("? 16", "? 12")
        .replace("? 4 : 0", "? 0 : 0")
    )
    library = _shared_library(tmp_path, "libbroken.so", broken, "cdm_*; helper")
    errors = abi.check_library(header, library, "libmini.so.1", "MINI_0", abi.layouts(header))
    assert errors == [
        f"{library} has SONAME 'libmini.so.0', not 'libmini.so.1'",
        f"{library} exports 'helper', which is not cdm_*",
        "declared but not exported: cdm_two",
        "exported but declared in no header: helper",
        'cdm_internal_struct_size("cdm_pair") is 12 (the Swift mirror\'s stride), C sizeof 16',
        'cdm_internal_struct_size does not know "cdm_one_int": add its Swift mirror to the switch '
        "(Sources/CDMigrateCAPI/StructLayout.swift)",
    ]


def test_ctypes_signatures_follow_the_header():
    header = abi.parse_header(HEADERS)
    assert abi.ctypes_signature(header, "cdm_object_set_text") == (
        ctypes.c_int,
        [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t],
    )
    assert abi.ctypes_signature(header, "cdm_error_primary_key") == (ctypes.c_int64, [ctypes.c_void_p])


@pytest.mark.parametrize("broken", ["int mini_open(const char *path mini_handle **out);\n", "widget mini_w(void);\n"])
def test_a_header_the_checker_cannot_read_is_an_error_not_a_silent_pass(tmp_path, broken):
    path = tmp_path / "bad.h"
    path.write_text(MINI_H + broken)
    with pytest.raises(abi.ParseError):
        abi.parse_header([str(path)])
