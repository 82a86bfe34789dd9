"""One model wrapper for every path: read once, NV12 (or BGR) input built into the graph, compiled.

`PrePostProcessor` moves colour conversion, mean/scale and layout into the compiled model, so the
zero-copy, copy and software paths feed identical u8 NV12 planes to the same graph and only the
memory the planes live in differs.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple

import openvino as ov
from openvino.preprocess import ColorFormat, PrePostProcessor

from zerocopy.catalog import CATALOG, CatalogEntry
from zerocopy.catalog.fetch import pull
from zerocopy.errors import ConfigError, ModelChoiceError, ModelError, openvino_reason
from zerocopy.infer.properties import default_config
from zerocopy.names import spelled
from zerocopy.postprocess import Postprocessor, guess_postprocess, make_postprocessor

if TYPE_CHECKING:
    from zerocopy.infer.compiled import CompiledModels

# A tensor's first `.data` builds a static of OpenVINO's binding that lets go of the GIL while it is built: two
# threads' first `.data` at once (serve's camera groups, their first inference) deadlocked for good. Built here, once.
_ = ov.Tensor(ov.Type.f32, ov.Shape([1])).data
InputKind = Literal["nv12", "bgr"]
_COLOURS = {"RGB": ColorFormat.RGB, "BGR": ColorFormat.BGR}
# How models without a catalogue entry expect their input, by postprocessing.
_DEFAULT_FEED = {
    "detection-output": {"colour": "BGR", "mean": 0.0, "scale": 1.0, "resize": "stretch"},
    "yolo": {"colour": "RGB", "mean": 0.0, "scale": 255.0, "resize": "letterbox"},
    "anchor-ssd": {"colour": "RGB", "mean": 127.5, "scale": 127.5, "resize": "letterbox"},
    "probability-map": {"colour": "RGB", "mean": 0.0, "scale": 255.0, "resize": "letterbox"},
}
# What a catalogue model of each task is, and how it is used (for a model given to the wrong task).
_TASK_USE = {"detect": "a detector: use it with zerocopy detect --model {} (or process's --detector {})",
             "classify": "a region model: use it with zerocopy detect --classify {}",
             "process": "an image-to-image model: use it with zerocopy process --model {}"}
# What a model file is for the tasks other than detection: how its outputs are read, how it is fed.
_FILE_USE = {"classify": ("region model", "classifier", "detection-output"),  # as Open Model Zoo's: BGR 0-255
             "process": ("image-to-image model", "probability-map", "probability-map")}


@dataclass(kw_only=True)
class ModelSpec:
    """What a model is and how to feed and decode it, from the catalogue or from the file itself."""

    path: Path
    name: str
    labels: tuple[str, ...]
    postprocess: str | None  # how its outputs become detections (postprocess.POSTPROCESSORS)
    resize: str
    colour: str
    mean: float
    scale: float
    postprocess_options: dict[str, Any] = field(default_factory=dict)
    entry: CatalogEntry | None = None
    threshold: float = 0.5  # the score from which a detection counts with this model (catalogue: measured)
    # or "classify": a region model, whose `postprocess` is a `postprocess.regions` kind; or "process"
    task: str = "detect"


def read_labels(path: str | Path) -> tuple[str, ...]:
    """A labels file's labels, one a line (blank lines skipped), `spelled`."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise ModelError(f"cannot read labels file {path}: {e.strerror or e}") from None
    return spelled(line.strip() for line in lines if line.strip())


# `native_stderr_silenced` is process-wide (file descriptor 2): concurrent users share one silencing.
_stderr_lock = threading.Lock()
_stderr_depth = 0  # how many callers are inside
_stderr_saved: int | None = None  # a duplicate of the real fd 2 while silenced


