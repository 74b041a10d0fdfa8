"""Reference migration 1's policy written the way Core Data teaches, one call per source note
(``createDestinationInstancesForSourceInstance:entityMapping:manager:error:``), in the two styles
a Core Data developer porting an app writes. bench/run.py runs both beside the hand-written
``sqlite3`` script; like that script (and unlike examples/python/reference_migrations/notas.py)
they compare category names as stored, without NFC.

- ``NotasPorFilaToDict``: ``source.to_dict()``, ``manager.create(values=…, source=…)`` and a
  dictionary of the categories made so far, kept in the policy across calls;
- ``NotasPorFilaFetch``: ``manager.create``, ``manager.apply_attribute_mappings``,
  ``manager.associate`` and a ``fetch_destination`` by predicate per note to find its category.
"""

from __future__ import annotations

import cdmigrate


class NotasPorFilaToDict(cdmigrate.EntityMigrationPolicy):
    """The note's attributes through to_dict(); one Categoria per name, kept in a dict."""

    def __init__(self) -> None:
        self.categorias: dict = {}

    def create_destination_instances(self, source, mapping, manager):
        values = source.to_dict()
        nombre = values.pop("categoria", None)
        nota = manager.create("Nota", values=values, source=source)
        if nombre:
            categoria = self.categorias.get(nombre)
            if categoria is None:
                categoria = self.categorias[nombre] = manager.create("Categoria", {"nombre": nombre})
            nota.add("categorias", categoria)
        return nota


class NotasPorFilaFetch(cdmigrate.EntityMigrationPolicy):
    """The note's attributes by the mapping's own value expressions; its Categoria found by a
    fetch of the destination per note, made when the fetch finds none."""

    def create_destination_instances(self, source, mapping, manager):
        nota = manager.create("Nota")
        manager.apply_attribute_mappings(source, nota)
        manager.associate(source, nota)
        nombre = source["categoria"]
        if nombre:
            found = manager.fetch_destination("Categoria", "nombre == %@", nombre, limit=1)
            categoria = found[0] if found else manager.create("Categoria", {"nombre": nombre})
            nota.add("categorias", categoria)
        return nota


#: By the policy name of examples/1-notas-categorias/NotasV2ToV3.mapping.json.
TO_DICT = {"CrearCategoriasMigrationPolicy": NotasPorFilaToDict}
FETCH = {"CrearCategoriasMigrationPolicy": NotasPorFilaFetch}
#: The same policies called row by row by the engine (``row_batches = False``): how they ran before
#: the binding ran single-row hooks over batches.
TO_DICT_ENGINE = {
    "CrearCategoriasMigrationPolicy": type("NotasPorFilaToDictEngine", (NotasPorFilaToDict,), {"row_batches": False})
}
FETCH_ENGINE = {
    "CrearCategoriasMigrationPolicy": type("NotasPorFilaFetchEngine", (NotasPorFilaFetch,), {"row_batches": False})
}
