"""zerocopy.stats: CPU time counted by thread kind; step times and latency in bounded memory."""

import tracemalloc

import numpy as np
import pytest

from zerocopy.decode.pyav import PyAVDecoder
from zerocopy.samples import ClipSpec
from zerocopy.stats import STEPS, Distribution, StepTimes


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


def _synthetic_frames(n: int, seed: int = 16) -> list[list[float]]:
    """Per frame: decode, preprocess, inference, postprocess and latency in ms, spread as a run's are
    (log-normal, a tail of slow frames; a few postprocess times under the histogram's 0.01 ms)."""
    rng = np.random.default_rng(seed)
    cols = [rng.lognormal(np.log(m), s, n) for m, s in ((1.5, 0.4), (0.16, 0.3), (0.7, 0.2), (0.1, 1.5), (40, 0.8))]
    return np.column_stack(cols).tolist()


@pytest.mark.slow  # ~3 s: tracemalloc traces every float of 100,000 frames
def test_step_times_and_latency_keep_flat_memory_and_percentiles_within_one_percent():
    """A 24/7 stream must not grow the statistics: 100,000 frames hold no more than 10,000 did, and
    p50/p95 stay within `Distribution`'s documented 1 % of numpy's exact ones (mean: exact)."""
    frames = _synthetic_frames(100_000)
    steps, latency = StepTimes(), Distribution()
    tracemalloc.start()
    try:
        for i, (decode, pre, infer, post, lat) in enumerate(frames, 1):
            steps.add(decode, pre, infer, post)
            latency.add(lat)
            if i == 10_000:
                at_10k = tracemalloc.get_traced_memory()[0]
        grown = tracemalloc.get_traced_memory()[0] - at_10k
    finally:
        tracemalloc.stop()
    assert grown < 4096, f"the statistics grew by {grown} bytes from 10,000 to 100,000 frames"
    values = np.asarray(frames)
    kept = {**steps.steps, "latency": latency}
    for column, name in enumerate((*STEPS, "latency")):
        exact = values[:, column]
        assert kept[name].mean == pytest.approx(exact.mean(), rel=1e-9)
        for q in (50, 95):
            assert kept[name].percentile(q) == pytest.approx(np.percentile(exact, q), rel=0.01), (name, q)


def test_distribution_is_exact_at_its_ends_and_empty_as_before():
    d = Distribution()
    assert d.summary() == {"mean_ms": 0.0, "p50_ms": 0.0, "p95_ms": 0.0}  # the report's shape, no frame
    for v in (0.0, 3.0, 90_000.0):  # under, inside and over the bins
        d.add(v)
    assert d.percentile(0) == 0.0 and d.percentile(100) == 90_000.0
    assert d.percentile(50) == pytest.approx(3.0, rel=0.01)
    d.reset()
    assert d.count == 0 and d.summary()["p95_ms"] == 0.0


def test_step_times_can_start_afresh_after_a_warm_up():
    steps = StepTimes()
    for _ in range(10):
        steps.add(50.0, 50.0, 50.0, 50.0)  # slow warm-up frames
    steps.reset()
    for _ in range(10):
        steps.add(1.0, 2.0, 3.0, 4.0)
    assert steps.summary()["inference"] == {"mean_ms": 3.0, "p50_ms": 3.0, "p95_ms": 3.0}
    assert steps.stages is steps.steps  # the deprecated name
