"""The second-model stage: per frame, the boxes each region model runs on, cropped, inferred with every
region in flight at once, decoded and attached; with `min_presence`, boxes a landmark model says are
not what it models are dropped.

It runs where detections are made (`Pipeline.done`), on the run's device and, on the zero-copy
path, on the run's remote context. Its times are its own (`RoiTimes`): per region and per frame.
"""

from __future__ import annotations

import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import openvino as ov

from zerocopy.detections import Attribute, Detections
from zerocopy.errors import InferenceError, openvino_reason
from zerocopy.frames import PreparedFrame
from zerocopy.infer.compiled import CompiledModels
from zerocopy.infer.model import WrappedModel
from zerocopy.infer.requests import RequestQueue
from zerocopy.postprocess.regions import RoiDecoder, RoiResult, make_roi_decoder
from zerocopy.resize.crops import Crop, central_crop, crop_for
from zerocopy.resize.regions import Fed, RoiFeed
from zerocopy.stages.base import Activation, StageBase
from zerocopy.stats import Distribution

ROI_NIREQ = 4  # regions in flight at once per region model


@dataclass(kw_only=True)
class RoiTimes:
    """Region stage times: cropping and resizing per region, the whole stage per frame (with regions)."""

    crop: Distribution = field(default_factory=Distribution)  # ms per region (wall time)
    # the same, in CPU time of the thread that crops: what cropping costs, without the waits for the cores and
    # the GIL that inference and decoding (on other threads) make it share
    crop_cpu: Distribution = field(default_factory=Distribution)
    inference: Distribution = field(default_factory=Distribution)  # ms per region (its share of the wall time)
    frame: Distribution = field(default_factory=Distribution)  # ms per frame that had regions
    regions: int = 0
    seconds: float = 0.0  # wall time in the stage

    def summary(self) -> dict[str, Any]:
        return {"regions": self.regions, "per_region_crop_ms": self.crop.summary(),
                "per_region_crop_cpu_ms": self.crop_cpu.summary(),
                "per_region_inference_ms": self.inference.summary(), "per_frame_ms": self.frame.summary(),
                "regions_per_s": round(self.regions / self.seconds, 1) if self.seconds > 0 else 0.0}

    def add_regions(self, n: int, crop_s: float, crop_cpu_s: float, inference_s: float) -> None:
        """`n` regions cut and inferred together: each one's share of the times."""
        for _ in range(n):
            self.crop.add(crop_s * 1e3 / n)
            self.crop_cpu.add(crop_cpu_s * 1e3 / n)
            self.inference.add(inference_s * 1e3 / n)

    def add_frame(self, seconds: float, regions: int) -> None:
        """A frame that had `regions`, and the stage's time on it."""
        self.frame.add(seconds * 1e3)
        self.regions += regions
        self.seconds += seconds

    def reset(self) -> None:
        for d in (self.crop, self.crop_cpu, self.inference, self.frame):
            d.reset()
        self.regions, self.seconds = 0, 0.0


