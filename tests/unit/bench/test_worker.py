"""zerocopy.bench.worker: what a measuring run reports."""

import pytest

from zerocopy.bench.worker import MeterSink, NothingMeasured


def test_a_run_that_measured_nothing_is_an_error_not_a_figure():
    meter = MeterSink(warmup=30, frames=300)
    meter.write(None, None)  # a photo: 1 frame, all of it warm-up
    with pytest.raises(NothingMeasured, match="no frame measured: 1 decoded"):
        meter.figures()
    for _ in range(30):
        meter.write(None, None)
    assert meter.figures()["frames"] == 1 and meter.figures()["fps"] > 0
