"""`zerocopy detect` in-process over real clips: folders, labels, users' own models, audio."""

import json

import av
import numpy as np
import openvino as ov
import pytest
from conftest import detect_quiet, read_jsonl, run_cli
from tinymodels import constant_model

from zerocopy.samples import ClipSpec, write_clip


def test_a_folder_of_clips_is_expanded(clips, tmp_path, face_model_path):
    import shutil

    p1, t1 = clips("h264.mp4", ClipSpec(frames=20))
    p2, t2 = clips("mpeg4.mp4", ClipSpec(codec="mpeg4", frames=12))
    folder = tmp_path / "clips"
    folder.mkdir()
    shutil.copy(p1, folder / "b.mp4")
    shutil.copy(p2, folder / "a.mp4")
    (folder / "notes.txt").write_text("not a video")
    out = tmp_path / "d.jsonl"
    assert detect_quiet(folder, "--json", out) == 0
    sources = [line["source"] for line in read_jsonl(out)]
    assert sources == [str(folder / "a.mp4")] * len(t2) + [str(folder / "b.mp4")] * len(t1)


def test_labels_file_names_the_classes(clips, tmp_path, face_model_path):
    path, _ = clips("h264.mp4", ClipSpec(frames=20))
    labels = tmp_path / "labels.txt"
    labels.write_text("head\n")
    out = tmp_path / "d.jsonl"
    assert detect_quiet(path, "--labels", labels, "--json", out, "--threshold", "0.75") == 0
    names = {d["name"] for line in read_jsonl(out) for d in line["detections"]}
    assert names == {"head"}


def test_a_folder_of_images_and_clips_is_processed(clips, tmp_path, face_model_path):
    import shutil

    from PIL import Image

    from zerocopy.samples import load_photo

    clip, truth = clips("h264.mp4", ClipSpec(frames=20))
    folder = tmp_path / "in"
    folder.mkdir()
    shutil.copy(clip, folder / "a.mp4")
    Image.fromarray(load_photo("astronaut")).save(folder / "b.jpg")
    Image.fromarray(load_photo("astronaut")).save(folder / "c.png")
    out = tmp_path / "d.jsonl"
    assert detect_quiet(folder, "--json", out) == 0
    lines = read_jsonl(out)
    assert [line["source"] for line in lines] == [str(folder / "a.mp4")] * len(truth) + [
        str(folder / "b.jpg"), str(folder / "c.png")]
    assert lines[-1]["detections"], "the astronaut's face"


def test_the_annotated_video_keeps_the_audio_and_the_report_names_each_output(tmp_path, face_model_path):
    from zerocopy.samples import ClipSpec as Spec

    clip = tmp_path / "with-audio.mkv"
    write_clip(clip, Spec(frames=25))
    with av.open(str(clip)) as src, av.open(str(tmp_path / "av.mkv"), "w") as out:  # add a second of tone
        video = out.add_stream_from_template(src.streams.video[0])
        audio = out.add_stream("aac", rate=48000)
        for packet in src.demux(src.streams.video[0]):
            if packet.size:
                packet.stream = video
                out.mux(packet)
        t = np.arange(48000) / 48000
        tone = (0.2 * np.sin(2 * np.pi * 440 * t)).astype(np.float32)[None]
        for i in range(0, 48000, 1024):
            frame = av.AudioFrame.from_ndarray(np.ascontiguousarray(tone[:, i:i + 1024]), format="fltp",
                                               layout="mono")
            frame.rate, frame.pts = 48000, i
            out.mux(audio.encode(frame))
        out.mux(audio.encode(None))
    odd = tmp_path / "odd.mkv"  # VP9 takes odd sizes; H.264 4:2:0 does not
    write_clip(odd, Spec(codec="libvpx-vp9", width=641, height=359, frames=10))
    report = tmp_path / "r.json"
    assert detect_quiet(tmp_path / "av.mkv", odd, "--output", tmp_path / "o.mp4", "--report", report) == 0
    outputs = {i["source"]: i["output"] for i in json.loads(report.read_text())["inputs"]}
    assert outputs == {str(tmp_path / "av.mkv"): str(tmp_path / "o-1.mp4"), str(odd): str(tmp_path / "o-2.mp4")}
    with av.open(outputs[str(tmp_path / "av.mkv")]) as c:
        assert len(c.streams.audio) == 1 and c.streams.audio[0].codec_context.name == "aac"
        assert sum(1 for _ in c.demux(c.streams.audio[0])) > 10
    with av.open(outputs[str(odd)]) as c:  # H.264 4:2:0 needs even sizes: one column and row are cropped
        s = c.streams.video[0]
        assert (s.codec_context.width, s.codec_context.height) == (640, 358)


@pytest.mark.parametrize("kind", ["yolo", "detection-output"])
def test_a_users_own_model_through_the_cli(kind, clips, tmp_path, core):
    """An IR file with no catalogue entry: the decoder is guessed from its output shapes, names come
    from --labels, and boxes land in source pixels."""
    import json

    from zerocopy.samples import ClipSpec

    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    if kind == "yolo":  # 64x64 letterboxed input; one class-1 box centred at (32, 32), 16x8 input pixels
        cand = np.zeros((6, 8), np.float32)  # 4 + 2 classes, 8 candidates
        cand[:, 0] = [32, 32, 16, 8, 0.1, 0.95]
        model, size = constant_model(64, {"out": cand[None]}), (640, 360)
        expected = [(24 - 0) * 10, (28 - 14) * 10, (40 - 0) * 10, (36 - 14) * 10]
    else:  # stretched: normalised box (0.25, 0.5)-(0.75, 1.0)
        rows = np.array([[0, 1, 0.8, 0.25, 0.5, 0.75, 1.0], [-1, 0, 0, 0, 0, 0, 0]], np.float32)[None, None]
        model, size = constant_model(64, {"out": rows}, "NCHW"), (640, 360)
        expected = [160, 180, 480, 360]
    path = tmp_path / f"{kind}.xml"
    ov.save_model(model, path)
    labels = tmp_path / "labels.txt"
    labels.write_text("background\nwidget\n")
    out = tmp_path / "d.jsonl"
    assert run_cli("detect", clip, "--model", path, "--labels", labels, "--json", out, "--quiet") == 0
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(lines) == 20
    for line in lines:
        assert (line["width"], line["height"]) == size
        (det,) = line["detections"]
        assert det["name"] == "widget" and det["label"] == 1
        np.testing.assert_allclose(det["box"], expected, atol=1.0)
