"""Imports flow one way (DESIGN.md §1): every `ragloom` import in src/, module-level or inside a
function, is checked against the layer rules, so a dependency pointing upwards cannot creep back."""

from __future__ import annotations

import ast
from pathlib import Path

import ragloom

SRC = Path(ragloom.__file__).parent
ABOVE_NODES = {"graphs", "profiles", "registry", "crews", "cli", "api", "runner", "tools",
               "retriever"}
FORBIDDEN: dict[str, set[str]] = {
    # the bottom layer: library code that knows nothing of queries, graphs or profiles
    "providers": {"nodes", "resources", "evaluation"} | ABOVE_NODES,
    "stores": {"providers", "nodes", "resources", "evaluation"} | ABOVE_NODES,
    "ingestion": {"nodes", "resources", "evaluation"} | ABOVE_NODES,
    # settings sit under every domain module: no guardrails, language detection or stores
    "settings": {"providers", "stores", "ingestion", "nodes", "resources", "evaluation",
                 "guardrails", "language"} | ABOVE_NODES,
    "state": {"providers", "stores", "ingestion", "nodes", "resources", "evaluation"} | ABOVE_NODES,
    "errors": {"providers", "stores", "ingestion", "nodes", "resources", "evaluation"} | ABOVE_NODES,
    "nodes": ABOVE_NODES,
    "graphs": {"profiles", "registry", "runner", "crews", "cli", "api", "evaluation"},
    "profiles": {"registry", "runner", "crews", "cli", "api"},
    "registry": {"runner", "crews", "cli", "api"},
    "crews": {"cli", "api"},
}
ALLOWED = {
    # Settings expand a profile name through the preset table, which lives in profiles/ (a code
    # contract) but is data only: `test_the_preset_table_imports_nothing_above_settings`.
    ("ragloom.settings", "ragloom.profiles.presets"),
    # The `where` filter language validates a settings value; stores/filters.py needs only errors
    # and state.
    ("ragloom.settings", "ragloom.stores.filters"),
    # graphs/studio.py is the `langgraph dev` entry point (langgraph.json): it sits on top of
    # everything and takes each profile's graph from the registry.
    ("ragloom.graphs.studio", "ragloom.registry"),
}


def _module_name(path: Path) -> str:
    parts = ("ragloom", *path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _layer(module: str) -> str:
    """`ragloom.nodes.grade` → `nodes`; `ragloom.cli` → `cli`; `ragloom` → ``."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _imports(source: str, module: str, is_package: bool = False) -> list[tuple[int, str]]:
    """(line, imported ragloom module) of every import in a module's source, relative ones
    resolved, in line order."""
    package = module if is_package else module.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                target = f"{base}.{node.module}" if node.module else base
            else:
                target = node.module or ""
            # `from ragloom import resources` imports the module ragloom.resources
            found += [(node.lineno, f"{target}.{alias.name}" if target == "ragloom" else target)
                      for alias in node.names]
    return sorted((line, name) for line, name in found if name.split(".")[0] == "ragloom")


def forbidden_imports() -> list[str]:
    """Every import in src/ragloom that points against the layer rules."""
    problems = []
    for path in sorted(SRC.rglob("*.py")):
        module = _module_name(path)
        source = path.read_text(encoding="utf-8")
        for line, target in _imports(source, module, path.name == "__init__.py"):
            rel = path.relative_to(SRC.parent)
            if target == "ragloom.graphs.studio" and module != "ragloom.graphs.studio":
                problems.append(f"{rel}:{line}: nothing imports graphs/studio.py")
            if (module, target) in ALLOWED:
                continue
            if _layer(target) in FORBIDDEN.get(_layer(module), set()):
                problems.append(f"{rel}:{line}: {module} imports {target}")
    return problems


def test_imports_flow_one_way() -> None:
    problems = forbidden_imports()
    assert not problems, "\n".join(problems)


def test_the_preset_table_imports_nothing_above_settings() -> None:
    for path in (SRC / "profiles" / "presets.py", SRC / "stores" / "filters.py"):
        imported = {name for _, name in _imports(path.read_text(encoding="utf-8"), "ragloom.x.y")}
        assert imported <= {"ragloom.errors", "ragloom.state"}, path


def test_the_checker_sees_function_local_and_relative_imports() -> None:
    source = ("def f():\n    from ragloom.nodes import grade\n\nfrom ..graphs import staged\n"
              "from ragloom import resources\nimport json\n")
    assert _imports(source, "ragloom.providers.example") == [
        (2, "ragloom.nodes"), (4, "ragloom.graphs"), (5, "ragloom.resources")]


def package_cycle() -> list[str]:
    """A cycle among the top-level packages and modules of ragloom (imports inside functions
    count; the `langgraph.json` entry points, which nothing imports, do not), or []."""
    graph: dict[str, set[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        module = _module_name(path)
        if module.endswith(".studio"):
            continue
        for _, target in _imports(path.read_text(encoding="utf-8"), module,
                                  path.name == "__init__.py"):
            here, there = _layer(module), _layer(target)
            if here and there and here != there:
                graph.setdefault(here, set()).add(there)
    done: set[str] = set()

    def walk(node: str, trail: list[str]) -> list[str]:
        if node in trail:
            return [*trail[trail.index(node):], node]
        if node in done:
            return []
        for nxt in sorted(graph.get(node, ())):
            if found := walk(nxt, [*trail, node]):
                return found
        done.add(node)
        return []

    return next((c for node in sorted(graph) if (c := walk(node, []))), [])


def test_no_import_cycle_between_packages() -> None:
    assert package_cycle() == []
