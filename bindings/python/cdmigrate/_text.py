"""Strings and paths on their way to C as NUL-terminated ``char *``.

C stops reading at the first NUL byte, so ``"out.sqlite\\x00x"`` would silently become
``out.sqlite``. Like ``open()``, these refuse such text with ValueError instead, and take paths
as ``str``, ``bytes`` or any ``os.PathLike``.
"""

from __future__ import annotations

import os
from typing import Union

PathLike = Union[str, bytes, "os.PathLike[str]", "os.PathLike[bytes]"]


def c_text(value: str, what: str) -> bytes:
    """``value`` as UTF-8 for a ``const char *`` argument; TypeError for a non-str, ValueError
    for text with a NUL byte (which C would cut short)."""
    if not isinstance(value, str):
        raise TypeError(f"{what} must be a str, not {type(value).__name__}")
    if "\x00" in value:
        raise ValueError(f"{what} contains a NUL byte (embedded null byte): {value!r}")
    return value.encode("utf-8", "surrogatepass")


def c_optional_text(value: str | None, what: str) -> bytes | None:
    """As c_text, with None passed on as NULL."""
    return None if value is None else c_text(value, what)


def c_path(path: PathLike, what: str = "the path") -> bytes:
    """A file system path (str, bytes or os.PathLike) in the file system encoding; TypeError for
    anything else, ValueError for a NUL byte, as ``open()`` does."""
    try:
        raw = os.fsencode(path)
    except TypeError:
        raise TypeError(f"{what} must be a str, bytes or os.PathLike, not {type(path).__name__}") from None
    if b"\x00" in raw:
        raise ValueError(f"{what} contains a NUL byte (embedded null byte): {path!r}")
    return raw
