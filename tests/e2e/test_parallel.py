"""Several inputs at once into one compiled model (`--parallel`, `Detector.run(..., parallel=True)`)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections import defaultdict

import av
import pytest
from conftest import read_jsonl, run_cli, streaming, wait_for_lines, wait_until
from faults import write_poison_model, write_undecodable, write_white_clip

import zerocopy
from zerocopy.samples import ClipSpec, write_clip


@pytest.fixture(scope="module")
def three(tmp_path_factory):
    folder = tmp_path_factory.mktemp("parallel")
    paths = []
    for name, frames in (("a.mp4", 30), ("b.mkv", 50), ("c.mp4", 40)):
        write_clip(folder / name, ClipSpec(frames=frames, width=320, height=180))
        paths.append((folder / name, frames))
    return paths


def _by_input(lines):
    frames = defaultdict(list)
    for line in lines:
        frames[(line["input"], line["source"])].append(line["frame"])
    return frames


class _Bar:
    def __init__(self, source, total, position):
        self.source, self.total, self.position, self.n, self.closed = source, total, position, 0, False

    def update(self, k):
        assert not self.closed
        self.n += k

    def close(self):
        self.closed = True


def test_three_inputs_at_once_each_complete_and_in_its_own_order(three, tmp_path, face_model_path):
    out, report, video = tmp_path / "d.jsonl", tmp_path / "r.json", tmp_path / "o.mp4"
    assert run_cli("detect", *[p for p, _ in three], "--parallel", "--json", out, "--report", report,
                   "--output", video, "--quiet") == 0
    lines = read_jsonl(out)
    frames = _by_input(lines)
    assert frames == {(i, str(p)): list(range(n)) for i, (p, n) in enumerate(three)}
    order = [line["input"] for line in lines]
    assert order != sorted(order), "the inputs were not interleaved"
    r = json.loads(report.read_text())
    assert r["frames"] == sum(n for _, n in three)
    for entry, (p, n) in zip(r["inputs"], three, strict=True):
        assert entry["source"] == str(p) and entry["frames"] == n and entry["fps"] > 0 and entry["error"] is None
        with av.open(entry["output"]) as c:
            assert sum(1 for _ in c.decode(video=0)) == n


def test_one_input_failing_does_not_stop_the_others(three, tmp_path, face_model_path):
    bad = write_undecodable(tmp_path / "bad.mkv", frames=30)
    out, report = tmp_path / "d.jsonl", tmp_path / "r.json"
    inputs = [three[0][0], tmp_path / "missing.mp4", bad, three[1][0]]
    assert run_cli("detect", *inputs, "--parallel", "--json", out, "--report", report, "--quiet") == 1
    frames = _by_input(read_jsonl(out))
    assert frames[(0, str(three[0][0]))] == list(range(three[0][1]))
    assert frames[(3, str(three[1][0]))] == list(range(three[1][1]))
    errors = [i["error"] for i in json.loads(report.read_text())["inputs"]]
    assert errors[0] is None and "no such file" in errors[1] and "no frame could be decoded" in errors[2]
    assert errors[3] is None


def test_a_request_failing_for_one_input_ends_that_input_only(three, tmp_path):
    model = write_poison_model(tmp_path / "poison.xml")
    white = write_white_clip(tmp_path / "white.mp4", frames=8)
    with zerocopy.Detector(model=str(model)) as det:
        results = list(det.run([three[0][0], white, three[2][0]], parallel=True, on_error="skip"))
        inputs = det.report()["inputs"]
    assert "inference failed" in inputs[1]["error"]
    counts = defaultdict(int)
    for r in results:
        counts[r.source] += 1
    assert counts[str(three[0][0])] == three[0][1] and counts[str(three[2][0])] == three[2][1]


def test_the_api_runs_in_parallel_and_leaving_early_stops_every_input(three, face_model_path):
    with zerocopy.Detector() as det:
        seen = defaultdict(list)
        for r in det.run([p for p, _ in three], parallel=True):
            seen[r.source].append(r.index)
        assert {s: v for s, v in seen.items()} == {str(p): list(range(n)) for p, n in three}
        for r in det.run([p for p, _ in three], parallel=True):
            if r.index == 5:
                break
        wait_until(lambda: not [t for t in threading.enumerate()
                                if t.name.startswith(("zerocopy-input", "zerocopy-decode"))],
                   what="every input's threads to end")
        assert not [t for t in threading.enumerate() if t.name.startswith(("zerocopy-input", "zerocopy-decode"))]


def test_ctrl_c_stops_every_input_with_valid_outputs(tmp_path, face_model_path):
    clips = []
    for i in range(3):
        clips.append(tmp_path / f"long-{i}.mp4")
        write_clip(clips[-1], ClipSpec(frames=600, width=320, height=180))
    out, video = tmp_path / "d.jsonl", tmp_path / "o.mp4"
    proc = subprocess.Popen([sys.executable, "-m", "zerocopy", "detect", *map(str, clips), "--parallel", "--json",
                             str(out), "--output", str(video)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ, PYTHONUNBUFFERED="1"))
    wait_for_lines(streaming(out, proc.pid), 30)  # JSON Lines stream into the temporary until the end
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    frames = _by_input(read_jsonl(out))
    assert len(frames) == 3
    for (i, _source), got in frames.items():
        assert got == list(range(len(got))) and len(got) < 600
        with av.open(str(tmp_path / f"o-{i + 1}.mp4")) as c:
            assert sum(1 for _ in c.decode(video=0)) == len(got)


def test_each_parallel_input_gets_a_progress_bar_of_its_own(three, tmp_path, face_model_path):
    from zerocopy.api import Detector
    from zerocopy.cli.detect import Outputs, run_detect

    bars: list[_Bar] = []

    def progress(source, total, position):
        bars.append(_Bar(source, total, position))
        return bars[-1]

    with Detector(str(face_model_path)) as det:
        run_detect(det, [str(p) for p, _ in three], Outputs(parallel=True, progress=progress))
    assert sorted(b.position for b in bars) == [0, 1, 2]
    # (Matroska does not store its frame count: that bar counts without a total)
    assert {b.source: (b.n, b.closed) for b in bars} == {str(p): (n, True) for p, n in three}
    assert all(b.total in (None, n) for b, (_, n) in zip(sorted(bars, key=lambda b: b.source), three, strict=True))


def test_decoder_messages_land_in_the_report_of_the_input_that_logged_them(three, tmp_path, face_model_path):
    """FFmpeg's log is process-wide; inputs decoded at once must not take each other's messages."""
    clean, frames = three[0]
    data = bytearray(clean.read_bytes())
    rng = __import__("numpy").random.default_rng(7)
    for i in rng.integers(len(data) // 10, len(data) * 6 // 10, 40):  # the frames, not the index at the end
        data[i] ^= 0x5A
    flipped = tmp_path / "flipped.mp4"
    flipped.write_bytes(bytes(data))
    report = tmp_path / "r.json"
    inputs = [flipped, three[1][0], three[2][0]]
    assert run_cli("detect", *inputs, "--parallel", "--report", report, "--quiet") == 0
    damage = [entry["damage"] for entry in json.loads(report.read_text())["inputs"]]
    assert damage[0]["decoder_errors"] > 0, damage[0]
    assert [d["damaged"] for d in damage[1:]] == [False, False], damage[1:]


@pytest.mark.parametrize("batch", [1, 2])
def test_each_frame_of_a_parallel_run_gets_its_own_detections(clips, face_model_path, tmp_path, batch):
    """Feeders prepare frames ahead of binding: a resizer that reused its buffers too soon gave frame N
    the boxes of frame N+3 (seen on the software path). Inputs run at once must give every frame the
    detections a run of that input alone gives it."""
    import shutil

    clip, truth = clips("parallel-moving.mp4", ClipSpec(frames=40, width=640, height=360, pan=True))
    copies = [str(shutil.copy(clip, tmp_path / f"copy-{i}.mp4")) for i in range(3)]
    with zerocopy.Detector(str(face_model_path), path="software", batch=batch) as det:
        alone = [r.detections.xyxy for r in det.run(str(clip))]
        together = defaultdict(list)
        for r in det.run(copies, parallel=True):
            together[r.source].append(r.detections.xyxy)
    moving = [b[0, 0] for b in alone if len(b)]
    assert len(moving) > len(alone) // 2 and max(moving) - min(moving) > 20  # boxes that tell frames apart
    assert sorted(together) == copies
    for source, got in together.items():
        assert len(got) == len(alone), source
        for i, (boxes, want) in enumerate(zip(got, alone, strict=True)):
            assert boxes.shape == want.shape and (len(want) == 0 or abs(boxes - want).max() < 1.0), (source, i)


def test_an_input_whose_first_frame_fails_inference_ends_alone_even_when_it_answers_first(three, tmp_path):
    """Inputs begin as they answer, so a bad input's frame may be the path's trial: on the CPU that is
    the input's failure (it ends with it) and the next frame, of another input, is tried (CI caught a
    run that died of it)."""
    model = write_poison_model(tmp_path / "poison.xml")
    white = write_white_clip(tmp_path / "white.mp4", frames=8)
    good, frames = three[0]
    for _ in range(3):
        with zerocopy.Detector(model=str(model), device="CPU") as det:
            results = list(det.run([white, good], parallel=True, on_error="skip"))
            inputs = det.report()["inputs"]
        assert "inference failed" in inputs[0]["error"] and inputs[1]["error"] is None
        assert [r.index for r in results if r.input == 1] == list(range(frames))
