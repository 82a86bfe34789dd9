"""The package's shape: no import cycles among its modules (not even for the type checker), no module, class or
function too long to read, no probing of stage objects for attributes they may lack."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest
from packagetrees import ROOT, cycles, module_name, named_cycles, type_checking_only, walked

MAX_LINES = 350  # a module past this is doing more than one job
MAX_FUNCTION_LINES = 80  # a function past this is several steps without names
MAX_CLASS_LINES = 250  # a class past this holds more than one thing
# The glue between the stages calls the contracts (paths/base.py, decode/base.py), never probes them.
GLUE = ("api.py", "pipeline", "paths", "stages", "sinks/drive.py", "cli/detect.py", "cli/runtime.py")


@pytest.fixture(scope="module", autouse=True)
def _trees_dropped_after_this_file():
    """The trees are walked once for this file's tests, then dropped (packagetrees.walked)."""
    yield
    for cached in (walked, import_graph, _records, _imports):
        cached.cache_clear()


@functools.cache
def import_graph(type_checking: bool = False) -> dict[str, set[str]]:
    """Module → the zerocopy modules it imports anywhere in it (in functions too: a cycle through a
    lazy import is still a cycle in the design); with `type_checking`, the imports made for type checkers
    only too. Made once for the tests of this file that read it."""
    modules = {module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        nodes, parents = walked(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        deps = set()
        for node in nodes:
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if not type_checking and type_checking_only(node, parents):
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            else:
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + [base]).strip(".")
                targets = [f"{base}.{a.name}" for a in node.names] + [base]
            for target in targets:
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target and target != name and target != "zerocopy":
                    deps.add(target)
        graph[name] = deps
    return graph


def test_no_module_imports_itself_back_through_others():
    graph = import_graph()
    assert "zerocopy.api" in graph and graph["zerocopy.api"], "the walk found no imports: it is broken"
    assert named_cycles(graph) == []


def test_not_even_the_type_checker_sees_a_cycle():
    """A cycle through imports made for type checkers only is still two modules that need each other (issue 37:
    module-level, in-function and `if TYPE_CHECKING:` imports all count)."""
    graph = import_graph(type_checking=True)
    assert "zerocopy.infer.model" in graph["zerocopy.plan"]
    assert named_cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle_and_names_it():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert cycles(graph) == [["a", "b", "c"]]
    assert named_cycles(graph) == ["a → b → c → a"]
    assert named_cycles({"a": {"b", "c"}, "b": {"a"}, "c": {"b"}}) == ["a → b → a"]


def test_the_kinds_of_settings_know_nothing_of_analytics():
    """`kinds.py` is what `config.py` is made of; the analytics' own kinds (zones, lines, masks) live with them."""
    assert {d for d in import_graph(type_checking=True)["zerocopy.kinds"] if d.startswith("zerocopy.analytics")} \
        == set()


def test_no_module_is_too_long_to_read():
    long = {str(p.relative_to(ROOT)): n for p in ROOT.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES}
    assert long == {}


def test_no_function_or_class_is_too_long_to_read():
    long = []
    for p in sorted(ROOT.rglob("*.py")):
        for node in walked(p)[0]:
            limit = (MAX_CLASS_LINES if isinstance(node, ast.ClassDef) else
                     MAX_FUNCTION_LINES if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else None)
            if limit is not None and (n := node.end_lineno - node.lineno + 1) > limit:
                long.append(f"{p.relative_to(ROOT)}: {node.name} {n} lines")
    assert long == []


def test_the_glue_calls_the_stage_contracts_instead_of_probing():
    probes = []
    for part in GLUE:
        for p in [ROOT / part] if part.endswith(".py") else sorted((ROOT / part).rglob("*.py")):
            for node in walked(p)[0]:
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("getattr", "hasattr"):
                    probes.append(f"{p.relative_to(ROOT)}:{node.lineno}: {ast.unparse(node)}")
    assert probes == []


# Issue 27: a record (dataclass or NamedTuple) of more than four fields is keyword-only, so that a field added or
# moved cannot silently shift the others at a positional call. These stay positional, each for its reason.
POSITIONAL_RECORDS = {
    "Detections": "a numpy container, built positionally everywhere like supervision's",
}


@functools.cache
def _records() -> list[tuple[str, str, int, bool]]:
    """Every dataclass and NamedTuple in the package: (name, where, how many fields, keyword-only)."""
    found = []
    for p in sorted(ROOT.rglob("*.py")):
        if not re.search(r"dataclass|NamedTuple", p.read_text(encoding="utf-8")):
            continue  # no record in it: not worth parsing
        for node in walked(p)[0]:
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
    named = re.compile(rf"\b(?:{'|'.join(sorted(kw_only))})\b")  # a file without one of the names has no such call
    for p in sorted(files):
        if not named.search(p.read_text(encoding="utf-8")):
            continue
        nodes = walked(p)[0]
        own = {}  # a call inside a record's method → that record
        for cls in (n for n in nodes if isinstance(n, ast.ClassDef) and n.name in kw_only):
            for method in (f for f in cls.body if isinstance(f, ast.FunctionDef) and f.args.args):
                first = method.args.args[0].arg
                own |= {id(c): cls.name for c in ast.walk(method) if isinstance(c, ast.Call)
                        and ast.unparse(c.func) in (first, f"type({first})", f"{first}.__class__")}
        for node in nodes:
            if isinstance(node, ast.Call) and node.args:
                name = own.get(id(node)) or getattr(node.func, "id", None) or getattr(node.func, "attr", None)
                if name in kw_only:
                    calls.append(f"{p.relative_to(repo)}:{node.lineno}: {ast.unparse(node)[:100]}")
    assert kw_only, "the walk found no keyword-only records: it is broken"
    assert calls == []


# Issue 27: imports stand at the top of their module (tests/README.md, "Imports"). One stays inside a function only
# to import an optional extra, or to keep a heavy package out of a module that must stay light.
LAZY_PACKAGES = {  # "extra": may be imported inside any function; "heavy": only inside LIGHT_MODULES' functions
    "cv2": "extra",  # baseline (opencv-python-headless): the baseline path
    "pyopencl": "extra",  # gpu: doctor's OpenCL report
    "matplotlib": "extra",  # bench: --plot (and a sample photo)
    "scipy": "extra",  # text: the text model's postprocessing
    "supervision": "extra",  # serve: --track's ByteTrack
    "paho": "extra",  # serve (paho-mqtt): --publish
    "prometheus_client": "extra",  # serve: /metrics
    "uvicorn": "extra",  # serve: its HTTP server
    "h11": "extra",  # serve: uvicorn's HTTP protocol
    "yaml": "extra",  # serve (pyyaml): a Frigate config (serve/frigate.py)
    "skimage": "extra",  # test (scikit-image): the sample photos
    "openvino_telemetry": "extra",  # OpenVINO's, not declared by zerocopy: probed in a try (infer/telemetry.py)
    # heavy: the median cost on top of `import zerocopy` (2 cores); numpy is not one, `import zerocopy` loads it
    "openvino": "heavy",  # ~90 ms; and its first import sends telemetry unless keep_openvino_quiet ran before it
    "av": "heavy",  # ~35 ms; and it must not load next to another FFmpeg (`python -m zerocopy.bridge selftest`)
    "tqdm": "heavy",  # ~20 ms
    "urllib.request": "heavy",  # ~20 ms: the network stack (http.client, ssl, email), for model downloads only
}
# Module → the heavy packages it must not load when imported (not even through other zerocopy modules); inside its
# functions it may import what loads one of them.
LIGHT_MODULES = {
    "zerocopy": {"openvino", "av", "tqdm", "urllib.request"},  # `import zerocopy`: the API loads on first use
    # `zerocopy --help`, --version, `models list`, a usage error; OpenVINO only after keep_openvino_quiet
    "zerocopy.cli": {"openvino", "av", "tqdm", "urllib.request"},
    "zerocopy.catalog.fetch": {"openvino"},  # `zerocopy models list|pull` (only reshape_to needs it)
    "zerocopy.bench.worker": {"openvino"},  # only after keep_openvino_quiet: a measured run sends no usage event
    # `python -m zerocopy.bridge selftest` must not load PyAV: the module it tests may link another FFmpeg
    "zerocopy.bridge.__main__": {"av"},
    "zerocopy.bridge.layout": {"av"},
    "zerocopy.bridge.libraries": {"av"},
    "zerocopy.bridge.loader": {"av"},
}


@functools.cache
def _imports() -> dict[str, tuple[set[str], list[tuple[int, str]]]]:
    """Module → (what it imports at module level, [(line, what)] for each import inside a function): a zerocopy
    module by its name (its packages load with it), anything else by the dotted name imported."""
    modules = {module_name(p): p for p in ROOT.rglob("*.py")}
    found = {}
    for name, path in modules.items():
        nodes, parents = walked(path)
        top, inner = set(), []
        for node in nodes:
            if not isinstance(node, (ast.Import, ast.ImportFrom)) or type_checking_only(node, parents):
                continue
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            else:
                names = [f"{node.module}.{a.name}" if node.module.startswith("zerocopy") else node.module
                         for a in node.names]
            scope = node
            while scope in parents and not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
                scope = parents[scope]
            targets = set()
            for target in names:
                while target.startswith("zerocopy.") and target not in modules:
                    target = target.rpartition(".")[0]
                targets |= {target} - {name}
            if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
                inner += [(node.lineno, target) for target in sorted(targets)]
            else:
                top |= targets
        found[name] = (top, inner)
    return found


def _heavy_loads(imports: dict, target: str) -> set[str]:
    """The heavy packages that importing `target` loads: its own, or for a zerocopy module those its packages and
    its module-level imports load, all the way down."""
    heavy = {p for p, kind in LAZY_PACKAGES.items() if kind == "heavy"}
    found, seen, todo = set(), set(), [target]
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        if module not in imports:
            found |= {h for h in heavy if module == h or module.startswith(h + ".")}
            continue
        parts = module.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))] + sorted(imports[module][0])
    return found


def test_imports_inside_functions_are_extras_or_keep_a_light_module_light():
    imports = _imports()
    assert len([i for _, inner in imports.values() for i in inner]) > 20, "the walk found no lazy imports: broken"
    wrong = []
    for module, (_, inner) in sorted(imports.items()):
        for line, target in inner:
            if (LAZY_PACKAGES.get(target.split(".")[0]) != "extra"
                    and not _heavy_loads(imports, target) & LIGHT_MODULES.get(module, set())):
                wrong.append(f"{module}:{line}: {target} (move it to the top)")
    assert wrong == []


def test_light_modules_load_no_heavy_package_they_keep_out():
    imports = _imports()
    heavy = {p for p, kind in LAZY_PACKAGES.items() if kind == "heavy"}
    assert set(LIGHT_MODULES) <= set(imports) and set().union(*LIGHT_MODULES.values()) <= heavy
    assert {"openvino", "av"} <= _heavy_loads(imports, "zerocopy.doctor"), "the walk misses imports: broken"
    loaded = {m: sorted(_heavy_loads(imports, m) & keep) for m, keep in LIGHT_MODULES.items()}
    assert {m: packages for m, packages in loaded.items() if packages} == {}
