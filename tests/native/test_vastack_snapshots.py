"""Snapshots on the VA paths (`zerocopy.resize.vaapi.SurfaceDownload`: the chosen frame alone downloaded) in the VA
stack, as far as no driver allows: the real filters take the download chain, a real VA-API frame (the bridge's
self-test frame, through PyAV's own graph) gives the downloader's buffer source the frames context, and the
failure configuring it gives without a driver costs the object its snapshot, said once, never the run. Downloading a
real surface needs a driver: not run here (igpu). Runs in the VA stack root (`make test-va-stack`) and on this
machine's own system (`make test-gpu-host`)."""

from __future__ import annotations

import errno
import gc
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import av
import av.filter
import numpy as np
import pytest
from test_vastack_motion import VA_PYAV, va_frame

from zerocopy.bridge import Bridge, bridge_status
from zerocopy.bridge.selftest import SURFACE
from zerocopy.config import RunConfig
from zerocopy.detections import Detections
from zerocopy.frames import PreparedFrame
from zerocopy.resize.vaapi import PICTURE_CHAIN, SurfaceDownload
from zerocopy.snapshots.stage import Snapshots, SnapshotSaved
from zerocopy.stages import InputInfo, StageChain
from zerocopy.track import ObjectEvent
from zerocopy.track.stage import InputTracks

pytestmark = [pytest.mark.vastack, pytest.mark.native,
              pytest.mark.skipif(not VA_PYAV, reason="needs a PyAV built with VA-API (make setup-gpu; in CI: make "
                                 "test-gpu-host and make test-va-stack), as tests/native/test_vastack.py")]

W, H = 64, 48  # the self-test frame's size
RATE = 5.0


@contextmanager
def selftest_va_frame() -> Iterator[tuple[Bridge, object, av.VideoFrame]]:
    """(the bridge, the raw self-test frame, a PyAV VA-API frame of it). The bridge must load next to a VA-API PyAV
    (its FFmpeg has headers). The frame's display is zeroed memory, not a VADisplay: were anything to reach libva,
    libva would refuse it as an invalid display instead of reading a made-up address."""
    bridge, why = bridge_status()
    if bridge is None:
        pytest.fail(f"no bridge next to this VA-API PyAV: {why}")
    ffi, lib = bridge.ffi, bridge.lib
    display = ffi.new("char[4096]")
    raw = lib.zcva_selftest_frame(ffi.cast("void *", display), SURFACE, W, H)
    assert raw != ffi.NULL
    try:
        frame = va_frame(bridge, raw)
        assert frame.format.name == "vaapi" and bridge.surface_id(frame) == SURFACE
        yield bridge, raw, frame
        del frame
        gc.collect()
    finally:
        lib.zcva_selftest_frame_free(raw)


def test_the_real_filters_take_the_download_chain():
    """hwdownload, format=nv12|p010le (the decoder's 8- or 10-bit layout, in system memory) and buffersink parse our
    arguments (FFmpeg parses them when a filter is added)."""
    assert [name for name, _ in PICTURE_CHAIN] == ["hwdownload", "format", "buffersink"]
    graph = av.filter.Graph()
    nodes = [graph.add(name, args) if args else graph.add(name) for name, args in PICTURE_CHAIN]
    assert [n.filter.name for n in nodes] == ["hwdownload", "format", "buffersink"]


def test_the_download_graph_takes_a_real_va_frame_up_to_the_driver():
    """Made from a real VA-API frame: the downloader's buffer source takes a reference on the frame's `hw_frames_ctx`
    through the bridge, the chain is linked to a buffersink, and freeing the graph gives the reference back."""
    with selftest_va_frame() as (bridge, raw, frame):
        refcount = bridge.lib.zcva_selftest_frames_refcount
        before = refcount(raw)
        graph, src, sink = SurfaceDownload(bridge).graph(frame)
        assert refcount(raw) == before + 1
        assert sink.filter.name == "buffersink"
        del graph, src, sink
        gc.collect()
        assert refcount(raw) == before


def test_without_a_driver_the_download_is_refused_and_holds_nothing():
    """What a download gives here: hwdownload cannot configure its output (a frames context never initialised by a
    driver lists no format to download to), an `av.FFmpegError` (EINVAL, a ValueError), and the graph that failed
    is freed with its reference on the decoder's pool."""
    with selftest_va_frame() as (bridge, raw, frame):
        refcount = bridge.lib.zcva_selftest_frames_refcount
        before = refcount(raw)
        download = SurfaceDownload(bridge)
        with pytest.raises(av.FFmpegError) as e:
            download(frame)
        assert isinstance(e.value, ValueError) and e.value.errno == errno.EINVAL, repr(e.value)
        del e  # its traceback holds the graph that failed
        gc.collect()
        assert refcount(raw) == before


def boxes(score: float) -> Detections:
    """Two objects, apart."""
    return Detections(np.array([[2, 2, 20, 30], [40, 10, 60, 40]], np.float32), np.array([score, score], np.float32),
                      np.array([0, 0], np.int32))


def test_a_download_that_fails_gives_no_snapshot_says_why_once_and_the_run_goes_on(tmp_path, caplog):
    """The stage fed a real VA-API frame as the decoded frame (`source`, no picture kept) with two tracked objects
    whose scores rise: each download fails here, so no object has a snapshot, one warning says why, nothing is
    raised, and the objects' events come as without snapshots."""
    config = RunConfig(track=True, min_hits=2, max_lost=0.5)
    stage = Snapshots(["person"], tmp_path / "snaps", interval=60)
    chain = StageChain([InputTracks(config, ["person"]), stage])
    events = []
    with selftest_va_frame() as (_, _, va), caplog.at_level(logging.WARNING, logger="zerocopy"):
        chain.begin(InputInfo(index=0, source="cam.mp4", camera="cam", rate=RATE))
        for i in range(12):  # six frames with the objects (their scores rising), then six without: their `end`
            frame = PreparedFrame(index=i, pts=i / RATE, width=W, height=H, geometry=None, inputs={}, source=va)
            detections = boxes(0.5 + 0.05 * i) if i < 6 else Detections.empty()
            events += chain(frame, detections, 0, lambda st, e: e).events
        events += chain.end(0)
        chain.release()
    objects = [e for e in events if isinstance(e, ObjectEvent)]
    assert sorted(e.type for e in objects) == ["end", "end", "new", "new"]
    assert not any(e.has_snapshot for e in objects)
    assert not [e for e in events if isinstance(e, SnapshotSaved)] and not list((tmp_path / "snaps").rglob("*.jpg"))
    said = [r.getMessage() for r in caplog.records if r.name == "zerocopy"]
    assert len(said) == 1 and said[0].startswith("cam: no snapshot") and "downloading" in said[0], said
    assert "Invalid argument" in said[0], said  # the reason: FFmpeg's