@contextmanager
def native_stderr_silenced() -> Iterator[None]:
    """Drop what native code writes to stderr meanwhile: OpenVINO's TensorFlow frontends log through
    absl ("WARNING: All log messages before absl::InitializeLog() …") straight to file descriptor 2.
    Errors still arrive as exceptions, with their reason. Safe across threads: the first caller in
    silences fd 2, the last one out restores it (so overlapping callers never restore /dev/null)."""
    global _stderr_depth, _stderr_saved
    with _stderr_lock:
        if _stderr_depth == 0:
            sys.stderr.flush()
            with open(os.devnull, "wb") as devnull:
                _stderr_saved = os.dup(2)
                os.dup2(devnull.fileno(), 2)
        _stderr_depth += 1
    try:
        yield
    finally:
        with _stderr_lock:
            _stderr_depth -= 1
            if _stderr_depth == 0 and _stderr_saved is not None:
                os.dup2(_stderr_saved, 2)
                os.close(_stderr_saved)
                _stderr_saved = None


def read_model(core: ov.Core, path: Path) -> ov.Model:
    if not path.is_file():
        raise ModelError(f"model file not found: {path}")
    try:
        with native_stderr_silenced():
            return core.read_model(str(path))
    except RuntimeError as e:
        reason = openvino_reason(e).replace(f': "{path}"', "").replace(f' "{path}"', "")  # named already
        raise ModelError(f"cannot read model {path}: {reason}") from None


class ImageInput(NamedTuple):
    """A model's single image input, as read from its graph (`image_input`)."""

    port: ov.Output
    layout: str  # "NCHW" or "NHWC"
    width: int
    height: int


def image_input(model: ov.Model) -> ImageInput:
    """The model's single image input, or a clear refusal."""
    if len(model.inputs) != 1:
        raise ModelError(f"the model has {len(model.inputs)} inputs; only single-image-input models are fed")
    port = model.inputs[0]
    shape = port.get_partial_shape()
    if shape.rank.is_dynamic or shape.rank.get_length() != 4:
        raise ModelError(f"model input {shape} is not a 4-D image tensor")
    dims = [d.get_length() if d.is_static else -1 for d in shape]
    if dims[1] == 3:
        layout, h, w = "NCHW", dims[2], dims[3]
    elif dims[3] == 3:
        layout, h, w = "NHWC", dims[1], dims[2]
    else:
        raise ModelError(f"model input {shape} is not a 3-channel image (NCHW or NHWC)")
    if h <= 0 or w <= 0:
        raise ModelError(f"model input {shape} has a dynamic height or width; reshape it to a fixed size")
    if h % 2 or w % 2:
        raise ModelError(f"model input is {w}x{h}; NV12 needs an even width and height")
    return ImageInput(port, layout, w, h)


def output_shapes(model: ov.Model) -> dict[str, tuple[int, ...]]:
    out = {}
    for i, port in enumerate(model.outputs):
        shape = port.get_partial_shape()
        if shape.is_dynamic:
            raise ModelError(f"model output {i} has a dynamic shape {shape}; cannot decode it")
        out[port.get_any_name() if port.get_names() else f"output{i}"] = tuple(shape.to_shape())
    return out


