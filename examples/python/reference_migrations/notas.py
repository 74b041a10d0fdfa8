"""Scenario 1: a Spanish notes app whose string `categoria` becomes a Categoria entity (v2 → v3).

The policy works a batch of notes at a time (``create_destination_instances_batch``, cdmigrate's
extension beyond Core Data): the notes are made by the mapping's own attribute mappings for the
whole batch at once, each new category name becomes one Categoria, and the notes are linked to
their categories in one call — a few list elements per note instead of a callback per note."""

from __future__ import annotations

import os

import cdmigrate

from .common import SeededGenerator, mapping, model, summary
from .text import nfc

DIRECTORY = "1-notas-categorias"
CATEGORIA_NAMES = [
    "Trabajo",
    "Personal",
    "Compras",
    "Ideas",
    "Viajes",
    "Salud",
    "Recetas",
    "Estudios",
    "Finanzas",
    "Música",
    "Películas",
    "Libros",
    "Cumpleaños",
    "Año nuevo",
]
SUBJECTS = [
    "Llamar a",
    "Comprar",
    "Revisar",
    "Enviar",
    "Preparar",
    "Leer",
    "Escribir a",
    "Reservar",
    "Pagar",
    "Pensar en",
]
OBJECTS = [
    "mamá",
    "el informe trimestral",
    "pan y leche",
    "la presentación",
    "el vuelo a Lima",
    "«Cien años de soledad»",
    "el dentista",
    "la factura de la luz",
    "una idea para la app",
    "el regalo de Lucía",
    "la cena del sábado",
    "los apuntes de cálculo",
]
TAGS = ["urgente", "casa", "oficina", "familia", "pendiente", "fin de semana", "#importante"]


class CrearCategoriasMigrationPolicy(cdmigrate.EntityMigrationPolicy):
    """NotaToNota: makes the destination Notas, copying contenido, fecha and etiquetas with the
    mapping's own value expressions, and links each note to the Categoria of its old `categoria`
    string, creating that Categoria the first time the string is seen. A nil or empty string means
    no category; names are compared and stored in Unicode NFC (examples/1-notas-categorias/README.md),
    so "Música" typed precomposed or with a combining accent is one Categoria.

    One policy object serves the mapping for the whole run, so the Categorias made so far are
    kept in ``self.categorias`` (NFC name → primary key) from one batch to the next."""

    def __init__(self) -> None:
        self.categorias: dict = {}
        self.nfc_names: dict = {}  # each distinct string as given → its NFC form

    def create_destination_instances_batch(self, batch, mapping, manager):
        notas = batch.apply_default()
        nfc_names = self.nfc_names
        nombres = []
        for nombre in batch.column("categoria"):
            if nombre:
                normalized = nfc_names.get(nombre)
                if normalized is None:
                    normalized = nfc_names[nombre] = nfc(nombre)
                nombre = normalized
            nombres.append(nombre or None)
        categorias = self.categorias
        nuevas = [nombre for nombre in dict.fromkeys(nombres) if nombre is not None and nombre not in categorias]
        if nuevas:
            categorias.update(zip(nuevas, manager.create_many("Categoria", [{"nombre": nombre} for nombre in nuevas])))
        owners = [nota for nota, nombre in zip(notas, nombres) if nombre is not None]
        targets = [categorias[nombre] for nombre in nombres if nombre is not None]
        manager.relate_many("Nota", "categorias", owners, targets)


POLICIES = {"CrearCategoriasMigrationPolicy": CrearCategoriasMigrationPolicy}


def generate_source(path: str, count: int = 800, seed: int = 1) -> None:
    random = SeededGenerator(seed)
    with model(DIRECTORY, "NotasV2.model.json") as v2, cdmigrate.Store.create(v2, path) as store:
        for i in range(count):
            nota = store.insert(
                "Nota",
                contenido=f"Nota {i + 1}: {random.pick(SUBJECTS)} {random.pick(OBJECTS)}",
                fecha=cdmigrate.date_from_reference_seconds(float(random.int(441_763_200, 631_152_000))),
            )
            if random.chance(0.6):
                nota["etiquetas"] = ", ".join(random.pick(TAGS) for _ in range(random.int(1, 3)))
            roll = random.unit()
            if roll < 0.2:
                pass  # no category
            elif roll < 0.23:
                nota["categoria"] = ""
            else:
                index = int(random.unit() * random.unit() * len(CATEGORIA_NAMES))
                nota["categoria"] = CATEGORIA_NAMES[min(index, len(CATEGORIA_NAMES) - 1)]
        store.save()


def migrate(source: str, destination: str) -> cdmigrate.MigrationReport:
    with model(DIRECTORY, "NotasV2.model.json") as v2, model(DIRECTORY, "NotasV3.model.json") as v3, mapping(
        DIRECTORY, "NotasV2ToV3.mapping.json"
    ) as notas, cdmigrate.Migration(v2, v3, notas) as migration:
        return migration.run(source, destination, policies=POLICIES)


def run(directory: str) -> str:
    source = os.path.join(directory, "Notas-v2.sqlite")
    generate_source(source)
    report = migrate(source, os.path.join(directory, "Notas-v3.sqlite"))
    return summary(1, "Notas: a string category becomes a Categoria entity", [report])
