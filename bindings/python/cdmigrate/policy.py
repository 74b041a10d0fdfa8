"""Custom policies (NSEntityMigrationPolicy) and what their hooks see: the migration manager
(NSMigrationManager) and the current entity mapping (NSEntityMapping)."""

from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any, Dict, Iterable, List, Optional

from . import _lib
from .errors import FeatureUnavailableError, MisuseError, last_error
from .instance import Instance, Side, handle_array, instances_from_array, value_from_handle

if TYPE_CHECKING:  # pragma: no cover
    from .migration import _Run

_lib_ = _lib.lib


class EntityMapping:
    """The entity mapping a hook runs for: its name, source and destination entity names and pass
    (0-based mapping model of a multi-pass migration)."""

    __slots__ = ("name", "pass_index", "_source", "_destination", "_manager")

    def __init__(self, name: str, pass_index: int, manager: "MigrationManager"):
        self.name = name
        self.pass_index = pass_index
        self._manager = manager
        self._source: Optional[str] = None
        self._destination: Optional[str] = None

    @property
    def source_entity_name(self) -> Optional[str]:
        """The source entity's name (None for a mapping without one)."""
        if self._source is None:
            self._source = self._manager._context_string(_lib_.cdm_context_source_entity_name) or ""
        return self._source or None

    @property
    def destination_entity_name(self) -> Optional[str]:
        """The destination entity's name (None for a mapping without one)."""
        if self._destination is None:
            self._destination = self._manager._context_string(_lib_.cdm_context_destination_entity_name) or ""
        return self._destination or None

    @property
    def user_info(self) -> Dict[str, str]:
        """The entity mapping's userInfo (needs a later C API: FeatureUnavailableError for now)."""
        raise FeatureUnavailableError("the C API has no accessor for an entity mapping's userInfo yet (see NEEDS_FROM_C_API.md)")

    def __repr__(self) -> str:
        return f"<EntityMapping {self.name} pass {self.pass_index}>"


