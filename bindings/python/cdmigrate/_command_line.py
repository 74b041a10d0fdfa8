"""The ``cdmigrate`` command line in Python: ``python -m cdmigrate`` and the ``cdmigrate`` console
script run the library's command line (``cdm_command_line_run``), the same code as the Swift
executable, so commands, output and exit codes are those of docs/cli.md.

What the Python entry point adds: ``--policies`` also takes a Python module (a ``.py`` file, or a
dotted name importable from the current folder or ``sys.path``), whose EntityMigrationPolicy
subclasses (by class name), ``POLICIES`` dict and ``FUNCTIONS`` dict are registered on every
migration the command runs; a value ending in ``.so`` is a shared library of C policies, as for
the executable. A module that registers nothing fails the command before anything runs, naming
the module. A fleet run's children (``migrate --jobs``/``--out-dir``) run ``python -m
cdmigrate`` with the same interpreter, each loading the same modules.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import sys
from typing import Any, Sequence

from . import _lib
from ._borrowed_migration import BorrowedMigration
from ._policy_modules import load_policy_module, module_policies
from .errors import INVALID_ARGUMENT, IO, NOTFOUND

_lib_ = _lib.lib

_SHARED_LIBRARY = re.compile(r"\.so(\.[0-9]+)*$")


class _PolicyLoader:
    """cdm_command_line_options.load_policies: imports Python modules (once) and registers their
    policies on each handle the command makes; leaves ``.so`` files to the command."""

    def __init__(self) -> None:
        self.modules: dict[str, tuple[dict[str, Any], dict[Any, Any]]] = {}
        self.handles: list[BorrowedMigration] = []
        self.message = b""
        self.callback = _lib.COMMAND_LINE_POLICY_LOADER(self._load)

    def _load(self, user, name, migration, message) -> int:
        text = (name or b"").decode("utf-8", "replace")
        if _SHARED_LIBRARY.search(text):
            return NOTFOUND
        try:
            if text not in self.modules:
                self.modules[text] = module_policies(load_policy_module(text))
            policies, functions = self.modules[text]
            self.handles.append(BorrowedMigration(migration, policies, functions))
            return 0
        except BaseException as error:  # an import error, or a policy the binding refuses
            self.message = f"{type(error).__name__}: {error}".encode("utf-8", "replace")
            if message:
                message[0] = self.message  # kept alive by self.message until the next call
            return IO if isinstance(error, ImportError) else INVALID_ARGUMENT


def run(arguments: Sequence[str], program: str = "cdmigrate") -> int:
    """Runs one command (``["migrate", "a.sqlite", …]``) as the executable would, in this process;
    returns its exit status (``cdmigrate.run_command`` documents it)."""
    texts = [program, *arguments]
    argv = (ctypes.c_char_p * len(texts))(*[os.fsencode(t) for t in texts])
    child = [sys.executable, "-m", "cdmigrate"]
    child_argv = (ctypes.c_char_p * len(child))(*[os.fsencode(t) for t in child])
    # A --policies shared library is built against the header alone and finds the C API among the
    # process's global symbols: make the library ctypes loaded with local ones global.
    ctypes.CDLL(_lib.library_path(), mode=os.RTLD_NOLOAD | ctypes.RTLD_GLOBAL)
    loader = _PolicyLoader()
    options = _lib.cdm_command_line_options(child_argv, len(child), loader.callback, None)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    try:
        return int(_lib_.cdm_command_line_run(len(texts), argv, ctypes.byref(options), ctypes.sizeof(options)))
    finally:
        for borrowed in loader.handles:
            borrowed.end_run()


def main(argv: Sequence[str] | None = None) -> int:
    """The console script's and ``python -m cdmigrate``'s entry point."""
    return run(sys.argv[1:] if argv is None else list(argv))
