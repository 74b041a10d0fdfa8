"""Data models (NSManagedObjectModel) and mapping models (NSMappingModel), read from the JSON of
docs/model-format.md and docs/mapping-format.md."""

from __future__ import annotations

import ctypes
import json

from . import _lib
from ._handle import LongLivedHandle
from ._text import PathLike, c_path, c_text
from .errors import MigrationError, check, located
from .introspection import EntityDescription, describe, version_hash
from .metadata import StoreLike, StoreMetadata, VersionDifference
from .values import AttributeType


def _from_json(cls, constructor, text: str, what: str):
    """A handle read from JSON text; an error's offsets index the strings of that text (errors.located)."""
    try:
        return cls._make(constructor, c_text(text, what))
    except MigrationError as error:
        located(error, text, json_document=True)
        raise


def _names(count_of, name_at, pointer: int) -> list[str]:
    """The names a count function and an at-index function of the C API list."""
    count = ctypes.c_size_t()
    check(count_of(pointer, ctypes.byref(count)))
    names = []
    name = ctypes.c_char_p()
    for i in range(count.value):
        check(name_at(pointer, i, ctypes.byref(name)))
        names.append((name.value or b"").decode("utf-8"))
    return names


class Model(LongLivedHandle):
    """A data model. Immutable once made; may be shared by any number of migrations and threads.

    >>> model = Model.from_file("examples/2-recipes/RecipesV1.model.json")
    >>> model.entity_names
    ['Chef', 'Ingredient', 'Recipe']
    """

    _kind = "model"
    _free = staticmethod(lambda p: _lib.lib.cdm_model_free(p))
    _error = staticmethod(lambda p: _lib.lib.cdm_model_error(p))

    @classmethod
    def from_json(cls, text: str) -> Model:
        """Reads a model from JSON text. Raises InvalidJSONError, InvalidModelError (every problem in
        ``error.problems``) or EncodingError."""
        return _from_json(cls, _lib.lib.cdm_model_from_json, text, "the model JSON")

    @classmethod
    def from_file(cls, path: PathLike) -> Model:
        """Reads a model from a JSON file; MigrationIOError when it cannot be read."""
        return cls._make(_lib.lib.cdm_model_from_file, c_path(path))

    @classmethod
    def from_store(cls, path: PathLike) -> Model:
        """The model a store file carries: the one cached in its ``Z_MODELCACHE``, else one rebuilt
        from its schema (names in lower case; optionality, defaults, delete rules and to-one
        inverses unknown; :attr:`warnings` says so). The store is only read, as a migration reads
        its source: no ``-wal`` or ``-shm`` appears beside it, a symbolic link is followed, the
        committed transactions in its ``-wal`` are read. Raises MigrationIOError for a missing
        file, SourceStoreError for one that is not a regular file (a FIFO, a folder) or is busy,
        SQLiteError for a file that is not an SQLite database, InvalidModelError for a damaged
        cache or a database that is not a Core Data store. Core Data counterpart: none (Core Data
        needs the model to open a store)."""
        return cls._make(_lib.lib.cdm_model_from_store, c_path(path, "the store path"))

    @property
    def warnings(self) -> list[str]:
        """What reading the model noticed; for a model :meth:`from_store` rebuilt from a store's
        schema, what the schema could not tell. Empty when nothing."""
        out = ctypes.c_void_p()
        check(_lib.lib.cdm_model_warnings_json(self._ptr, ctypes.byref(out)))
        return list(json.loads(_lib.take_string(out.value)))

    def to_json(self) -> str:
        """The model as model JSON (docs/model-format.md) with each entity's version hash (Apple's,
        base64), so a store written with this model is recognised by the JSON read back with
        :meth:`from_json`. What ``cdmigrate import`` writes for one model."""
        out = ctypes.c_void_p()
        check(_lib.lib.cdm_model_json(self._ptr, ctypes.byref(out)))
        return _lib.take_string(out.value)

    def is_compatible(self, store: StoreLike) -> bool:
        """Whether this model opens the store without a migration: the store's entity version hashes
        are exactly this model's (Core Data's ``isConfiguration(withName:compatibleWithStoreMetadata:)``).
        ``store`` is a path or a :class:`StoreMetadata`; a store with empty metadata is compatible
        with no model."""
        with StoreMetadata.reading(store) as metadata:
            return metadata.is_compatible(self)

    def version_differences(self, store: StoreLike) -> list[VersionDifference]:
        """The entities whose version hashes differ between the store and this model, in Core Data's
        name order, each with the store's and the model's hash (None where the entity is missing)."""
        with StoreMetadata.reading(store) as metadata:
            return metadata.version_differences(self)

    @property
    def version_identifier(self) -> str | None:
        """The model's version identifier (``versionIdentifier`` in its JSON), or None."""
        out = ctypes.c_char_p()
        check(_lib.lib.cdm_model_version_identifier(self._ptr, ctypes.byref(out)))
        return out.value.decode("utf-8") if out.value is not None else None

    @property
    def version_identifiers(self) -> set[str]:
        """Core Data's ``versionIdentifiers``: the version identifier as a set (empty without one),
        so a policy can test ``"2" in manager.source_model.version_identifiers``."""
        identifier = self.version_identifier
        return {identifier} if identifier is not None else set()

    @property
    def entity_version_hashes(self) -> dict[str, bytes]:
        """Each entity's version hash by entity name (Core Data's ``entityVersionHashesByName``):
        the bytes a store written with this model records in its ``NSStoreModelVersionHashes``."""
        return {name: version_hash(self._ptr, name) for name in self.entity_names}

    @property
    def entity_names(self) -> list[str]:
        """The entities' names, in the model's order."""
        return _names(_lib.lib.cdm_model_entity_count, _lib.lib.cdm_model_entity_at, self._ptr)

    def attribute_index(self, entity: str, attribute: str) -> int:
        """An attribute's index in its entity (inherited attributes first); NotFoundError if unknown."""
        index = ctypes.c_int()
        check(
            _lib.lib.cdm_model_attribute_index(
                self._ptr, c_text(entity, "the entity"), c_text(attribute, "the attribute"), ctypes.byref(index)
            )
        )
        return index.value

    def attribute_type(self, entity: str, attribute: str) -> AttributeType:
        """An attribute's type (Core Data's NSAttributeType); NotFoundError if unknown."""
        kind = ctypes.c_int()
        check(
            _lib.lib.cdm_model_attribute_type(
                self._ptr, c_text(entity, "the entity"), c_text(attribute, "the attribute"), ctypes.byref(kind)
            )
        )
        return AttributeType(kind.value)

    def entity(self, name: str) -> EntityDescription:
        """An entity's description: attributes and relationships (inherited ones included) with
        name, type, optional, to-many, destination entity; NotFoundError naming an unknown one."""
        c_text(name, "the entity")
        return describe(self._ptr, name)

    def __repr__(self) -> str:
        return "<Model closed>" if self.closed else f"<Model {', '.join(self.entity_names)}>"


