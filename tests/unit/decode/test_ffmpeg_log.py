"""zerocopy.decode.ffmpeg_log: FFmpeg's messages go to the input they are about, in bounded memory."""

import threading
import tracemalloc

import av.logging

from zerocopy.decode.damage import LAST_MESSAGES, DamageReport
from zerocopy.decode.ffmpeg_log import FFmpegLogCapture


def _log(i: int, kinds: int = 3) -> None:
    # the numbers differ from message to message, as a decoder's positions do (PyAV skips repeats)
    av.logging.log(av.logging.ERROR, "h264", f"error while decoding MB {i} {i % kinds}")


def test_a_capture_open_for_months_keeps_counts_and_the_last_messages_not_every_one():
    """Drained as the reading thread does every few packets, 30,000 messages hold no more memory
    than 3,000 did, and every one is counted."""
    damage = DamageReport()
    log = FFmpegLogCapture(damage)
    log.start(local=True)
    try:
        tracemalloc.start()
        for i in range(30_000):
            _log(i)
            if i % 50 == 49:
                log.drain()
            if i == 2_999:
                at_3k = tracemalloc.get_traced_memory()[0]
        grown = tracemalloc.get_traced_memory()[0] - at_3k
    finally:
        tracemalloc.stop()
        log.stop()
    assert grown < 4096, f"the capture grew by {grown} bytes from 3,000 to 30,000 messages"
    # (PyAV may hand this thread a "repeated more times" summary of another thread's messages, e.g.
    # an earlier test's abandoned network open: only this test's own kind is asserted exactly)
    assert damage.decoder_messages["h264: error while decoding MB"] == 30_000
    assert len(damage.last_messages) == LAST_MESSAGES
    ours = [m for m in damage.last_messages if m.startswith("h264: ")]
    assert ours and ours == [f"h264: error while decoding MB {i} {i % 3}" for i in range(30_000 - len(ours), 30_000)]


def test_messages_of_threads_without_a_capture_are_drained_too():
    """FFmpeg's frame threads log into the one shared capture: a listener takes its share as it goes,
    and nothing it took stays behind."""
    damage = DamageReport()
    log = FFmpegLogCapture(damage)
    log.start(local=False)
    # a shared capture takes every thread's messages, an earlier test's lingering network open's too ("http: Stream
    # ends prematurely", "moov atom not found" were seen in a shuffled order): only this test's own kind is counted
    ours = "h264: error while decoding MB"
    try:
        for i in range(3):
            t = threading.Thread(target=_log, args=(i,))
            t.start()
            t.join()
            log.drain()
            assert damage.decoder_messages[ours] == i + 1, damage.decoder_messages
    finally:
        log.stop()
    assert damage.decoder_messages[ours] == 3  # none counted twice at the end

