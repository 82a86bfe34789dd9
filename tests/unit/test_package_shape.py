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


# Issue 27: a record (dataclass or NamedTuple) of more than four fields is keyword-only, so that a field added or
# moved cannot silently shift the others at a positional call. These stay positional, each for its reason.
POSITIONAL_RECORDS = {
    "Detections": "a numpy container, built positionally everywhere like supervision's",
}


def _records() -> list[tuple[str, str, int, bool]]:
    """Every dataclass and NamedTuple in the package: (name, where, how many fields, keyword-only)."""
    found = []
    for p in sorted(ROOT.rglob("*.py")):
        for node in ast.walk(ast.parse(p.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            decorators = [ast.unparse(d) for d in node.decorator_list]
            if (any(d.split("(")[0].rpartition(".")[2] == "dataclass" for d in decorators)
                    or any(ast.unparse(b).rpartition(".")[2] == "NamedTuple" for b in node.bases)):
                fields = [s for s in node.body if isinstance(s, ast.AnnAssign)
                          and not ast.unparse(s.annotation).startswith("ClassVar")]
                found.append((node.name, f"{p.relative_to(ROOT)}:{node.lineno}", len(fields),
                              any("kw_only=True" in d for d in decorators)))
    return found


def test_records_of_more_than_four_fields_are_built_with_keywords():
    positional = {name: where for name, where, fields, kw_only in _records() if fields > 4 and not kw_only}
    assert {name: where for name, where in positional.items() if name not in POSITIONAL_RECORDS} == {}
    assert sorted(set(POSITIONAL_RECORDS) - set(positional)) == [], "keyword-only now: take it off the list"


def test_no_keyword_only_record_is_built_positionally():
    """Such a call fails only when it runs; this finds it where no test runs it (scripts, tests/native, tests/igpu):
    `Record(...)`, `module.Record(...)`, and `cls(...)` / `type(self)(...)` in the record's own methods."""
    records = _records()
    kw_only = {r[0] for r in records if r[3]} - {r[0] for r in records if not r[3]}
    repo = Path(__file__).resolve().parents[2]
    calls = []
    files = [*(repo / "zerocopy").rglob("*.py"), *(repo / "tests").rglob("*.py"), *(repo / "scripts").glob("*.py")]
    for p in sorted(files):
        tree = ast.parse(p.read_text(encoding="utf-8"))
        own = {}  # a call inside a record's method → that record
        for cls in (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef) and n.name in kw_only):
            for method in (f for f in cls.body if isinstance(f, ast.FunctionDef) and f.args.args):
                first = method.args.args[0].arg
                own |= {id(c): cls.name for c in ast.walk(method) if isinstance(c, ast.Call)
                        and ast.unparse(c.func) in (first, f"type({first})", f"{first}.__class__")}
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and node.args:
                name = own.get(id(node)) or getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name in kw_only:
                    calls.append(f"{p.relative_to(repo)}:{node.lineno}: {ast.unparse(node)[:100]}")
    assert kw_only, "the walk found no keyword-only records: it is broken"
    assert calls == []
