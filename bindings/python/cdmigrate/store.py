"""Stores for hosts that make source stores (tests, generators): a new SQLite store in Core
Data's layout, filled with instances and saved."""

from __future__ import annotations

import ctypes
from typing import Any, Dict, Optional

from . import _lib
from ._handle import LongLivedHandle
from .errors import check
from .instance import Instance, Side
from .model import Model
from ._text import PathLike, c_path, c_text



class Store(LongLivedHandle):
    """A new store for a model. Instances inserted are valid until the store is closed; closing
    rolls back what was not saved.

    >>> with Store.create(model, "Notes.sqlite") as store:
    ...     note = store.insert("Note", title="Hello", body="")
    ...     store.save()
    """

    _kind = "store"
    _free = staticmethod(lambda p: _lib.lib.cdm_store_close(p))
    _error = staticmethod(lambda p: _lib.lib.cdm_store_error(p))

    def __init__(self, pointer: Optional[int], model: Model):
        super().__init__(pointer)
        self.model = model
        self._side = Side("store", model)

    @classmethod
    def create(cls, model: Model, path: PathLike) -> "Store":
        """Creates an empty store at ``path`` (which must not exist): DestinationStoreError,
        SQLiteError or MigrationIOError otherwise."""
        out = ctypes.c_void_p()
        code = _lib.lib.cdm_store_create(model._ptr, c_path(path), ctypes.byref(out))
        store = cls(out.value, model)
        store._raise_if_failed(code)
        return store

    def insert(self, entity: str, values: Optional[Dict[str, Any]] = None, **more: Any) -> Instance:
        """Inserts an instance of ``entity`` and sets the given values (attributes, to-one
        relationships as Instances, to-many ones as lists of Instances)."""
        out = ctypes.c_void_p()
        code = _lib.lib.cdm_store_insert(self._ptr, c_text(entity, "the entity"), ctypes.byref(out))
        check(code)
        instance = Instance(out.value, self._side)
        instance._entity = entity
        values = {**(values or {}), **more}
        if values:
            instance.set_values(values, skip_unknown=False)  # the attributes in one call
        return instance

    def save(self) -> None:
        """Writes everything inserted and changed so far, with Core Data's bookkeeping, and commits."""
        code = _lib.lib.cdm_store_save(self._ptr)
        check(code)

    def __repr__(self) -> str:
        return "<Store closed>" if self.closed else "<Store>"
