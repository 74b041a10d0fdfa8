"""Graphviz pictures of a model and of a migration plan: the DOT text ``cdmigrate inspect --dot``
and ``cdmigrate plan --dot`` print (Sources/CDMigrateCommandLine/ModelGraph.swift and PlanCommand.swift),
character for character. The C API does not offer that text, so it is drawn here as well;
tests/test_cli_dot_and_import.py compares it with the library's command.

>>> print(cdmigrate.graphs.model_dot(cdmigrate.Model.from_file("v2.json")))
>>> print(cdmigrate.graphs.plan_dot(cdmigrate.ModelSet("Model.xcdatamodeld").plan("Notes.sqlite")))
"""

from __future__ import annotations

import json
from typing import Any

from .chain import MigrationPlan
from .model import Model

_RECORD_SPECIALS = set("{}|<>\\")


def _quoted(text: str) -> str:
    """A DOT double-quoted string (a model's labels: quotes and line breaks escaped)."""
    return '"' + text.replace('"', '\\"').replace("\n", "\\n") + '"'


def _record(text: str) -> str:
    """Text inside a record label: the characters that structure records are escaped."""
    return "".join("\\" + c if c in _RECORD_SPECIALS else c for c in text)


def _store_order(entities: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Entities in store numbering order: root entities by name, each followed depth-first by its
    subentities (by name), as Core Data numbers them (``Z_ENT``)."""
    children: dict[str, list[dict[str, Any]]] = {}
    for entity in entities:
        if entity.get("parent") is not None:
            children.setdefault(entity["parent"], []).append(entity)
    ordered: list[dict[str, Any]] = []
    seen = set()

    def visit(entity: dict[str, Any]) -> None:
        stack = [entity]
        while stack:  # depth-first without recursion, children by name
            current = stack.pop()
            if current["name"] in seen:
                continue
            seen.add(current["name"])
            ordered.append(current)
            stack.extend(sorted(children.get(current["name"], []), key=lambda e: e["name"], reverse=True))

    for root in sorted((e for e in entities if e.get("parent") is None), key=lambda e: e["name"]):
        visit(root)
    return ordered


def model_dot(model: Model | dict[str, Any] | str, title: str | None = None) -> str:
    """A model as a Graphviz digraph: one record node per entity with its own attributes and their
    types ("(required)", "(transient)"), an edge per relationship labelled with its name (and
    "to-many", "ordered"; a crow's foot for to-many), and a dashed "inherits" edge from each
    sub-entity to its parent. ``model`` is a Model, its model JSON text or that JSON parsed;
    ``title`` (the graph's name) defaults to the model's name, else "model"."""
    if isinstance(model, Model):
        document = json.loads(model.to_json())
    elif isinstance(model, str):
        document = json.loads(model)
    else:
        document = model
    name = document.get("name")
    if name is None:
        name = title if title is not None else "model"
    lines = [
        f"digraph {_quoted(name)} {{",
        "  rankdir=LR;",
        '  node [shape=record, fontname="Helvetica", fontsize=10];',
        '  edge [fontname="Helvetica", fontsize=9];',
    ]
    entities = _store_order(list(document.get("entities", [])))
    for entity in entities:
        header = _record(entity["name"])
        if entity.get("abstract"):
            header += "\\n(abstract)"
        attributes = []
        for attribute in entity.get("attributes", []) or []:
            text = f"{attribute['name']}: {attribute['type']}"
            if attribute.get("optional", True) is False:
                text += " (required)"
            if attribute.get("transient"):
                text += " (transient)"
            attributes.append(_record(text) + "\\l")
        lines.append(f"  {_quoted(entity['name'])} [label={_quoted('{' + header + '|' + ''.join(attributes) + '}')}];")
    for entity in entities:
        for relationship in entity.get("relationships", []) or []:
            label = relationship["name"]
            to_many = bool(relationship.get("toMany"))
            if to_many:
                label += " (to-many, ordered)" if relationship.get("ordered") else " (to-many)"
            head = "crow" if to_many else "normal"
            lines.append(
                f"  {_quoted(entity['name'])} -> {_quoted(relationship['destination'])} "
                f"[label={_quoted(label)}, arrowhead={head}];"
            )
        if entity.get("parent") is not None:
            lines.append(
                f"  {_quoted(entity['name'])} -> {_quoted(entity['parent'])} "
                '[style=dashed, arrowhead=empty, label="inherits"];'
            )
    lines.append("}")
    return "\n".join(lines) + "\n"


def _plan_quoted(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def plan_dot(plan: MigrationPlan) -> str:
    """A plan as a Graphviz digraph: the set's versions as boxes (the store's filled and labelled
    "store", the target doubly outlined), a solid edge per step labelled with its mapping models
    (joined by " + "), a dashed edge labelled "inferred" per inferred step ("inferred directly" for
    Core Data's one step over the versions between)."""
    lines = ["digraph migration {", "  rankdir=LR;", "  node [shape=box];"]
    for name in plan.versions:
        attributes = []
        if name == plan.store_version:
            attributes += ["style=filled", "fillcolor=lightblue", 'xlabel="store"']
        if name == plan.target_version:
            attributes.append("peripheries=2")
        lines.append(f"  {_plan_quoted(name)}" + (f" [{', '.join(attributes)}]" if attributes else "") + ";")
    for step in plan.steps:
        if step.inferred:
            label = "inferred directly" if step.direct else "inferred"
        else:
            label = " + ".join(step.mapping_models)
        style = ", style=dashed" if step.inferred else ""
        lines.append(
            f"  {_plan_quoted(step.source_version)} -> {_plan_quoted(step.destination_version)} "
            f"[label={_plan_quoted(label)}{style}];"
        )
    lines.append("}")
    return "\n".join(lines) + "\n"
