"""Entities as policies see them (NSEntityDescription, NSAttributeDescription,
NSRelationshipDescription): names, types, optionality, to-many, destinations, inherited
properties included — read once per model and entity from the C API and cached."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any

from . import _lib
from ._text import c_text
from .errors import MisuseError, check
from .values import AttributeType

_lib_ = _lib.lib


@dataclass(frozen=True)
class AttributeDescription:
    name: str
    type: AttributeType
    optional: bool
    transient: bool
    index: int  #: position among the entity's attributes (inherited ones first)
    entity: str  #: the entity that declares it (a parent for an inherited one)


@dataclass(frozen=True)
class RelationshipDescription:
    name: str
    destination_entity: str
    inverse: str | None
    to_many: bool
    ordered: bool
    optional: bool
    min_count: int  #: 0: no minimum
    max_count: int  #: 0: no maximum; 1 for a to-one
    index: int
    entity: str  #: the declaring entity


class EntityDescription:
    """An entity of a model: ``attributes`` and ``relationships`` by name (inherited ones
    included, inherited ones first), ``parent`` (the superentity's name or None), ``version_hash``
    (Core Data's ``NSEntityDescription.versionHash``: the 32 bytes a store's
    ``NSStoreModelVersionHashes`` records for the entity)."""

    __slots__ = ("attributes", "name", "parent", "relationships", "version_hash")

    def __init__(
        self,
        name: str,
        parent: str | None,
        attributes: dict[str, AttributeDescription],
        relationships: dict[str, RelationshipDescription],
        version_hash: bytes = b"",
    ):
        self.name = name
        self.parent = parent
        self.attributes = attributes
        self.relationships = relationships
        self.version_hash = version_hash

    @property
    def properties(self) -> list[str]:
        return list(self.attributes) + list(self.relationships)

    def __repr__(self) -> str:
        return f"<EntityDescription {self.name}: {', '.join(self.properties)}>"


def _text(value: bytes | None) -> str | None:
    return value.decode("utf-8") if value is not None else None


def _attribute(info: _lib.cdm_attribute_info, entity: str) -> AttributeDescription:
    try:
        kind = AttributeType(info.type)
    except ValueError:  # a type this binding does not know yet
        kind = info.type
    return AttributeDescription(
        _text(info.name) or "",
        kind,
        bool(info.is_optional),
        bool(info.is_transient),
        info.index,
        _text(info.entity) or entity,
    )


def _relationship(info: _lib.cdm_relationship_info, entity: str) -> RelationshipDescription:
    return RelationshipDescription(
        _text(info.name) or "",
        _text(info.destination_entity) or "",
        _text(info.inverse),
        bool(info.is_to_many),
        bool(info.is_ordered),
        bool(info.is_optional),
        info.min_count,
        info.max_count,
        info.index,
        _text(info.entity) or entity,
    )


def _properties(model: int, name: bytes, count_function: Any, at_function: Any, info: Any, make: Any) -> dict[str, Any]:
    """An entity's attributes or relationships by name, in index order, each read into `info`."""
    count = ctypes.c_size_t()
    check(count_function(model, name, ctypes.byref(count)))
    found: dict[str, Any] = {}
    for i in range(count.value):
        check(at_function(model, name, i, ctypes.byref(info)))
        item = make(info)
        found[item.name] = item
    return found


def version_hash(model: int, entity: str) -> bytes:
    """An entity's version hash (``cdm_model_entity_version_hash``; NotFoundError naming an unknown entity)."""
    pointer = ctypes.POINTER(ctypes.c_uint8)()
    length = ctypes.c_size_t()
    check(
        _lib_.cdm_model_entity_version_hash(
            model, c_text(entity, "the entity"), ctypes.byref(pointer), ctypes.byref(length)
        )
    )
    return ctypes.string_at(pointer, length.value) if length.value else b""


def describe(model: int, entity: str) -> EntityDescription:
    """Reads an entity of a cdm_model (NotFoundError naming it when the model lacks it)."""
    name = c_text(entity, "the entity")
    parent = ctypes.c_char_p()
    check(_lib_.cdm_model_entity_parent(model, name, ctypes.byref(parent)))
    attributes = _properties(
        model,
        name,
        _lib_.cdm_model_attribute_count,
        _lib_.cdm_model_attribute_at,
        _lib.cdm_attribute_info(),
        lambda info: _attribute(info, entity),
    )
    relationships = _properties(
        model,
        name,
        _lib_.cdm_model_relationship_count,
        _lib_.cdm_model_relationship_at,
        _lib.cdm_relationship_info(),
        lambda info: _relationship(info, entity),
    )
    return EntityDescription(entity, _text(parent.value), attributes, relationships, version_hash(model, entity))


class EntityCache:
    """Descriptions of one model's entities, read on first use. `model` is a cdm_model pointer
    (borrowed from a running migration) or a Model (whose pointer is checked at each read, so a
    closed Model gives MisuseError rather than a dangling pointer)."""

    __slots__ = ("entities", "model")

    def __init__(self, model: Any = None) -> None:
        self.model = model
        self.entities: dict[str, EntityDescription] = {}

    def entity(self, name: str) -> EntityDescription:
        description = self.entities.get(name)
        if description is None:
            model = self.model
            if model is None or model == 0:
                raise MisuseError(f"no model to describe entity '{name}' with")
            pointer = model if isinstance(model, int) else model._ptr
            description = self.entities[name] = describe(pointer, name)
        return description
