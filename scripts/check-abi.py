#!/usr/bin/env python3
"""Checks that the C ABI is written the same way everywhere: include/cdmigrate.h is the one source,
and every other place that spells it out must agree with it.

  - Swift (Sources/CDMigrateCAPI): every function the headers declare has an @_cdecl function of
    that name and nothing else has one; parameter count, parameter and result types agree (int and
    enums ↔ Int32, size_t ↔ Int, const char * ↔ UnsafePointer<CChar>?, pointers to opaque structs
    ↔ OpaquePointer?, function pointers ↔ @convention(c) types, const ↔ UnsafePointer and
    non-const ↔ UnsafeMutablePointer); every pointer parameter is Optional (C may pass NULL); the
    Swift mirror of each struct (the struct whose doc comment says "`cdm_x` of cdmigrate.h") has
    the header's fields in the header's order with the same types.
  - Python (bindings/python/cdmigrate/_lib.py): every prototype in _PROTOTYPES and _OPTIONAL names
    a declared function with the same parameter count and compatible ctypes (c_int ↔ int and enums,
    c_size_t ↔ size_t, c_void_p ↔ any one-level pointer, POINTER(x) ↔ x *, CFUNCTYPE ↔ the
    function pointer, a Structure ↔ the struct of its name); every declared function is bound or
    listed with its reason in scripts/check-abi-unbound.txt; every lib.cdm_* the package calls is
    declared to ctypes; each ctypes Structure has the header's fields (names, order, types), and
    its size and field offsets equal the C compiler's (a small C program compiled from the header
    prints sizeof and offsetof).
  - Enums: every code of the header's enum cdm_result has a Swift MigrationError.Code of its value
    (matched by name: CDM_NOTFOUND ↔ notFound); the Python package's module-level integers named
    as header constants, enum classes whose docstring names a header enum, and tuple assignments
    commented with the enum they spell have the header's values (check_python_constants).
  - The shared library (with --library): its SONAME, every exported symbol a cdm_* function under
    the version node, exactly the declared functions exported, and the library's own size of
    every struct (cdm_internal_struct_size: the Swift mirror's stride) equal to the C compiler's.

  scripts/check-abi.py                       # header ↔ Swift ↔ Python (needs the built library
                                             # for the Python import: CDMIGRATE_LIBRARY or --library)
  scripts/check-abi.py --library build/lib/libcdmigrate.so.0.1.0 --soname libcdmigrate.so.0 --node CDMIGRATE_0
  scripts/check-abi.py --header H --swift DIR --python-path DIR --python-module pkg._lib ...   (another tree)

The parser reads the header's declarations as C does after comments and preprocessor lines are
gone: typedefs, struct and enum definitions, function declarations (a static inline definition is
no part of the ABI and skipped). Exits 1 and names every disagreement (file, function or struct,
parameter) when there is one.
"""

from __future__ import annotations

import argparse
import ast
import ctypes
import importlib
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Union

ROOT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


# --- The types, as all three languages are reduced to them -------------------------------------


@dataclass(frozen=True)
class Scalar:
    name: str  # i32 (int, int32_t, enums), i64, usize (size_t), f64, char, u8, void

    def __str__(self) -> str:
        return {
            "i32": "int",
            "u32": "uint32_t",
            "i16": "int16_t",
            "u16": "uint16_t",
            "i64": "int64_t",
            "u64": "uint64_t",
            "usize": "size_t",
            "f64": "double",
            "f32": "float",
            "u8": "unsigned char",
        }.get(self.name, self.name)


@dataclass(frozen=True)
class Struct:
    tag: str  # the struct's name; "" for Swift's OpaquePointer (any opaque struct)

    def __str__(self) -> str:
        return f"struct {self.tag}" if self.tag else "opaque struct"


@dataclass(frozen=True)
class Ptr:
    to: CType
    const: bool  # whether the pointee is const
    length: int = 0  # an array parameter's length (decayed to a pointer), else 0

    def __str__(self) -> str:
        if isinstance(self.to, Ptr):
            return f"{self.to}{'const ' if self.const else ''}*"
        return f"{'const ' if self.const else ''}{self.to} *"


@dataclass(frozen=True)
class Fn:
    ret: CType
    params: tuple[CType, ...]

    def __str__(self) -> str:
        return f"{self.ret} (*)({', '.join(map(str, self.params)) or 'void'})"


CType = Union[Scalar, Struct, Ptr, Fn]

C_SCALARS = {
    "int": "i32",
    "int32_t": "i32",
    "unsigned": "u32",
    "unsigned int": "u32",
    "uint32_t": "u32",
    "int16_t": "i16",
    "uint16_t": "u16",
    "int64_t": "i64",
    "uint64_t": "u64",
    "size_t": "usize",
    "double": "f64",
    "float": "f32",
    "bool": "bool",
    "_Bool": "bool",
    "char": "char",
    "unsigned char": "u8",
    "uint8_t": "u8",
    "void": "void",
}


@dataclass
class Param:
    name: str
    type: CType
    text: str  # as the header writes it


@dataclass
class Function:
    name: str
    ret: CType
    params: list[Param]
    line: int


@dataclass
class StructDef:
    tag: str
    spelling: str  # how C code names the type: the typedef name, or "struct tag"
    fields: list[Param]
    line: int


@dataclass
class Header:
    functions: dict[str, Function] = field(default_factory=dict)
    structs: dict[str, StructDef] = field(default_factory=dict)  # with a body, by tag
    enums: dict[str, dict[str, int]] = field(default_factory=dict)
    typedefs: dict[str, CType] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)

    def is_opaque(self, tag: str) -> bool:
        return tag not in self.structs


class ParseError(Exception):
    pass


# --- The header ---------------------------------------------------------------------------------

_TOKEN = re.compile(r'\s+|"(?:\\.|[^"\\])*"|[A-Za-z_]\w*|\d\w*|\.\.\.|.', re.S)


