"""Sort descriptors of fetches inside policies (NSFetchRequest.sortDescriptors with the default
``compare:``): ``sort=[("name", True), ("date", False)]``, or a plain key for ascending
(``sort=["name"]``). Sorting runs in SQL; see ``MigrationManager.fetch_destination``."""

from __future__ import annotations

from typing import Any, Iterable, Sequence, Tuple, Union

from . import _lib
from ._text import c_text

SortSpec = Union[str, Tuple[str, bool]]


def sort_descriptors(sort: Iterable[SortSpec] | None) -> tuple[Any, int, list[bytes]]:
    """A cdm_sort_descriptor array for ``sort``, its length, and the key bytes to keep alive
    during the call. TypeError names the position of a descriptor that is neither a key nor a
    (key, ascending) pair."""
    if sort is None:
        return None, 0, []
    if isinstance(sort, (str, bytes)) or (isinstance(sort, tuple) and len(sort) == 2 and isinstance(sort[1], bool)):
        raise TypeError(f'sort is a list of descriptors such as [("name", True)], not {sort!r}')
    items: Sequence[Any] = list(sort)
    array = (_lib.cdm_sort_descriptor * max(len(items), 1))()
    keep: list[bytes] = []
    for i, item in enumerate(items):
        if isinstance(item, str):
            key, ascending = item, True
        elif isinstance(item, tuple) and len(item) == 2 and isinstance(item[0], str) and isinstance(item[1], bool):
            key, ascending = item
        else:
            raise TypeError(
                f"sort descriptor {i + 1} must be a key or a (key, ascending) pair with a bool, not {item!r}"
            )
        encoded = c_text(key, f"the key of sort descriptor {i + 1}")
        keep.append(encoded)
        array[i].key = encoded
        array[i].ascending = 1 if ascending else 0
    return (array if items else None), len(items), keep
