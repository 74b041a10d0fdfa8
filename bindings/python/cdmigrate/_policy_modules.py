"""How a policies module is loaded and what it registers — one way for the command line's
``--policies MODULE`` (``python -m cdmigrate``, the console script) and ``migrate_many``'s
``policies_module``: its ``EntityMigrationPolicy`` subclasses under their class names, its
``POLICIES`` dict and its ``FUNCTIONS`` dict. A module that registers nothing is refused up front,
naming the module, before any store is opened."""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import types
from typing import Any

from .chain import module_registrations
from .errors import InvalidArgumentError


def load_policy_module(name: str) -> types.ModuleType:
    """Imports ``name``: a ``.py`` file, or a module importable from the current folder or sys.path."""
    if name.endswith(".py") or os.sep in name:
        module_name = os.path.splitext(os.path.basename(name))[0]
        spec = importlib.util.spec_from_file_location(module_name, name)
        if spec is None or spec.loader is None:
            raise ImportError(f"cannot load the policy module '{name}'")
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        spec.loader.exec_module(module)
        return module
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())
    return importlib.import_module(name)


def module_policies(module: types.ModuleType) -> tuple[dict[str, Any], dict[Any, Any]]:
    """What a policies module registers: its EntityMigrationPolicy subclasses by class name, then
    its ``POLICIES`` dict (policy name → class, factory or object), and its ``FUNCTIONS``.

    Raises InvalidArgumentError naming the module when it registers nothing (a typo in its name
    would otherwise surface as a missing policy in the middle of a run)."""
    policies, functions = module_registrations(module)
    policies.update(dict(getattr(module, "POLICIES", None) or {}))
    if not policies and not functions:
        where = getattr(module, "__file__", None) or module.__name__
        raise InvalidArgumentError(
            f"the policies module '{module.__name__}' ({where}) registers nothing: it defines no "
            "cdmigrate.EntityMigrationPolicy subclass, no POLICIES dict and no FUNCTIONS dict"
        )
    return policies, functions


def load_policies(name: str) -> tuple[dict[str, Any], dict[Any, Any]]:
    """``module_policies(load_policy_module(name))``."""
    return module_policies(load_policy_module(name))