def _strip(text: str) -> str:
    """The text without comments, the C++ guard and preprocessor lines (newlines kept for line numbers)."""
    text = re.sub(r"/\*.*?\*/|//[^\n]*", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"#\s*ifdef\s+__cplusplus\b.*?#\s*endif", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    return re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", "", text, flags=re.M)


def _tokens(text: str) -> list[tuple[str, int]]:
    out, line = [], 1
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if not token.isspace():
            out.append((token, line))
        line += token.count("\n")
    return out


def _split(tokens: list[str], separator: str) -> list[list[str]]:
    """Splits at `separator` outside parentheses, brackets and braces."""
    parts: list[list[str]] = [[]]
    depth = 0
    for token in tokens:
        if token in "([{":
            depth += 1
        elif token in ")]}":
            depth -= 1
        if token == separator and depth == 0:
            parts.append([])
        else:
            parts[-1].append(token)
    return parts


class _Declarations:
    """Reads one declaration (`const char *const *name`, `int (*hook)(cdm_context *ctx, void *user)`,
    `unsigned char uuid[16]`) into a name and a type."""

    def __init__(self, header: Header):
        self.header = header

    def base(self, tokens: list[str]) -> tuple[CType, bool, int]:
        """The type specifiers at the start: the type, whether const, and how many tokens they took."""
        const, i, words = False, 0, []
        while i < len(tokens):
            token = tokens[i]
            if token in ("const", "volatile", "extern"):
                const = const or token == "const"
                i += 1
            elif token in ("struct", "enum") and not words:
                words = [token, tokens[i + 1]]
                i += 2
            elif token in ("unsigned", "signed") and not words:
                words = [token]
                i += 1
            elif re.fullmatch(r"[A-Za-z_]\w*", token) and (
                not words or (words in (["unsigned"], ["signed"]) and token in ("int", "char", "short", "long"))
            ):
                words.append(token)
                i += 1
            else:
                break
        if not words:
            raise ParseError(f"no type in '{' '.join(tokens)}'")
        spelled = " ".join(words)
        if words[0] == "enum":
            return Scalar("i32"), const, i
        if words[0] == "struct":
            return Struct(words[1]), const, i
        if spelled in C_SCALARS:
            return Scalar(C_SCALARS[spelled]), const, i
        if spelled in self.header.typedefs:
            return self.header.typedefs[spelled], const, i
        raise ParseError(f"unknown type '{spelled}' (add it to check-abi.py's C_SCALARS or typedef it in the header)")

    def declare(self, tokens: list[str]) -> tuple[str, CType]:
        base, const, i = self.base(tokens)
        return self.declarator(tokens[i:], base, const)

    def declarator(self, tokens: list[str], type_: CType, const: bool) -> tuple[str, CType]:
        i = 0
        while i < len(tokens) and tokens[i] == "*":
            type_ = Ptr(type_, const)
            i += 1
            const = False
            while i < len(tokens) and tokens[i] in ("const", "volatile", "restrict"):
                const = const or tokens[i] == "const"
                i += 1
        rest = tokens[i:]
        if rest[:2] == ["(", "*"]:
            close = rest.index(")")
            inner, after = rest[1:close], rest[close + 1 :]
            if after[:1] != ["("] or after[-1:] != [")"]:
                raise ParseError(f"cannot read the function pointer '{' '.join(tokens)}'")
            function = Fn(type_, tuple(p.type for p in self.params(after[1:-1])))
            return self.declarator(inner, function, False)
        name = ""
        if rest and re.fullmatch(r"[A-Za-z_]\w*", rest[0]):
            name, rest = rest[0], rest[1:]
        if rest[:1] == ["("] and rest[-1:] == [")"]:
            return name, Fn(type_, tuple(p.type for p in self.params(rest[1:-1])))
        if rest[:1] == ["["] and rest[-1:] == ["]"]:
            length = int(rest[1]) if len(rest) == 3 else 0
            return name, Ptr(type_, const, length)
        if rest:
            raise ParseError(f"cannot read '{' '.join(tokens)}'")
        return name, type_

    def params(self, tokens: list[str]) -> list[Param]:
        if tokens in ([], ["void"]):
            return []
        params = []
        for part in _split(tokens, ","):
            name, type_ = self.declare(part)
            params.append(Param(name, type_, _spelled(part)))
        return params


def _spelled(tokens: list[str]) -> str:
    """A declaration as C writes it: "const char *const *dirs", "unsigned char uuid[16]"."""
    text = re.sub(r"\s*\*\s*", "*", " ".join(tokens))
    text = re.sub(r"(?<=\w)\*", " *", text)
    return re.sub(r"\s*([\[\]])\s*", r"\1", text).replace("( ", "(").replace(" )", ")").replace(" ,", ",")


def parse_header(paths: list[str]) -> Header:
    """The declarations of the headers, read in order (a later header may use an earlier one's types)."""
    header = Header(files=list(paths))
    reader = _Declarations(header)
    for path in paths:
        with open(path, encoding="utf-8") as f:
            tokens = _tokens(_strip(f.read()))
        statement: list[tuple[str, int]] = []
        depth, i = 0, 0
        while i < len(tokens):
            token, line = tokens[i]
            i += 1
            if token == "{" and depth == 0 and statement and statement[-1][0] == ")":
                # A function definition (static inline): no part of the ABI.
                nested = 1
                while nested and i < len(tokens):
                    nested += {"{": 1, "}": -1}.get(tokens[i][0], 0)
                    i += 1
                statement = []
                continue
            if token == ";" and depth == 0:
                if statement:
                    try:
                        _statement(header, reader, [t for t, _ in statement], statement[0][1])
                    except (ParseError, ValueError, IndexError) as error:
                        raise ParseError(f"{path}:{statement[0][1]}: {error}") from None
                statement = []
                continue
            depth += {"{": 1, "}": -1}.get(token, 0)
            statement.append((token, line))
    return header


def _statement(header: Header, reader: _Declarations, tokens: list[str], line: int) -> None:
    typedef = tokens[0] == "typedef"
    body = tokens[1:] if typedef else tokens
    if body[0] in ("struct", "enum") and "{" in body:
        open_, close = body.index("{"), len(body) - 1 - body[::-1].index("}")
        tag = body[1] if open_ == 2 else ""
        inside, after = body[open_ + 1 : close], body[close + 1 :]
        if body[0] == "enum":
            values, next_value = {}, 0
            for item in _split(inside, ","):
                if item:
                    if len(item) > 1:
                        next_value = int(
                            eval(" ".join(item[2:]), {"__builtins__": {}}, dict(values))
                        )  # constant arithmetic only
                    values[item[0]] = next_value
                    next_value += 1
            header.enums[tag or (after[0] if after else "")] = values
            if typedef and after:
                header.typedefs[after[0]] = Scalar("i32")
            return
        spelling = after[0] if typedef and after else f"struct {tag}"
        if typedef and after:
            header.typedefs[after[0]] = Struct(tag or after[0])
        fields = []
        for member in _split(inside, ";"):
            if member:
                name, type_ = reader.declare(member)
                fields.append(Param(name, type_, _spelled(member)))
        header.structs[tag or after[0]] = StructDef(tag or after[0], spelling, fields, line)
        return
    if typedef:
        name, type_ = reader.declare(body)
        header.typedefs[name] = type_
        return
    name, type_ = reader.declare(body)
    if not isinstance(type_, Fn):
        raise ParseError(f"'{name}' is declared but is no function (a global variable is not part of this ABI)")
    params = reader.params(body[body.index(name) + 2 : -1]) if name in body else []
    header.functions[name] = Function(name, type_.ret, params, line)


# --- Swift ----------------------------------------------------------------------------------------


@dataclass
class SwiftType:
    name: str  # OpaquePointer, UnsafePointer, Int32, …; "fn" for a function type
    args: tuple[SwiftType, ...] = ()  # generic arguments, or a function type's parameters
    ret: SwiftType | None = None
    optional: bool = False

    def __str__(self) -> str:
        if self.name == "fn":
            text = f"@convention(c) ({', '.join(map(str, self.args))}) -> {self.ret}"
            return f"({text})?" if self.optional else text
        inner = f"<{', '.join(map(str, self.args))}>" if self.args else ""
        return f"{self.name}{inner}{'?' if self.optional else ''}"


@dataclass
class SwiftFunction:
    name: str
    params: list[tuple[str, SwiftType]]
    ret: SwiftType
    file: str
    line: int


@dataclass
class SwiftMirror:
    name: str
    c_struct: str
    fields: list[tuple[str, SwiftType]]
    file: str
    line: int


@dataclass
class Swift:
    functions: dict[str, SwiftFunction] = field(default_factory=dict)
    aliases: dict[str, SwiftType] = field(default_factory=dict)
    mirrors: dict[str, SwiftMirror] = field(default_factory=dict)  # by the C struct's tag
    duplicates: list[str] = field(default_factory=list)


class _SwiftTypes:
    def __init__(self, text: str, position: int):
        self.text, self.i = text, position

    def space(self) -> None:
        while self.i < len(self.text) and self.text[self.i].isspace():
            self.i += 1

    def take(self, literal: str) -> bool:
        self.space()
        if self.text.startswith(literal, self.i):
            self.i += len(literal)
            return True
        return False

    def type(self) -> SwiftType:
        self.space()
        self.take("@escaping")
        if self.take("@convention(c)") or self.text.startswith("(", self.i):
            self.take("(")
            params = []
            while not self.take(")"):
                label = re.match(r"\s*(?:\w+\s+)?\w+\s*:(?!:)", self.text[self.i :])
                if label:
                    self.i += label.end()
                params.append(self.type())
                self.take(",")
            if not self.take("->"):  # a parenthesised type: (T)?
                inner = params[0] if params else SwiftType("Void")
                if self.take("?"):
                    inner = SwiftType(inner.name, inner.args, inner.ret, True)
                return inner
            result = self.type()
            return SwiftType("fn", tuple(params), result)
        match = re.compile(r"[A-Za-z_][\w.]*").match(self.text, self.i)
        if not match:
            raise ParseError(f"cannot read a Swift type at '{self.text[self.i : self.i + 40]}'")
        self.i = match.end()
        name, args = match.group(0), []
        if self.text.startswith("<", self.i):
            self.i += 1
            while not self.take(">"):
                args.append(self.type())
                self.take(",")
        optional = self.text.startswith("?", self.i) or self.text.startswith("!", self.i)
        if optional:
            self.i += 1
        return SwiftType(name, tuple(args), None, optional)


def _line(text: str, position: int) -> int:
    return text.count("\n", 0, position) + 1


def parse_swift(*folders: str) -> Swift:
    """The @_cdecl functions, the public typealiases of function types and the struct mirrors of folders."""
    swift = Swift()
    for directory, _, names in sorted(walked for folder in folders for walked in os.walk(folder)):
        for file_name in sorted(names):
            if not file_name.endswith(".swift"):
                continue
            path = os.path.join(directory, file_name)
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for match in re.finditer(r"typealias\s+(\w+)\s*=\s*", text):
                swift.aliases[match.group(1)] = _SwiftTypes(text, match.end()).type()
            for match in re.finditer(r'@_cdecl\("(\w+)"\)\s*(?:@\w+\s*)*(?:public\s+)?func\s+(\w+)\s*\(', text):
                reader = _SwiftTypes(text, match.end())
                params = []
                while not reader.take(")"):
                    label = re.compile(r"\s*(?:\w+\s+)?(\w+)\s*:").match(text, reader.i)
                    if not label:
                        raise ParseError(
                            f"{path}:{_line(text, reader.i)}: cannot read the parameters of {match.group(1)}"
                        )
                    reader.i = label.end()
                    params.append((label.group(1), reader.type()))
                    reader.take(",")
                ret = reader.type() if reader.take("->") else SwiftType("Void")
                name = match.group(1)
                if name in swift.functions:
                    swift.duplicates.append(name)
                swift.functions[name] = SwiftFunction(name, params, ret, path, _line(text, match.start()))
            for match in re.finditer(r"((?:^[ \t]*///[^\n]*\n)+)[ \t]*(?:\w+\s+)*struct\s+(\w+)\s*\{", text, re.M):
                mirrored = re.search(r"`(\w+)` of \w+\.h", match.group(1))
                if not mirrored:
                    continue
                fields = []
                depth = 1
                for line in text[match.end() :].split("\n"):
                    if depth == 1:
                        stored = re.match(r"\s*(?:(?:public|package|internal)\s+)?(?:var|let)\s+(\w+)\s*:\s*", line)
                        if stored and "{" not in line:
                            fields.append((stored.group(1), _SwiftTypes(line, stored.end()).type()))
                    depth += line.count("{") - line.count("}")
                    if depth <= 0:
                        break
                swift.mirrors[mirrored.group(1)] = SwiftMirror(
                    match.group(2), mirrored.group(1), fields, path, _line(text, match.start(2))
                )
    return swift


SWIFT_SCALARS = {
    "Int32": "i32",
    "CInt": "i32",
    "UInt32": "u32",
    "CUnsignedInt": "u32",
    "Int16": "i16",
    "UInt16": "u16",
    "Int64": "i64",
    "UInt64": "u64",
    "Int": "usize",
    "UInt": "usize",
    "Double": "f64",
    "CDouble": "f64",
    "Float": "f32",
    "CFloat": "f32",
    "Bool": "bool",
    "CBool": "bool",
    "CChar": "char",
    "Int8": "char",
    "UInt8": "u8",
    "CUnsignedChar": "u8",
    "Void": "void",
}

# The ctypes type of each scalar. ctypes has one type per width and signedness (c_size_t is
# c_uint64 on this platform), so a type is compared by identity with the one of its C scalar.
CTYPES_SCALARS = {
    "i32": ctypes.c_int,
    "u32": ctypes.c_uint32,
    "i16": ctypes.c_int16,
    "u16": ctypes.c_uint16,
    "i64": ctypes.c_int64,
    "u64": ctypes.c_uint64,
    "usize": ctypes.c_size_t,
    "f64": ctypes.c_double,
    "f32": ctypes.c_float,
    "bool": ctypes.c_bool,
    "u8": ctypes.c_ubyte,
    "char": ctypes.c_char,
}


class _Compare:
    """Whether a C type and its Swift or ctypes spelling agree; each method returns a reason or None."""

    def __init__(self, header: Header, swift: Swift | None = None):
        self.header, self.sources = header, swift
        self.mirror_of = {m.name: tag for tag, m in (swift.mirrors.items() if swift else [])}

    # Swift
    def resolve(self, s: SwiftType) -> SwiftType:
        seen = 0
        while self.sources and s.name in self.sources.aliases and seen < 10:
            alias = self.sources.aliases[s.name]
            s = SwiftType(alias.name, alias.args, alias.ret, alias.optional or s.optional)
            seen += 1
        return s

    def swift(self, c: CType, s: SwiftType) -> str | None:
        s = self.resolve(s)
        if isinstance(c, Scalar):
            mapped = SWIFT_SCALARS.get(s.name)
            if s.name == "()" or (s.name == "Void" and c.name == "void"):
                return None
            return None if mapped == c.name and not s.optional else f"C {c} is not Swift {s}"
        if isinstance(c, Fn):
            if s.name != "fn":
                return f"C function {c} is not Swift {s}"
            if len(c.params) != len(s.args):
                return f"the function pointer takes {len(c.params)} parameters in C, {len(s.args)} in Swift ({s})"
            for i, (cp, sp) in enumerate(zip(c.params, s.args)):
                reason = self.swift(cp, sp)
                if reason:
                    return f"function pointer parameter {i + 1}: {reason}"
            reason = self.swift(c.ret, s.ret or SwiftType("Void"))
            return f"function pointer result: {reason}" if reason else None
        if isinstance(c, Struct):
            tag = self.mirror_of.get(s.name)
            return None if tag == c.tag else f"C {c} is not Swift {s}"
        # A pointer.
        if isinstance(c.to, Fn):
            return self.swift(c.to, s) if s.name == "fn" else f"C {c} is not Swift {s}"
        if s.name == "OpaquePointer":
            if isinstance(c.to, Struct) and self.header.is_opaque(c.to.tag):
                return None
            return f"C {c} is no pointer to an opaque struct, but Swift has OpaquePointer"
        if isinstance(c.to, Struct) and self.header.is_opaque(c.to.tag):
            return f"C {c} points to an opaque struct: Swift has {s}, not OpaquePointer"
        raw = {"UnsafeRawPointer": True, "UnsafeMutableRawPointer": False}
        typed = {"UnsafePointer": True, "UnsafeMutablePointer": False}
        if s.name in raw:
            if raw[s.name] != c.const:
                return f"C {c} is {'const' if c.const else 'not const'}, Swift {s} is {'not ' if c.const else ''}const"
            if (isinstance(c.to, Scalar) and c.to.name == "void") or isinstance(c.to, Struct):
                return None
            return f"C {c} is a typed pointer; Swift {s} is raw"
        if s.name in typed and len(s.args) == 1:
            if typed[s.name] != c.const:
                return f"C {c} is {'const' if c.const else 'not const'}, Swift {s} is {'not ' if c.const else ''}const"
            reason = self.swift(c.to, s.args[0])
            return f"pointee: {reason}" if reason else None
        return f"C {c} is not Swift {s}"

    # ctypes
    def ctypes(self, c: CType, p: object, top: bool = True) -> str | None:
        if p is None:
            return None if c == Scalar("void") else f"C {c} is not None (void)"
        if p in CTYPES_SCALARS.values() or p is ctypes.c_byte:
            if isinstance(c, Scalar) and (CTYPES_SCALARS.get(c.name) is p or (c.name == "char" and p is ctypes.c_byte)):
                return None
            return f"C {c} is not {_ctypes_name(p)}"
        if isinstance(p, type) and issubclass(p, ctypes.Structure):
            return None if isinstance(c, Struct) and c.tag == p.__name__ else f"C {c} is not Structure {p.__name__}"
        if isinstance(p, type) and issubclass(p, ctypes.Array):
            return self.ctypes(c, p._type_, False)
        if not isinstance(c, Ptr):
            return f"C {c} is no pointer, but ctypes has {_ctypes_name(p)}"
        if p is ctypes.c_void_p:
            if isinstance(c.to, (Ptr, Fn)):
                return f"C {c} points to a pointer or function: c_void_p hides that level"
            return None
        if p is ctypes.c_char_p:
            if isinstance(c.to, Scalar) and (c.to.name in ("char", "u8") or (c.to.name == "void" and c.const)):
                return None
            return f"C {c} is no text (c_char_p)"
        if isinstance(p, type) and issubclass(p, ctypes._Pointer):
            target = p._type_
            if (
                isinstance(target, type)
                and issubclass(target, ctypes.Array)
                and c.length
                and target._length_ != c.length
            ):
                return f"C {c} has {c.length} elements, ctypes {target._length_}"
            reason = self.ctypes(c.to, target, False)
            return f"pointee: {reason}" if reason else None
        if isinstance(p, type) and issubclass(p, ctypes._CFuncPtr):
            if not isinstance(c.to, Fn):
                return f"C {c} is no function pointer, ctypes has a CFUNCTYPE"
            argtypes = list(p._argtypes_ or [])
            if len(argtypes) != len(c.to.params):
                return (
                    f"the function pointer takes {len(c.to.params)} parameters in C, {len(argtypes)} in its CFUNCTYPE"
                )
            for i, (cp, pp) in enumerate(zip(c.to.params, argtypes)):
                reason = self.ctypes(cp, pp)
                if reason:
                    return f"function pointer parameter {i + 1}: {reason}"
            reason = self.ctypes(c.to.ret, p._restype_)
            return f"function pointer result: {reason}" if reason else None
        return f"C {c} is not {_ctypes_name(p)}"


def _ctypes_name(p: object) -> str:
    if p is None:
        return "None"
    if isinstance(p, type) and issubclass(p, ctypes._Pointer):
        return f"POINTER({_ctypes_name(p._type_)})"
    if isinstance(p, type) and issubclass(p, ctypes.Array):
        return f"{_ctypes_name(p._type_)} * {p._length_}"
    if isinstance(p, type) and issubclass(p, ctypes._CFuncPtr):
        return f"CFUNCTYPE({_ctypes_name(p._restype_)}, {', '.join(_ctypes_name(a) for a in p._argtypes_ or [])})"
    return getattr(p, "__name__", repr(p))


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _signature(where: str, function: Function, side: str, params: list[object], ret: object, compare) -> list[str]:
    """A function's parameters and result against another language's: `compare(c_type, other)` gives
    a reason when they differ."""
    if len(params) != len(function.params):
        return [f"{where}: the header declares {len(function.params)} parameters, {side} has {len(params)}"]
    errors = []
    for i, (param, other) in enumerate(zip(function.params, params)):
        reason = compare(param.type, other)
        if reason:
            errors.append(f"{where}: parameter {i + 1} ({param.text}): {reason}")
    reason = compare(function.ret, ret)
    return errors + ([f"{where}: result: {reason}"] if reason else [])


def check_swift(header: Header, swift: Swift) -> list[str]:
    errors = [f"{name}: more than one @_cdecl function of this name" for name in swift.duplicates]
    compare = _Compare(header, swift)
    for name, function in header.functions.items():
        mine = swift.functions.get(name)
        if mine is None:
            errors.append(f'{name} (header line {function.line}): no @_cdecl("{name}") function in the Swift sources')
            continue
        where = f"{name} ({os.path.relpath(mine.file, ROOT)}:{mine.line})"
        found = _signature(where, function, "Swift", [t for _, t in mine.params], mine.ret, compare.swift)
        errors += found
        if found:
            continue
        for i, (param, (_, stype)) in enumerate(zip(function.params, mine.params)):
            if isinstance(param.type, Ptr) and not compare.resolve(stype).optional:
                errors.append(
                    f"{where}: parameter {i + 1} ({param.text}) is a pointer C may pass as NULL: "
                    f"Swift must take {stype}? (a non-Optional pointer traps on NULL)"
                )
    for name, mine in swift.functions.items():
        if name not in header.functions:
            errors.append(
                f"{name} ({os.path.relpath(mine.file, ROOT)}:{mine.line}): @_cdecl function declared in no header"
            )
    for tag, struct in header.structs.items():
        mirror = swift.mirrors.get(tag)
        if mirror is None:
            errors.append(f'struct {tag}: no Swift mirror (a struct whose doc comment says "`{tag}` of <header>.h")')
            continue
        where = f"struct {tag} / Swift {mirror.name} ({os.path.relpath(mirror.file, ROOT)}:{mirror.line})"
        c_names = [_camel(f.name) for f in struct.fields]
        s_names = [n for n, _ in mirror.fields]
        if c_names != s_names:
            errors.append(f"{where}: fields {s_names} in Swift, {c_names} (camel-cased) in the header")
            continue
        for c_field, (_, stype) in zip(struct.fields, mirror.fields):
            reason = compare.swift(c_field.type, stype)
            if reason:
                errors.append(f"{where}: field {c_field.name}: {reason}")
    return errors


# --- Python ---------------------------------------------------------------------------------------


def read_unbound(path: str) -> dict[str, str]:
    """name → why the Python binding does not bind it (lines "name  reason"; # comments)."""
    unbound: dict[str, str] = {}
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.split("#", 1)[0].strip()
                if line:
                    name, _, reason = line.partition(" ")
                    unbound[name] = reason.strip()
    return unbound


def layouts(header: Header, cc: str = "cc") -> dict[str, tuple[int, dict[str, int]]]:
    """Each struct's sizeof and field offsets, as the C compiler lays them out."""
    if not header.structs:
        return {}
    lines = ["#include <stdio.h>", "#include <stddef.h>"]
    lines += [f'#include "{os.path.abspath(path)}"' for path in header.files]
    lines.append("int main(void) {")
    for struct in header.structs.values():
        lines.append(f'    printf("%s %zu\\n", "{struct.tag}", sizeof({struct.spelling}));')
        for member in struct.fields:
            lines.append(
                f'    printf("%s.%s %zu\\n", "{struct.tag}", "{member.name}", '
                f"offsetof({struct.spelling}, {member.name}));"
            )
    lines.append("    return 0;\n}")
    with tempfile.TemporaryDirectory() as scratch:
        source, program = os.path.join(scratch, "layout.c"), os.path.join(scratch, "layout")
        with open(source, "w", encoding="utf-8") as f:
            f.write("\n".join(lines) + "\n")
        subprocess.run([cc, "-std=c11", "-o", program, source], check=True, capture_output=True, text=True)
        output = subprocess.run([program], check=True, capture_output=True, text=True).stdout
    result: dict[str, tuple[int, dict[str, int]]] = {}
    for line in output.splitlines():
        key, value = line.split()
        if "." in key:
            tag, member = key.split(".", 1)
            result[tag][1][member] = int(value)
        else:
            result[key] = (int(value), {})
    return result


def check_python(
    header: Header,
    module: object,
    sources: str | None,
    unbound: dict[str, str],
    layout: dict[str, tuple[int, dict[str, int]]],
) -> list[str]:
    errors: list[str] = []
    compare = _Compare(header)
    prototypes = dict(getattr(module, "_PROTOTYPES", {}))
    optional = dict(getattr(module, "_OPTIONAL", {}) or {})
    for name, (restype, argtypes) in list(prototypes.items()) + list(optional.items()):
        function = header.functions.get(name)
        if function is None:
            errors.append(f"_lib.py: {name} is declared to ctypes but in no header")
            continue
        errors += _signature(f"_lib.py: {name}", function, "ctypes", list(argtypes), restype, compare.ctypes)
    for name, function in header.functions.items():
        if name not in prototypes and name not in optional and name not in unbound:
            errors.append(
                f"{name} (header line {function.line}): neither declared in _lib.py's _PROTOTYPES nor listed "
                f"with a reason in scripts/check-abi-unbound.txt"
            )
    for name in unbound:
        if name not in header.functions:
            errors.append(f"check-abi-unbound.txt: {name} is declared in no header")
        elif name in prototypes:
            errors.append(f"check-abi-unbound.txt: {name} is bound in _lib.py after all: remove it from the list")
    if sources:
        for directory, _, names in sorted(os.walk(sources)):
            for file_name in sorted(names):
                if file_name.endswith(".py"):
                    with open(os.path.join(directory, file_name), encoding="utf-8") as f:
                        text = f.read()
                    for match in re.finditer(r"\.(\w+)\s*\(", text):
                        name = match.group(1)
                        if name in header.functions and name not in prototypes and name not in optional:
                            errors.append(
                                f"{file_name}:{_line(text, match.start())}: calls {name}, which _lib.py "
                                f"does not declare to ctypes (its arguments would pass as C int)"
                            )
    if sources:
        errors += check_python_constants(header, sources)
    structures = {
        name: value
        for name, value in vars(module).items()
        if isinstance(value, type) and issubclass(value, ctypes.Structure) and value is not ctypes.Structure
    }
    for tag, struct in header.structs.items():
        mine = structures.get(tag)
        if mine is None:
            continue  # a struct the binding never passes needs no Structure
        fields = list(getattr(mine, "_fields_", []))
        names = [n.rstrip("_") for n, *_ in fields]
        expected = [f.name for f in struct.fields]
        if names != expected:
            errors.append(f"_lib.py: Structure {tag}: fields {names}, the header's {expected}")
            continue
        for c_field, (_, f_type, *_) in zip(struct.fields, fields):
            reason = compare.ctypes(c_field.type, f_type)
            if reason:
                errors.append(f"_lib.py: Structure {tag}: field {c_field.name}: {reason}")
        if tag in layout:
            size, offsets = layout[tag]
            if ctypes.sizeof(mine) != size:
                errors.append(f"_lib.py: Structure {tag}: ctypes size {ctypes.sizeof(mine)}, C sizeof {size}")
            for f_name, *_ in fields:
                c_offset = offsets.get(f_name.rstrip("_"))
                if c_offset is not None and getattr(mine, f_name).offset != c_offset:
                    errors.append(
                        f"_lib.py: Structure {tag}: field {f_name} at offset {getattr(mine, f_name).offset}, "
                        f"C offsetof {c_offset}"
                    )
    return errors


def enum_constants(header: Header) -> dict[str, int]:
    return {name: value for values in header.enums.values() for name, value in values.items()}


def _enum_prefix(names: list[str]) -> str:
    """What the constants of one enum share before their own names ("CDM_ATTR_" of CDM_ATTR_STRING, …)."""
    parts = [name.split("_") for name in names]
    shared = []
    for segment in zip(*parts):
        if len(set(segment)) != 1:
            break
        shared.append(segment[0])
    shared = shared[: min(len(p) for p in parts) - 1]
    return "_".join(shared) + "_" if shared else ""


def check_python_constants(header: Header, sources: str) -> list[str]:
    """The header's enum constants as the Python package writes them:
    - a module-level integer named as a constant without the library's prefix (errors.py's
      INVALID_JSON for CDM_INVALID_JSON)
      must have the constant's value;
    - an enum class whose docstring names "enum cdm_x" (values.py's AttributeType) must have
      exactly that enum's constants (names without their shared prefix) and values;
    - a tuple assignment whose line names "enum cdm_x" in a comment (SOURCE, DESTINATION, OTHER =
      1, 2, 0) must give each name (without a leading _) the constant's value."""
    constants = enum_constants(header)
    library_prefixes = sorted({name.split("_", 1)[0] + "_" for name in constants})  # "CDM_"
    errors = []
    for directory, _, names in sorted(os.walk(sources)):
        for file_name in sorted(names):
            if not file_name.endswith(".py"):
                continue
            with open(os.path.join(directory, file_name), encoding="utf-8") as f:
                text = f.read()
            lines = text.split("\n")
            for node in ast.parse(text).body:
                named = (
                    re.search(r"enum (\w+)", ast.get_docstring(node) or "") if isinstance(node, ast.ClassDef) else None
                )
                if named and named.group(1) in header.enums:
                    values = header.enums[named.group(1)]
                    prefix = _enum_prefix(list(values))
                    members = {}
                    for item in node.body:
                        if (
                            isinstance(item, ast.Assign)
                            and isinstance(item.value, ast.Constant)
                            and type(item.value.value) is int
                        ):
                            members.update(
                                {t.id: (item.value.value, item.lineno) for t in item.targets if isinstance(t, ast.Name)}
                            )
                    for c_name, value in values.items():
                        member = members.pop(c_name[len(prefix) :], None)
                        if member is None:
                            errors.append(
                                f"{file_name}:{node.lineno}: {node.name} lacks {c_name[len(prefix) :]} "
                                f"({c_name} = {value})"
                            )
                        elif member[0] != value:
                            errors.append(
                                f"{file_name}:{member[1]}: {node.name}.{c_name[len(prefix) :]} = {member[0]}, "
                                f"but the header's {c_name} is {value}"
                            )
                    for extra, (value, line) in members.items():
                        errors.append(
                            f"{file_name}:{line}: {node.name}.{extra} = {value} is no constant of enum {named.group(1)}"
                        )
                    continue
                if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                    continue
                target, value = node.targets[0], node.value
                commented = re.search(r"#.*\benum (\w+)", lines[node.lineno - 1])
                if (
                    isinstance(target, ast.Tuple)
                    and isinstance(value, ast.Tuple)
                    and commented
                    and commented.group(1) in header.enums
                ):
                    values = header.enums[commented.group(1)]
                    prefix = _enum_prefix(list(values))
                    for name_node, value_node in zip(target.elts, value.elts):
                        c_name = prefix + getattr(name_node, "id", "").lstrip("_")
                        got = getattr(value_node, "value", None)
                        if c_name not in values:
                            errors.append(
                                f"{file_name}:{node.lineno}: {getattr(name_node, 'id', '?')} is no constant of "
                                f"enum {commented.group(1)}"
                            )
                        elif got != values[c_name]:
                            errors.append(
                                f"{file_name}:{node.lineno}: {getattr(name_node, 'id', '?')} = {got}, "
                                f"but the header's {c_name} is {values[c_name]}"
                            )
                elif isinstance(target, ast.Name) and isinstance(value, ast.Constant) and type(value.value) is int:
                    for c_name in (prefix + target.id for prefix in library_prefixes):
                        if c_name in constants and constants[c_name] != value.value:
                            errors.append(
                                f"{file_name}:{node.lineno}: {target.id} = {value.value}, "
                                f"but the header's {c_name} is {constants[c_name]}"
                            )
    return errors


def check_swift_codes(header: Header, paths: list[str], enum: str = "cdm_result") -> list[str]:
    """The result codes of the Swift engine (`static let name = Code(rawValue: n)`) against the
    header's enum of result codes, matched by name (CDM_NOT_FOUND ↔ notFound, case and underscores
    aside): every header code has a Swift code of its value."""
    if not paths or enum not in header.enums:
        return []
    swift = {}
    for path in paths:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for name, value in re.findall(r"static let (\w+) = (?:MigrationError\.)?Code\(rawValue: (-?\d+)\)", text):
            swift[name.lower()] = (name, int(value))
    errors = []
    for c_name, value in header.enums[enum].items():
        if value == 0:
            continue
        key = c_name.split("_", 1)[1].replace("_", "").lower()
        found = swift.get(key)
        if found is None:
            errors.append(
                f"enum {enum}: {c_name} has no Swift MigrationError.Code "
                f"(in {', '.join(os.path.relpath(p, ROOT) for p in paths)})"
            )
        elif found[1] != value:
            errors.append(f"enum {enum}: {c_name} is {value}, Swift's Code.{found[0]} {found[1]}")
    return errors


def load_python(path: str, module_name: str) -> object:
    if path not in sys.path:
        sys.path.insert(0, path)
    return importlib.import_module(module_name)


# --- The shared library ---------------------------------------------------------------------------


def check_library(
    header: Header, library: str, soname: str, node: str, layout: dict[str, tuple[int, dict[str, int]]]
) -> list[str]:
    errors = []
    dynamic = subprocess.run(["readelf", "-d", library], check=True, capture_output=True, text=True).stdout
    found = re.search(r"\(SONAME\).*\[(.*)\]", dynamic)
    if not found or found.group(1) != soname:
        errors.append(f"{library} has SONAME '{found.group(1) if found else ''}', not '{soname}'")
    # objdump -T: the defined dynamic symbols; a visibility mark (".protected", which Swift's
    # @_cdecl functions get) may sit between the version and the name.
    exported = set()
    for line in subprocess.run(
        ["objdump", "-T", library], check=True, capture_output=True, text=True
    ).stdout.splitlines():
        words = line.split()
        if not re.match(r"^[0-9a-f]+ ", line) or "*UND*" in line or len(words) < 3:
            continue
        name, version = words[-1], words[-2]
        if version in (".protected", ".hidden"):
            version = words[-3]
        if name == node and version == node:
            continue
        if not name.startswith("cdm_"):
            errors.append(f"{library} exports '{name}', which is not cdm_*")
        elif version != node:
            errors.append(f"{library}: {name} has version '{version}', not {node}")
        exported.add(name)
    declared = set(header.functions)
    if not exported:
        errors.append(f"{library} exports nothing")
    if declared - exported:
        errors.append(f"declared but not exported: {' '.join(sorted(declared - exported))}")
    if exported - declared:
        errors.append(f"exported but declared in no header: {' '.join(sorted(exported - declared))}")
    if "cdm_internal_struct_size" in exported:
        sizes = ctypes.CDLL(os.path.abspath(library)).cdm_internal_struct_size
        sizes.restype, sizes.argtypes = ctypes.c_size_t, [ctypes.c_char_p]
        for tag, (size, _) in layout.items():
            mine = sizes(tag.encode())
            if mine == 0:
                errors.append(
                    f'cdm_internal_struct_size does not know "{tag}": add its Swift mirror to the switch '
                    f"(Sources/CDMigrateCAPI/StructLayout.swift)"
                )
            elif mine != size:
                errors.append(
                    f'cdm_internal_struct_size("{tag}") is {mine} (the Swift mirror\'s stride), C sizeof {size}'
                )
    return errors


# --- ctypes prototypes from the header ------------------------------------------------------------


def ctypes_signature(header: Header, name: str) -> tuple[object, list[object]]:
    """A plain (restype, argtypes) for a declared function: scalars by width, text as c_char_p, every
    other pointer as c_void_p. For tests that call the library raw (NULL and wrong handles)."""

    def plain(c: CType) -> object:
        if isinstance(c, Scalar):
            return None if c.name == "void" else CTYPES_SCALARS[c.name]
        if isinstance(c, Ptr) and isinstance(c.to, Scalar) and c.to.name == "char":
            return ctypes.c_char_p
        return ctypes.c_void_p

    function = header.functions[name]
    return plain(function.ret), [plain(p.type) for p in function.params]


# --- Command line ---------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> list[str]:
    header = parse_header(args.header)
    errors = []
    layout = layouts(header, args.cc)
    if args.swift:
        errors += check_swift(header, parse_swift(*args.swift))
    errors += check_swift_codes(header, args.swift_codes)
    if args.library:
        errors += check_library(header, args.library, args.soname, args.node, layout)
        os.environ["CDMIGRATE_LIBRARY"] = os.path.abspath(args.library)  # the binding loads this one
    if args.python_module:
        try:
            module = load_python(args.python_path, args.python_module)
        except Exception as error:
            return [*errors, f"cannot import {args.python_module} from {args.python_path}: {error}"]
        errors += check_python(header, module, args.python_sources, read_unbound(args.unbound), layout)
    return errors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--header", action="append", help="a header (repeatable; default include/cdmigrate.h and cdmigrate_internal.h)"
    )
    parser.add_argument(
        "--swift",
        action="append",
        help="a folder of @_cdecl functions (repeatable; default the C API's and the command line's; '' skips)",
    )
    parser.add_argument(
        "--swift-codes",
        action="append",
        help="a Swift file of result codes (MigrationError.Code; repeatable; default the engine's and the "
        "C API's; '' skips)",
    )
    parser.add_argument("--python-path", default=os.path.join(ROOT, "bindings", "python"))
    parser.add_argument("--python-module", default="cdmigrate._lib", help="the ctypes declarations ('' skips)")
    parser.add_argument("--python-sources", default=os.path.join(ROOT, "bindings", "python", "cdmigrate"))
    parser.add_argument("--unbound", default=os.path.join(ROOT, "scripts", "check-abi-unbound.txt"))
    parser.add_argument("--library", help="the shared library to check (its exports, SONAME, struct sizes)")
    parser.add_argument("--soname")
    parser.add_argument("--node", help="the symbol version node, e.g. CDMIGRATE_0")
    parser.add_argument("--cc", default=os.environ.get("CC", "cc"))
    args = parser.parse_args(argv)
    if args.swift is None:
        args.swift = [
            os.path.join(ROOT, "Sources", "CDMigrateCAPI"),
            os.path.join(ROOT, "Sources", "CDMigrateCommandLine"),
        ]
    args.swift = [folder for folder in args.swift if folder]
    if args.swift_codes is None:
        args.swift_codes = [
            os.path.join(ROOT, "Sources", "CDMigrate", "Core", "MigrationError.swift"),
            os.path.join(ROOT, "Sources", "CDMigrateCAPI", "CAPIError.swift"),
        ]
    args.swift_codes = [path for path in args.swift_codes if path]
    args.header = args.header or [
        os.path.join(ROOT, "include", "cdmigrate.h"),
        os.path.join(ROOT, "include", "cdmigrate_internal.h"),
    ]
    if args.library and not (args.soname and args.node):
        parser.error("--library needs --soname and --node")
    try:
        errors = run(args)
    except (ParseError, subprocess.CalledProcessError) as error:
        detail = getattr(error, "stderr", "") or ""
        print(f"check-abi: {error}{(': ' + detail.strip()) if detail else ''}", file=sys.stderr)
        return 1
    for error in errors:
        print(f"check-abi: {error}", file=sys.stderr)
    if errors:
        print(
            f"check-abi: {len(errors)} disagreement(s) with {', '.join(os.path.relpath(h, ROOT) for h in args.header)}",
            file=sys.stderr,
        )
        return 1
    header = parse_header(args.header)
    checked = [
        name
        for name, on in (("Swift", args.swift), ("Python", args.python_module), ("the library", args.library))
        if on
    ]
    print(
        f"check-abi: {len(header.functions)} functions and {len(header.structs)} structs of the header agree with "
        f"{', '.join(checked) or 'nothing (all checks skipped)'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
