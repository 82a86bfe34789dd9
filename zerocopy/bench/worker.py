"""One measured run of one path (or one limit), in its own process so that CPU time and peak memory
belong to that run alone. Prints one JSON object on stdout.

    python -m zerocopy.bench.worker '{"kind": "path", "path": "software", "input": "...", ...}'
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from zerocopy.catalog import CATALOG
from zerocopy.catalog.fetch import cache_dir
from zerocopy.config import RunConfig
from zerocopy.decode.pyav import PyAVDecoder
from zerocopy.errors import PathUnavailable, ZeroCopyError
from zerocopy.infer.telemetry import keep_openvino_quiet
from zerocopy.resize.planes import PlaneResizer
from zerocopy.sinks import NullSink
from zerocopy.sinks.jsonl import JsonlSink
from zerocopy.stats import STEPS, cpu_by_thread_kind, peak_rss_mb, thread_cpu_seconds


def _cpu() -> float:
    """User + system CPU seconds of the whole process, every thread, to the nanosecond (`os.times`
    counts in clock ticks, 10 ms: coarser than a short run)."""
    return time.process_time()


class MeterSink(NullSink):
    """Starts the clock when the warm-up frames are out, stops it at the last frame; samples the CPU
    time of each thread at the start, every `THREADS_EVERY` frames and at the `frames`-th measured
    frame. A thread's CPU time can only be read while it lives (the decoder's end with the input),
    so the split by thread comes from the last sample in which every thread of the first one
    still lived (none such: no split). `on_warm` (if set) is called at the last warm-up frame, e.g.
    to start the run's step times afresh."""

    THREADS_EVERY = 50
    # frames asked for past the measured ones and not counted: the input's feeder reads ahead, and its threads (the
    # decoder's) must still live when the last measured frame samples them
    TAIL = 16

    def __init__(self, warmup: int, frames: int = 0, on_warm: Callable[[], None] | None = None):
        self.warmup, self.frames, self.count, self.on_warm = warmup, frames, 0, on_warm
        self.t0 = self.c0 = self.t1 = self.c1 = 0.0
        self.threads0: dict = {}
        self.threads1: dict = {}
        self.threads_frames = 0

    def write(self, frame, detections, input=0):
        if self.frames and self.count >= self.warmup + self.frames:
            return  # past the measured frames (`TAIL`): not counted
        self.count += 1
        now, cpu = time.perf_counter(), _cpu()
        if self.count == self.warmup:
            self.t0, self.c0 = now, cpu
            self.threads0 = thread_cpu_seconds()
            if self.on_warm is not None:
                self.on_warm()
        elif self.count > self.warmup and ((self.count - self.warmup) % self.THREADS_EVERY == 0
                                           or self.count - self.warmup == self.frames):
            sample = thread_cpu_seconds()
            if self.threads0.keys() <= sample.keys():
                self.threads1, self.threads_frames = sample, self.count - self.warmup
        self.t1, self.c1 = now, cpu

    def cpu_by_thread(self) -> dict[str, float]:
        return cpu_by_thread_kind(self.threads0, self.threads1, self.threads_frames)

    def figures(self) -> dict:
        """FPS and CPU over the measured frames; raises `NothingMeasured` when there are none (or
        they took no measurable time): a run that measured nothing is an error, never a figure."""
        measured, wall, cpu = self.count - self.warmup, self.t1 - self.t0, self.c1 - self.c0
        if measured < 1:
            raise NothingMeasured(f"no frame measured: {self.count} decoded, not more than the {self.warmup} "
                                  "warm-up frames")
        if wall <= 0 or cpu <= 0:
            raise NothingMeasured(f"{measured} measured frames took no measurable time")
        return {"frames": measured, "fps": round(measured / wall, 2),
                "cpu_ms_per_frame": round(1e3 * cpu / measured, 3), "cpu_percent": round(100.0 * cpu / wall, 1)}


class NothingMeasured(Exception):
    pass


