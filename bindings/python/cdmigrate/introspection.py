"""Entities as policies see them (NSEntityDescription, NSAttributeDescription,
NSRelationshipDescription): names, types, optionality, to-many, destinations, inherited
properties included — read once per model and entity from the C API and cached."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import Any, Dict, List, Optional

from . import _lib
from .errors import check
from ._text import c_text
from .values import AttributeType

_lib_ = _lib.lib


@dataclass(frozen=True)
class AttributeDescription:
    name: str
    type: AttributeType
    optional: bool
    transient: bool
    index: int            #: position among the entity's attributes (inherited ones first)
    entity: str           #: the entity that declares it (a parent for an inherited one)


@dataclass(frozen=True)
class RelationshipDescription:
    name: str
    destination_entity: str
    inverse: Optional[str]
    to_many: bool
    ordered: bool
    optional: bool
    min_count: int        #: 0: no minimum
    max_count: int        #: 0: no maximum; 1 for a to-one
    index: int
    entity: str           #: the declaring entity


class EntityDescription:
    """An entity of a model: ``attributes`` and ``relationships`` by name (inherited ones
    included, inherited ones first), ``parent`` (the superentity's name or None)."""

    __slots__ = ("name", "parent", "attributes", "relationships")

    def __init__(self, name: str, parent: Optional[str], attributes: Dict[str, AttributeDescription],
                 relationships: Dict[str, RelationshipDescription]):
        self.name = name
        self.parent = parent
        self.attributes = attributes
        self.relationships = relationships

    @property
    def properties(self) -> List[str]:
        return list(self.attributes) + list(self.relationships)

    def __repr__(self) -> str:
        return f"<EntityDescription {self.name}: {', '.join(self.properties)}>"


def _text(value: Optional[bytes]) -> Optional[str]:
    return value.decode("utf-8") if value is not None else None


def describe(model: int, entity: str) -> EntityDescription:
    """Reads an entity of a cdm_model (NotFoundError naming it when the model lacks it)."""
    name = c_text(entity, "the entity")
    parent, count = ctypes.c_char_p(), ctypes.c_size_t()
    code = _lib_.cdm_model_entity_parent(model, name, ctypes.byref(parent))
    check(code)
    code = _lib_.cdm_model_attribute_count(model, name, ctypes.byref(count))
    check(code)
    attributes: Dict[str, AttributeDescription] = {}
    info = _lib.cdm_attribute_info()
    for i in range(count.value):
        code = _lib_.cdm_model_attribute_at(model, name, i, ctypes.byref(info))
        check(code)
        try:
            kind = AttributeType(info.type)
        except ValueError:  # a type this binding does not know yet
            kind = info.type  # type: ignore[assignment]
        attribute = AttributeDescription(_text(info.name) or "", kind, bool(info.is_optional), bool(info.is_transient),
                                         info.index, _text(info.entity) or entity)
        attributes[attribute.name] = attribute
    code = _lib_.cdm_model_relationship_count(model, name, ctypes.byref(count))
    check(code)
    relationships: Dict[str, RelationshipDescription] = {}
    rinfo = _lib.cdm_relationship_info()
    for i in range(count.value):
        code = _lib_.cdm_model_relationship_at(model, name, i, ctypes.byref(rinfo))
        check(code)
        relationship = RelationshipDescription(
            _text(rinfo.name) or "", _text(rinfo.destination_entity) or "", _text(rinfo.inverse), bool(rinfo.is_to_many),
            bool(rinfo.is_ordered), bool(rinfo.is_optional), rinfo.min_count, rinfo.max_count, rinfo.index,
            _text(rinfo.entity) or entity)
        relationships[relationship.name] = relationship
    return EntityDescription(entity, _text(parent.value), attributes, relationships)


class EntityCache:
    """Descriptions of one model's entities, read on first use. `model` is a cdm_model pointer
    (borrowed from a running migration) or a Model (whose pointer is checked at each read, so a
    closed Model gives MisuseError rather than a dangling pointer)."""

    __slots__ = ("model", "entities")

    def __init__(self, model: Any = None) -> None:
        self.model = model
        self.entities: Dict[str, EntityDescription] = {}

    def entity(self, name: str) -> EntityDescription:
        description = self.entities.get(name)
        if description is None:
            model = self.model
            if model is None or model == 0:
                from .errors import MisuseError
                raise MisuseError(f"no model to describe entity '{name}' with")
            pointer = model if isinstance(model, int) else model._ptr
            description = self.entities[name] = describe(pointer, name)
        return description