class RegionRunner:
    """A model run on regions of a frame (`wrapped` for the path's region input): compiled beside the
    detector, every region of a frame in flight at once."""

    def __init__(self, wrapped: WrappedModel):
        self.wrapped = wrapped
        self.feed: RoiFeed | None = None
        self._queue: RequestQueue | None = None
        self._outputs: dict[int, dict[str, np.ndarray]] = {}

    @property
    def name(self) -> str:
        return self.wrapped.spec.name

    def start(self, device: str, context: Any, ov_config: dict[str, Any], feed: RoiFeed,
              models: CompiledModels | None = None) -> None:
        """Compiled on `device` (and the VA `context`), fed by the path's `feed`, with its request queue."""
        self.wrapped.compile(device, context, ov_config, models=models)
        self.feed = feed
        self._renew_queue()

    def _renew_queue(self) -> None:
        """A new request queue, the old one closed first (`RequestQueue`'s rule)."""
        old, self._queue = self._queue, None
        if old is not None:
            old.close()
        self._queue = RequestQueue(self.wrapped.compiled, ROI_NIREQ, self._done)

    def release(self) -> None:
        if self._queue is not None:
            self._queue.close()
        self._queue, self.feed = None, None
        self.wrapped.release()

    def _done(self, request: ov.InferRequest, slot: int) -> None:
        self._outputs[slot] = self.wrapped.outputs_of(request)

    def run(self, fed: Sequence[Fed]) -> list[dict[str, np.ndarray]]:
        """Every region in flight at once (up to the queue's requests); each one's outputs, in order."""
        assert self._queue is not None, "start first"
        self._outputs = {}
        try:
            for i, region in enumerate(fed):
                _bind(self._queue[self._queue.get_idle_request_id()], region.inputs)
                self._queue.hold(i, region)  # its remote tensors and VA frame, until its request is done
                self._queue.start_async(userdata=i)
            self._queue.wait_all()
        except BaseException as e:
            # OpenVINO's queue rethrows a failure (its own or its callback's) from then on: the next frame gets a new
            # one, once the old one's requests are done; the failure's frames must not keep a request (so its
            # callback) alive meanwhile
            traceback.clear_frames(e.__traceback__)
            self._renew_queue()
            if isinstance(e, RuntimeError):
                raise InferenceError(f"{self.wrapped.spec.name} failed on a region: {openvino_reason(e)}") from None
            raise
        self._queue.let_go()
        return [self._outputs[i] for i in range(len(fed))]

    def cut_and_run(self, source: Any, crops: Sequence[Crop], times: RoiTimes) -> tuple[list[Fed], list[dict]]:
        """`crops` of `source` cut by the path's feed and run; each region's share of the times into `times`."""
        assert self.feed is not None, "start first"
        t0, c0 = time.perf_counter(), time.thread_time()
        fed = self.feed(source, crops)
        t1, c1 = time.perf_counter(), time.thread_time()
        outputs = self.run(fed)
        times.add_regions(len(crops), t1 - t0, c1 - c0, time.perf_counter() - t1)
        return fed, outputs


def _bind(request: ov.InferRequest, inputs: dict[str, Any]) -> None:
    """A region's inputs into its request: host arrays copied into the request's tensors, remote tensors set."""
    for name, value in inputs.items():
        if isinstance(value, np.ndarray):
            request.get_tensor(name).data[...] = value
        else:  # a remote tensor over a VA surface
            request.set_tensor(name, value)


class RegionModel(RegionRunner):
    """One `--classify` model in a run: wrapped for the path's input, run on the boxes of `on_labels` (detector
    label indices; None: every box), at most `max_rois` per frame, the largest first."""

    def __init__(self, wrapped: WrappedModel, kind: str, on_labels: tuple[int, ...] | None, max_rois: int,
                 expand: float, square: bool):
        super().__init__(wrapped)
        self.kind, self.on_labels, self.max_rois = kind, on_labels, max_rois
        self.expand, self.square = expand, square
        self.decoder: RoiDecoder = make_roi_decoder(kind, wrapped.spec.name, wrapped.width, wrapped.height,
                                                    wrapped.output_shapes, wrapped.spec.labels)

    def chosen(self, dets: Detections) -> np.ndarray:
        """Indices of the boxes this model runs on: its labels, the largest first, at most `max_rois`."""
        idx = np.arange(len(dets))
        if self.on_labels is not None:
            idx = idx[np.isin(dets.labels, self.on_labels)]
        area = (dets.xyxy[idx, 2] - dets.xyxy[idx, 0]) * (dets.xyxy[idx, 3] - dets.xyxy[idx, 1])
        return idx[np.argsort(-area, kind="stable")][: self.max_rois]

    def decode(self, fed: Sequence[Fed], outputs: Sequence[dict]) -> list[RoiResult]:
        return [self.decoder(out, region.place) for out, region in zip(outputs, fed, strict=True)]

    def infer(self, fed: Sequence[Fed]) -> list[RoiResult]:
        """Every region in flight at once, then decoded in order."""
        return self.decode(fed, self.run(fed))


