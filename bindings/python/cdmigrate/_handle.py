"""Long-lived handles (models, mappings, migrations, stores): closed exactly once, never used
after closing — using a freed handle would be undefined behaviour in C, so the binding refuses it
in Python first."""

from __future__ import annotations

from typing import Any, Callable, Optional

from .errors import MisuseError


class LongLivedHandle:
    _kind = "object"
    _free: Optional[Callable[[int], Any]] = None

    def __init__(self, pointer: Optional[int]):
        self._pointer: Optional[int] = pointer

    @property
    def _ptr(self) -> int:
        """The live C pointer; MisuseError once closed."""
        pointer = self._pointer
        if not pointer:
            raise MisuseError(f"the {self._kind} is closed")
        return pointer

    @property
    def closed(self) -> bool:
        return not self._pointer

    def close(self) -> None:
        """Frees the C object. Harmless when already closed."""
        pointer, self._pointer = self._pointer, None
        if pointer and type(self)._free is not None:
            type(self)._free(pointer)

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass
