"""Long-lived handles (models, mappings, migrations, stores): closed exactly once, never used
after closing — using a freed handle would be undefined behaviour in C, so the binding refuses it
in Python first."""

from __future__ import annotations

import contextlib
import ctypes
from typing import Any, Callable, TypeVar

from . import _lib
from .errors import MisuseError, from_record

_Handle = TypeVar("_Handle", bound="LongLivedHandle")


class LongLivedHandle:
    _kind = "object"
    _free: Callable[[int], Any] | None = None
    # cdm_<object>_error: the structured error a failed constructor left on its handle.
    _error: Callable[[int], Any] | None = None

    def __init__(self, pointer: int | None):
        self._pointer: int | None = pointer

    @property
    def _ptr(self) -> int:
        """The live C pointer; MisuseError once closed."""
        pointer = self._pointer
        if not pointer:
            raise MisuseError(f"the {self._kind} is closed")
        return pointer

    @classmethod
    def _make(cls: type[_Handle], constructor: Callable[..., int], *arguments: Any) -> _Handle:
        """Calls a C constructor `constructor(*arguments, &out)` and wraps the handle it gives."""
        out = ctypes.c_void_p()
        code = constructor(*arguments, ctypes.byref(out))
        handle = cls(out.value)
        handle._raise_if_failed(code)
        return handle

    def _raise_if_failed(self, code: int) -> None:
        """C constructors hand back a handle even when they fail (like sqlite3_open), carrying the
        error: read it, free the handle, raise it."""
        if not code:
            return
        pointer = self._pointer
        error_of = type(self)._error
        error = from_record(code, error_of(pointer) if pointer and error_of else _lib.lib.cdm_last_error())
        self.close()
        raise error

    @property
    def closed(self) -> bool:
        return not self._pointer

    def close(self) -> None:
        """Frees the C object. Harmless when already closed."""
        pointer, self._pointer = self._pointer, None
        free = type(self)._free
        if pointer and free is not None:
            free(pointer)

    def __enter__(self: _Handle) -> _Handle:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
