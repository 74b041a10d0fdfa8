"""The Python package's layers, bottom to top, and the checks that keep its imports one way — as
scripts/folder-dependencies.py does for the engine's folders. ``LAYERS`` is the one table of
them (bindings/python/README.md and docs/architecture.md describe it and point here).

A module imports, when the package is imported, only modules of its own layer or of layers below
it. An import under ``if TYPE_CHECKING:`` runs only for the type checker and may point anywhere
(it is how two modules name each other's classes in annotations without an import cycle). Every
other import sits at its module's top: none inside a function or a class. Modules whose name
starts with an underscore are the package's own; users import the names of ``__all__`` from
``cdmigrate`` (each defined in a module without an underscore).
"""

from __future__ import annotations

import ast
import os
import pathlib

import pytest

import cdmigrate

PACKAGE = pathlib.Path(os.path.dirname(cdmigrate.__file__))

# Bottom to top. A module may import the modules of its own layer and of the layers before it.
LAYERS: list[tuple[str, list[str]]] = [
    # The ctypes declarations of the C API, text and path conversion, the documents' to_dict/to_json,
    # Core Data's value types (with ObjectID), what runs report (Progress, MigrationReport, Loss),
    # and the MigrationError hierarchy.
    ("values and errors", ["_version", "_lib", "_text", "_document", "values", "reports", "errors"]),
    # Handles the binding owns (LongLivedHandle), the C field arrays of whole rows, the key arrays
    # and JSON rows of bulk calls, sort descriptors, entity descriptions.
    ("handles and fields", ["_handle", "_fields", "_arrays", "_sorting", "introspection"]),
    # Instance (NSManagedObject) and the values of expressions and host functions.
    ("instances", ["instance"]),
    # Model and MappingModel, stores' metadata and model version sets, Store.
    ("models and stores", ["metadata", "model", "_borrowed_model", "store"]),
    # EntityMigrationPolicy, MigrationManager and EntityMapping; SourceBatch; the single-row hook
    # run over batches; the policy methods FUNCTION($entityPolicy, …) calls.
    ("policies", ["policy", "batch", "_row_batches", "_policy_methods"]),
    # What the C library calls back (trampolines, registrations, their registry) and the state of
    # a run: above the policies, whose hooks it calls and whose MigrationManager it makes.
    ("run plumbing", ["_run"]),
    # Migration, MigrationChain with ModelSet and plans, and the command line's borrowed handle.
    ("migrations and chains", ["migration", "chain", "_borrowed_migration"]),
    # migrate_many, Graphviz pictures, the policies modules of --policies, `python -m cdmigrate`,
    # and the package's own namespace.
    ("fleets and the command line", ["_policy_modules", "fleet", "graphs", "_command_line", "__main__", "__init__"]),
]
LAYER_OF = {module: index for index, (_, modules) in enumerate(LAYERS) for module in modules}
TOP = len(LAYERS) - 1


def _sources() -> dict[str, ast.Module]:
    return {path.stem: ast.parse(path.read_text(encoding="utf-8"), str(path)) for path in PACKAGE.glob("*.py")}


def _is_type_checking(node: ast.If) -> bool:
    return isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"


def _package_modules(node: ast.Import | ast.ImportFrom) -> list[str]:
    """The package's modules an import statement names (``from . import _lib``, ``from .model
    import Model``, ``import cdmigrate.errors``)."""
    if isinstance(node, ast.Import):
        return [a.name.split(".")[1] for a in node.names if a.name.startswith("cdmigrate.")]
    if node.level == 0:
        if node.module == "cdmigrate":
            return [a.name for a in node.names]
        return [node.module.split(".")[1]] if node.module and node.module.startswith("cdmigrate.") else []
    if node.level != 1:
        return []
    if node.module is None:
        return [a.name for a in node.names]
    return [node.module.split(".")[0]]


def imports(tree: ast.Module) -> tuple[list[tuple[int, str]], list[tuple[int, str]], list[int]]:
    """(runtime imports of package modules, type-only ones, lines of imports below module level):
    the imports at the top (and in plain ``if``/``try`` blocks there) run when the module does,
    those under ``if TYPE_CHECKING:`` only for the type checker."""
    runtime: list[tuple[int, str]] = []
    typing_only: list[tuple[int, str]] = []
    nested: list[int] = []

    def visit(statements: list[ast.stmt], type_only: bool) -> None:
        for node in statements:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                (typing_only if type_only else runtime).extend((node.lineno, m) for m in _package_modules(node))
            elif isinstance(node, ast.If):
                visit(node.body, type_only or _is_type_checking(node))
                visit(node.orelse, type_only)
            elif isinstance(node, ast.Try):
                for block in (node.body, node.orelse, node.finalbody, *[h.body for h in node.handlers]):
                    visit(block, type_only)
            else:
                nested.extend(n.lineno for n in ast.walk(node) if isinstance(n, (ast.Import, ast.ImportFrom)))

    visit(tree.body, False)
    return runtime, typing_only, nested


def layer_breaks(sources: dict[str, ast.Module]) -> list[str]:
    """Each runtime import of a module of a higher layer, or of a module missing from LAYERS."""
    found = []
    for name, tree in sorted(sources.items()):
        for line, imported in imports(tree)[0]:
            if imported not in LAYER_OF:
                found.append(f"{name}.py:{line} imports {imported}, which LAYERS does not place")
            elif name in LAYER_OF and LAYER_OF[imported] > LAYER_OF[name]:
                found.append(
                    f"{name}.py:{line} imports {imported}: layer '{LAYERS[LAYER_OF[imported]][0]}' is above "
                    f"'{LAYERS[LAYER_OF[name]][0]}'"
                )
    return found


