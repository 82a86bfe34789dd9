"""The run report: which path ran and why the better ones did not, the resolved configuration, timings,
CPU, damage."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import openvino as ov

from zerocopy import __version__
from zerocopy.config import RunConfig
from zerocopy.infer.model import WrappedModel
from zerocopy.paths import where_it_runs
from zerocopy.pipeline import RunResult
from zerocopy.refusals import PathChoice, summary
from zerocopy.sinks.files import stage_text
from zerocopy.stats import cpu_name, peak_rss_mb

if TYPE_CHECKING:
    from zerocopy.sinks.files import Staged


# The report's own fields: a stage's report (keyed by its name) may not take one of them.
_FIELDS = {"zerocopy", "path", "refused", "refused_summary", "device", "runs_on", "model", "nireq", "batch",
           "decode_threads", "config", "frames", "inferred_frames", "detections", "setup_s", "wall_s", "fps", "stages",
           "latency", "sinks", "cpu", "peak_rss_mb", "machine", "inputs", "interrupted", "publish", "process"}


def _stage_reports(result: RunResult) -> dict:
    taken = sorted(set(result.reports) & _FIELDS)
    if taken:
        raise ValueError(f"a stage named {taken[0]!r} would overwrite the run report's {taken[0]!r}: rename it")
    return {name: report.summary() for name, report in result.reports.items()}


def build_report(result: RunResult, choice: PathChoice, model: WrappedModel, config: RunConfig) -> dict:
    """`config`: the run's, resolved (printed whole under "config"; `decode_threads` at the top is
    FFmpeg's threads when the path decodes on the CPU, 0 meaning FFmpeg's choice, else None)."""
    frames = result.frames
    wall, cpu = result.clock.wall, result.clock.cpu
    spec = model.spec
    return {
        "zerocopy": __version__,
        "path": choice.name,
        "refused": choice.refused,
        "refused_summary": summary(choice.reasons),  # the few words the CLI's summary line gives them
        "device": model.device,
        "runs_on": where_it_runs(choice.name, model.device),  # "decoding on the CPU, inferring on the GPU"
        "model": {
            "name": spec.name,
            "file": str(spec.path),
            "decoder": spec.postprocess,  # the key predates the name "postprocess"
            "input": f"{model.width}x{model.height}",
            "resize": spec.resize,
            "feed": model.input_kind,
        },
        "nireq": config.nireq,
        "batch": model.batch,
        "decode_threads": config.decode_threads if choice.name == "software" else None,
        "config": config.to_dict(json_ready=True),
        "frames": frames,
        "inferred_frames": frames - result.skipped,  # fewer with --detect-fps
        "detections": result.detections,
        "setup_s": round(result.setup_s, 3),
        "wall_s": round(wall, 3),
        "fps": round(frames / wall, 2) if wall > 0 else 0.0,
        "stages": result.steps.summary(),  # the timed steps (the report's name kept for its readers)
        **_stage_reports(result),  # tiles, rois, tracking, …
        "latency": result.latency.summary() if result.latency.count else None,  # live/paced inputs only
        "sinks": {  # the time the caller spent between frames: writing the outputs, for the CLI
            "seconds": round(result.sink_s, 3),
            "share": round(result.sink_s / wall, 3) if wall > 0 else 0.0,
            "fps_without": round(frames / (wall - result.sink_s), 2) if wall > result.sink_s and frames else 0.0,
        },
        "cpu": {
            "seconds": round(cpu, 3),
            "percent": round(100.0 * cpu / wall, 1) if wall > 0 else 0.0,
            "ms_per_frame": round(1e3 * cpu / frames, 3) if frames else 0.0,
        },
        "peak_rss_mb": peak_rss_mb(),
        "inputs": [
            {"source": i.source, "frames": i.frames, "fps": i.fps, "error": i.error, "interrupted": i.interrupted,
             "damage": i.damage.to_dict()}
            for i in result.inputs
        ],
        "interrupted": result.interrupted,
        "machine": {"cpu": cpu_name(), "cores": os.cpu_count(), "python": sys.version.split()[0],
                    "openvino": ov.get_version()},
    }


def write_report(report: dict, target: str | Path, option: str = "--report") -> Staged | None:
    """The report as JSON into `target`'s temporary, returned for the caller to rename into place
    (`finish`, sinks/files.py); written at once on stdout for '-' (and to a device or a FIFO): None then.
    `OutputError` (one line, nothing left behind) if it cannot be written."""
    return stage_text(option, target, json.dumps(report, indent=2) + "\n")
