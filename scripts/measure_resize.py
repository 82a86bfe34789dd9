"""Time the software path's resizer (`PlaneResizer`) on decoded 1080p frames: CPU per frame on one
thread, and wall time per frame with several threads resizing at once (one resizer each, as parallel
inputs do). The figures in docs/performance.md for the swscale resizer come from this script.

    python scripts/measure_resize.py --size 448x256 --threads 4
"""

from __future__ import annotations

import argparse
import tempfile
import threading
import time
from pathlib import Path

import av

from zerocopy.resize.planes import PlaneResizer
from zerocopy.samples import ClipSpec, write_clip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--size", default="448x256", help="model input WxH (default 448x256)")
    ap.add_argument("--threads", type=int, default=4, help="threads resizing at once (default 4)")
    ap.add_argument("--calls", type=int, default=300, help="resizes per thread (default 300)")
    args = ap.parse_args()
    w, h = (int(v) for v in args.size.lower().split("x"))
    with tempfile.TemporaryDirectory() as tmp:
        clip = Path(tmp) / "1080p.mp4"
        write_clip(clip, ClipSpec(width=1920, height=1080, fps=30, frames=30, face="grace_hopper"))
        with av.open(str(clip)) as c:
            frames = list(c.decode(video=0))

    def loop(n: int) -> None:
        resize = PlaneResizer(w, h, "letterbox", ring=4)
        for i in range(n):
            resize(frames[i % len(frames)])

    loop(5)  # swscale's context and filters are made on the first call
    t0, c0 = time.perf_counter(), time.process_time()
    loop(args.calls)
    wall1, cpu1 = time.perf_counter() - t0, time.process_time() - c0
    threads = [threading.Thread(target=loop, args=(args.calls,)) for _ in range(args.threads)]
    t0, c0 = time.perf_counter(), time.process_time()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall_n, cpu_n = time.perf_counter() - t0, time.process_time() - c0
    n = args.calls * args.threads
    print(f"1920x1080 {frames[0].format.name} → {w}x{h}: one thread {1e3 * cpu1 / args.calls:.2f} ms CPU/frame "
          f"({1e3 * wall1 / args.calls:.2f} ms wall); {args.threads} threads at once "
          f"{1e3 * wall_n / n:.2f} ms wall/frame, {1e3 * cpu_n / n:.2f} ms CPU/frame")


if __name__ == "__main__":
    main()