class MigrationManager:
    """The running migration as policies and host functions see it (NSMigrationManager).

    One per run: ``user_info`` is a dict shared by every policy and host function of the run,
    holding any Python objects, emptied when the run ends. The other methods work only inside a
    callback (MisuseError otherwise); instances they return are valid during that callback.
    """

    #: Whether fetch_destination/count_destination/fetch_source/count_source/instance_for_uri work
    #: with the loaded library (they need C functions of issue 10; see NEEDS_FROM_C_API.md).
    fetch_available = False

    def __init__(self, run: "_Run"):
        self._run = run
        self._ctx: Optional[int] = None
        self.user_info: Dict[str, Any] = {}

    # -- plumbing ---------------------------------------------------------------------------
    @property
    def _context(self) -> int:
        ctx = self._ctx
        if ctx is None:
            raise MisuseError("the migration manager is only usable inside a policy hook, host function or progress callback")
        return ctx

    def _context_string(self, function) -> Optional[str]:
        out = ctypes.c_char_p()
        code = function(self._context, ctypes.byref(out))
        if code:
            raise last_error(code)
        return out.value.decode("utf-8") if out.value is not None else None

    @property
    def source_side(self) -> Side:
        return self._run.source_side

    @property
    def destination_side(self) -> Side:
        return self._run.destination_side

    # -- the current mapping ----------------------------------------------------------------
    @property
    def current_entity_mapping(self) -> EntityMapping:
        """The entity mapping of the running callback."""
        return self._run.mapping_for(self._context)

    @property
    def current_pass(self) -> int:
        out = ctypes.c_int()
        code = _lib_.cdm_context_pass(self._context, ctypes.byref(out))
        if code:
            raise last_error(code)
        return out.value

    # -- instances ---------------------------------------------------------------------------
    def create(self, entity: str) -> Instance:
        """A new destination instance of a (concrete) entity, with its default values
        (``NSEntityDescription.insertNewObject(forEntityName:into: manager.destinationContext)``)."""
        out = ctypes.c_void_p()
        code = _lib_.cdm_context_create_instance(self._context, entity.encode("utf-8", "surrogatepass"), ctypes.byref(out))
        if code:
            raise last_error(code)
        instance = Instance(out.value, self._run.destination_side)
        instance._entity = entity
        return instance

    def apply_attribute_mappings(self, destination: Instance, source: Optional[Instance] = None) -> None:
        """Evaluates the current entity mapping's attribute value expressions with ``$source`` and
        ``$destination`` and sets the results on ``destination``."""
        code = _lib_.cdm_context_apply_attribute_mappings(self._context, source._h if source is not None else None, destination._h)
        if code:
            raise last_error(code)

    def associate(self, source: Instance, destination: Instance) -> None:
        """Records that ``destination`` was made from ``source`` by the current entity mapping
        (``associateSourceInstance:withDestinationInstance:forEntityMapping:``)."""
        code = _lib_.cdm_context_associate(self._context, source._h, destination._h)
        if code:
            raise last_error(code)

    def destination_instances(self, entity_mapping: str, sources: Iterable[Instance]) -> List[Instance]:
        """``destinationInstancesForEntityMappingNamed:sourceInstances:`` — what the named entity
        mapping of the current pass made from ``sources``."""
        if isinstance(sources, Instance):
            sources = [sources]
        array, count = handle_array(sources)
        out, found = ctypes.POINTER(ctypes.c_void_p)(), ctypes.c_size_t()
        code = _lib_.cdm_context_destination_instances(self._context, entity_mapping.encode("utf-8", "surrogatepass"), array, count,
                                                      ctypes.byref(out), ctypes.byref(found))
        if code:
            raise last_error(code)
        return instances_from_array(out, found.value, self._run.destination_side)

    def source_instances(self, entity_mapping: str, destinations: Iterable[Instance]) -> List[Instance]:
        """``sourceInstancesForEntityMappingNamed:destinationInstances:``, the other way round."""
        if isinstance(destinations, Instance):
            destinations = [destinations]
        array, count = handle_array(destinations)
        out, found = ctypes.POINTER(ctypes.c_void_p)(), ctypes.c_size_t()
        code = _lib_.cdm_context_source_instances(self._context, entity_mapping.encode("utf-8", "surrogatepass"), array, count,
                                                 ctypes.byref(out), ctypes.byref(found))
        if code:
            raise last_error(code)
        return instances_from_array(out, found.value, self._run.source_side)

    def evaluate(self, expression: str, source: Optional[Instance] = None, destination: Optional[Instance] = None) -> Any:
        """Evaluates a value expression (``"FUNCTION($source.name, 'uppercaseString')"``) with
        ``$source``/``$destination`` bound. ExpressionSyntaxError carries the offset."""
        out = ctypes.c_void_p()
        code = _lib_.cdm_context_evaluate(self._context, expression.encode("utf-8", "surrogatepass"),
                                          source._h if source is not None else None,
                                          destination._h if destination is not None else None, ctypes.byref(out))
        if code:
            raise last_error(code)
        return value_from_handle(out.value, None)

    # -- issue 10: queries, identities (need a later C API) ----------------------------------------
    def fetch_destination(self, entity: str, predicate: Optional[str] = None, *arguments: Any,
                          include_subentities: bool = True, limit: Optional[int] = None) -> List[Instance]:
        """Destination instances of an entity matching an NSPredicate string with ``%@`` arguments
        (``manager.destinationContext.fetch``), including those made earlier in this migration."""
        raise FeatureUnavailableError("the C API cannot fetch destination instances yet (see NEEDS_FROM_C_API.md)")

    def count_destination(self, entity: str, predicate: Optional[str] = None, *arguments: Any,
                          include_subentities: bool = True) -> int:
        raise FeatureUnavailableError("the C API cannot count destination instances yet (see NEEDS_FROM_C_API.md)")

    def fetch_source(self, entity: str, predicate: Optional[str] = None, *arguments: Any,
                     include_subentities: bool = True, limit: Optional[int] = None) -> List[Instance]:
        raise FeatureUnavailableError("the C API cannot fetch source instances yet (see NEEDS_FROM_C_API.md)")

    def count_source(self, entity: str, predicate: Optional[str] = None, *arguments: Any,
                     include_subentities: bool = True) -> int:
        raise FeatureUnavailableError("the C API cannot count source instances yet (see NEEDS_FROM_C_API.md)")

    def instance_for_uri(self, uri: str) -> Optional[Instance]:
        """The source or destination instance an object ID URI names (``existingObject(with:)``)."""
        raise FeatureUnavailableError("the C API cannot turn an object ID URI back into an instance yet (see NEEDS_FROM_C_API.md)")