def _config(args: dict):
    return RunConfig.make(args["config"])


def runner(config):
    """What runs `config` as the CLI would: a `Processor` for an image-to-image catalogue model (`zerocopy
    process`), else a `Detector`."""
    from zerocopy.api import Detector
    from zerocopy.process import Processor

    entry = CATALOG.get(config.model)
    return (Processor if entry is not None and entry.task == "process" else Detector)(config=config)


def run_path(args: dict) -> dict:
    """One path (`args["path"]`) through a `Detector` (or `Processor`), as `detect` (`process`) runs it, into
    the meter and JSON Lines."""
    from zerocopy.sinks.drive import feed

    with runner(_config(args).replace(path=args["path"])) as det:
        # the step times from the warm-up on: the result's are the run's own, reset as each frame is out
        meter = MeterSink(args["warmup"], args["frames"], on_warm=lambda: _reset_times(det.result()))
        sinks = [meter, _FirstFrames(JsonlSink(args["jsonl"], det.spec.labels), args["warmup"] + args["frames"])]
        try:
            feed(det.events([args["input"]], max_frames=args["warmup"] + args["frames"] + MeterSink.TAIL), sinks)
        except PathUnavailable as e:
            return {"unavailable": "; ".join(f"{'; '.join(r)}" for r in e.reasons.values())}
        finally:
            for sink in sinks:
                sink.close()
        result, report = det.result(), det.report()
    errors = [o.error for o in result.inputs if o.error]
    try:
        figures = meter.figures()
    except NothingMeasured as e:
        return {"error": errors[0] if errors else str(e)}
    steps = result.steps.summary()
    return {
        **figures,
        "peak_rss_mb": peak_rss_mb(),
        "cpu_ms_per_frame_by_thread": meter.cpu_by_thread(),
        "stages": {s: steps[s] for s in STEPS},  # (the bench report's name for the timed steps)
        "device": report["device"],
        "nireq": report["nireq"],
        "errors": errors,
        **{stage: report[stage] for stage in ("rois", "tiles") if stage in report},
    }


class _FirstFrames(NullSink):
    """`sink`, given only the first `n` frames' results (the tail past the measured frames is the meter's alone):
    everything else is passed on as it comes."""

    def __init__(self, sink: Any, n: int):
        self.sink, self.n, self.seen = sink, n, 0

    def write(self, frame, detections, input=0):
        self.seen += 1
        if self.seen <= self.n:
            self.sink.write(frame, detections, input)

    def begin(self, source, rate, input=0):
        self.sink.begin(source, rate, input)

    def end(self, input=0):
        self.sink.end(input)

    def on_events(self, events, input=0):
        self.sink.on_events(events, input)

    def close(self):
        self.sink.close()

    def settle(self):
        self.sink.settle()

    def commit(self):
        self.sink.commit()

    def discard(self):
        self.sink.discard()


def _reset_times(result) -> None:
    """The step times (and the region stage's, with `classify`, and the tiles', with `tiles`) start afresh after
    the warm-up."""
    result.steps.reset()
    for report in result.reports.values():
        report.reset()


def run_decode_only(args: dict) -> dict:
    """The source decoded as the software path decodes it (the same threads, on its own thread),
    nothing else."""
    dec = PyAVDecoder.on_cpu(args["input"], _config(args).decode_threads)
    meter = MeterSink(args["warmup"], args["frames"])
    for _ in dec.frames():
        meter.write(None, None)
        if meter.count >= args["warmup"] + args["frames"]:
            break
    dec.close()
    try:
        figures = meter.figures()
    except NothingMeasured as e:
        return {"error": str(e)}
    return {**figures, "cpu_ms_per_frame_by_thread": meter.cpu_by_thread()}


