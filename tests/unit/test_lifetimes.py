"""Native resources have one owner and are released by its `close()`: many open/run/close cycles of `Detector`
(with region models and tiles), `Processor` and a serve engine leave the process's open files, threads and
memory where they were after the first cycles; a serve camera that ends and is opened again, many times,
compiles nothing again and leaks nothing.

Before the fix (a bound method as the `AsyncInferQueue` callback: a cycle through native code), each closed
`Detector` kept its compiled model: +1 file (the model's cache blob), +2 threads and ~8 MB a cycle."""

from __future__ import annotations

import gc
import os
from pathlib import Path

import pytest
from conftest import wait_until
from tinymodels import tiny_model

import zerocopy
from zerocopy.pipeline.parallel import Reopen
from zerocopy.samples import ClipSpec
from zerocopy.serve.config import CameraConfig
from zerocopy.serve.engine import Engine

pytestmark = pytest.mark.slow  # a few seconds each: many cycles
WARM = 3  # cycles before counting: OpenVINO's thread pools and caches are made on first use
CYCLES = 8
RSS_SLACK_MB = 24.0  # allocator noise over all the counted cycles; the leak was ~8 MB a cycle


def usage() -> tuple[int, int, float]:
    """(open files, threads, RSS in MB) of this process, after a collection."""
    gc.collect()
    rss_pages = int(Path("/proc/self/statm").read_text().split()[1])
    return (len(os.listdir("/proc/self/fd")), len(os.listdir("/proc/self/task")),
            rss_pages * os.sysconf("SC_PAGE_SIZE") / 2**20)


def assert_flat(cycle, what: str) -> None:
    for _ in range(WARM):
        cycle()
    before = usage()
    for _ in range(CYCLES):
        cycle()
    after = usage()
    assert after[0] <= before[0], f"{what}: open files {before[0]} → {after[0]} over {CYCLES} cycles"
    assert after[1] <= before[1], f"{what}: threads {before[1]} → {after[1]} over {CYCLES} cycles"
    assert after[2] - before[2] < RSS_SLACK_MB, f"{what}: RSS {before[2]:.0f} → {after[2]:.0f} MB over {CYCLES} cycles"


@pytest.fixture(scope="module")
def clip(clips):
    return clips("lifetimes.mp4", ClipSpec(width=320, height=180, frames=6))[0]


def test_closed_detectors_release_their_models_queues_and_threads(clip, tmp_path):
    classifier = tiny_model(tmp_path / "tiny-classifier.xml", 2)

    def cycle() -> None:
        with zerocopy.Detector(model="face", path="software", classify=[str(classifier)], tiles=1) as det:
            assert len(list(det.run(clip))) == 6

    assert_flat(cycle, "Detector")


def test_closed_processors_release_their_models(clip, tmp_path):
    mapper = tiny_model(tmp_path / "tiny-map.xml", 0)

    def cycle() -> None:
        with zerocopy.Processor(model=str(mapper), path="software") as proc:
            assert [r.output.shape for r in proc.run(clip)] == [(180, 320)] * 6

    assert_flat(cycle, "Processor")


def test_a_detector_compiles_once_for_all_its_runs(clip):
    with zerocopy.Detector(model="face", path="software") as det:
        for _ in range(3):
            assert len(list(det.run(clip))) == 6
        assert dict(det._models.compiles) == {"face": 1}


def camera(name: str, url: str) -> CameraConfig:
    return CameraConfig(name=name, url=url, settings={"model": "face", "path": "software"})


def test_serve_engines_started_and_stopped_release_everything(clip):
    def cycle() -> None:
        engine = Engine([camera("front", str(clip))], None, latest=True, say=lambda _msg: None)
        engine.start()
        try:
            wait_until(lambda: engine.cameras()[0].frames >= 3, 60, "the camera's frames")
            assert engine.latest_jpeg("front")
        finally:
            assert engine.stop(timeout=10.0)

    assert_flat(cycle, "serve engine")


def test_a_serve_camera_reopened_many_times_compiles_nothing_again_and_leaks_nothing(clip):
    """A camera whose input ends (a file here, as a network file ends) is opened again by itself, quickly with this
    back-off, while the other camera of its group runs on: one compile for the service's life, files, threads and
    memory flat over the reopenings."""
    engine = Engine([camera("front", str(clip)), camera("back", str(clip))], None, say=lambda _msg: None,
                    reopen=Reopen(0.01, 0.01))
    assert len(engine.groups) == 1
    engine.start()
    try:
        def reopened(n: int):
            return lambda: min(s.reconnects for s in engine.cameras()) >= n

        wait_until(reopened(WARM * 2), 120, "the cameras' first reopenings")
        before = usage()
        wait_until(reopened(WARM * 2 + CYCLES * 3), 240, "many more reopenings")
        after = usage()
        statuses = engine.cameras()
    finally:
        assert engine.stop(timeout=10.0)
    assert engine.model_compiles() == {"face": 1}
    assert after[0] <= before[0] + 2, f"open files {before[0]} → {after[0]}"  # (+2: an opening in progress)
    assert after[1] <= before[1] + 2, f"threads {before[1]} → {after[1]}"
    assert after[2] - before[2] < RSS_SLACK_MB, f"RSS {before[2]:.0f} → {after[2]:.0f} MB"
    assert all(s.frames >= 6 * (WARM * 2 + CYCLES * 3) for s in statuses), statuses