class EntityMigrationPolicy:
    """Base class of custom policies (NSEntityMigrationPolicy). Override the hooks you need; each
    runs in Core Data's order for every entity mapping whose ``policy`` names the class it is
    registered under:

    stage 1, per mapping: ``begin_entity_mapping``, ``create_destination_instances`` per source
    instance, ``end_instance_creation``; stage 2, per mapping: ``create_relationships`` per
    destination instance, ``end_relationship_creation``; stage 3, per mapping:
    ``perform_custom_validation``, ``end_entity_mapping``.

    One policy object is made per entity mapping and pass, so state kept in ``self`` lasts from
    ``begin_entity_mapping`` to ``end_entity_mapping``; state shared by mappings belongs in
    ``manager.user_info``. Raising any exception aborts the migration: nothing is left at the
    destination, the source is untouched, and the exception is re-raised by ``Migration.run``.

    Hooks that are not overridden cost nothing: the engine runs its own default without calling
    into Python.
    """

    def begin_entity_mapping(self, mapping: EntityMapping, manager: MigrationManager) -> None:
        """beginEntityMapping:manager:error:"""

    def create_destination_instances(self, source: Instance, mapping: EntityMapping, manager: MigrationManager) -> Optional[Instance]:
        """createDestinationInstancesForSourceInstance:entityMapping:manager:error:

        The default makes an instance of the mapping's destination entity, applies the mapping's
        attribute mappings and associates it with ``source``; it returns that instance (None for a
        mapping without a destination entity), so an override can call ``super()`` and adjust it.
        """
        entity = mapping.destination_entity_name
        if entity is None:
            return None
        destination = manager.create(entity)
        manager.apply_attribute_mappings(destination, source)
        manager.associate(source, destination)
        return destination

    def end_instance_creation(self, mapping: EntityMapping, manager: MigrationManager) -> None:
        """endInstanceCreationForEntityMapping:manager:error:"""

    def create_relationships(self, destination: Instance, mapping: EntityMapping, manager: MigrationManager) -> None:
        """createRelationshipsForDestinationInstance:entityMapping:manager:error:

        The engine's default applies the mapping's relationship mappings; an override cannot call
        it as ``super()`` until the C API offers it (FeatureUnavailableError).
        """
        raise FeatureUnavailableError("the C API cannot run the default create_relationships from a hook yet (see NEEDS_FROM_C_API.md)")

    def end_relationship_creation(self, mapping: EntityMapping, manager: MigrationManager) -> None:
        """endRelationshipCreationForEntityMapping:manager:error:"""

    def perform_custom_validation(self, mapping: EntityMapping, manager: MigrationManager) -> None:
        """performCustomValidationForEntityMapping:manager:error:"""

    def end_entity_mapping(self, mapping: EntityMapping, manager: MigrationManager) -> None:
        """endEntityMapping:manager:error:"""


HOOK_NAMES = ("begin_entity_mapping", "create_destination_instances", "end_instance_creation", "create_relationships",
              "end_relationship_creation", "perform_custom_validation", "end_entity_mapping")
