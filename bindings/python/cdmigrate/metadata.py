"""What a store says about itself, read without a model and without migrating (Core Data's
``metadataForPersistentStore(ofType:at:)``), and which model or model version can open it.

>>> metadata = cdmigrate.store_metadata("Example.sqlite")
>>> metadata.version_hashes["BasicEntity"].hex()
'5c1b…'
>>> model.is_compatible(metadata)
False
>>> cdmigrate.ModelVersionSet("Model.xcdatamodeld").version_for_store(metadata)
'v1.0.0'
"""

from __future__ import annotations

import contextlib
import ctypes
from collections.abc import Iterator
from typing import TYPE_CHECKING, NamedTuple, Union

from . import _lib
from ._handle import LongLivedHandle
from ._text import PathLike, c_path
from .errors import check, from_record

if TYPE_CHECKING:  # pragma: no cover - typing only: model.py imports this module
    from .model import Model


class StoreEntity(NamedTuple):
    """One entity a store names, in its version hashes or in ``Z_PRIMARYKEY``."""

    name: str
    #: The parent entity, None for a root entity (or one ``Z_PRIMARYKEY`` does not list).
    superentity: str | None
    #: ``Z_ENT``; 0 when ``Z_PRIMARYKEY`` does not list the entity.
    entity_number: int
    #: Rows of the entity itself (not its subentities); -1 when ``Z_PRIMARYKEY`` does not list it.
    row_count: int
    #: The store's 32-byte version hash, None when it records none.
    version_hash: bytes | None


class VersionDifference(NamedTuple):
    """An entity whose version hash differs between a store and a model."""

    entity: str
    #: None: the entity is not in the store.
    store_hash: bytes | None
    #: None: the entity is not in the model.
    model_hash: bytes | None

    def __str__(self) -> str:
        if self.store_hash is None:
            return f"{self.entity} is not in the store"
        if self.model_hash is None:
            return f"{self.entity} is only in the store"
        return f"{self.entity}: store {self.store_hash.hex()}, model {self.model_hash.hex()}"


def _bytes(pointer, length: int) -> bytes | None:
    return ctypes.string_at(pointer, length) if pointer else None


def _text(raw: bytes | None) -> str | None:
    return raw.decode() if raw is not None else None


