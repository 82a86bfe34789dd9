"""zerocopy.pipeline: what it compiles for its inputs, and the order it releases things in."""

from __future__ import annotations

from zerocopy import paths
from zerocopy.budget import default_decode_threads, inference_threads
from zerocopy.infer.model import WrappedModel, make_core, resolve_spec
from zerocopy.samples import ClipSpec


def test_parallel_pipeline_budgets_by_its_inputs(tmp_path):
    """The pipeline compiles for the inputs it runs at once, and reports what it used."""
    from zerocopy.api import Detector
    from zerocopy.samples import ClipSpec, write_clip

    clip = str(tmp_path / "a.mp4")
    write_clip(clip, ClipSpec(width=320, height=240, frames=4))
    with Detector("face", path="software", device="CPU") as det:
        assert sum(1 for _ in det.run([clip, clip], parallel=True)) == 8
        report = det.report()
        assert report["config"]["decode_threads"] == report["decode_threads"] == default_decode_threads(inputs=2)
        assert int(det._pipeline.model.ov_config["INFERENCE_NUM_THREADS"]) == inference_threads(2)


def test_the_pipeline_releases_the_model_before_the_va_device(clips, face_model_path):
    """The compiled model (and its remote context) must never outlive the VA device it uses."""
    from zerocopy.config import RunConfig
    from zerocopy.pipeline import Pipeline

    order = []

    class Device:
        def close(self):
            order.append("device" if pipeline.model.compiled is None else "device before model")

    clip, truth = clips("fallback.mp4", ClipSpec(frames=12))
    core = make_core(None)
    model = WrappedModel(core, resolve_spec("face", core=core), "nv12")
    config = RunConfig(model="face", path="software").resolve(spec=model.spec, device="CPU")
    pipeline = Pipeline(model, paths.front_for("software"), config)
    pipeline.va.device = Device()
    assert sum(1 for _ in pipeline.events([str(clip)])) == len(truth) + 2  # begin, frames, end
    result = pipeline.result()
    assert result.frames == len(truth) and order == ["device"] and pipeline.va.device is None
