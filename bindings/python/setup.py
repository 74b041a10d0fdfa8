"""Packaging of the cdmigrate Python binding (the metadata is in pyproject.toml).

The package carries libcdmigrate.so, a native x86-64 (or whatever the build machine is) library it
loads through ctypes, so its wheel is platform-tagged — py3-none-<platform>: any Python 3, no
CPython ABI (ctypes only), one platform — and installs into platlib. The library is built from the
cdmigrate repository: `make -C bindings/python wheel` builds it and the wheel in one command.

Building from an sdist (which carries no binary) needs the repository too: the sdist's build looks
for the library in cdmigrate/ (put there by `make python-package`), else builds it with the
Makefile of the repository at $CDMIGRATE_SOURCE, else of the repository around this directory
(a Swift toolchain, make, a C compiler and the -dev packages of sqlite3, jansson, libxml2 and zlib
are then needed; see docs/c-api.md).
"""

import os
import shutil
import subprocess

from setuptools import Distribution, setup
from setuptools.command.build_py import build_py

try:  # setuptools >= 70.1 has its own; older ones use the wheel package's
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # pragma: no cover - depends on the build environment
    from wheel.bdist_wheel import bdist_wheel

HERE = os.path.dirname(os.path.abspath(__file__))
LIBRARY = os.path.join(HERE, "cdmigrate", "libcdmigrate.so")


def repository():
    """The cdmigrate repository the library is built from, or None."""
    for root in (os.environ.get("CDMIGRATE_SOURCE"), os.path.join(HERE, "..", "..")):
        if root and os.path.isfile(os.path.join(root, "Makefile")) and os.path.isfile(os.path.join(root, "VERSION")):
            return os.path.abspath(root)
    return None


class BuildWithLibrary(build_py):
    """build_py that makes sure cdmigrate/libcdmigrate.so exists before copying the package."""

    def run(self):
        if not os.path.exists(LIBRARY):
            root = repository()
            if root is None:
                raise SystemExit(
                    "cdmigrate/libcdmigrate.so is missing and no cdmigrate repository was found: "
                    "run `make -C bindings/python python-package` in the repository, or set "
                    "CDMIGRATE_SOURCE to a checkout of it"
                )
            subprocess.check_call(["make", "-C", root, "build/lib/libcdmigrate.so"])
            shutil.copyfile(os.path.join(root, "build", "lib", "libcdmigrate.so"), LIBRARY)
        super().run()


class PlatformWheel(bdist_wheel):
    """A wheel tagged for the build platform but for any Python 3 (the library is used through ctypes)."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        _, _, platform = super().get_tag()
        return "py3", "none", platform


class BinaryDistribution(Distribution):
    """The package carries a native library: install it as platform-specific (platlib)."""

    def has_ext_modules(self):
        return True


setup(distclass=BinaryDistribution, cmdclass={"build_py": BuildWithLibrary, "bdist_wheel": PlatformWheel})
