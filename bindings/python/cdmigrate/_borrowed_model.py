"""A model the library lends (a running migration's, an open store's): a Model that Python never
frees."""

from __future__ import annotations

from .model import Model


class BorrowedModel(Model):
    """A model a running migration lends (cdm_context_model): usable like a Model while the
    migration exists, never freed from Python."""

    _free = None  # type: ignore[assignment]
