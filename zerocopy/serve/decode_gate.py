"""What the decode gate (`decode.gate`) did on each camera, for `/api/cameras` (`decode_gate`) and `/metrics`
(`zerocopy_camera_decode_gate_*`): the frames read and decoded and the catch-ups, summed over the camera's openings
(each opening has a `GateReport` of its own, in its damage report); the median delay from a packet-size rise to the
next inference over the open input's last rises; and why every frame is decoded, when it is: the camera's settings
(`setting_off`), or what its stream showed (constant bit rate, B-frames, no timestamps)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np

from zerocopy.config import RunConfig
from zerocopy.decode.damage import DamageReport
from zerocopy.decode.gate import GateReport

NOT_GATED = "its decoder cannot leave frames undecoded"  # an input the gate did not run on, its settings allowing it


def setting_off(run: RunConfig) -> str | None:
    """Why a camera's settings keep every frame decoded (None: they let the gate run)."""
    if not run.motion:
        return "motion = false (the decode gate follows the motion gate)"
    if run.decode_gate == "off":
        return "decode_gate = off"
    if run.draw_motion:
        return "draw_motion = true (motion is measured on every frame)"
    return None


@dataclass(frozen=True, kw_only=True)
class GateFigures:
    """See the module. `off` None: the gate runs (or the camera has not opened yet)."""

    frames: int = 0  # read while the gate ran (decoded or not)
    decoded: int = 0  # decoded of those (a catch-up decodes its keyframe again: counted)
    catch_ups: int = 0
    rise_to_inference_ms: float | None = None
    off: str | None = None

    def plus(self, report: GateReport) -> GateFigures:
        """These sums with an opening's report added, its delay (if it has one) and `off` in place of these."""
        delays = tuple(report.rise_to_inference_ms)  # (the decoder's thread appends to it)
        return GateFigures(frames=self.frames + report.frames, decoded=self.decoded + report.decoded,
                           catch_ups=self.catch_ups + report.catch_ups,
                           rise_to_inference_ms=round(float(np.median(delays)), 1) if delays
                           else self.rise_to_inference_ms, off=report.off)

    def now(self, damage: DamageReport | None, setting: str | None) -> GateFigures:
        """These (the ended openings') with the open input's (`damage`: its damage report; None: none is open; one
        without a gate report is `NOT_GATED`), the settings' reason (`setting_off`) in place of any other."""
        figures = self
        if damage is not None:
            figures = self.plus(damage.gate) if damage.gate is not None else replace(self, off=NOT_GATED)
        return replace(figures, off=setting) if setting is not None else figures

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "decoded_share": round(self.decoded / self.frames, 3) if self.frames else None}


def gate_metrics(statuses: Iterable[Any]) -> Iterator[Any]:
    """The Prometheus families of the cameras' decode gates (`CameraStatus.decode_gate`), with the label `camera`."""
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily  # (serve extra)

    camera = ["camera"]
    frames = CounterMetricFamily("zerocopy_camera_decode_gate_frames", "frames read while the decode gate ran "
                                 "(decoded or not) since the start", labels=camera)
    decoded = CounterMetricFamily("zerocopy_camera_decode_gate_decoded_frames", "frames decoded of those (keyframes "
                                  "while quiet, catch-ups, every frame while open)", labels=camera)
    catch_ups = CounterMetricFamily("zerocopy_camera_decode_gate_catch_ups", "times the decode gate opened and "
                                    "decoded from the last keyframe on", labels=camera)
    delay = GaugeMetricFamily("zerocopy_camera_decode_gate_rise_to_inference_seconds", "median delay from a packet-"
                              "size rise to the next inference (the open input's last 256 rises)", labels=camera)
    off = GaugeMetricFamily("zerocopy_camera_decode_gate_off", "1 while every frame is decoded, with the reason; 0 "
                            "while the decode gate runs", labels=["camera", "reason"])
    for s in statuses:
        g = s.decode_gate
        frames.add_metric([s.name], g.frames)
        decoded.add_metric([s.name], g.decoded)
        catch_ups.add_metric([s.name], g.catch_ups)
        if g.rise_to_inference_ms is not None:
            delay.add_metric([s.name], g.rise_to_inference_ms / 1e3)
        if g.off is not None or g.frames:
            off.add_metric([s.name, g.off or ""], 1.0 if g.off is not None else 0.0)
    yield from (frames, decoded, catch_ups, delay, off)
