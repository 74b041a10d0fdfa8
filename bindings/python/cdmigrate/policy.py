"""Custom policies (NSEntityMigrationPolicy) and what their hooks see: the migration manager
(NSMigrationManager) and the current entity mapping (NSEntityMapping)."""

from __future__ import annotations

import ctypes
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from . import _lib
from ._arrays import keys_from, paired_keys_arrays, rows_json
from ._borrowed_model import BorrowedModel
from ._fields import pack
from ._sorting import SortSpec, sort_descriptors
from ._text import c_optional_text, c_text
from .errors import NOTFOUND, MismatchError, MisuseError, check, last_error, located
from .instance import (
    DESTINATION,
    SOURCE,
    STORE_KINDS,
    Instance,
    Side,
    handle_array,
    instances_from_array,
    side_of,
    value_from_handle,
)
from .introspection import EntityDescription
from .model import Model
from .values import ObjectID

if TYPE_CHECKING:  # pragma: no cover - typing only: batch.py and _run.py import this module
    from ._run import Run
    from .batch import SourceBatch

_lib_ = _lib.lib


class PropertyMapping:
    """An attribute or relationship mapping (NSPropertyMapping): the destination property's name,
    its value expression (None for a mapping without one) and its ``user_info``.

    ``value_expression`` may be set from the entity mapping's own callbacks, as Core Data lets a
    policy set ``valueExpression`` (typically in ``begin_entity_mapping`` before the default
    runs): every instance evaluated afterwards gets the new expression, for the rest of the pass;
    the next pass and the next run see the declared one again. None means no value (the
    destination's default stays); an expression that does not parse raises ExpressionSyntaxError
    and changes nothing."""

    __slots__ = ("_expression", "_kind", "_mapping", "_user_info", "name")

    def __init__(self, name: str, value_expression: str | None, kind: int = 1, mapping: EntityMapping | None = None):
        self.name = name
        self._expression = value_expression
        self._kind = kind
        self._mapping = mapping
        self._user_info: dict[str, Any] | None = None

    @property
    def value_expression(self) -> str | None:
        """The value expression as written or as last set."""
        return self._expression

    @value_expression.setter
    def value_expression(self, text: str | None) -> None:
        if self._mapping is None:
            raise MisuseError(f"property mapping '{self.name}' belongs to no running entity mapping")
        ctx = self._mapping._context()
        _check_in(
            _lib_.cdm_context_set_property_mapping_expression(
                ctx, self._kind, c_text(self.name, "the property name"), c_optional_text(text, "the expression")
            ),
            text,
        )
        self._expression = text

    @property
    def user_info(self) -> dict[str, Any]:
        """The property mapping's userInfo, as a new dict (values typed as EntityMapping.user_info's)."""
        if self._user_info is None:
            if self._mapping is None:
                return {}
            ctx = self._mapping._context()
            name = c_text(self.name, "the property name")
            count = ctypes.c_size_t()
            check(_lib_.cdm_context_property_mapping_user_info_count(ctx, self._kind, name, ctypes.byref(count)))
            key, value = ctypes.c_char_p(), ctypes.c_void_p()
            info: dict[str, Any] = {}
            for i in range(count.value):
                check(
                    _lib_.cdm_context_property_mapping_user_info_value_at(
                        ctx, self._kind, name, i, ctypes.byref(key), ctypes.byref(value)
                    )
                )
                info[(key.value or b"").decode("utf-8")] = value_from_handle(value.value, None)
            self._user_info = info
        return dict(self._user_info)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, PropertyMapping):
            return NotImplemented
        return (self.name, self._expression) == (other.name, other._expression)

    def __hash__(self) -> int:
        return hash((self.name, self._expression))

    def __repr__(self) -> str:
        return f"PropertyMapping(name={self.name!r}, value_expression={self._expression!r})"


@dataclass(frozen=True)
class EntityMappingInfo:
    """One entity mapping of the mapping model running (Core Data: an element of the mapping
    model's ``entityMappings``): its name and its source and destination entity names (None where
    the mapping has none: an add mapping has no source, a remove mapping no destination)."""

    name: str
    source_entity_name: str | None
    destination_entity_name: str | None