class StoreMetadata(LongLivedHandle):
    """A store's metadata and entities, read once by :func:`store_metadata`. Plain attributes:
    ``path``, ``uuid``, ``store_type``, ``is_empty`` (an empty ``Z_PLIST``: no version to check),
    ``version_identifiers``, ``entities`` (:class:`StoreEntity`, in Core Data's name order) and
    ``version_hashes`` (entity name → 32 bytes)."""

    _kind = "store metadata"
    _free = staticmethod(lambda p: _lib.lib.cdm_store_metadata_free(p))
    _error = staticmethod(lambda p: _lib.lib.cdm_store_metadata_error(p))

    path: str
    uuid: str
    store_type: str
    is_empty: bool
    version_identifiers: list[str]
    entities: list[StoreEntity]

    @classmethod
    def of(cls, store: StoreLike) -> StoreMetadata:
        """``store`` itself when it is metadata already read, else the metadata read from the store
        at that path (:meth:`read`, with its errors)."""
        return store if isinstance(store, StoreMetadata) else cls.read(store)

    @classmethod
    @contextlib.contextmanager
    def reading(cls, store: StoreLike) -> Iterator[StoreMetadata]:
        """``with StoreMetadata.reading(store) as metadata:`` — :meth:`of` for the ``with`` block:
        metadata read from a path is closed at the block's end, metadata given is left open."""
        metadata = cls.of(store)
        try:
            yield metadata
        finally:
            if metadata is not store:
                metadata.close()

    @classmethod
    def read(cls, path: PathLike) -> StoreMetadata:
        """Reads the store at ``path`` (opened read-only). MigrationIOError for a missing or
        unreadable file, IncompatibleVersionHashError for a file that is not a Core Data SQLite
        store, SourceStoreError for malformed metadata."""
        metadata = cls._make(_lib.lib.cdm_store_metadata_read, c_path(path, "the store path"))
        metadata.path = str(path)
        metadata._load()
        return metadata

    def _load(self) -> None:
        lib, pointer = _lib.lib, self._ptr
        text = ctypes.c_char_p()
        check(lib.cdm_store_metadata_uuid(pointer, ctypes.byref(text)))
        self.uuid = text.value.decode() if text.value is not None else ""
        check(lib.cdm_store_metadata_type(pointer, ctypes.byref(text)))
        self.store_type = text.value.decode() if text.value is not None else ""
        flag = ctypes.c_int()
        check(lib.cdm_store_metadata_is_empty(pointer, ctypes.byref(flag)))
        self.is_empty = bool(flag.value)
        count = ctypes.c_size_t()
        check(lib.cdm_store_metadata_identifier_count(pointer, ctypes.byref(count)))
        identifiers = []
        for i in range(count.value):
            check(lib.cdm_store_metadata_identifier_at(pointer, i, ctypes.byref(text)))
            identifiers.append(text.value.decode() if text.value is not None else "")
        self.version_identifiers = identifiers
        check(lib.cdm_store_metadata_entity_count(pointer, ctypes.byref(count)))
        entities = []
        info = _lib.cdm_store_entity_info()
        for i in range(count.value):
            check(lib.cdm_store_metadata_entity_at(pointer, i, ctypes.byref(info)))
            entities.append(
                StoreEntity(
                    info.name.decode(),
                    _text(info.superentity),
                    info.entity_number,
                    info.row_count,
                    _bytes(info.version_hash, info.version_hash_length),
                )
            )
        self.entities = entities

    @property
    def version_hashes(self) -> dict[str, bytes]:
        """``NSStoreModelVersionHashes``: entity name → the store's 32-byte version hash."""
        return {e.name: e.version_hash for e in self.entities if e.version_hash is not None}

    def version_differences(self, model: Model) -> list[VersionDifference]:
        """The entities whose version hashes differ between this store and ``model``, in name order."""
        return self._comparison(model)[1]

    def is_compatible(self, model: Model) -> bool:
        """Whether ``model`` opens this store without a migration (Core Data's
        ``isConfiguration(withName:compatibleWithStoreMetadata:)``); never for empty metadata."""
        return self._comparison(model)[0]

    def _comparison(self, model: Model) -> tuple[bool, list[VersionDifference]]:
        lib, pointer = _lib.lib, self._ptr
        compatible, count = ctypes.c_int(), ctypes.c_size_t()
        self._checked(
            lib.cdm_store_metadata_check_model(pointer, model._ptr, ctypes.byref(compatible), ctypes.byref(count))
        )
        differences = []
        difference = _lib.cdm_version_difference()
        for i in range(count.value):
            check(lib.cdm_store_metadata_difference_at(pointer, i, ctypes.byref(difference)))
            differences.append(
                VersionDifference(
                    difference.entity.decode(),
                    _bytes(difference.store_hash, difference.store_hash_length),
                    _bytes(difference.model_hash, difference.model_hash_length),
                )
            )
        return bool(compatible.value), differences

    def _checked(self, code: int) -> None:
        if code:
            raise from_record(code, _lib.lib.cdm_store_metadata_error(self._ptr))

    def _version_in(self, model_set_path: PathLike) -> str | None:
        version = ctypes.c_char_p()
        self._checked(
            _lib.lib.cdm_store_metadata_version_in(
                self._ptr, c_path(model_set_path, "the model set path"), ctypes.byref(version)
            )
        )
        return version.value.decode() if version.value is not None else None

    def __repr__(self) -> str:
        entities = len(getattr(self, "entities", []))
        return f"StoreMetadata({self.path!r}, uuid={getattr(self, 'uuid', '?')!r}, entities={entities})"


StoreLike = Union[StoreMetadata, PathLike]


def store_metadata(path: PathLike) -> StoreMetadata:
    """Reads a store's metadata without migrating it: UUID, type, version identifiers, every
    entity's version hash and row count. See :meth:`StoreMetadata.read` for the errors."""
    return StoreMetadata.read(path)


class ModelVersionSet:
    """The versions of one data model: an Xcode ``.xcdatamodeld`` or a folder of JSON models
    (Core Data's compiled ``.momd``). The set is read when a store is looked up; a set that cannot
    be read raises MigrationIOError or InvalidModelError then."""

    def __init__(self, path: PathLike):
        c_path(path, "the model set path")
        self.path = path

    def version_for_store(self, store: StoreLike) -> str | None:
        """The name of the version the store was written with (its entity version hashes equal the
        store's), None when no version matches. ``store`` is a path or a :class:`StoreMetadata`.
        Core Data counterpart: ``NSManagedObjectModel.mergedModel(from:forStoreMetadata:)``."""
        with StoreMetadata.reading(store) as metadata:
            return metadata._version_in(self.path)

    def __repr__(self) -> str:
        return f"ModelVersionSet({self.path!r})"
