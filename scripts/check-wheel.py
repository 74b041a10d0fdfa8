#!/usr/bin/env python3
"""Checks a cdmigrate wheel before it is published:

- a manylinux platform tag (file name and WHEEL), for any Python 3, installed into platlib;
- the library stripped (no .symtab), its vendored libraries none of the Swift toolchain's, every
  library it needs (NEEDED) vendored or the C library's, libstdc++, libgcc_s or zlib, its run path
  the vendored libraries' folder;
- the licence metadata: License-Expression, a License-File line for each licence file, the
  project's own licence and one per vendored library, each in the wheel;
- RECORD: every file listed with its SHA-256 and size.

    scripts/check-wheel.py SWIFT_ROOT WHEEL
"""

import base64
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import zipfile

# What the library may need beyond its vendored libraries (a subset of manylinux's allowed list).
ALLOWED = re.compile(r"(libc|libm|libpthread|libdl|librt|libstdc\+\+|libgcc_s|libz)\.so\.\d+$|ld-linux.*\.so\.\d+$")


def fail(message: str) -> None:
    sys.exit(f"check-wheel: {message}")


def main(swift_root: str, path: str) -> None:
    name = os.path.basename(path)
    if not re.fullmatch(r"cdmigrate-[^-]+-py3-none-manylinux_\d+_\d+_[a-z0-9_]+\.whl", name):
        fail(f"{name} is not tagged py3-none-manylinux_<glibc>_<arch>")
    wheel = zipfile.ZipFile(path)
    names = wheel.namelist()
    dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
    tags = wheel.read(f"{dist_info}/WHEEL").decode()
    if "Root-Is-Purelib: false" not in tags or f"Tag: {name.split('-', 2)[2][:-4]}" not in tags:
        fail(f"WHEEL does not match the file name:\n{tags}")
    if "cdmigrate/libcdmigrate.so" not in names:
        fail("cdmigrate/libcdmigrate.so is missing")
    vendored = [n for n in names if re.match(r"cdmigrate\.libs/[^/]+\.so", n)]
    for library in vendored:
        if re.match(r"cdmigrate\.libs/lib(swift|Foundation|_Foundation|dispatch|BlocksRuntime)", library):
            fail(f"{library} comes from the Swift toolchain")
    with tempfile.TemporaryDirectory() as work:
        library = wheel.extract("cdmigrate/libcdmigrate.so", work)
        sections = subprocess.run(["readelf", "-S", "-W", library], check=True, capture_output=True, text=True).stdout
        if ".symtab" in sections or ".debug_info" in sections:
            fail("cdmigrate/libcdmigrate.so is not stripped")
        needed = subprocess.run(["readelf", "-d", library], check=True, capture_output=True, text=True).stdout
        for line in needed.splitlines():
            if ("(RUNPATH)" in line or "(RPATH)" in line) and "$ORIGIN/../cdmigrate.libs" not in line:
                fail(f"the library's run path is not its vendored libraries': {line.strip()}")
            needs = re.search(r"\(NEEDED\).*\[(.+)\]", line)
            if needs and f"cdmigrate.libs/{needs.group(1)}" not in vendored and not ALLOWED.match(needs.group(1)):
                fail(f"the library needs {needs.group(1)}, neither vendored nor allowed by manylinux")
            if swift_root.rstrip("/").removesuffix("/usr") in line:
                fail(f"the library refers to the toolchain: {line.strip()}")
    metadata = wheel.read(f"{dist_info}/METADATA").decode().partition("\n\n")[0]
    expression = re.search(r"^License-Expression: (.+)$", metadata, re.M)
    if not expression or not expression.group(1).startswith("MIT"):
        fail(f"License-Expression is missing or not the project's MIT first:\n{metadata}")
    licence_files = re.findall(r"^License-File: (.+)$", metadata, re.M)
    if "LICENSE" not in licence_files or len(licence_files) < 1 + (1 if vendored else 0):
        fail(f"License-File lines {licence_files} do not name LICENSE and the vendored libraries' licences")
    for licence in licence_files:
        if f"{dist_info}/licenses/{licence}" not in names:
            fail(f"License-File {licence} is not in the wheel")
    records = {}
    for line in wheel.read(f"{dist_info}/RECORD").decode().splitlines():
        file, digest, size = line.rsplit(",", 2)
        records[file] = (digest, size)
    for file in names:
        if file.endswith("/") or file == f"{dist_info}/RECORD":
            continue
        data = wheel.read(file)
        expected = "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        if records.get(file) != (expected, str(len(data))):
            fail(f"RECORD does not match {file}")
    print(f"wheel OK: {name}: {len(vendored)} vendored libraries, License-Expression: {expression.group(1)}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
