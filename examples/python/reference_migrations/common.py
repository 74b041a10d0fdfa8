"""What the reference migrations share: where the JSON files are, and a seeded random source."""

from __future__ import annotations

import contextlib
import os
from typing import Sequence, TypeVar

import cdmigrate

T = TypeVar("T")

#: examples/ (the folder with 1-notas-categorias/ …); CDMIGRATE_EXAMPLES_DIR overrides it.
EXAMPLES_DIR = os.environ.get("CDMIGRATE_EXAMPLES_DIR") or os.path.abspath(
    os.path.join(os.path.dirname(__file__), "..", "..")
)


def path(directory: str, name: str) -> str:
    return os.path.join(EXAMPLES_DIR, directory, name)


def model(directory: str, name: str) -> cdmigrate.Model:
    return cdmigrate.Model.from_file(path(directory, name))


def mapping(directory: str, name: str) -> cdmigrate.MappingModel:
    return cdmigrate.MappingModel.from_file(path(directory, name))


class SeededGenerator:
    """SplitMix64, as examples/swift/ReferenceMigrations/SeededGenerator.swift: the same seed gives
    the same numbers on every platform."""

    MASK = (1 << 64) - 1

    def __init__(self, seed: int) -> None:
        self.state = seed & self.MASK

    def next(self) -> int:
        self.state = (self.state + 0x9E3779B97F4A7C15) & self.MASK
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & self.MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & self.MASK
        return z ^ (z >> 31)

    def int(self, low: int, high: int) -> int:
        """A uniform integer in low…high (inclusive)."""
        return low + self.next() % (high - low + 1)

    def unit(self) -> float:
        return (self.next() >> 11) / float(1 << 53)

    def chance(self, probability: float) -> bool:
        return self.unit() < probability

    def pick(self, items: Sequence[T]) -> T:
        return items[self.int(0, len(items) - 1)]


def remove_store(path_: str) -> None:
    """Removes a store and its -wal/-shm/-journal files."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        with contextlib.suppress(FileNotFoundError):
            os.remove(path_ + suffix)


def summary(number: int, title: str, reports: list[cdmigrate.MigrationReport]) -> str:
    lines = [f"{number}. {title}"]
    for report in reports:
        counts = ", ".join(f"{k} {v}" for k, v in sorted(report.destination_counts.items()))
        lines.append(f"   destination: {counts}")
        if report.untaken:
            lines.append("   not taken: " + ", ".join(f"{k} {v}" for k, v in sorted(report.untaken.items())))
    return "\n".join(lines)