class CroppingStage(StageBase):
    """A `Stage` that cuts regions of the decoded frame and runs a model on them (`apply`), timing itself
    (`times`, its report): region models and tiles."""

    crops = True
    own_times = True
    times: RoiTimes

    def apply(self, frame: PreparedFrame, dets: Detections) -> Detections:
        raise NotImplementedError

    def report(self) -> RoiTimes:
        return self.times

    def __call__(self, frame: PreparedFrame, detections: Detections | None, input: int) -> \
            tuple[Detections | None, list]:
        return (self.apply(frame, detections) if detections is not None else None), []


class RoiStage(CroppingStage):
    """Every region model of a run (`--classify`), applied to one frame's detections at a time."""

    name = "rois"
    title = "region models"

    def __init__(self, models: Sequence[RegionModel], min_presence: float | None = None):
        self.models, self.min_presence = list(models), min_presence
        self.times = RoiTimes()

    def activate(self, at: Activation) -> None:
        for model in self.models:
            model.start(at.device, at.context, at.ov_config, at.feed(model.wrapped), at.models)

    @property
    def masks(self) -> bool:
        """Whether a model of the stage draws masks (`segmentation`): each frame then gets one."""
        return any(m.decoder.masks for m in self.models)

    def apply(self, frame: PreparedFrame, dets: Detections) -> Detections:
        """The boxes with what the region models said of them; a mask model's patches are composed (the
        highest value where they overlap) into `frame.output`, a frame-sized map (zero where no box is)."""
        if self.masks:
            frame.output = np.zeros((frame.height, frame.width), np.float32)
        if not len(dets) or frame.source is None:
            return dets
        t_frame = time.perf_counter()
        attributes: list[list[Attribute]] = [[] for _ in range(len(dets))]
        keypoints: list[np.ndarray | None] = [None] * len(dets)
        present = np.ones(len(dets), bool)  # what a landmark model says is what it models (`min_presence`)
        regions = 0
        for model in self.models:
            picked = model.chosen(dets)
            crops = [crop_for(dets.xyxy[i], frame.width, frame.height, model.expand, model.square) for i in picked]
            boxes = [i for i, c in zip(picked, crops, strict=True) if c is not None]
            if not boxes:
                continue
            fed, outputs = model.cut_and_run(frame.source, [c for c in crops if c is not None], self.times)
            results = model.decode(fed, outputs)
            regions += len(boxes)
            for i, res, region in zip(boxes, results, fed, strict=True):
                if res.mask is not None:
                    x0, y0, x1, y1 = region.place.crop.xyxy
                    np.maximum(frame.output[y0:y1, x0:x1], res.mask, out=frame.output[y0:y1, x0:x1])
                attributes[i].extend(res.attributes)
                if res.keypoints is not None and keypoints[i] is None:
                    keypoints[i] = res.keypoints
                if self.min_presence is not None and res.presence is not None and res.presence < self.min_presence:
                    present[i] = False
        if regions:
            self.times.add_frame(time.perf_counter() - t_frame, regions)
        out = dets.with_extras(attributes, keypoints)
        return out if present.all() else out[present]

    def prime(self, frame: PreparedFrame) -> None:
        """Each model once on the middle of the first frame, whether it has boxes or not: a path that
        cannot crop or run regions (a VA driver that refuses cropped surfaces, a GPU that cannot run the
        model) fails here, during the path's trial, so `auto` can move on."""
        if frame.source is None:
            return
        for model in self.models:
            assert model.feed is not None, "activate first"
            model.infer(model.feed(frame.source, [central_crop(frame.width, frame.height)]))

    def release(self) -> None:
        for model in self.models:
            model.release()
