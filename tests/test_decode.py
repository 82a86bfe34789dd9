"""CPU decoding: the read-ahead thread, the thread budget, and that neither changes a pixel."""

import threading
import time
import zlib

import pytest

from zerocopy.budget import decode_threads, inference_threads, usable_cores
from zerocopy.decode.pyav import PyAVDecoder
from zerocopy.decode.readahead import ReadAhead
from zerocopy.samples import ClipSpec


def _counting(n, produced, fail_at=None, finished=None):
    try:
        for i in range(n):
            if i == fail_at:
                raise RuntimeError(f"broken at {i}")
            produced.append(i)
            yield i
    finally:
        if finished is not None:
            finished.append(threading.current_thread().name)


def test_read_ahead_yields_everything_in_order():
    produced: list[int] = []
    ahead = ReadAhead(_counting(200, produced), depth=3)
    assert list(ahead) == list(range(200))
    ahead.close()
    assert not ahead.running


def test_read_ahead_raises_the_sources_error_after_the_items_before_it():
    ahead = ReadAhead(_counting(10, [], fail_at=6), depth=2)
    got = []
    with pytest.raises(RuntimeError, match="broken at 6"):
        for item in ahead:
            got.append(item)
    assert got == [0, 1, 2, 3, 4, 5]
    ahead.close()


def test_read_ahead_stays_within_its_depth_and_stops_on_close():
    produced: list[int] = []
    finished: list[str] = []
    ahead = ReadAhead(_counting(10_000, produced, finished=finished), depth=4, name="test-read-ahead")
    it = iter(ahead)
    assert next(it) == 0
    time.sleep(0.3)  # ample time to run ahead, if it would
    assert len(produced) <= 1 + 4 + 1  # the one taken, a full queue, one waiting to be put
    ahead.close()
    assert not ahead.running
    assert finished == ["test-read-ahead"]  # the source was closed, on its own thread
    assert len(produced) < 10_000


def test_read_ahead_refuses_a_depth_below_one():
    with pytest.raises(ValueError):
        ReadAhead(iter([]), depth=0)


