"""The app's layers, read from its source: which package may import which, and no import cycle.

The graph is built from the AST of every module of the app's packages (imports inside functions
included: a late import is still a dependency), so it holds for code that no test happens to run.
Packages, bottom to top (docs/developer-guide.md, "Layers"; decision 0002):

    core                      imports nothing of the project
    reference                 core
    ingest, reconcile         core, reference (never each other)
    export                    core, reference, reconcile (its totals' field names)
    backends                  core, reference
    triggers                  everything above
    hq                        everything above but triggers
    function_app.py           triggers only; nothing imports it

Tooling (devhost, bench, loadtest, examples, tests) may import the app; the app never imports it.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "reference": {"core"},
    "ingest": {"core", "reference"},
    "reconcile": {"core", "reference"},
    "backends": {"core", "reference"},
    "export": {"core", "reference", "reconcile"},
    "triggers": {"core", "reference", "ingest", "reconcile", "export", "backends"},
    "hq": {"core", "reference", "ingest", "reconcile", "export", "backends"},
    "function_app": {"triggers"},
}
TOOLING = {"devhost", "bench", "loadtest", "examples", "tests"}


def app_packages(root: Path = ROOT) -> set[str]:
    """Every top-level package of the repository that is not tooling: the app's."""
    return {folder.name for folder in root.iterdir() if (folder / "__init__.py").is_file()} - TOOLING


def _module_files(root: Path) -> dict[str, Path]:
    """Module name -> file, for every module of the app's packages and function_app.py."""
    modules = {"function_app": root / "function_app.py"}
    for package in sorted(app_packages(root)):
        for file in sorted((root / package).rglob("*.py")):
            parts = list(file.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = file
    return modules


def _imported_names(file: Path, module: str) -> set[str]:
    """Every dotted name the module imports, anywhere in its body (relative imports resolved): for
    `from a.b import c`, "a.b.c" (a module, or a name inside a.b); and the module named by a
    constant string given to importlib.import_module."""
    tree = ast.parse(file.read_text(encoding="utf-8"), filename=str(file))
    package = module if file.name == "__init__.py" else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            names.update(f"{base}.{alias.name}" for alias in node.names)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "import_module"
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            names.add(node.args[0].value)
    return names


def _resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The app module a dotted name refers to (the module itself, or the module a name is in), or None."""
    while name:
        if name in modules:
            return name
        name = name.rpartition(".")[0]
    return None


def import_graph(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the app modules it imports."""
    modules = _module_files(root)
    graph = {}
    for module, file in modules.items():
        targets = {_resolve(name, modules) for name in _imported_names(file, module)}
        graph[module] = {target for target in targets if target is not None and target != module}
    return graph


def tooling_imports(root: Path = ROOT) -> dict[str, set[str]]:
    """Module -> the tooling packages it imports (the app must import none)."""
    found = {}
    for module, file in _module_files(root).items():
        used = {name.split(".")[0] for name in _imported_names(file, module)} & TOOLING
        if used:
            found[module] = used
    return found


def package_of(module: str) -> str:
    return module.split(".")[0]


def forbidden_imports(graph: dict[str, set[str]]) -> list[str]:
    return sorted(
        f"{module} -> {target}"
        for module, targets in graph.items()
        for target in targets
        if package_of(target) != package_of(module) and package_of(target) not in ALLOWED.get(package_of(module), set())
    )


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, targets = work[-1]
            target = next(targets, None)
            if target is not None:
                if target not in index:
                    index[target] = low[target] = len(index)
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(sorted(graph.get(target, ())))))
                elif target in on_stack:
                    low[node] = min(low[node], index[target])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_every_package_of_the_app_has_its_layer():
    assert app_packages() <= set(ALLOWED), "name the new package's layer in ALLOWED (and in docs/developer-guide.md)"


def test_every_import_between_packages_goes_down_the_layers():
    assert forbidden_imports(import_graph()) == []


def test_no_import_cycle_between_modules():
    assert cycles(import_graph()) == []


def test_no_module_of_the_app_imports_function_app():
    importers = sorted(module for module, targets in import_graph().items() if "function_app" in targets)
    assert importers == []


def test_the_app_imports_no_tooling():
    assert tooling_imports() == {}


def test_the_graph_sees_late_imports_relative_imports_and_cycles(tmp_path):
    """The checks themselves: an import inside a function, a relative import and a cycle are found."""
    (tmp_path / "function_app.py").write_text("import triggers.blueprints\n")
    for package in ("core", "ingest", "reconcile", "triggers"):
        (tmp_path / package).mkdir()
        (tmp_path / package / "__init__.py").write_text("")
    (tmp_path / "core" / "money.py").write_text("def f():\n    from ingest import wire\n")
    (tmp_path / "ingest" / "wire.py").write_text("from . import rules\n")
    (tmp_path / "ingest" / "rules.py").write_text("from ingest.wire import X\nimport reconcile.service\n")
    (tmp_path / "reconcile" / "service.py").write_text("import importlib\nimportlib.import_module('function_app')\n")
    (tmp_path / "triggers" / "blueprints.py").write_text("import json\n")
    graph = import_graph(tmp_path)
    assert forbidden_imports(graph) == [
        "core.money -> ingest.wire",
        "ingest.rules -> reconcile.service",
        "reconcile.service -> function_app",
    ]
    assert app_packages(tmp_path) == {"core", "ingest", "reconcile", "triggers"}
    assert cycles(graph) == [["ingest.rules", "ingest.wire"]]
    assert graph["function_app"] == {"triggers.blueprints"}


MAX_MODULE_LINES = 400


def test_no_module_of_the_app_is_over_400_lines():
    """Small modules (decision 0007): a module that grows past the limit is split by concern."""
    long = {
        module: lines
        for module, file in _module_files(ROOT).items()
        if (lines := len(file.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}
