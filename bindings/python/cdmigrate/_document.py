"""Reports as plain data: ``to_dict()`` gives the dataclass as dicts, lists and scalars with the
field names (snake_case) as keys, ``to_json()`` the same as JSON text."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

#: Field metadata of a field left out of to_dict()/to_json() (the library's own JSON document).
NOT_IN_DOCUMENT = {"document": False}


def _plain(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _plain(getattr(value, f.name))
            for f in dataclasses.fields(value)
            if f.metadata.get("document", True)
        }
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    return value


class Document:
    """Base of the report dataclasses."""

    def to_dict(self) -> dict[str, Any]:
        """The report as a dict (nested reports as dicts), keyed by the attribute names."""
        plain = _plain(self)
        assert isinstance(plain, dict)
        return plain

    def to_json(self, **options: Any) -> str:
        """The report as JSON text (``to_dict()`` through ``json.dumps(**options)``)."""
        return json.dumps(self.to_dict(), **options)
