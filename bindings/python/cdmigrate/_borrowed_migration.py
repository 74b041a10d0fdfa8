"""A migration handle the command line made and owns (``cdm_command_line_options.load_policies``
hands it to Python): Python policies and host functions are registered on it as on a Migration,
and its callbacks find a run for as long as the command runs; closing it frees nothing."""

from __future__ import annotations

from typing import Any, Callable, Mapping

from ._handle import LongLivedHandle
from ._run import ChainRun, FunctionKey, PolicySpec
from .migration import Migration


class BorrowedMigration(Migration):
    """``policies`` and ``functions`` as Migration takes them, registered on the command's handle
    ``pointer``. The command runs the migration itself (a step or a chain), so the callbacks' run
    starts here and lasts until ``end_run``."""

    def __init__(
        self,
        pointer: int,
        policies: Mapping[str, PolicySpec],
        functions: Mapping[FunctionKey, Callable[..., Any]],
    ) -> None:
        LongLivedHandle.__init__(self, None)
        self._init_state()
        self._pointer = pointer
        self._register(policies, functions)
        # A chain's run: its caches start afresh at each step, which serves one step as well.
        self._state.run = ChainRun()

    def end_run(self) -> None:
        """The command has finished: a callback from now on fails as outside of a run."""
        self._state.run = None

    def close(self) -> None:
        self._pointer = None

    def __del__(self) -> None:
        pass