def cycles(sources: dict[str, ast.Module]) -> list[list[str]]:
    """Cycles of runtime imports between the package's modules (within a layer too)."""
    graph = {
        name: sorted({m for _, m in imports(tree)[0] if m in sources and m != name}) for name, tree in sources.items()
    }
    found: list[list[str]] = []
    state: dict[str, int] = {}  # 1 on the path, 2 done
    for start in sorted(graph):
        if state.get(start):
            continue
        path = [start]
        stack = [iter(graph[start])]
        state[start] = 1
        while stack:
            following = next(stack[-1], None)
            if following is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(following) == 1:
                found.append([*path[path.index(following) :], following])
            elif not state.get(following):
                state[following] = 1
                path.append(following)
                stack.append(iter(graph[following]))
    return found


def private_uses(tree: ast.Module) -> list[str]:
    """Names with a leading underscore a module takes from the package's other modules: imported
    (``from .chain import _ChainRun``; the internal modules themselves, ``from . import _lib``,
    are the package's to import) or read from an imported module or class (``Migration._register``),
    and underscored attributes of anything but ``self`` (``borrowed._state``)."""
    imported: set[str] = set()
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            for alias in node.names:
                if node.module is not None and alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"line {node.lineno}: imports {alias.name} from {node.module}")
                imported.add(alias.asname or alias.name)
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and isinstance(node.value, ast.Name)
            and node.value.id not in ("self", "cls")
        ):
            found.append(f"line {node.lineno}: {node.value.id}.{node.attr}")
    return found


# -- the package ----------------------------------------------------------------------------------


def test_every_module_of_the_package_has_one_layer():
    names = sorted(_sources())
    listed = [m for _, modules in LAYERS for m in modules]
    assert len(listed) == len(set(listed)), "a module is in two layers"
    assert sorted(listed) == names, (
        f"not in LAYERS: {sorted(set(names) - set(listed))}; in LAYERS but not in the package: "
        f"{sorted(set(listed) - set(names))}"
    )


def test_no_module_imports_one_of_a_higher_layer():
    assert layer_breaks(_sources()) == []


def test_the_modules_import_each_other_without_a_cycle():
    assert cycles(_sources()) == []


def test_every_import_sits_at_its_modules_top():
    nested = {name: lines for name, tree in _sources().items() if (lines := imports(tree)[2])}
    assert nested == {}, f"imports inside functions or classes (module: lines): {nested}"


def test_the_command_line_and_fleets_use_no_internals_of_other_modules():
    sources = _sources()
    found = {name: uses for name in LAYERS[TOP][1] if (uses := private_uses(sources[name]))}
    assert found == {}


def test_every_public_name_is_defined_in_a_module_without_an_underscore():
    for name in cdmigrate.__all__:
        value = getattr(cdmigrate, name)
        module = getattr(value, "__module__", None) if callable(value) else None
        if module is not None and module.startswith("cdmigrate."):
            assert not module.split(".")[1].startswith("_"), f"cdmigrate.{name} is defined in {module}"


def test_the_internal_modules_are_named_with_an_underscore():
    public = {"values", "reports", "errors", "introspection", "instance", "metadata", "model", "store", "policy",
              "batch", "migration", "chain", "fleet", "graphs"}  # fmt: skip
    for name in LAYER_OF:
        if name.startswith("_"):
            continue
        assert name in public, f"{name}.py has a public name but is not among the public modules"


# -- the checks themselves, on small packages that break them --------------------------------------


def _parsed(**modules: str) -> dict[str, ast.Module]:
    return {name: ast.parse(text) for name, text in modules.items()}


def test_an_import_of_a_higher_layer_is_named_with_its_line_and_layers():
    sources = _parsed(errors="import os\nfrom .migration import Migration\n", migration="from .errors import check\n")
    assert layer_breaks(sources) == [
        "errors.py:2 imports migration: layer 'migrations and chains' is above 'values and errors'"
    ]


def test_a_type_only_import_of_a_higher_layer_is_allowed_and_an_unplaced_module_is_not():
    sources = _parsed(
        policy="from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from ._run import Run\n",
        model="from . import _newthing\n",
    )
    assert layer_breaks(sources) == ["model.py:1 imports _newthing, which LAYERS does not place"]


def test_an_import_inside_a_function_is_found():
    tree = ast.parse("import os\n\ndef f():\n    from .errors import check\n    return check\n")
    assert imports(tree)[2] == [4]
    tree = ast.parse("class C:\n    import json\n")
    assert imports(tree)[2] == [2]


def test_a_cycle_within_a_layer_is_found():
    sources = _parsed(model="from .metadata import x\n", metadata="from .model import Model\n", store="")
    assert cycles(sources) == [["metadata", "model", "metadata"]]
    sources = _parsed(
        model="from .metadata import x\n",
        metadata="from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .model import Model\n",
    )
    assert cycles(sources) == []


@pytest.mark.parametrize(
    "text, expected",
    [
        ("from .chain import _ChainRun\n", ["line 1: imports _ChainRun from chain"]),
        ("def f(b):\n    b._state.run = None\n", ["line 2: b._state"]),
        ("from .migration import Migration\nMigration._register(None, {}, {})\n", ["line 2: Migration._register"]),
        ("from . import _lib\nclass A:\n    def f(self):\n        return _lib.lib, self._x, A.__name__\n", []),
    ],
)
def test_a_use_of_another_modules_internals_is_found(text, expected):
    assert private_uses(ast.parse(text)) == expected