def resolve_spec(model: str, labels_file: str | None = None, postprocess: str | None = None,
                 resize: str | None = None, core: ov.Core | None = None,
                 log: Callable[[str], None] | None = None, task: str = "detect",
                 setting: str | None = None) -> ModelSpec:
    """A catalogue name (pulled if needed: `log` hears what is fetched) or a local IR/ONNX/TFLite path
    → ModelSpec, for `task` ("detect"; "classify" for a region model: a local file is then a
    classifier with one output of class scores; "process": a local file is then a frame model with one
    single-channel map output, fed RGB in [0, 1] and letterboxed, as MediaPipe's models are). A model that
    is not one, or not one for `task`, is a `ModelChoiceError` naming `setting` (by default the task's)."""
    setting = setting or ("classify" if task == "classify" else "model")
    if model in CATALOG:
        entry = CATALOG[model]
        if entry.task != task:
            raise ModelChoiceError(setting, f"{model} is {_TASK_USE[entry.task].format(model, model)}")
        path = pull(model, log=log or (lambda _msg: None))
        labels = entry.labels if task == "classify" else spelled(entry.labels)  # (a classifier's are attributes)
        spec = ModelSpec(path=path, name=entry.name, labels=labels, postprocess=entry.postprocess,
                         resize=entry.resize, colour=entry.colour, mean=entry.mean, scale=entry.scale,
                         postprocess_options=dict(entry.postprocess_options), entry=entry, threshold=entry.threshold,
                         task=task)
    elif task in _FILE_USE:
        what, kind, fed_as = _FILE_USE[task]
        path = Path(model)
        if not path.is_file():
            raise ModelChoiceError(setting, f"{what} {model!r} is neither a catalogue name ({', '.join(CATALOG)}) "
                                   "nor a file")
        m = read_model(core or ov.Core(), path)
        image_input(m)
        feed = _DEFAULT_FEED[fed_as]
        return ModelSpec(path=path, name=path.stem, labels=(), postprocess=kind, task=task, **feed)
    else:
        path = Path(model)
        if not path.is_file():
            raise ModelChoiceError(setting, f"model {model!r} is neither a catalogue name ({', '.join(CATALOG)}) "
                                   "nor a file")
        m = read_model(core or ov.Core(), path)
        image_input(m)
        kind = postprocess or guess_postprocess(output_shapes(m))
        feed = _DEFAULT_FEED.get(kind, _DEFAULT_FEED["detection-output"])
        spec = ModelSpec(path=path, name=path.stem, labels=(), postprocess=kind, **feed)
    if postprocess and postprocess != spec.postprocess:
        if spec.entry is not None:  # its decoding is part of the catalogue entry: another would make garbage boxes
            raise ConfigError("postprocess", f"{model}'s outputs are decoded as {spec.postprocess}; --postprocess is "
                              "for model files")
        spec.postprocess, spec.postprocess_options = postprocess, {}
    if resize:
        spec.resize = resize
    if labels_file:
        spec.labels = read_labels(labels_file)
    return spec