class MappingModel(LongLivedHandle):
    """A mapping model: entity mappings with value expressions in Core Data's syntax.

    Used by one thread at a time. ``Migration`` copies what it needs, so a mapping may be closed
    once the migration is made.
    """

    _kind = "mapping model"
    _free = staticmethod(lambda p: _lib.lib.cdm_mapping_free(p))
    _error = staticmethod(lambda p: _lib.lib.cdm_mapping_error(p))

    @classmethod
    def from_json(cls, text: str) -> MappingModel:
        """Reads a mapping from JSON text: InvalidJSONError, InvalidMappingError, ExpressionSyntaxError
        (with ``offset``, an index into the expression or predicate string at ``path``, and
        ``byte_offset``, the C API's UTF-8 byte offset), EncodingError."""
        return _from_json(cls, _lib.lib.cdm_mapping_from_json, text, "the mapping JSON")

    @classmethod
    def from_file(cls, path: PathLike) -> MappingModel:
        """Reads a mapping from a JSON file, or a compiled mapping model (a path ending in ``.cdm`` or
        Xcode's ``.cdm_precompiled``: the keyed archive an app loads with NSMappingModel).
        MigrationIOError, InvalidMappingError naming the JSON path or archived object at fault."""
        return cls._make(_lib.lib.cdm_mapping_from_file, c_path(path))

    @classmethod
    def from_xcode(cls, path: PathLike, source_model: Model, destination_model: Model) -> MappingModel:
        """Reads an Xcode mapping model (the ``.xcmappingmodel`` folder or its ``xcmapping.xml``) and
        compiles it against the two models as Xcode's mapping model compiler does, then checks it
        against them (docs/mapping-format.md, "From Xcode"). A compiled ``.cdm`` is read and checked
        the same way. InvalidMappingError naming the object
        (id and line) of a malformed document or every problem of a mapping that does not fit,
        MigrationIOError when the file cannot be read. A custom policy is named by its class name
        without the module prefix; ``Migration.run(policies=...)`` finds it under either name."""
        return cls._make(_lib.lib.cdm_mapping_from_xcode_file, c_path(path), source_model._ptr, destination_model._ptr)

    @classmethod
    def infer(cls, source: Model, destination: Model) -> MappingModel:
        """The mapping model Core Data would infer between two models
        (``NSMappingModel.inferredMappingModel(forSourceModel:destinationModel:)``): entity mappings
        named as Core Data names them (``IEM_Copy_<Entity>``, ``IEM_Transform_<Entity>``,
        ``IEM_Add_<Entity>``, ``IEM_Remove_<Entity>``). InferredMappingModelError when the change
        cannot be inferred, each problem (in ``error.problems``) naming the entity, the property
        and the rule it breaks."""
        for model in (source, destination):
            if not isinstance(model, Model):
                raise TypeError(f"models must be cdmigrate.Model, not {type(model).__name__}")
        return cls._make(_lib.lib.cdm_mapping_infer, source._ptr, destination._ptr)

    def to_json(self) -> str:
        """The mapping model as mapping JSON (docs/mapping-format.md), every expression written out;
        :meth:`from_json` reads it back."""
        out = ctypes.c_void_p()
        check(_lib.lib.cdm_mapping_json(self._ptr, ctypes.byref(out)))
        return _lib.take_string(out.value)

    def validate(self, source: Model, destination: Model) -> None:
        """Checks the mapping against two models; InvalidMappingError with every problem."""
        check(_lib.lib.cdm_mapping_validate(self._ptr, source._ptr, destination._ptr))

    @property
    def entity_mapping_names(self) -> list[str]:
        """The entity mappings' names, in order."""
        return _names(_lib.lib.cdm_mapping_entity_mapping_count, _lib.lib.cdm_mapping_entity_mapping_at, self._ptr)

    def __repr__(self) -> str:
        return "<MappingModel closed>" if self.closed else f"<MappingModel {', '.join(self.entity_mapping_names)}>"
