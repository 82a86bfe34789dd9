"""The package's shape: no import cycles among its modules (not even for the type checker), no module, class or
function too long to read, no probing of stage objects for attributes they may lack."""

from __future__ import annotations

import ast
from pathlib import Path

import zerocopy

ROOT = Path(zerocopy.__file__).parent
MAX_LINES = 350  # a module past this is doing more than one job
MAX_FUNCTION_LINES = 80  # a function past this is several steps without names
MAX_CLASS_LINES = 250  # a class past this holds more than one thing
# The glue between the stages calls the contracts (paths/base.py, decode/base.py), never probes them.
GLUE = ("api.py", "pipeline", "paths", "stages", "sinks/drive.py", "cli/detect.py", "cli/runtime.py")


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _type_checking_only(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


def import_graph(type_checking: bool = False) -> dict[str, set[str]]:
    """Module → the zerocopy modules it imports anywhere in it (in functions too: a cycle through a
    lazy import is still a cycle in the design); with `type_checking`, the imports made for type checkers
    only too."""
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        for node in ast.walk(tree):
            if not type_checking and _type_checking_only(node, parents):
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + [base]).strip(".")
                targets = [f"{base}.{a.name}" for a in node.names] + [base]
            else:
                continue
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and target != "zerocopy":
                    deps.add(target)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_module_imports_itself_back_through_others():
    graph = import_graph()
    assert "zerocopy.api" in graph and graph["zerocopy.api"], "the walk found no imports: it is broken"
    assert cycles(graph) == []


def test_not_even_the_type_checker_sees_a_cycle():
    """A cycle through imports made for type checkers only is still two modules that need each other."""
    graph = import_graph(type_checking=True)
    assert "zerocopy.infer.model" in graph["zerocopy.plan"]
    assert cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_is_too_long_to_read():
    long = {str(p.relative_to(ROOT)): n for p in ROOT.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_no_function_or_class_is_too_long_to_read():
    long = []
    for p in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            limit = (MAX_CLASS_LINES if isinstance(node, ast.ClassDef) else
                     MAX_FUNCTION_LINES if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None)
            if limit is not None and (n := node.end_lineno - node.lineno + 1) > limit:
                long.append(f"{p.relative_to(ROOT)}: {node.name} {n} lines")
    assert long == []


def test_the_glue_calls_the_stage_contracts_instead_of_probing():
    probes = []
    for part in GLUE:
        for p in [ROOT / part] if part.endswith(".py") else sorted((ROOT / part).rglob("*.py")):
            for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("getattr", "hasattr"):
                    probes.append(f"{p.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert probes == []
