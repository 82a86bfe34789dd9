#!/usr/bin/env python3
"""Measure what recording cameras' main streams costs (docs/serve.md, *Recording*):

    .venv/bin/python scripts/measure_recording.py                      # 1080p30 H.264 at 4 Mbit/s, 60 s
    .venv/bin/python scripts/measure_recording.py --cameras 4 --record continuous   # four, written to disk
    .venv/bin/python scripts/measure_recording.py --seconds 20 --json

A 1080p H.264 clip is made here (a photo drifting under noise, so that the encoder spends its bit rate as a
camera's would; `--bitrate`, a keyframe every `--gop` frames), repeated with its timestamps running on (remuxed,
not encoded again) for as long as the measurement needs, served as a live MPEG-TS stream over HTTP on the loopback
(tests/support/livesource.py, paced at its frame rate), and recorded for `--seconds` by a
`CameraRecording` (serve's per camera: a `Recorder` thread filling a `PacketRing` of `--buffer-mb`, a
`ClipWriter` thread). Its threads' CPU time (from /proc/self/task/TID/schedstat, nanoseconds) gives their share of
one core: while the ring fills (`filling_`: every packet's copy lands in memory the process has not touched yet),
then for `--seconds` once it is full and the oldest packets go as new ones come (`reader_core_percent`: how a
camera runs for months; `writer_idle_core_percent`: the writer with nothing to write). The server's threads run in
this process too, so the process' own CPU time is not the figure. Then one clip is asked for, of an object seen
for 2 s until 0.5 s ago: the writer waits for `--post` seconds more to be recorded and writes `--pre` + 2 s +
`--post` (`clip_writer_cpu_ms`: its thread's CPU for it), and how far before the first sighting the clip starts is
printed (the target: no more than pre + one GOP).

With `--cameras N`, N such cameras (each its own loopback server and `CameraRecording`), and with `--record
continuous` each also writes its segments to disk (`record.segments.SegmentWriter`, indexed in a real `Storage`):
`all_cameras_core_percent` is every recording thread's CPU (readers, clip writers, segment writers) over the steady
window as a share of one core, `segments_core_percent` the segment writers' alone, and `disk_mb_per_hour` what the
segments took on disk per hour of recording of all cameras together.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import sys
import tempfile
import threading
import time
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from PIL import Image

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "support"))

from livesource import LiveServer  # noqa: E402

from zerocopy.decode.live import LivePolicy  # noqa: E402
from zerocopy.record.camera import CameraRecording  # noqa: E402
from zerocopy.samples import load_photo  # noqa: E402
from zerocopy.store.storage import Storage  # noqa: E402


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--seconds", type=float, default=60.0, help="how long to measure once the ring is full (default 60)")
    p.add_argument("--clip-seconds", type=float, default=5.0, help="length of the clip made and looped (default 5)")
    p.add_argument("--width", type=int, default=1920)
    p.add_argument("--height", type=int, default=1080)
    p.add_argument("--fps", type=int, default=30)
    p.add_argument("--gop", type=int, default=30, help="frames between keyframes (default 30: one second)")
    p.add_argument("--bitrate", default="4M", help="the encoder's bit rate (default 4M, a usual 1080p main stream)")
    p.add_argument("--buffer-mb", type=float, default=16.0, help="the ring's size (default 16: full in ~30 s)")
    p.add_argument("--pre", type=float, default=5.0, help="pre_capture (default 5)")
    p.add_argument("--post", type=float, default=5.0, help="post_capture (default 5)")
    p.add_argument("--cameras", type=int, default=1, help="cameras recorded at once (default 1)")
    p.add_argument("--record", choices=("events", "continuous"), default="events",
                   help="events: the ring and clips only (default); continuous: segments written to disk too")
    p.add_argument("--json", action="store_true", help="one JSON object instead of lines")
    return p.parse_args()


def make_clip(path: Path, args: argparse.Namespace) -> None:
    """H.264 in MPEG-TS: a photo drifting across the frame under fresh noise every frame."""
    photo = Image.fromarray(load_photo("coffee")).resize((args.width + 64, args.height), Image.BILINEAR)
    base = np.asarray(photo)
    rng = np.random.default_rng(0)
    with av.open(str(path), "w", format="mpegts") as out:
        stream = out.add_stream("libx264", rate=args.fps)
        stream.width, stream.height, stream.pix_fmt = args.width, args.height, "yuv420p"
        stream.options = {"preset": "veryfast", "b": args.bitrate, "maxrate": args.bitrate, "bufsize": args.bitrate,
                          "g": str(args.gop), "x264-params": "scenecut=0"}
        for i in range(int(args.clip_seconds * args.fps)):
            shift = int(i * 64 / (args.clip_seconds * args.fps))
            rgb = base[:, shift:shift + args.width].astype(np.int16) + rng.integers(-6, 7, (args.height, args.width, 1))
            frame = av.VideoFrame.from_ndarray(np.clip(rgb, 0, 255).astype(np.uint8), format="rgb24")
            frame.pts, frame.time_base = i, Fraction(1, args.fps)
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))


def repeat(clip: Path, path: Path, seconds: float) -> None:
    """`clip` again and again into one MPEG-TS of at least `seconds`, its timestamps running on (as a camera's)."""
    with av.open(str(clip)) as src:
        stream = src.streams.video[0]
        packets = [(p, p.pts, p.dts) for p in src.demux(stream) if p.size]
        period = max(pts for _, pts, _ in packets) + packets[-1][0].duration - min(pts for _, pts, _ in packets)
        with av.open(str(path), "w", format="mpegts") as out:
            copy = out.add_stream_from_template(stream)
            for n in range(int(seconds / float(period * stream.time_base)) + 1):
                for packet, pts, dts in packets:
                    packet.pts, packet.dts = pts + n * period, dts + n * period
                    packet.stream = copy
                    out.mux(packet)


def thread_cpu_s(native_id: int) -> float:
    """A thread's CPU time so far: schedstat's nanoseconds, else stat's clock ticks."""
    task = Path(f"/proc/self/task/{native_id}")
    try:
        return int((task / "schedstat").read_text().split()[0]) / 1e9
    except (OSError, ValueError, IndexError):
        fields = (task / "stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _mbit(rate: str) -> float:
    """`4M` → 4.0, `800k` → 0.8 (Mbit/s)."""
    scale = {"k": 1e-3, "M": 1.0, "G": 1e3}.get(rate[-1:], 1e-6)
    return float(rate.rstrip("kMG")) * scale


def threads(cameras: list[str]) -> dict[str, int]:
    """The native ids of the cameras' recording threads: the first one's reader, clip writer (and segment writer),
    and every other's, by name."""
    found = {t.name: t.native_id for t in threading.enumerate()}
    ids = {"reader": found[f"zc-record-{cameras[0]}"], "writer": found[f"zc-clips-{cameras[0]}"]}
    for name in cameras:
        for kind in ("record", "clips", "segments"):
            if f"zc-{kind}-{name}" in found:
                ids[f"{kind}-{name}"] = found[f"zc-{kind}-{name}"]
    return ids


def cpu(ids: dict[str, int]) -> dict[str, float]:
    return {name: thread_cpu_s(tid) for name, tid in ids.items()}


def record(urls: list[str], storage: Path, args: argparse.Namespace) -> dict:
    """A `CameraRecording` of each of `urls`: their threads' CPU while the rings fill, once they are full, and for
    one clip of the first; with `--record continuous`, the segments they wrote."""
    lines: list[str] = []
    policy = LivePolicy(reconnect=True, retry_open=True, give_up_after=3600.0)
    store = Storage(storage, max_bytes=10**12, max_days=1e6, say=lines.append) if args.record == "continuous" \
        else None
    names = ["measure"] + [f"measure{i}" for i in range(1, len(urls))]
    cameras = [CameraRecording(name, url, storage, lines.append, pre_s=args.pre, post_s=args.post,
                               buffer_bytes=int(args.buffer_mb * 2**20), min_free_bytes=0, policy=policy,
                               index=store.index.put if store is not None else None)
               for name, url in zip(names, urls, strict=True)]
    camera, ring = cameras[0], cameras[0].ring
    for c in cameras:
        c.start()
    deadline = time.monotonic() + 30
    while not all(c.recorder.recording and c.ring.stats()["packets"] for c in cameras):
        if time.monotonic() > deadline:
            raise SystemExit(f"the recorder did not start: {lines}")
        time.sleep(0.05)
    ids = threads(names)
    cpu0, wall0, packets0 = cpu(ids), time.monotonic(), ring.packets_added
    while ring.stats()["bytes"] < ring.max_bytes * 0.98:  # full: the oldest packets go from now on
        if not camera.recorder.recording or time.monotonic() > deadline + 600:
            raise SystemExit(f"the ring did not fill: {lines}")
        time.sleep(0.2)
    cpu1, wall1, packets1 = cpu(ids), time.monotonic(), ring.packets_added
    time.sleep(args.seconds)
    cpu2, wall2, packets2 = cpu(ids), time.monotonic(), ring.packets_added
    held = ring.stats()
    done: queue.Queue = queue.Queue()
    first_seen = time.time() - 2.5  # an object seen for 2 s, gone 0.5 s ago: the writer waits for post_capture
    camera.request("measure", first_seen, first_seen + 2.0, lambda event_id, result: done.put(result))
    result = done.get(timeout=args.post + 60)
    cpu3 = cpu(ids)
    for c in cameras:
        c.close()
    segments = [s for name in names for s in store.segments(name)] if store is not None else []
    if store is not None:
        store.close()
    if result is None:
        raise SystemExit(f"no clip was written: {lines}")

    def percent(a: dict, b: dict, seconds: float, name: str = "reader") -> float:
        return round(100 * (b[name] - a[name]) / seconds, 3)

    return {
        "filling_seconds": round(wall1 - wall0, 2),
        "filling_packets_per_s": round((packets1 - packets0) / (wall1 - wall0), 2),
        "filling_reader_core_percent": percent(cpu0, cpu1, wall1 - wall0),
        "seconds": round(wall2 - wall1, 2), "packets_per_s": round((packets2 - packets1) / (wall2 - wall1), 2),
        "reader_core_percent": percent(cpu1, cpu2, wall2 - wall1),
        "writer_idle_core_percent": percent(cpu1, cpu2, wall2 - wall1, "writer"),
        "ring_bytes": held["bytes"], "ring_seconds": held["seconds"],
        "ring_mbit_per_s": round(held["bytes"] * 8 / 1e6 / held["seconds"], 2) if held["seconds"] else None,
        "clip_seconds": result.seconds, "clip_bytes": result.bytes,
        "clip_writer_cpu_ms": round((cpu3["writer"] - cpu2["writer"]) * 1e3, 1),
        "clip_starts_before_first_sighting_s": round(first_seen - result.first_wall, 3),
        "target_at_most_s": round(args.pre + args.gop / args.fps, 3),
        **({"cameras": len(urls), "record": args.record, "all_cameras_core_percent": round(sum(
            100 * (cpu2[n] - cpu1[n]) / (wall2 - wall1) for n in ids if "-" in n), 3),
            "segments_core_percent": round(sum(100 * (cpu2[n] - cpu1[n]) / (wall2 - wall1)
                                               for n in ids if n.startswith("segments-")), 3)}),
        **({"segments": len(segments), "segment_seconds": round(sum(s.end - s.start for s in segments), 1),
            "disk_mb_per_hour": round(sum(s.bytes for s in segments) / 1e6 * 3600
                                      / max(1e-9, sum(s.end - s.start for s in segments) / len(urls)), 1)}
           if segments else {}),
        "said": lines,
    }


def measure(args: argparse.Namespace, folder: Path) -> dict:
    clip, served = folder / "clip.ts", folder / "main.ts"
    made = time.monotonic()
    make_clip(clip, args)
    made = time.monotonic() - made
    # long enough for the ring to fill (at the bit rate asked for, with room to spare) and the measurement
    repeat(clip, served, args.seconds + 3 * args.buffer_mb * 8 / (_mbit(args.bitrate) or 1) + args.post + 30)
    servers = [LiveServer(served, "http", lifetime=3600) for _ in range(args.cameras)]
    try:
        figures = record([server.url for server in servers], folder / "storage", args)
    finally:
        for server in servers:
            server.stop()
    return {"size": f"{args.width}x{args.height}", "fps": args.fps, "gop": args.gop, "bitrate": args.bitrate,
            "clip_made_s": round(made, 1), **figures}


def main() -> None:
    args = parse_args()
    with tempfile.TemporaryDirectory(prefix="zc-measure-recording-") as folder:
        figures = measure(args, Path(folder))
    if args.json:
        print(json.dumps(figures))
        return
    for key, value in figures.items():
        print(f"{key}: {value}")


if __name__ == "__main__":
    threading.current_thread().name = "measure"
    main()