@dataclass(frozen=True)
class MappingModelInfo:
    """The mapping model of the pass running (the manager's ``mappingModel``): its name (None when
    it has none) and its entity mappings, in run order (``entity_mappings``; their names alone in
    ``entity_mapping_names``)."""

    name: str | None
    entity_mapping_names: list[str]
    entity_mappings: list[EntityMappingInfo]


_ATTRIBUTE, _RELATIONSHIP = 1, 2  # enum cdm_property_kind
_PLAIN = frozenset((str, int, float, bool, type(None), bytes))  # values that are never relationships


class EntityMapping:
    """The entity mapping a hook runs for (NSEntityMapping): its name, source and destination
    entity names, pass (0-based mapping model of a multi-pass migration), ``user_info`` (str to
    the value as written: str, int, float, bool, datetime, bytes, Decimal, UUID), and its
    ``attribute_mappings`` and ``relationship_mappings`` (PropertyMapping, by destination property
    name, in the mapping's order).

    Everything is read from the library the first time it is asked for, which has to happen in
    a callback of this very mapping (MisuseError otherwise); afterwards it is kept."""

    __slots__ = (
        "_attributes",
        "_destination",
        "_manager",
        "_relationships",
        "_source",
        "_type",
        "_user_info",
        "name",
        "pass_index",
    )

    def __init__(self, name: str, pass_index: int, manager: MigrationManager):
        self.name = name
        self.pass_index = pass_index
        self._manager = manager
        self._source: str | None = None
        self._destination: str | None = None
        self._user_info: dict[str, Any] | None = None
        self._attributes: dict[str, PropertyMapping] | None = None
        self._relationships: dict[str, PropertyMapping] | None = None
        self._type: str | None = None

    def _context(self) -> int:
        manager = self._manager
        ctx = manager._context
        if manager._run.mapping_for(ctx) is not self:
            raise MisuseError(
                f"entity mapping '{self.name}' (pass {self.pass_index}) is read only from its own callbacks"
            )
        return ctx

    def _entity_name(self, slot: str, function: Any) -> str | None:
        """An entity name the context gives, read once into `slot` ("" kept for none)."""
        if getattr(self, slot) is None:
            self._context()
            setattr(self, slot, self._manager._context_string(function) or "")
        return getattr(self, slot) or None

    @property
    def source_entity_name(self) -> str | None:
        """The source entity's name (None for a mapping without one)."""
        return self._entity_name("_source", _lib_.cdm_context_source_entity_name)

    @property
    def destination_entity_name(self) -> str | None:
        """The destination entity's name (None for a mapping without one)."""
        return self._entity_name("_destination", _lib_.cdm_context_destination_entity_name)

    @property
    def user_info(self) -> dict[str, Any]:
        """The entity mapping's userInfo (``mapping.userInfo["modelVersion"]``), as a new dict. Each
        value keeps the type it was written as: str, int, float, bool, datetime (UTC), bytes, and
        Decimal, UUID or str (a URI) from an Xcode or compiled mapping model; ``2`` and ``"2"`` differ."""
        if self._user_info is None:
            ctx = self._context()
            count = ctypes.c_size_t()
            check(_lib_.cdm_context_mapping_user_info_count(ctx, ctypes.byref(count)))
            key, value = ctypes.c_char_p(), ctypes.c_void_p()
            info: dict[str, Any] = {}
            for i in range(count.value):
                check(_lib_.cdm_context_mapping_user_info_value_at(ctx, i, ctypes.byref(key), ctypes.byref(value)))
                info[(key.value or b"").decode("utf-8")] = value_from_handle(value.value, None)
            self._user_info = info
        return dict(self._user_info)

    def _properties(self, kind: int) -> dict[str, PropertyMapping]:
        ctx = self._context()
        count = ctypes.c_size_t()
        check(_lib_.cdm_context_property_mapping_count(ctx, kind, ctypes.byref(count)))
        name, expression = ctypes.c_char_p(), ctypes.c_char_p()
        result: dict[str, PropertyMapping] = {}
        for i in range(count.value):
            check(_lib_.cdm_context_property_mapping_at(ctx, kind, i, ctypes.byref(name), ctypes.byref(expression)))
            key = (name.value or b"").decode("utf-8")
            result[key] = PropertyMapping(
                key, expression.value.decode("utf-8") if expression.value is not None else None, kind, self
            )
        return result

    @property
    def attribute_mappings(self) -> dict[str, PropertyMapping]:
        """The attribute mappings by destination attribute; each ``value_expression`` is settable."""
        if self._attributes is None:
            self._attributes = self._properties(_ATTRIBUTE)
        return dict(self._attributes)

    @property
    def relationship_mappings(self) -> dict[str, PropertyMapping]:
        """The relationship mappings by destination relationship; each ``value_expression`` is settable."""
        if self._relationships is None:
            self._relationships = self._properties(_RELATIONSHIP)
        return dict(self._relationships)

    @property
    def mapping_type(self) -> str:
        """Core Data's ``mappingType``: "undefined", "custom", "add", "remove", "copy" or "transform"."""
        if self._type is None:
            self._context()
            self._type = self._manager._context_string(_lib_.cdm_context_entity_mapping_type) or "undefined"
        return self._type

    def __repr__(self) -> str:
        return f"<EntityMapping {self.name} pass {self.pass_index}>"


