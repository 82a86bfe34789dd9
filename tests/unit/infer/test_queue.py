"""zerocopy.infer.queue: a failed or late request is an error in order, never a hang."""

from __future__ import annotations

import threading

import pytest

from zerocopy.errors import InferenceError
from zerocopy.infer.model import WrappedModel, make_core, resolve_spec
from zerocopy.infer.queue import InferenceScheduler


def _poison_scheduler(poison_model, nireq=2):
    core = make_core(None)
    spec = resolve_spec(str(poison_model), core=core)
    model = WrappedModel(core, spec, "nv12").compile("CPU")
    return model, InferenceScheduler(model, _Host(model.input_names), nireq)


class _Host:
    """Binds frames whose Y plane value says whether the request is poisoned (255) or not."""

    def __init__(self, names):
        self.names = names

    def bind(self, request, frames, slot):
        y, uv = (request.get_tensor(n).data for n in self.names)
        y[...] = frames[0].inputs["y"]
        uv[...] = 128


def _frames(model, values):
    from zerocopy.frames import Geometry, PreparedFrame

    g = Geometry.fit(model.width, model.height, model.width, model.height, "stretch")
    return [PreparedFrame(index=i, pts=None, width=g.src_w, height=g.src_h, geometry=g,
                          inputs={"y": v}) for i, v in enumerate(values)]


def test_a_failed_request_is_raised_in_order_and_never_hangs(poison_model):
    """OpenVINO does not call the completion callback for a failed request; waiting for it would hang."""
    model, scheduler = _poison_scheduler(poison_model, nireq=2)
    frames = _frames(model, [10, 20, 255, 30, 40])
    delivered = []
    with pytest.raises(InferenceError, match="Reshape"):
        for f in frames:
            scheduler.submit([f])
            delivered += [r.frame.index for r in scheduler.results()]
    with pytest.raises(InferenceError, match="inference failed: .*Reshape"):
        delivered += [r.frame.index for r in scheduler.results(wait=True)]
    assert delivered == [0, 1]  # everything before the failed frame, in order
    scheduler.wait_all()  # does not raise again, does not hang


def test_a_request_that_does_not_finish_in_time_is_an_error(poison_model, monkeypatch):
    model, scheduler = _poison_scheduler(poison_model)
    # The request's completion is held until the end of the test, so it cannot finish within the 0 s
    # asked: without that, the tiny poison model could finish before the wait on an idle machine.
    release = threading.Event()
    outputs_of = model.outputs_of

    def held(request):
        release.wait(60)
        return outputs_of(request)

    monkeypatch.setattr(model, "outputs_of", held)
    try:
        scheduler.submit(_frames(model, [10]))
        with pytest.raises(InferenceError, match="did not complete within 0 s"):
            list(scheduler.results(wait=True, timeout=0.0))
        assert scheduler.abandoned  # never waited on again: the pipeline's cleanup must not hang on it
        scheduler.wait_all()
        assert list(scheduler.results(wait=True)) == []
    finally:
        release.set()
