"""What a migration tells its caller: ``Progress`` while it runs, and once it has run its
``MigrationReport`` — entity mappings, destination counts, warnings and the loss report (``Loss``;
docs/loss-report.md). A chain's report (``StagedMigrationReport``) is made of these (chain.py)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._document import NOT_IN_DOCUMENT, Document


@dataclass(frozen=True)
class Progress:
    """Where a migration stands, as handed to the progress callback."""

    fraction: float  #: 0…1 over all stages and passes
    stage: int  #: 1 create destination instances, 2 create relationships, 3 validate
    pass_index: int  #: 0-based mapping model of a multi-pass migration
    entity_mapping: str  #: the current entity mapping ("" at the very end)
    processed: int  #: instances handled in this step so far
    total: int  #: instances in this step (0 when not known)
    run_processed: int = 0  #: rows handled in the whole run so far (every stage, pass and chain step)
    #: rows of the whole run as far as known (0: none known yet); may grow
    run_total: int = 0
    step: int = 0  #: 0-based step of a chain (0 outside one)
    step_count: int = 1  #: steps of the chain (1 outside one)

    @property
    def run_fraction(self) -> float | None:
        """``run_processed / run_total`` (what a time-remaining estimate uses), None while no total is known."""
        return min(1.0, self.run_processed / self.run_total) if self.run_total > 0 else None


@dataclass(frozen=True)
class EntityMappingReport(Document):
    """What one entity mapping did in one pass."""

    pass_index: int  #: 0-based mapping model of a multi-pass migration
    entity_mapping: str  #: the entity mapping's name
    source_instances: int  #: source instances it took
    associations: int  #: source–destination associations it recorded


@dataclass(frozen=True)
class Loss(Document):
    """One line of the loss report: what a migration did not carry into the destination
    (docs/loss-report.md; the C API's and ``cdmigrate --json``'s ``losses``, with the binding's
    snake_case names: ``entityMapping`` is ``entity_mapping``, ``pass`` is ``pass_index``)."""

    kind: str  #: attribute, instances, relationship, toMany, nilled or externalData
    entity: str  #: the source entity
    count: int  #: values, instances or links (see docs/loss-report.md)
    intended: bool  #: whether the mapping declares it (cdmigrate.intendedLosses, …)
    property: str | None = None  #: the source property (None for instances)
    entity_mapping: str | None = None  #: the entity mapping that left it behind
    pass_index: int | None = None  #: that mapping's pass
    policy: str | None = None  #: that mapping's custom policy, whose code may carry it

    @staticmethod
    def _from(raw: dict[str, Any]) -> Loss:
        return Loss(
            str(raw.get("kind", "")),
            str(raw.get("entity", "")),
            int(raw.get("count", 0)),
            bool(raw.get("intended", False)),
            raw.get("property"),
            raw.get("entityMapping"),
            raw.get("pass"),
            raw.get("policy"),
        )


@dataclass
class MigrationReport(Document):
    """What a successful run did (Core Data's migration manager has no such report). ``to_dict()``
    and ``to_json()`` give it with these attribute names as keys."""

    mappings: list[EntityMappingReport] = field(default_factory=list)  #: per pass and entity mapping, in order
    destination_counts: dict[str, int] = field(default_factory=dict)  #: instances per destination entity
    untaken: dict[str, int] = field(default_factory=dict)  #: source instances no entity mapping took, per entity
    warnings: list[str] = field(default_factory=list)
    #: External binary data files source rows named but the source's ``.<name>_SUPPORT/_EXTERNAL_DATA``
    #: folder lacked: their values were migrated as None (the warnings name them).
    missing_external_data_files: int = 0
    losses: list[Loss] = field(default_factory=list)  #: the loss report: what did not reach the destination
    #: Whether the step was done as schema changes on a copy of the source file (docs/schema-step.md).
    by_schema_changes: bool = False
    schema_changes: list[str] = field(default_factory=list)  #: those changes, in words
    #: Why a step that was tried as schema changes took the general path (None when it did not, or was not tried).
    schema_changes_not_done: str | None = None
    #: The library's JSON document as it gave it (camelCase keys, as the C API and the command line give it).
    raw: dict[str, Any] = field(default_factory=dict, repr=False, compare=False, metadata=NOT_IN_DOCUMENT)

    @property
    def unintended_losses(self) -> list[Loss]:
        """The losses the mapping does not declare as intended (what ``fail_on_unintended_loss`` refuses)."""
        return [loss for loss in self.losses if not loss.intended]