def _check_in(code: int, text: str | None) -> None:
    """As ``check``, with the error's offset an index into ``text``, the expression or predicate
    the caller gave (``byte_offset`` keeps the C API's)."""
    if code:
        error = last_error(code)
        raise located(error, text) if text is not None else error


def _check_sides(run: Run, source: Instance | None, destination: Instance) -> None:
    """TypeError for a destination instance given as the source or a source one as the
    destination: every method taking both takes the source first."""
    if source is not None and not isinstance(source, Instance):
        raise TypeError(f"source must be an Instance or None, not {type(source).__name__}")
    if not isinstance(destination, Instance):
        raise TypeError(f"destination must be an Instance, not {type(destination).__name__}")
    if source is not None and source._side is run.destination_side:
        raise TypeError(
            "the source argument is a destination instance: the source comes first, "
            "as in associate(source, destination)"
        )
    if destination._side is run.source_side:
        raise TypeError(
            "the destination argument is a source instance: the source comes first, "
            "as in associate(source, destination)"
        )


class MigrationManager:
    """The running migration as policies and host functions see it (NSMigrationManager).

    One per run: ``user_info`` is a dict shared by every policy and host function of the run
    (and of every pass), holding any Python objects, emptied when the run ends — successful or
    not — so what it holds is released then. The other methods work only inside a callback
    (MisuseError otherwise); instances they return stay usable while referenced, until the run ends.
    """

    def __init__(self, run: Run):
        self._run = run
        self._ctx: int | None = None
        self.user_info: dict[str, Any] = {}
        #: The batch of a single-row hook run over batches (row_batches.RowBatch), while it runs.
        self._rows: Any = None

    # -- plumbing ---------------------------------------------------------------------------
    @property
    def _context(self) -> int:
        ctx = self._ctx
        if ctx is None:
            raise MisuseError(
                "the migration manager is only usable inside a policy hook, host function or progress callback"
            )
        rows = self._rows
        if rows is not None:
            rows.reached()  # what the library is asked next sees what the batch has made
        return ctx

    def _context_string(self, function) -> str | None:
        out = ctypes.c_char_p()
        code = function(self._context, ctypes.byref(out))
        check(code)
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
        check(code)
        return out.value

    # -- instances ---------------------------------------------------------------------------
    def create(
        self,
        entity: str | None = None,
        values: dict[str, Any] | None = None,
        *,
        source: Instance | None = None,
        skip_unknown: bool = False,
    ) -> Instance:
        """A new destination instance of a (concrete) entity — the current mapping's destination
        entity when ``entity`` is None — with its default values
        (``NSEntityDescription.insertNewObject(forEntityName:into: manager.destinationContext)``).

        ``values`` (attribute values; relationships too, set one by one) are set in the same
        call, and with ``source`` the instance is associated with it for the current mapping:
        ``manager.create(values={...}, source=source)`` is the whole of a copying
        create_destination_instances in one C call. Unknown keys raise NotFoundError naming them
        unless ``skip_unknown``."""
        rows = self._rows
        if rows is not None:
            made = rows.create(entity, values, source, skip_unknown)
            if made is not None:
                return made
        ctx = self._context
        out = ctypes.c_void_p()
        name = c_optional_text(entity, "the entity")
        if values is None and source is None and name is not None:
            code = _lib_.cdm_context_create_instance(ctx, name, ctypes.byref(out))
            check(code)
            instance = Instance(out.value, self._run.destination_side)
            instance._entity = entity
            return instance
        attributes, relationships = [], []
        if values:
            for key, value in values.items():
                if type(value) in _PLAIN:
                    attributes.append((key, -1, value))
                elif isinstance(value, (Instance, list, tuple, set, frozenset, dict)):
                    relationships.append((key, value))  # set one by one (a dict: a transformable attribute's)
                else:
                    attributes.append((key, -1, value))
        array, count, keep = pack(attributes, "attribute")
        code = _lib_.cdm_context_create_instance_with_fields(
            ctx,
            name,
            array,
            count,
            1 if skip_unknown else 0,
            source._h if source is not None else None,
            ctypes.byref(out),
        )
        del keep
        check(code)
        instance = Instance(out.value, self._run.destination_side)
        if entity is not None:
            instance._entity = entity
        if relationships:
            instance.set_values(dict(relationships), skip_unknown=skip_unknown)
        return instance

    def apply_attribute_mappings(self, source: Instance | None, destination: Instance) -> None:
        """Evaluates the current entity mapping's attribute value expressions with ``$source`` and
        ``$destination`` and sets the results on ``destination``. Source first, as everywhere in
        the binding (``associate(source, destination)``); ``source`` may be None for a mapping
        without a source entity. TypeError when the two are the wrong way round."""
        # (While a single-row hook runs over a batch, the batch's own method stands in for this one.)
        _check_sides(self._run, source, destination)
        check(
            _lib_.cdm_context_apply_attribute_mappings(
                self._context, source._h if source is not None else None, destination._h
            )
        )

    def associate(self, source: Instance, destination: Instance) -> None:
        """Records that ``destination`` was made from ``source`` by the current entity mapping
        (``associateSourceInstance:withDestinationInstance:forEntityMapping:``). TypeError when
        the two are the wrong way round."""
        # (While a single-row hook runs over a batch, the batch's own method stands in for this one.)
        _check_sides(self._run, source, destination)
        check(_lib_.cdm_context_associate(self._context, source._h, destination._h))

    def _associated(self, function: Any, entity_mapping: str, given: Iterable[Instance], side: Any) -> list[Instance]:
        """The instances the named entity mapping of the current pass associated with ``given``, by
        ``function`` (cdm_context_destination_instances or cdm_context_source_instances)."""
        if isinstance(given, Instance):
            given = [given]
        array, count = handle_array(given)
        out, found = ctypes.POINTER(ctypes.c_void_p)(), ctypes.c_size_t()
        check(
            function(
                self._context,
                c_text(entity_mapping, "the entity mapping name"),
                array,
                count,
                ctypes.byref(out),
                ctypes.byref(found),
            )
        )
        return instances_from_array(out, found.value, side)

    def destination_instances(self, entity_mapping: str, sources: Iterable[Instance]) -> list[Instance]:
        """``destinationInstancesForEntityMappingNamed:sourceInstances:`` — what the named entity
        mapping of the current pass made from ``sources``."""
        return self._associated(
            _lib_.cdm_context_destination_instances, entity_mapping, sources, self._run.destination_side
        )

    def source_instances(self, entity_mapping: str, destinations: Iterable[Instance]) -> list[Instance]:
        """``sourceInstancesForEntityMappingNamed:destinationInstances:``, the other way round."""
        return self._associated(_lib_.cdm_context_source_instances, entity_mapping, destinations, self._run.source_side)

    def evaluate(self, expression: str, source: Instance | None = None, destination: Instance | None = None) -> Any:
        """Evaluates a value expression (``"FUNCTION($source.name, 'uppercaseString')"``) with
        ``$source``/``$destination`` bound. ExpressionSyntaxError carries the offset (an index into
        ``expression``; ``byte_offset`` is the C API's UTF-8 byte offset)."""
        out = ctypes.c_void_p()
        code = _lib_.cdm_context_evaluate(
            self._context,
            c_text(expression, "the expression"),
            source._h if source is not None else None,
            destination._h if destination is not None else None,
            ctypes.byref(out),
        )
        _check_in(code, expression)
        return value_from_handle(out.value, None, self._run.sides, self)

    # -- querying the stores (manager.destinationContext / sourceContext) ------------------
    def _query(self, function, entity: str, predicate: str | None, arguments, variables, include_subentities: bool):
        items = [(None, i, value) for i, value in enumerate(arguments)]
        items += [(name, -1, value) for name, value in (variables or {}).items()]
        array, count, keep = pack(items, "predicate argument")
        return (
            self._context,
            c_text(entity, "the entity"),
            c_optional_text(predicate, "the predicate"),
            array,
            count,
            0 if include_subentities else 1,
        ), keep

    def _fetch(
        self,
        function,
        side: Side,
        entity,
        predicate,
        arguments,
        variables,
        include_subentities,
        limit,
        sort: Iterable[SortSpec] | None = None,
    ) -> list[Instance]:
        if limit is not None and limit < 0:
            raise ValueError(f"limit must not be negative ({limit})")
        descriptors, sort_count, sort_keep = sort_descriptors(sort)
        call, keep = self._query(function, entity, predicate, arguments, variables, include_subentities)
        out = ctypes.c_void_p()
        if sort_count:
            ctx, *rest = call
            code = _lib_.cdm_context_fetch(
                ctx,
                DESTINATION if side is self._run.destination_side else SOURCE,
                *rest[:4],
                descriptors,
                sort_count,
                rest[4],
                limit or 0,
                ctypes.byref(out),
            )
        else:
            code = function(*call, limit or 0, ctypes.byref(out))
        del keep, sort_keep
        _check_in(code, predicate)
        array, count = ctypes.POINTER(ctypes.c_void_p)(), ctypes.c_size_t()
        code = _lib_.cdm_list_objects(out.value, ctypes.byref(array), ctypes.byref(count))
        check(code)
        found = instances_from_array(array, count.value, side)
        _lib_.cdm_object_release(out.value)  # the list itself goes now: a hook fetching per row keeps memory flat
        return found

    def _count(self, function, entity, predicate, arguments, variables, include_subentities) -> int:
        call, keep = self._query(function, entity, predicate, arguments, variables, include_subentities)
        out = ctypes.c_size_t()
        code = function(*call, ctypes.byref(out))
        del keep
        _check_in(code, predicate)
        return out.value

    def fetch_destination(
        self,
        entity: str,
        predicate: str | None = None,
        *arguments: Any,
        variables: dict[str, Any] | None = None,
        include_subentities: bool = True,
        limit: int | None = None,
        sort: Iterable[SortSpec] | None = None,
    ) -> list[Instance]:
        """Destination instances of ``entity`` (and its subentities unless
        ``include_subentities=False``) matching an NSPredicate string, with ``arguments`` for its
        ``%@``, ``%K`` (a key path), ``%d``/``%i`` and ``%f`` in order and ``variables`` for its
        ``$NAME``s (``manager.destinationContext`` fetch). Every instance made so far in this
        migration is seen — in any pass, also those not yet written — and a compared column is
        indexed, so a lookup per source row stays fast.

        ``sort`` orders the result in SQL (NSSortDescriptor with ``compare:``):
        ``[("name", True), ("date", False)]``, a plain key meaning ascending; strings sort by
        code point, case-sensitively, null first ascending; ties and a fetch without ``sort``
        come in Z_PK order (the order instances were made in).

        >>> manager.fetch_destination("Genre", "name == %@", "Fiction", limit=1)
        >>> manager.fetch_destination("Book", "%K > %d", "year", 1990, sort=[("year", False), "title"])

        Arguments may be None, bool, int, float, str, Decimal, datetime, bytes, UUID or an
        Instance. Errors name the entity and predicate: NotFoundError (unknown entity),
        ExpressionSyntaxError (with ``offset``), ExpressionEvaluationError/InvalidArgumentError."""
        # (While a single-row hook runs over a batch, the batch's own method stands in for this one.)
        return self._fetch(
            _lib_.cdm_context_fetch_destination,
            self._run.destination_side,
            entity,
            predicate,
            arguments,
            variables,
            include_subentities,
            limit,
            sort,
        )

    def count_destination(
        self,
        entity: str,
        predicate: str | None = None,
        *arguments: Any,
        variables: dict[str, Any] | None = None,
        include_subentities: bool = True,
    ) -> int:
        """How many destination instances fetch_destination would give."""
        return self._count(
            _lib_.cdm_context_count_destination, entity, predicate, arguments, variables, include_subentities
        )

    def fetch_source(
        self,
        entity: str,
        predicate: str | None = None,
        *arguments: Any,
        variables: dict[str, Any] | None = None,
        include_subentities: bool = True,
        limit: int | None = None,
        sort: Iterable[SortSpec] | None = None,
    ) -> list[Instance]:
        """Source instances of any entity matching a predicate (``manager.sourceContext`` fetch),
        with ``arguments``, ``variables`` and ``sort`` as for fetch_destination."""
        return self._fetch(
            _lib_.cdm_context_fetch_source,
            self._run.source_side,
            entity,
            predicate,
            arguments,
            variables,
            include_subentities,
            limit,
            sort,
        )

    def count_source(
        self,
        entity: str,
        predicate: str | None = None,
        *arguments: Any,
        variables: dict[str, Any] | None = None,
        include_subentities: bool = True,
    ) -> int:
        return self._count(_lib_.cdm_context_count_source, entity, predicate, arguments, variables, include_subentities)

    # -- identities -----------------------------------------------------------------------------
    def _found(self, code: int, out: ctypes.c_void_p) -> Instance | None:
        if code == NOTFOUND:
            return None
        check(code)
        return Instance(out.value, side_of(out.value, self._run.sides))

    def instance_for_uri(self, uri: str | ObjectID) -> Instance | None:
        """The source or destination instance an object ID URI names (``existingObject(with:)``),
        including destination instances not yet written; None when there is no such row.
        InvalidArgumentError for text that is not such a URI or names another store. An ObjectID
        is accepted too."""
        if isinstance(uri, ObjectID):
            return self.instance_with_id(uri)
        if not isinstance(uri, str):
            raise TypeError(f"an object ID URI is a str, not {type(uri).__name__}")
        out = ctypes.c_void_p()
        return self._found(
            _lib_.cdm_context_instance_for_uri(self._context, c_text(uri, "the URI"), ctypes.byref(out)), out
        )

    def instance_with_id(self, object_id: ObjectID) -> Instance | None:
        """The instance an ObjectID (``instance.object_id``) names, without text; None when there
        is no such row."""
        if not isinstance(object_id, ObjectID):
            raise TypeError(f"expected an ObjectID, not {type(object_id).__name__}")
        store = STORE_KINDS.get(object_id.store)
        if store not in (SOURCE, DESTINATION):
            raise MismatchError(f"{object_id} is not an instance of this migration's stores")
        out = ctypes.c_void_p()
        return self._found(
            _lib_.cdm_context_instance_with_id(
                self._context, store, c_text(object_id.entity, "the entity"), object_id.primary_key, ctypes.byref(out)
            ),
            out,
        )

    # -- introspection ------------------------------------------------------------------------
    def _model(self, kind: int) -> Model:
        out = ctypes.c_void_p()
        check(_lib_.cdm_context_model(self._context, kind, ctypes.byref(out)))
        return BorrowedModel(out.value)

    @property
    def source_model(self) -> Model:
        """The model of the store being read (Core Data: ``sourceModel``), lent by the migration:
        ``version_identifiers``, ``entity_names``, ``entity(name)`` (Core Data's ``entitiesByName``)."""
        return self._model(1)

    @property
    def destination_model(self) -> Model:
        """The model of the store being written (Core Data: ``destinationModel``), lent as ``source_model``."""
        return self._model(2)

    @property
    def mapping_model(self) -> MappingModelInfo:
        """The mapping model of the pass running (Core Data: ``mappingModel``): its name and its
        entity mappings (names, source and destination entity names)."""
        ctx = self._context
        name = self._context_string(_lib_.cdm_context_mapping_model_name)
        count = ctypes.c_size_t()
        check(_lib_.cdm_context_entity_mapping_count(ctx, ctypes.byref(count)))
        out, source, destination = ctypes.c_char_p(), ctypes.c_char_p(), ctypes.c_char_p()
        mappings = []
        for i in range(count.value):
            check(_lib_.cdm_context_entity_mapping_at(ctx, i, ctypes.byref(out)))
            check(_lib_.cdm_context_entity_mapping_entities_at(ctx, i, ctypes.byref(source), ctypes.byref(destination)))
            mappings.append(
                EntityMappingInfo(
                    (out.value or b"").decode("utf-8"),
                    source.value.decode("utf-8") if source.value is not None else None,
                    destination.value.decode("utf-8") if destination.value is not None else None,
                )
            )
        return MappingModelInfo(name, [m.name for m in mappings], mappings)

    def source_entity(self, name: str) -> EntityDescription:
        """An entity of the source model (attributes and relationships, inherited ones included)."""
        self._context  # noqa: B018 - only inside a callback
        return self._run.source_side.model.entity(name)

    def destination_entity(self, name: str) -> EntityDescription:
        """An entity of the destination model."""
        self._context  # noqa: B018
        return self._run.destination_side.model.entity(name)

    # -- bulk calls (cdmigrate's extension beyond Core Data, for batch hooks) ------------------
    def create_many(self, entity: str, rows: Sequence[dict[str, Any]]) -> list[int]:
        """Makes one destination instance of ``entity`` per dict of attribute values in ``rows``
        (str, int, float, bool, None, datetime, bytes, Decimal, UUID), in one call; returns their
        primary keys in order. Nothing is made when a row is refused (NotFoundError for an unknown
        entity or attribute, InvalidArgumentError for a value that does not suit its attribute)."""
        pointer = ctypes.POINTER(ctypes.c_int64)()
        count = ctypes.c_size_t()
        check(
            _lib_.cdm_context_create_instances_json(
                self._context,
                c_text(entity, "the entity name"),
                rows_json(rows),
                ctypes.byref(pointer),
                ctypes.byref(count),
            )
        )
        return keys_from(pointer, count.value)

    def relate_many(self, entity: str, relationship: str, owners: Sequence[int], targets: Sequence[int]) -> None:
        """Relates destination instances pairwise, by primary key, in one call: the instance of
        ``entity`` ``owners[i]`` gets ``targets[i]`` added to its to-many ``relationship`` (or set
        as its to-one); the inverse follows. NotFoundError for an unknown entity or relationship,
        InvalidArgumentError for a key no instance has."""
        owner_array, target_array, count = paired_keys_arrays(owners, targets, ("owners", "targets"), "relate_many")
        check(
            _lib_.cdm_context_relate(
                self._context,
                c_text(entity, "the entity name"),
                c_text(relationship, "the relationship name"),
                owner_array,
                target_array,
                count,
            )
        )

    # -- Core Data's default hooks, for `super` ----------------------------------------------
    def default_create_destination_instances(self, source: Instance) -> Instance | None:
        """Core Data's createDestinationInstancesForSourceInstance: make an instance of the
        mapping's destination entity, apply the attribute mappings, associate it with ``source``.
        Returns the instance (None for a mapping without a destination entity)."""
        out = ctypes.c_void_p()
        code = _lib_.cdm_context_default_create_destination_instances(self._context, source._h, ctypes.byref(out))
        check(code)
        return Instance(out.value, self._run.destination_side) if out.value else None

    def default_create_relationships(self, destination: Instance) -> None:
        """Core Data's createRelationshipsForDestinationInstance: apply the mapping's relationship
        mappings to ``destination``."""
        code = _lib_.cdm_context_default_create_relationships(self._context, destination._h)
        check(code)


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

    cdmigrate's extension beyond Core Data: a class that defines
    ``create_destination_instances_batch`` gets the source rows in batches instead of one
    ``create_destination_instances`` call per row (see ``SourceBatch``) — the fast way to write
    a policy for large stores.

    A class that defines ``create_destination_instances`` (and not the batch hook) is still
    called once per source instance, in Core Data's order, but the binding runs those calls over
    batches of source rows and writes what they make per batch (see ``row_batches``): the same
    destination, far fewer crossings into the library. ``row_batches = False`` on the class makes
    the engine call the hook row by row instead.
    """

    #: Run the single-row create_destination_instances over batches of source rows (row_batches).
    row_batches = True

    def begin_entity_mapping(self, mapping: EntityMapping, manager: MigrationManager) -> None:
        """beginEntityMapping:manager:error:"""

    def create_destination_instances(
        self, source: Instance, mapping: EntityMapping, manager: MigrationManager
    ) -> Instance | None:
        """createDestinationInstancesForSourceInstance:entityMapping:manager:error:

        The default makes an instance of the mapping's destination entity, applies the mapping's
        attribute mappings and associates it with ``source``; it returns that instance (None for a
        mapping without a destination entity), so an override can call ``super()`` and adjust it.
        """
        return manager.default_create_destination_instances(source)

    def create_destination_instances_batch(
        self, batch: SourceBatch, mapping: EntityMapping, manager: MigrationManager
    ) -> None:
        """cdmigrate's extension beyond Core Data: when a policy class defines this, stage 1 calls
        it for the mapping's source rows in batches (``SourceBatch``), and never
        ``create_destination_instances``. Work on whole lists: ``batch.keys``,
        ``batch.column(name)``, ``batch.apply_default()``, ``manager.create_many``,
        ``manager.relate_many``, ``batch.associate``.

        The default applies Core Data's default to the whole batch.
        """
        batch.apply_default()

    def end_instance_creation(self, mapping: EntityMapping, manager: MigrationManager) -> None:
        """endInstanceCreationForEntityMapping:manager:error:"""

    def create_relationships(self, destination: Instance, mapping: EntityMapping, manager: MigrationManager) -> None:
        """createRelationshipsForDestinationInstance:entityMapping:manager:error:

        The default applies the mapping's relationship mappings; an override can call it as
        ``super()`` and then adjust the result.
        """
        manager.default_create_relationships(destination)

    def end_relationship_creation(self, mapping: EntityMapping, manager: MigrationManager) -> None:
        """endRelationshipCreationForEntityMapping:manager:error:"""

    def perform_custom_validation(self, mapping: EntityMapping, manager: MigrationManager) -> None:
        """performCustomValidationForEntityMapping:manager:error:"""

    def end_entity_mapping(self, mapping: EntityMapping, manager: MigrationManager) -> None:
        """endEntityMapping:manager:error:"""


HOOK_NAMES = (
    "begin_entity_mapping",
    "create_destination_instances",
    "end_instance_creation",
    "create_relationships",
    "end_relationship_creation",
    "perform_custom_validation",
    "end_entity_mapping",
    "create_destination_instances_batch",
)
