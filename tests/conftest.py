"""Shared fixtures and helpers for every tier: the real default model, real clips made from real photos (cached
per session), the poison model, and the CLI helpers the unit and end-to-end tests share."""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
import pickle
from pathlib import Path

import numpy as np
import openvino as ov
import pytest

from zerocopy.cli import main
from zerocopy.detections import box_iou
from zerocopy.samples import ClipSpec, write_clip, write_size_change_clip

SLOW_FOLDERS = ("e2e", "native", "igpu")  # whole runs, subprocesses, C builds, servers: `slow` by where they sit


def pytest_collection_modifyitems(config, items):
    """Everything under tests/e2e, tests/native and tests/igpu is `slow`; tests/unit is the fast tier
    (a slow test that belongs beside its module's other tests carries `@pytest.mark.slow` itself)."""
    here = Path(__file__).resolve().parent
    for item in items:
        parts = Path(str(item.path)).resolve().relative_to(here).parts
        if parts and parts[0] in SLOW_FOLDERS:
            item.add_marker(pytest.mark.slow)


@pytest.fixture(scope="session")
def face_model_path() -> Path:
    from zerocopy.catalog.fetch import pull

    return pull("face")


@pytest.fixture(scope="session")
def core() -> ov.Core:
    return ov.Core()


class ClipFactory:
    """Makes each clip (a name and its spec) once per run, for every worker of pytest-xdist: the first to ask
    makes it while the others wait for it (a lock file per clip); returns (path, true boxes per frame)."""

    def __init__(self, root: Path):
        self.root = root
        self._made: dict[str, tuple[Path, list[np.ndarray]]] = {}

    def __call__(self, name: str, spec: ClipSpec | list[ClipSpec], container: str | None = None):
        key = hashlib.sha256(repr((name, spec, container)).encode()).hexdigest()[:16]
        if key not in self._made:
            (self.root / key).mkdir(parents=True, exist_ok=True)
            path, boxes = self.root / key / name, self.root / f"{key}.boxes"
            with open(self.root / f"{key}.lock", "w") as lock:
                fcntl.flock(lock, fcntl.LOCK_EX)
                if not boxes.exists():  # written once the clip is whole
                    truth = (write_size_change_clip(path, spec) if isinstance(spec, list)
                             else write_clip(path, spec, container))
                    boxes.write_bytes(pickle.dumps(truth))
                self._made[key] = (path, pickle.loads(boxes.read_bytes()))
        return self._made[key]


@pytest.fixture(scope="session")
def clips(tmp_path_factory) -> ClipFactory:
    """The run's clips: in the folder the workers of pytest-xdist share, else in this session's own."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        return ClipFactory(tmp_path_factory.getbasetemp().parent / "clips")
    return ClipFactory(tmp_path_factory.mktemp("clips"))


@pytest.fixture(scope="session")
def ca_bundle() -> str:
    """A PEM file of real CA certificates: the system's trust store, else certifi's."""
    import ssl

    found = [p for p in (ssl.get_default_verify_paths().cafile, ssl.get_default_verify_paths().openssl_cafile) if p]
    try:
        import certifi

        found.append(certifi.where())
    except ImportError:
        pass
    for path in found:
        if Path(path).is_file():
            return path
    pytest.skip(reason="no CA certificate bundle on this machine")


@pytest.fixture(scope="module")
def poison_model(tmp_path_factory):
    from faults import write_poison_model

    return write_poison_model(tmp_path_factory.mktemp("poison") / "poison.xml")


def run_cli(*args: str) -> int:
    return main([str(a) for a in args])


def detect_quiet(*args) -> int:
    return run_cli("detect", *args, "--quiet")


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


def wait_until(condition, timeout: float = 30.0, what: str = "the condition") -> None:
    """Poll `condition` until it holds; fail after `timeout` seconds (generous: a busy machine is slow, not wrong)."""
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out after {timeout:g} s waiting for {what}"
        time.sleep(0.02)


def streaming(target: Path, pid: int, timeout: float = 60.0) -> Path:
    """The temporary a zerocopy process `pid` writes `target` under (sinks/files.py), once it exists."""
    from zerocopy.sinks.files import temporary_of

    found: list[Path | None] = [None]

    def exists() -> bool:
        found[0] = temporary_of(target, pid)
        return found[0] is not None

    wait_until(exists, timeout, f"the temporary of {target}")
    assert found[0] is not None
    return found[0]


def wait_for_lines(path: Path, count: int, timeout: float = 60.0) -> None:
    """Wait until a JSON Lines file being written by another process holds `count` lines (fail after `timeout`)."""
    wait_until(lambda: path.exists() and len(path.read_text().splitlines()) >= count, timeout,
               f"{count} lines in {path}")


def load_script(name: str):
    """A script of scripts/ as a module, for the tests that use its measurements."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "scripts" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def score_faces(truth: list[np.ndarray], lines: list[dict]) -> dict:
    """Recall at IoU ≥ 0.5, false detections per face-free frame and per frame, mean IoU."""
    found = faces = false = free_frames = 0
    ious = []
    for boxes, line in zip(truth, lines, strict=True):
        det = np.asarray([d["box"] for d in line["detections"]], np.float32).reshape(-1, 4)
        if len(boxes) == 0:
            free_frames += 1
            false += len(det)
            continue
        iou = box_iou(boxes, det) if len(det) else np.zeros((len(boxes), 0))
        faces += len(boxes)
        matched = (iou.max(axis=1) >= 0.5) if iou.shape[1] else np.zeros(len(boxes), bool)
        found += int(matched.sum())
        ious += list(iou.max(axis=1)[matched]) if iou.shape[1] else []
        false += int(len(det) - (iou.max(axis=0) >= 0.5).sum()) if len(det) else 0
    return {
        "recall": found / faces if faces else 1.0,
        "false_per_free_frame": false / free_frames if free_frames else 0.0,
        "false": false,
        "mean_iou": float(np.mean(ious)) if ious else 0.0,
    }