def run_inference_only(args: dict) -> dict:
    """The software path's compiled model at the same nireq and batch, fed one prepared frame over and over."""
    import openvino as ov

    from zerocopy.infer.model import WrappedModel, make_core, pick_device

    config = _config(args)
    core = make_core(cache_dir() / "ov-cache")
    with runner(config) as det:  # the model each frame goes through (an image-to-image model's detector)
        spec = det.spec
    batch = config.batch
    model = WrappedModel(core, spec, "nv12", batch).compile(pick_device(core, config.device),
                                                            ov_config=config.ov_config)
    decoder = PyAVDecoder(args["input"])
    first = next(iter(decoder.frames()), None)
    frame = first.frame if first is not None else None
    if frame is None:
        decoder.close()
        return {"error": "no frame decodes to feed the model"}
    planes = PlaneResizer(model.width, model.height, spec.resize)(frame)
    decoder.close()
    nireq = config.resolve(optimal_nireq=model.optimal_nireq).nireq
    queue = ov.AsyncInferQueue(model.compiled, nireq)
    inputs = dict(zip(model.input_names, (np.repeat(planes.y, batch, 0), np.repeat(planes.uv, batch, 0)), strict=True))
    requests = -(-args["frames"] // batch)
    for _ in range(-(-args["warmup"] // batch)):
        queue.start_async(inputs)
    queue.wait_all()
    t0, c0 = time.perf_counter(), _cpu()
    for _ in range(requests):
        queue.start_async(inputs)
    queue.wait_all()
    wall, cpu, frames = time.perf_counter() - t0, _cpu() - c0, requests * batch
    if wall <= 0 or cpu <= 0:
        return {"error": f"{frames} inferences took no measurable time"}
    return {"frames": frames, "fps": round(frames / wall, 2), "cpu_ms_per_frame": round(1e3 * cpu / frames, 3),
            "nireq": nireq}


def run_streams(args: dict) -> dict:
    """`streams` copies of the input at once (`--parallel`), each paced at its native rate as a camera
    would deliver it: did the machine keep up? Every frame must come out, each stream at ≥ 90 % of its
    rate, and the p95 latency from a frame's arrival to its result stay within `max_latency_ms`."""
    n, frames = args["streams"], args["frames"]
    with runner(_config(args).replace(path=args["path"])) as det:
        try:
            done = sum(1 for _ in det.run([args["input"]] * n, parallel=True, max_frames=frames, on_error="skip"))
        except PathUnavailable as e:
            return {"unavailable": "; ".join(f"{'; '.join(r)}" for r in e.reasons.values())}
        result = det.result()
    wall, cpu = result.clock.wall, result.clock.cpu
    p95 = result.latency.percentile(95)
    complete = done == n * frames and not any(o.error for o in result.inputs)
    fps = min((o.fps for o in result.inputs), default=0.0)  # the slowest stream, over its own span
    # kept up: every frame, the latency bounded, and each stream as fast as it arrives (a short trial
    # could otherwise hide a backlog that keeps growing)
    ok = complete and p95 <= args["max_latency_ms"] and fps >= 0.9 * args["rate"]
    # inferences a second per stream (with --detect-fps, what the sampler kept): inferred frames over each span
    spans = [o.ended - o.started for o in result.inputs if o.started is not None and o.ended is not None]
    span = sum(spans) / len(spans) if spans else 0.0
    inferred_fps = (done - result.skipped) / n / span if span > 0 and n else 0.0
    return {"streams": n, "frames": done, "complete": complete, "ok": ok, "fps_per_stream": round(fps, 2),
            "inference_fps_per_stream": round(inferred_fps, 2),
            "cpu_percent": round(100.0 * cpu / wall, 1) if wall > 0 else 0.0,
            "p50_latency_ms": round(result.latency.percentile(50), 1), "p95_latency_ms": round(p95, 1)}


KINDS = {"path": run_path, "decode": run_decode_only, "inference": run_inference_only, "streams": run_streams}


def main() -> int:
    keep_openvino_quiet()  # no usage event (and no child process of OpenVINO's) inside a measured run

    args = json.loads(sys.argv[1])
    try:
        out = KINDS[args["kind"]](args)
    except ZeroCopyError as e:
        out = {"error": str(e)}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
