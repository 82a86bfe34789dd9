"""Stress the lifetimes of what OpenVINO's threads touch: request queues, their callbacks, compiled models.

Several threads at once, for `--seconds`: `Detector` runs (region models and tiles) broken off with requests in
flight, `Processor` runs broken off likewise, serve engines started and stopped, and request queues whose owner is
let go while a completion callback still runs (issue 41's segfault: the queue was freed by that callback's own
thread, from inside it). faulthandler is on; run it under `MALLOC_PERTURB_=165` (glibc then fills freed memory, so
a use after free crashes at once instead of now and then). Exit 0 and a last line "survived: ..." when nothing
crashed; a crash ends the process with faulthandler's report of every thread.

    python scripts/stress_lifetimes.py --seconds 60
"""

from __future__ import annotations

import argparse
import faulthandler
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests" / "support")]


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=60.0, help="how long to go on (default 60)")
    ap.add_argument("--threads", type=int, default=2, help="threads for each kind of cycle (default 2)")
    return ap.parse_args()


class Stress:
    def __init__(self, folder: Path, seconds: float):
        from faults import write_poison_model
        from tinymodels import tiny_model

        import zerocopy.samples as samples

        self.deadline = time.monotonic() + seconds
        self.clip = folder / "stress.mp4"
        samples.write_clip(self.clip, samples.ClipSpec(width=320, height=180, frames=12))
        self.poison = write_poison_model(folder / "poison.xml")
        self.mapper = tiny_model(folder / "map.xml", 0)
        self.counts: Counter = Counter()
        self.errors: list[str] = []
        self._lock = threading.Lock()

    def going(self) -> bool:
        return time.monotonic() < self.deadline and not self.errors

    def count(self, what: str) -> None:
        with self._lock:
            self.counts[what] += 1

    def run(self, name: str, cycle) -> None:
        try:
            while self.going():
                cycle()
                self.count(name)
        except Exception as e:  # a failure is reported, not a crash: the stress goes on to its end elsewhere
            self.errors.append(f"{name}: {type(e).__name__}: {e}")

    def detector(self) -> None:
        import zerocopy

        with zerocopy.Detector(model="face", path="software", tiles=1) as det:
            for n, _ in enumerate(det.run(self.clip)):
                if n == 3:
                    break  # requests still in flight

    def processor(self) -> None:
        import zerocopy

        with zerocopy.Processor(model=str(self.mapper), path="software", nireq=4) as proc:
            for n, _ in enumerate(proc.run(self.clip)):
                if n == 2:
                    break

    def engine(self) -> None:
        from zerocopy.serve.config import CameraConfig
        from zerocopy.serve.engine import Engine

        cam = CameraConfig(name="front", url=str(self.clip), settings={"model": "face", "path": "software"})
        engine = Engine([cam], None, say=lambda _msg: None)
        engine.start()
        until = time.monotonic() + 30
        while engine.cameras()[0].frames < 2 and time.monotonic() < until:
            time.sleep(0.01)
        assert engine.stop(timeout=30.0), "serve's engine did not stop"

    def dropped_in_callback(self) -> None:
        """A queue's owner let go while its callback runs: the callback's thread then holds the last reference."""
        from zerocopy.infer.model import make_core

        RequestQueue = request_queue_class()

        entered, release = threading.Event(), threading.Event()

        class Owner:
            def __init__(self, compiled):
                self.queue = RequestQueue(compiled, 2, self._done)

            def _done(self, request, userdata):
                entered.set()
                release.wait(10)

        owner = Owner(make_core(None).compile_model(str(self.poison), "CPU"))
        rid = owner.queue.get_idle_request_id()
        for tensor in owner.queue[rid].input_tensors:
            tensor.data[...] = 10
        owner.queue.start_async(userdata=rid)
        assert entered.wait(10), "the completion callback never ran"
        del owner
        release.set()
        reuse_freed_memory(0.02)


def reuse_freed_memory(seconds: float) -> None:
    """Allocate and fill blocks of the C heap, of the sizes OpenVINO's small objects have, for `seconds`: memory
    freed under a thread that still uses it is then soon someone else's (numpy's data comes from malloc)."""
    import numpy as np

    until = time.monotonic() + seconds
    while time.monotonic() < until:
        blocks = [np.full(size, 0xA5, np.uint8) for size in range(64, 1024, 24)]
        del blocks


def request_queue_class():
    """`RequestQueue` where it lives (zerocopy/infer/queue.py before issue 41's fix, so the script runs on that
    tree too)."""
    try:
        from zerocopy.infer.requests import RequestQueue
    except ImportError:
        from zerocopy.infer.queue import RequestQueue
    return RequestQueue


def main() -> int:
    args = parse_args()
    faulthandler.enable()
    with tempfile.TemporaryDirectory(prefix="zerocopy-stress-") as tmp:
        stress = Stress(Path(tmp), args.seconds)
        kinds = {"detector": stress.detector, "processor": stress.processor, "engine": stress.engine,
                 "dropped in its callback": stress.dropped_in_callback}
        threads = [threading.Thread(target=stress.run, args=(name, cycle), name=f"{name} {i}")
                   for name, cycle in kinds.items() for i in range(args.threads)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        reaper = getattr(sys.modules.get("zerocopy.infer.requests"), "_REAPER", None)
        if reaper is not None:
            reaper.idle(30)
    done = ", ".join(f"{stress.counts[k]} {k}" for k in kinds)
    for e in stress.errors:
        print(f"error: {e}")
    print(f"{'survived' if not stress.errors else 'FAILED'}: {done} cycles in {args.seconds:g} s")
    return 1 if stress.errors else 0


if __name__ == "__main__":
    sys.exit(main())
