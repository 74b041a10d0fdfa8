"""Methods of Python policies for value expressions: ``FUNCTION($entityPolicy, "selector:", …)``
calls a method of the policy object of the current entity mapping, as Core Data sends the
message to the mapping's NSEntityMigrationPolicy.

A selector names its method as PyObjC does: every ``:`` becomes ``_``
(``"labelFor:age:"`` → ``labelFor_age_``). Two plainer spellings are accepted too, tried in this
order after the PyObjC name: without the trailing underscores (``labelFor_age``) and in snake case
(``label_for_age``). Names starting with ``_`` and the hooks of EntityMigrationPolicy are never
called."""

from __future__ import annotations

import re
from typing import Any, Callable

from .policy import EntityMigrationPolicy

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def method_names(selector: str) -> list[str]:
    """The Python names a selector is looked up under, in order (no duplicates)."""
    pyobjc = selector.replace(":", "_")
    plain = pyobjc.rstrip("_") or pyobjc
    snake = _CAMEL_BOUNDARY.sub("_", plain).lower()
    names: list[str] = []
    for name in (pyobjc, plain, snake):
        if name not in names:
            names.append(name)
    return names


def find_method(policy: Any, selector: str) -> Callable[..., Any] | None:
    """The bound method of ``policy`` that answers ``selector``, None when it has none."""
    for name in method_names(selector):
        if not name.isidentifier() or name.startswith("_") or hasattr(EntityMigrationPolicy, name):
            continue
        method = getattr(policy, name, None)
        if callable(method):
            return method
    return None
