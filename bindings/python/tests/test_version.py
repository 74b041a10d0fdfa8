"""The version is written once (the repository's VERSION file) and agrees everywhere it appears."""

import os
import re
from importlib import metadata

import cdmigrate
from cdmigrate import _lib

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))


def test_package_library_and_header_versions_agree_with_the_version_file():
    with open(os.path.join(ROOT, "VERSION"), encoding="utf-8") as f:
        version = f.read().strip()
    with open(os.path.join(ROOT, "include", "cdmigrate.h"), encoding="utf-8") as f:
        header = f.read()
    major, minor, patch = (int(part) for part in version.split("."))
    assert cdmigrate.__version__ == version
    assert cdmigrate.library_version() == version
    assert metadata.version("cdmigrate") == version
    assert re.search(rf'#define CDM_VERSION +"{re.escape(version)}"', header)
    assert re.search(rf"#define CDM_VERSION_NUMBER +{major * 1_000_000 + minor * 1_000 + patch}\b", header)
    assert _lib.lib.cdm_libversion_number() == major * 1_000_000 + minor * 1_000 + patch


def test_the_loaded_library_records_its_soname():
    # The package loads the library it carries; its SONAME is libcdmigrate.so.<major>.
    with open(cdmigrate.library_path(), "rb") as f:
        data = f.read()
    major = cdmigrate.__version__.split(".")[0]
    assert b"libcdmigrate.so.%s\x00" % major.encode() in data