class WrappedModel:
    """A `ModelSpec` read and given u8 NV12 two-plane (or BGR) input of batch `batch`.

    Compiling is a separate step (`compile`) because the zero-copy path can only name its target,
    a VA remote context, once the first frame's VA display is known. Its `postprocessor` keeps
    detections from `threshold` (the run's resolved setting; None: the model's own, `spec.threshold`)
    and, with `only_labels` (label indices: the run's `classes`, and those detected to be hidden or cropped),
    only those labels.
    """

    def __init__(self, core: ov.Core, spec: ModelSpec, input_kind: InputKind = "nv12", batch: int = 1,
                 memory_type: str | None = None, threshold: float | None = None,
                 only_labels: tuple[int, ...] | None = None):
        self.core, self.spec, self.input_kind, self.batch = core, spec, input_kind, batch
        self.memory_type = memory_type
        model = read_model(core, spec.path)
        image = image_input(model)
        self.width, self.height = image.width, image.height
        shapes = output_shapes(model)
        self.output_shapes = shapes
        # None for raw use (image-to-image models, tests of the input side).
        self.postprocessor: Postprocessor | None = (
            make_postprocessor(spec.postprocess, self.width, self.height, shapes, spec.postprocess_options,
                               spec.threshold if threshold is None else threshold, only_labels)
            if spec.postprocess and spec.task == "detect" else None
        )
        if batch != 1:
            h, w = self.height, self.width
            shape = [batch, 3, h, w] if image.layout == "NCHW" else [batch, h, w, 3]
            try:
                model.reshape({image.port: shape})
            except RuntimeError as e:
                raise ModelError(f"the model cannot take a batch of {batch}: {str(e).splitlines()[0]}") from None
        ppp = PrePostProcessor(model)
        tensor = ppp.input().tensor().set_element_type(ov.Type.u8)
        if input_kind == "nv12":
            tensor.set_color_format(ColorFormat.NV12_TWO_PLANES, ["y", "uv"])
            if memory_type:
                tensor.set_memory_type(memory_type)
        else:
            tensor.set_color_format(ColorFormat.BGR).set_layout(ov.Layout("NHWC"))
        ppp.input().model().set_layout(ov.Layout(image.layout))
        pre = ppp.input().preprocess().convert_element_type(ov.Type.f32)
        pre.convert_color(_COLOURS[spec.colour])
        if spec.mean:
            pre.mean(spec.mean)
        if spec.scale != 1.0:
            pre.scale(spec.scale)
        self.model = ppp.build()
        self.input_names = [p.get_any_name() for p in self.model.inputs]
        self.output_names = list(shapes)
        self.compiled: ov.CompiledModel | None = None
        self.device = ""
        self.ov_config: dict[str, Any] = {}  # the OpenVINO properties it was last compiled with

    def compile(self, device: str, context: Any = None, ov_config: dict[str, Any] | None = None,
                inputs: int = 1, models: CompiledModels | None = None) -> WrappedModel:
        """Compile for `device`, or for a remote `context` (the device it belongs to is `device`), to serve
        `inputs` streams at once, through `models` if given (once for their life). `ov_config` (OpenVINO
        properties) overrides `default_config(device, inputs, task)`."""
        cfg = {**default_config(device, inputs, self.spec.task), **(ov_config or {})}
        if self.memory_type:  # the BATCH wrapper copies inputs with data(), which remote tensors lack
            cfg["ALLOW_AUTO_BATCHING"] = "NO"
        try:
            self.compiled = (models.compile(self.model, self.spec.name, self.identity, device, context, cfg)
                             if models is not None else
                             self.core.compile_model(self.model, context if context is not None else device, cfg))
        except (RuntimeError, TypeError) as e:
            raise ModelError(f"cannot compile {self.spec.name} for {device}: {openvino_reason(e)}") from None
        self.device, self.ov_config = device, cfg
        self._out_ports = {name: self.compiled.outputs[i] for i, name in enumerate(self.output_names)}
        return self

    @property
    def identity(self) -> tuple:
        """What makes this wrapping's graph what it is: the model file, its colour, mean and scale, the input kind,
        batch and memory type (two wrappings alike are one graph to compile)."""
        spec = self.spec
        return (str(spec.path), spec.colour, spec.mean, spec.scale, self.input_kind, self.batch, self.memory_type)

    def release(self) -> None:
        """Drop the compiled model (before the VA device its remote context uses goes away)."""
        self.compiled = None
        self._out_ports = {}

    @property
    def optimal_nireq(self) -> int:
        """The device's optimal number of requests, but at least 2: with one request the next frame's
        decoding could not overlap this frame's inference."""
        assert self.compiled is not None, "compile first"
        try:
            return max(2, int(self.compiled.get_property("OPTIMAL_NUMBER_OF_INFER_REQUESTS")))
        except RuntimeError:
            return 2

    def outputs_of(self, request: ov.InferRequest) -> dict[str, Any]:
        """Copies of a finished request's outputs (the request's own buffers are reused)."""
        return {name: request.get_tensor(port).data.copy() for name, port in self._out_ports.items()}


def make_core(cache_dir: Path | None) -> ov.Core:
    core = ov.Core()
    if cache_dir is not None:
        cache_dir.mkdir(parents=True, exist_ok=True)
        core.set_property({"CACHE_DIR": str(cache_dir)})
    return core


def _offers(available: list[str], device: str) -> bool:
    """`GPU` is offered when OpenVINO lists `GPU` or any `GPU.n`; `GPU.1` only when listed."""
    return device in available or ("." not in device and any(d.split(".")[0] == device for d in available))


def pick_device(core: ov.Core, requested: str, allowed: tuple[str, ...] = ("GPU", "CPU")) -> str:
    """`auto` → the GPU if OpenVINO sees one, else the CPU; an explicit device must exist."""
    available = core.available_devices
    if requested.lower() == "auto":
        for dev in allowed:
            if _offers(available, dev):
                return dev
        raise ModelError(f"none of {', '.join(allowed)} is available (OpenVINO sees {', '.join(available)})")
    dev = requested.upper()
    if not _offers(available, dev):
        raise ModelError(f"OpenVINO sees no {dev} device (it sees {', '.join(available) or 'nothing'})")
    return dev
