#!/usr/bin/env python3
"""Adds the licence of every library auditwheel vendored into a wheel (cdmigrate.libs/) to the wheel's
metadata, in place: the copyright file of the Debian package the library came from, as
<dist-info>/licenses/vendored/<package>.copyright, named by a License-File line in METADATA (PEP 639),
with RECORD rewritten to match; and License-Expression extended with each library's SPDX licence
(LICENCES below: the one its copyright file states).

    scripts/wheel-licences.py WHEEL

auditwheel renames each library it copies (libxml2.so.2.9.14 -> libxml2-<hash>.so.2.9.14); the
original name finds the package through `dpkg -S`. Fails when a library's package or copyright
file cannot be found: a wheel must not ship a library without its licence.
"""

import base64
import hashlib
import os
import re
import subprocess
import sys
import tempfile
import zipfile

# The SPDX expression of each library's licence (by the start of the Debian package's name).
# ICU 72's licence is the Unicode licence with the older ICU licence for code before ICU 58;
# SQLite's is its dedication to the public domain (SPDX "blessing"), liblzma 5.4's is public domain.
LICENCES = {
    "libjansson": "MIT",
    "libxml2": "MIT",
    "libicu": "Unicode-DFS-2016 AND ICU",
    "libsqlite3": "blessing",
    "liblzma": "LicenseRef-Public-Domain",
    "zlib1g": "Zlib",
}


def spdx_of(package: str) -> str:
    for name, expression in LICENCES.items():
        if package.startswith(name):
            return expression
    sys.exit(f"wheel-licences: the licence of {package} is not known: add it to LICENCES in {__file__}")


def package_of(library: str) -> str:
    """The Debian package that installed a library file named `library` (no architecture suffix)."""
    try:
        out = subprocess.run(["dpkg", "-S", f"*/{library}"], check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as error:
        sys.exit(f"wheel-licences: no Debian package found for {library}: {error}")
    return out.splitlines()[0].split(":")[0].split(",")[0].strip()


def record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main(path: str) -> None:
    with zipfile.ZipFile(path) as wheel:
        entries = [(info, wheel.read(info)) for info in wheel.infolist()]
    names = [info.filename for info, _ in entries]
    dist_info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/METADATA"))
    vendored = sorted(n.rsplit("/", 1)[1] for n in names if re.match(r"[^/]+\.libs/[^/]+\.so", n))
    licences = {}
    expressions = []
    for library in vendored:
        original = re.sub(r"-[0-9a-f]{8}(\.so)", r"\1", library)
        package = package_of(original)
        copyright_file = f"/usr/share/doc/{package}/copyright"
        if not os.path.isfile(copyright_file):
            sys.exit(f"wheel-licences: {package} (for {original}) has no {copyright_file}")
        for part in spdx_of(package).split(" AND "):
            if part not in expressions:
                expressions.append(part)
        with open(copyright_file, "rb") as handle:
            licences[f"vendored/{package}.copyright"] = handle.read()
    added = {f"{dist_info}/licenses/{name}": data for name, data in licences.items()}
    fd, temporary = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), suffix=".whl")
    os.close(fd)
    records = []
    with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as out:
        for info, data in entries:
            if info.filename == f"{dist_info}/RECORD" or info.filename in added:
                continue
            if info.filename == f"{dist_info}/METADATA":
                text = data.decode()
                head, blank, body = text.partition("\n\n")
                lines = [line for line in head.splitlines() if not line.startswith("License-File: vendored/")]
                for i, line in enumerate(lines):
                    if line.startswith("License-Expression: "):
                        own = line.split(": ", 1)[1].split(" AND ")[0]
                        parts = [own] + [part for part in expressions if part != own]
                        lines[i] = "License-Expression: " + " AND ".join(parts)
                head = "\n".join(lines)
                head += "".join(f"\nLicense-File: {name}" for name in licences)
                data = (head + blank + body).encode()
            out.writestr(info, data)
            if not info.filename.endswith("/"):
                records.append(record_line(info.filename, data))
        for name, data in added.items():
            out.writestr(zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0)), data, zipfile.ZIP_DEFLATED)
            records.append(record_line(name, data))
        records.append(f"{dist_info}/RECORD,,")
        out.writestr(f"{dist_info}/RECORD", "\n".join(records) + "\n")
    os.replace(temporary, path)
    print(
        f"wheel-licences: {len(licences)} licences of vendored libraries added to {os.path.basename(path)}: "
        + ", ".join(sorted(name.split("/")[1].rsplit(".", 1)[0] for name in licences))
    )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