def test_thread_budget_splits_the_cores():
    cores = usable_cores()
    assert inference_threads() == max(1, cores // 2)
    assert decode_threads() == max(1, cores - inference_threads())
    assert decode_threads(device="GPU") == decode_threads(device="GPU.1") == cores  # the CPU is the decoder's
    assert decode_threads(0) == 0 and decode_threads(3) == 3 and decode_threads(2, "GPU") == 2
    with pytest.raises(ValueError):
        decode_threads(-1)


def test_thread_budget_for_parallel_inputs():
    """Several inputs at once: CPU inference may use every core and each decoder gets one thread;
    with GPU inference the decoders share the cores; an explicit count stays as given."""
    cores = usable_cores()
    assert inference_threads(3) == cores and inference_threads(1) == inference_threads()
    assert decode_threads(inputs=64) == decode_threads(inputs=2) == decode_threads(device="GPU", inputs=64) == 1
    assert decode_threads(device="GPU", inputs=2) == max(1, cores // 2)  # GPU inference: the CPU decodes
    assert decode_threads(3, inputs=8) == 3


def test_parallel_pipeline_budgets_by_its_inputs(tmp_path):
    """The pipeline compiles for the inputs it runs at once, and reports what it used."""
    from zerocopy.api import Detector
    from zerocopy.samples import ClipSpec, write_clip

    clip = str(tmp_path / "a.mp4")
    write_clip(clip, ClipSpec(width=320, height=240, frames=4))
    with Detector("face", path="software", device="CPU") as det:
        assert sum(1 for _ in det.run([clip, clip], parallel=True)) == 8
        p = det._pipeline
        assert p.inputs == 2 and p.decode_threads == decode_threads(inputs=2)
        assert int(p.model.config["INFERENCE_NUM_THREADS"]) == inference_threads(2)
        assert det.report()["decode_threads"] == p.decode_threads


def _checksums(decoder: PyAVDecoder) -> list[int]:
    out = []
    for frame, _ms, _pts in decoder.frames():
        out.append(zlib.crc32(b"".join(bytes(p) for p in frame.planes)))
    decoder.close()
    return out


@pytest.mark.parametrize("threads", [1, 0, 3])
def test_read_ahead_decoding_gives_the_same_pixels(clips, threads):
    path, _ = clips("decode-parity.mp4", ClipSpec(width=640, height=360, frames=30, noise=3.0, pan=True))
    inline = _checksums(PyAVDecoder(path, threads=1))
    assert len(inline) == 30
    assert _checksums(PyAVDecoder(path, threads=threads, read_ahead=4)) == inline


@pytest.mark.timeout(120)
@pytest.mark.parametrize("threads", [1, 3])
def test_closing_the_decoder_mid_stream_stops_the_read_ahead_first(clips, threads):
    """The codec must never be driven from two threads: closing while the read-ahead thread is still
    decoding crashed the process before `close()` stopped that thread first."""
    path, _ = clips("decode-close.mp4", ClipSpec(width=1280, height=720, frames=40))
    for stop_after in (1, 2, 5, 9):
        dec = PyAVDecoder(path, threads=threads, read_ahead=4)
        frames = dec.frames()
        for _ in range(stop_after):
            next(frames)
        dec.close()  # as `_Stream.close()` does: the decoder first, then the generator
        frames.close()
        assert dec._ahead is None
    assert not [t for t in threading.enumerate() if t.name == "zerocopy-decode"]


def test_on_cpu_uses_the_budget(clips):
    path, _ = clips("decode-parity.mp4", ClipSpec(width=640, height=360, frames=30, noise=3.0, pan=True))
    dec = PyAVDecoder.on_cpu(path)
    assert dec.stream.codec_context.thread_count == decode_threads()
    assert dec.read_ahead > 0
    dec.close()
    dec = PyAVDecoder.on_cpu(path, 0)
    assert dec.stream.codec_context.thread_count == 0
    dec.close()


def test_cpu_is_counted_by_thread_kind(clips):
    """The read-ahead thread carries its OS name, so its CPU counts as decoding, not as `other`."""
    from zerocopy.stats import cpu_by_thread_kind, thread_cpu_seconds

    path, _ = clips("decode-parity.mp4", ClipSpec(width=640, height=360, frames=30, noise=3.0, pan=True))
    dec = PyAVDecoder(path, threads=1, read_ahead=2)
    frames = dec.frames()
    next(frames)
    before = thread_cpu_seconds()
    for _ in range(25):
        next(frames)
    after = thread_cpu_seconds()
    dec.close()
    frames.close()
    kinds = {kind for kind, _ in after.values()}
    assert "decoding" in kinds and "main" in kinds
    by_kind = cpu_by_thread_kind(before, after, 25)
    assert by_kind["decoding"] >= 0 and set(by_kind) == {"decoding", "main", "other"}


def test_read_ahead_stop_ends_a_waiting_consumer_and_close_can_leave_a_blocked_source():
    release = threading.Event()
    finished: list[str] = []

    def blocked():
        try:
            yield 1
            release.wait(5)  # a read that does not return (a live source without data)
            yield 2
        finally:
            finished.append(threading.current_thread().name)

    ahead = ReadAhead(blocked(), depth=2, name="test-blocked")
    got: list[int] = []
    consumer = threading.Thread(target=lambda: got.extend(ahead))
    consumer.start()
    time.sleep(0.2)
    ahead.stop()  # from another thread: the consumer sees the end at once
    consumer.join(1.0)
    assert not consumer.is_alive() and got == [1]
    t0 = time.perf_counter()
    assert ahead.close(wait=0.2) is False  # still blocked: left to end by itself
    assert time.perf_counter() - t0 < 0.5 and ahead.running
    release.set()
    for _ in range(100):
        if not ahead.running:
            break
        time.sleep(0.02)
    assert not ahead.running and finished == ["test-blocked"]  # it ended and closed its source, on its thread


def test_decoded_frames_unpack_as_before_and_paced_ones_carry_their_arrival(clips):
    path, _ = clips("decode-parity.mp4", ClipSpec(width=640, height=360, frames=30, noise=3.0, pan=True))
    dec = PyAVDecoder(path, threads=1, read_ahead=2)
    items = list(dec.frames())
    dec.close()
    assert len(items) == 30 and all(len(item) == 3 for item in items)
    frame, ms, pts = items[0]
    assert frame.width == 640 and ms >= 0 and pts == 0.0
    assert {item.arrived for item in items} == {None}  # read as fast as it decodes: no arrival
    assert not dec.live and dec.damage.live is None and dec.container is None
    paced = PyAVDecoder(path, threads=1, read_ahead=2, realtime=True)
    before = time.perf_counter()
    arrived = [item.arrived for item in paced.frames()]
    paced.close()
    assert before <= arrived[0] and arrived == sorted(arrived) and arrived[-1] <= time.perf_counter()
