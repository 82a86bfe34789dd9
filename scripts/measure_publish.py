"""CPU time that `--publish` costs per frame: MqttPublisher against a real mosquitto on loopback (started
here, as the tests do: tests/support/broker.py), a detections message (5 boxes) every frame and, as the
worst case, an event every frame too. `time.process_time()` counts every thread of this process, paho's
network thread included; the payloads are built beforehand (the caller's cost, not the publisher's) and the
frames are paced (sleeping costs no CPU) so that the broker's acknowledgements keep up, as with a camera.
The slower the pace, the colder each call runs in an otherwise idle process (caches, the network thread
woken from sleep): 30 fps costs more per frame than 300 fps. The figures in docs/mqtt.md come from this script.

    python scripts/measure_publish.py --frames 3000 --fps 300
    python scripts/measure_publish.py --frames 600 --fps 30
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests" / "support"))

from broker import Broker  # noqa: E402 (tests/support is not a package)

from zerocopy.publish import MqttPublisher, MqttTarget  # noqa: E402

TARGET_MS = 0.3  # the budget per frame


def detections_payload(frame: int) -> dict:
    boxes = [{"box": [100.5 + 40 * i, 200.25, 180.5 + 40 * i, 380.75], "score": 0.8731, "label": 0,
              "name": "person", "tracker_id": 17 + i} for i in range(5)]
    return {"node": "nuc", "camera": "door", "frame": frame, "pts": frame / 25, "frame_time": 1_760_000_000.123,
            "detections": boxes}


def event_payload(frame: int) -> dict:
    obj = {"id": "nuc-door-17", "camera": "door", "node": "nuc", "label": "person", "score": 0.8731,
           "top_score": 0.9102, "box": [100.5, 200.25, 180.5, 380.75], "start_time": 1_760_000_000.0,
           "frame_time": 1_760_000_000.0 + frame / 25, "end_time": None, "frames": frame, "stationary": False,
           "attributes": []}
    return {"type": "update", "before": obj, "after": {**obj, "frames": frame + 1}}


def measure(pub: MqttPublisher | NoPublisher, frames: int, fps: float, events: bool) -> float:
    """CPU ms per frame, once everything sent has been acknowledged (or written, for QoS 0)."""
    dets = [detections_payload(i) for i in range(frames)]
    evs = [event_payload(i) for i in range(frames)] if events else []
    interval = 1 / fps
    cpu0 = time.process_time()
    next_at = time.monotonic()
    for i in range(frames):
        pub.detections("door", dets[i])
        if events:
            pub.event("door", evs[i])
        next_at += interval
        delay = next_at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    while pub.stats()["queued"]:
        time.sleep(0.01)
    return (time.process_time() - cpu0) * 1000 / frames


class NoPublisher:
    """The baseline: the same loop, pacing and payloads, publishing nothing."""

    def detections(self, camera: str, payload: dict) -> None:
        pass

    def event(self, camera: str, payload: dict) -> None:
        pass

    def stats(self) -> dict:
        return {"queued": 0}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=3000, help="frames per measurement (default 3000)")
    ap.add_argument("--fps", type=float, default=300.0, help="frames per second (default 300)")
    args = ap.parse_args()
    with Broker() as broker:
        pub = MqttPublisher(MqttTarget.parse(broker.url("measure")), node="nuc")
        deadline = time.monotonic() + 10
        while not pub.stats()["connected"]:
            if time.monotonic() > deadline:
                raise SystemExit("could not connect to the broker")
            time.sleep(0.01)
        measure(pub, 200, args.fps, events=True)  # warm up
        for label, events in (("detections only", False), ("detections + an event", True)):
            base = measure(NoPublisher(), args.frames, args.fps, events)
            ms = measure(pub, args.frames, args.fps, events) - base
            print(f"{label:>22}: {ms:.3f} ms CPU per frame, {ms / TARGET_MS:.2f}× the {TARGET_MS} ms target "
                  f"(the loop alone: {base:.3f} ms, subtracted)")
        pub.close()
        stats = pub.stats()
        print(f"{args.frames} frames per measurement at {args.fps:g} fps; published {stats['published']}, "
              f"dropped {stats['dropped']}, queued {stats['queued']}")


if __name__ == "__main__":
    main()
