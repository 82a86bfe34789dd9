"""The package's modules as syntax trees, for tests/unit/test_package_shape.py: each file parsed and walked once
however many tests read it, the module a file is, whether an import is for type checkers only, and the cycles of an
import graph, named."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import zerocopy

ROOT = Path(zerocopy.__file__).parent


@functools.cache
def walked(path: Path) -> tuple[list[ast.AST], dict[ast.AST, ast.AST]]:
    """A Python file's nodes in `ast.walk`'s order and each node's parent, from one walk (walking is most of what
    the shape tests cost). The trees are millions of objects: the test file clears this cache once its tests ran,
    so that the garbage collections of the tests after it, on its worker, do not walk them."""
    order: list[ast.AST] = [ast.parse(path.read_text(encoding="utf-8"))]
    parents: dict[ast.AST, ast.AST] = {}
    for node in order:  # breadth first, as ast.walk: the list grows while it is read
        for child in ast.iter_child_nodes(node):
            parents[child] = node
            order.append(child)
    return order, parents


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def type_checking_only(node: ast.AST, parents: dict[ast.AST, ast.AST]) -> bool:
    while node in parents:
        node = parents[node]
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            return True
    return False


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


def loop(graph: dict[str, set[str]], group: list[str]) -> str:
    """One way round a cycle's group, named: `a → b → c → a` (the shortest from its first module)."""
    start, members = group[0], set(group)
    came_from: dict[str, str] = {}
    todo = [start]
    while todo:
        v = todo.pop(0)
        for w in sorted(graph.get(v, set()) & members):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(came_from[path[-1]])
                return " → ".join([*reversed(path), start])
            if w not in came_from:
                came_from[w] = v
                todo.append(w)
    return " ↔ ".join(group)


def named_cycles(graph: dict[str, set[str]]) -> list[str]:
    return [loop(graph, group) for group in cycles(graph)]
