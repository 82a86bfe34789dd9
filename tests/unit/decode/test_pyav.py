"""zerocopy.decode.pyav: CPU decoding with read-ahead, giving up, and open errors."""

from __future__ import annotations

import threading
import time
import zlib

import pytest
from faults import write_undecodable

from zerocopy.budget import default_decode_threads
from zerocopy.decode.damage import DamageReport
from zerocopy.decode.opening import _open_error
from zerocopy.decode.pyav import PyAVDecoder
from zerocopy.samples import ClipSpec


def _checksums(decoder: PyAVDecoder) -> list[int]:
    out = []
    for decoded in decoder.frames():
        out.append(zlib.crc32(b"".join(bytes(p) for p in decoded.frame.planes)))
    decoder.close()
    return out


@pytest.mark.parametrize("threads", [1, 0, 3])
def test_read_ahead_decoding_gives_the_same_pixels(clips, threads):
    path, _ = clips("decode-parity.mp4", ClipSpec(width=640, height=360, frames=30, noise=3.0, pan=True))
    inline = _checksums(PyAVDecoder(path, threads=1))
    assert len(inline) == 30
    assert _checksums(PyAVDecoder(path, threads=threads, read_ahead=4)) == inline


@pytest.mark.slow
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
        dec.close()  # as `PreparedStream.close()` does: the decoder first, then the generator
        frames.close()
        assert dec._ahead is None
    assert not [t for t in threading.enumerate() if t.name == "zerocopy-decode"]


def test_on_cpu_decodes_with_the_threads_it_is_given_on_a_thread_of_its_own(clips):
    path, _ = clips("decode-parity.mp4", ClipSpec(width=640, height=360, frames=30, noise=3.0, pan=True))
    dec = PyAVDecoder.on_cpu(path, default_decode_threads())  # as a resolved RunConfig gives them
    assert dec.stream.codec_context.thread_count == default_decode_threads()
    assert dec.read_ahead > 0
    dec.close()
    dec = PyAVDecoder.on_cpu(path, 0)
    assert dec.stream.codec_context.thread_count == 0
    dec.close()


@pytest.mark.slow
def test_decoded_frames_are_records_and_paced_ones_carry_their_arrival(clips):
    path, _ = clips("decode-parity.mp4", ClipSpec(width=640, height=360, frames=30, noise=3.0, pan=True))
    dec = PyAVDecoder(path, threads=1, read_ahead=2)
    items = list(dec.frames())
    dec.close()
    assert len(items) == 30
    assert items[0].frame.width == 640 and items[0].decode_ms >= 0 and items[0].pts == 0.0
    assert {item.arrived for item in items} == {None}  # read as fast as it decodes: no arrival
    assert not dec.live and dec.damage.live_report is None and dec.container is None
    paced = PyAVDecoder(path, threads=1, read_ahead=2, realtime=True)
    before = time.perf_counter()
    arrived = [item.arrived for item in paced.frames()]
    paced.close()
    assert before <= arrived[0] and arrived == sorted(arrived) and arrived[-1] <= time.perf_counter()


def test_an_undecodable_stream_gives_up_quickly_instead_of_reading_it_all(tmp_path):
    from zerocopy.decode.pyav import NothingDecodes, PyAVDecoder

    path = write_undecodable(tmp_path / "undecodable.mkv", frames=200)
    decoder = PyAVDecoder(path, give_up_without_frame=8)
    with pytest.raises(NothingDecodes, match="8 packets in a row from a keyframe on failed"):
        for _ in decoder.frames():
            pass
    decoder.close()
    assert decoder.damage.packets_failed <= 10 * 8 + 8 + 1  # gave up long before the end
    plain = PyAVDecoder(path)  # without the limit (the software path) the damage is read to the end
    assert sum(1 for _ in plain.frames()) == 0
    plain.close()
    assert plain.damage.packets_failed >= 180  # (frame threads report some errors late, or merged)


@pytest.mark.slow
def test_a_stream_that_starts_mid_gop_is_not_taken_for_an_undecodable_one(tmp_path):
    """Before its first keyframe every packet fails on any decoder: that must not count as the GPU
    being unable to decode the codec (a cut file, a camera joined late)."""
    from zerocopy.decode.pyav import PyAVDecoder
    from zerocopy.samples import ClipSpec, write_clip

    full = tmp_path / "long-gop.ts"
    write_clip(full, ClipSpec(frames=300, width=320, height=180, options=(("g", "250"), ("bf", "0"))),
               container_format="mpegts")
    data = full.read_bytes()
    cut = tmp_path / "cut.ts"
    cut.write_bytes(data[(int(len(data) * 0.4) // 188) * 188:])  # at a TS packet boundary, mid-GOP
    decoder = PyAVDecoder(cut, give_up_without_frame=24)  # as the VA decoder is opened
    frames = sum(1 for _ in decoder.frames())
    decoder.close()
    assert frames >= 40, frames  # everything from the keyframe at frame 250 on (139 packets in)


def test_a_busy_or_forbidden_camera_says_so():
    busy = _open_error("/dev/video0", "device", OSError(16, "Device or resource busy"), DamageReport(), None)
    assert busy == "device busy (another program is using the camera)"
    denied = _open_error("/dev/video0", "device", PermissionError(13, "Permission denied"), DamageReport(), None)
    assert denied == "permission denied (is the user in the 'video' group?)"
