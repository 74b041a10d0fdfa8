"""scripts/check-abi.py as a module (its file name has a hyphen), and the repository's headers."""

from __future__ import annotations

import importlib.util
import os
import sys

from conftest import ROOT

HEADERS = [os.path.join(ROOT, "include", "cdmigrate.h"), os.path.join(ROOT, "include", "cdmigrate_internal.h")]


def _load():
    if "check_abi" in sys.modules:
        return sys.modules["check_abi"]
    spec = importlib.util.spec_from_file_location("check_abi", os.path.join(ROOT, "scripts", "check-abi.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules["check_abi"] = module  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


abi = _load()
