"""zerocopy.stats: CPU time counted by thread kind."""

from zerocopy.decode.pyav import PyAVDecoder
from zerocopy.samples import ClipSpec


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
