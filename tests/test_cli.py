"""The command line as a user meets it: bad input, damaged streams, usage errors, Ctrl-C."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import av
import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
from conftest import read_jsonl, run_cli, wait_for_lines

from zerocopy.samples import ClipSpec, write_clip


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


def detect_quiet(*args) -> int:
    return run_cli("detect", *args, "--quiet")


@pytest.fixture
def broken(tmp_path):
    def make(name: str, data: bytes) -> Path:
        p = tmp_path / name
        p.write_bytes(data)
        return p
    return make


@pytest.mark.parametrize("name,data,expect", [
    ("empty.mp4", b"", "empty file"),
    ("random.mp4", np.random.default_rng(0).integers(0, 256, 20000, dtype=np.uint8).tobytes(), "cannot open"),
    ("notes.mp4", b"this is a text file, not a video\n" * 50, "cannot open"),
])
def test_unreadable_inputs_fail_with_one_line(broken, capsys, name, data, expect, face_model_path):
    assert detect_quiet(broken(name, data)) == 1
    assert expect in one_line_error(capsys)


def test_missing_file_and_directory(tmp_path, capsys, face_model_path):
    assert detect_quiet(tmp_path / "nope.mp4") == 1
    assert "no such file" in one_line_error(capsys)
    assert detect_quiet(tmp_path) == 1
    assert "a directory with no video or image files" in one_line_error(capsys)


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


def test_audio_only_file_has_no_video_stream(tmp_path, capsys, face_model_path):
    path = tmp_path / "tone.wav"
    with av.open(str(path), "w") as out:
        s = out.add_stream("pcm_s16le", rate=8000)
        frame = av.AudioFrame.from_ndarray(np.zeros((1, 800), np.int16), format="s16", layout="mono")
        frame.rate = 8000
        out.mux(s.encode(frame))
        out.mux(s.encode(None))
    assert detect_quiet(path) == 1
    assert "no video stream" in one_line_error(capsys)


@pytest.mark.parametrize("args", [
    ["--threshold", "2"], ["--threshold", "x"], ["--nireq", "0"], ["--batch", "-1"], ["--path", "gpu"],
    ["--max-frames", "0"], ["--decode-threads", "-1"], ["--decode-threads", "x"],
])
def test_usage_errors_exit_2(args, clips, capsys):
    path, _ = clips("h264.mp4", ClipSpec(frames=20))
    with pytest.raises(SystemExit) as e:
        run_cli("detect", path, *args)
    assert e.value.code == 2
    assert "Traceback" not in capsys.readouterr().err


def test_no_command_prints_help_and_exits_2(capsys):
    assert run_cli() == 2
    assert "detect" in capsys.readouterr().out


def test_missing_or_broken_model(clips, tmp_path, capsys, broken):
    path, _ = clips("h264.mp4", ClipSpec(frames=20))
    assert detect_quiet(path, "--model", tmp_path / "none.xml") == 1
    assert "neither a catalogue name" in one_line_error(capsys)
    assert detect_quiet(path, "--model", broken("junk.onnx", b"\x00garbage" * 100)) == 1
    assert "cannot read model" in one_line_error(capsys)


def _save(model: ov.Model, path: Path) -> Path:
    ov.save_model(model, path)
    return path


def test_models_the_tool_cannot_feed(clips, tmp_path, capsys):
    path, _ = clips("h264.mp4", ClipSpec(frames=20))
    a = ops.parameter([1, 3, 64, 64], ov.Type.f32, name="a")
    b = ops.parameter([1, 3, 64, 64], ov.Type.f32, name="b")
    two = _save(ov.Model([ops.result(ops.add(a, b))], [a, b]), tmp_path / "two.xml")
    assert detect_quiet(path, "--model", two) == 1
    assert "2 inputs" in one_line_error(capsys)
    v = ops.parameter([1, 10], ov.Type.f32, name="v")
    vec = _save(ov.Model([ops.result(ops.relu(v))], [v]), tmp_path / "vec.xml")
    assert detect_quiet(path, "--model", vec) == 1
    assert "not a 4-D image" in one_line_error(capsys)
    img = ops.parameter([1, 3, 64, 64], ov.Type.f32, name="img")
    cls = _save(ov.Model([ops.result(ops.reduce_mean(img, np.array([2, 3]), False))], [img]), tmp_path / "c.xml")
    assert detect_quiet(path, "--model", cls) == 1
    assert "--decoder" in one_line_error(capsys)


@pytest.mark.parametrize("option", ["--json", "--output", "--report"])
def test_unwritable_outputs_fail_before_any_work(option, clips, tmp_path, capsys):
    path, _ = clips("h264.mp4", ClipSpec(frames=20))
    assert detect_quiet(path, option, tmp_path / "missing-dir" / "out") == 1
    assert "no such directory" in one_line_error(capsys)
    assert detect_quiet(path, option, tmp_path) == 1
    assert "is a directory" in one_line_error(capsys)


def test_bad_labels_file(clips, tmp_path, capsys, face_model_path):
    path, _ = clips("h264.mp4", ClipSpec(frames=20))
    assert detect_quiet(path, "--labels", tmp_path / "labels.txt") == 1
    assert "labels" in one_line_error(capsys)


def test_labels_file_names_the_classes(clips, tmp_path, face_model_path):
    path, _ = clips("h264.mp4", ClipSpec(frames=20))
    labels = tmp_path / "labels.txt"
    labels.write_text("head\n")
    out = tmp_path / "d.jsonl"
    assert detect_quiet(path, "--labels", labels, "--json", out, "--threshold", "0.75") == 0
    names = {d["name"] for line in read_jsonl(out) for d in line["detections"]}
    assert names == {"head"}


# --- damaged streams -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def long_clip(tmp_path_factory):
    path = tmp_path_factory.mktemp("long") / "faststart.mp4"
    truth = write_clip(path, ClipSpec(frames=60), container_options={"movflags": "faststart"})
    return path, truth


@pytest.mark.parametrize("fmt", ["mp4", "matroska", "mpegts"])
def test_truncated_files_are_processed_as_far_as_they_decode(tmp_path, capsys, fmt, face_model_path):
    full = tmp_path / f"full.{fmt}"
    write_clip(full, ClipSpec(frames=60), container_format=fmt,
               container_options={"movflags": "faststart"} if fmt == "mp4" else None)
    cut = tmp_path / f"cut.{fmt}"
    data = full.read_bytes()
    cut.write_bytes(data[: int(len(data) * 0.6)])
    out, report = tmp_path / "d.jsonl", tmp_path / "r.json"
    assert detect_quiet(cut, "--json", out, "--report", report) == 0
    lines = read_jsonl(out)
    assert 10 <= len(lines) < 60
    assert [x["frame"] for x in lines] == list(range(len(lines)))
    err = capsys.readouterr().err
    assert "Traceback" not in err
    if fmt != "mpegts":  # a TS cut between packets can look clean; the others must say so
        assert "damaged stream" in err
        assert json.loads(report.read_text())["inputs"][0]["damage"]["damaged"]


def test_truncated_mp4_without_its_index_is_a_clear_error(tmp_path, capsys, face_model_path):
    full = tmp_path / "moov-at-end.mp4"
    write_clip(full, ClipSpec(frames=30))
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(full.read_bytes()[: full.stat().st_size // 2])
    assert detect_quiet(cut) == 1
    assert "moov atom not found" in one_line_error(capsys)


def test_bit_flips_are_decoded_through_and_reported(long_clip, tmp_path, capsys, face_model_path):
    path, truth = long_clip
    data = bytearray(path.read_bytes())
    rng = np.random.default_rng(7)
    start = len(data) // 10  # past the index, inside the frames
    for i in rng.integers(start, len(data), 60):
        data[i] ^= 0x5A
    bad = tmp_path / "flipped.mp4"
    bad.write_bytes(bytes(data))
    out, report = tmp_path / "d.jsonl", tmp_path / "r.json"
    assert detect_quiet(bad, "--json", out, "--report", report) == 0
    lines = read_jsonl(out)
    assert len(lines) >= 0.9 * len(truth)
    err = capsys.readouterr().err
    assert "Traceback" not in err and "damaged stream" in err
    damage = json.loads(report.read_text())["inputs"][0]["damage"]
    assert damage["decoder_errors"] + damage["packets_failed"] + damage["corrupt_frames"] > 0


# --- Ctrl-C ------------------------------------------------------------------------------------


def test_ctrl_c_leaves_complete_outputs(tmp_path, face_model_path):
    clip = tmp_path / "long.mp4"
    write_clip(clip, ClipSpec(frames=1500, width=320, height=180))  # long enough to be mid-run when signalled
    out, video, report = tmp_path / "d.jsonl", tmp_path / "o.mp4", tmp_path / "r.json"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "zerocopy", "detect", str(clip), "--json", str(out),
                             "--output", str(video), "--report", str(report), "--nireq", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    wait_for_lines(out, 20)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err.decode()
    assert b"Traceback" not in err
    lines = read_jsonl(out)  # every line is complete JSON
    assert 20 <= len(lines) < 1500
    assert [x["frame"] for x in lines] == list(range(len(lines)))
    with av.open(str(video)) as c:
        assert len(list(c.decode(video=0))) == len(lines)
    assert json.loads(report.read_text())["interrupted"] is True


# --- a new user's first hour: short, true, actionable messages (issue 10) ------------------------


def zerocopy_cli(*args, timeout=120, **kw) -> subprocess.CompletedProcess:
    """The real command, in its own process: what a user's terminal shows."""
    return subprocess.run([sys.executable, "-m", "zerocopy", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, **kw)


def assert_clean(err: str, tmp: Path | None = None) -> None:
    """No traceback or leaked noise, and no line over ~200 characters (besides the test's long tmp paths)."""
    for bad in ("Traceback", "internal error", "Exception ignored", "absl::", "Some options were not used"):
        assert bad not in err, err
    short = err.replace(str(tmp), "T") if tmp else err
    assert all(len(line) <= 200 for line in short.splitlines()), err


def test_a_failed_input_prints_its_error_and_no_summary(tmp_path, face_model_path):
    proc = zerocopy_cli("detect", tmp_path / "missing.mp4")
    assert proc.returncode == 1
    assert_clean(proc.stderr, tmp_path)
    assert proc.stderr.strip().splitlines() == [f"zerocopy: {tmp_path / 'missing.mp4'}: no such file"]


def test_the_summary_names_the_main_refusals_and_verbose_all_of_them(clips, face_model_path):
    from zerocopy.probe import gather, refusals

    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    quiet = zerocopy_cli("detect", clip)
    assert quiet.returncode == 0
    assert_clean(quiet.stderr)
    every = [why for reasons in refusals(gather()).values() for why in reasons]
    verbose = zerocopy_cli("detect", clip, "--verbose")
    assert_clean(verbose.stderr.replace(max(every, key=len, default=""), ""))  # the full reasons may be long
    for why in every:
        assert why in verbose.stderr
        assert why not in quiet.stderr or len(why) < 40


def test_openvino_reasons_are_shown_whole_and_tensorflow_logs_stay_out(clips, tmp_path, face_model_path):
    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    text = tmp_path / "notes.pb"
    text.write_text("this is not a model\n")
    proc = zerocopy_cli("detect", clip, "--model", text)
    assert proc.returncode == 1
    assert_clean(proc.stderr, tmp_path)
    assert "Unable to read the model" in proc.stderr and "Available frontends" in proc.stderr
    proc = zerocopy_cli("detect", clip, "--ov-config", "FOO=1")
    assert proc.returncode == 1 and "Unsupported property FOO" in proc.stderr
    assert_clean(proc.stderr)


@pytest.mark.parametrize("option,target,expect", [
    ("--output", "outdir/", "name a video file ending in .mp4"),
    ("--output", "clip.xyz", "name a video file ending in .mp4"),
    ("--json", "/proc/nope/d.jsonl", "cannot write --json /proc/nope/d.jsonl"),
])
def test_outputs_that_cannot_be_written_are_one_clear_line(option, target, expect, clips, face_model_path,
                                                           tmp_path):
    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    proc = zerocopy_cli("detect", clip, option, target, cwd=tmp_path)
    assert proc.returncode == 1
    assert_clean(proc.stderr, tmp_path)
    assert len(proc.stderr.strip().splitlines()) == 1 and expect in proc.stderr, proc.stderr


def test_an_avi_output_is_written_without_mp4_options_leaking(clips, tmp_path, face_model_path):
    clip, truth = clips("h264.mp4", ClipSpec(frames=20))
    proc = zerocopy_cli("detect", clip, "--output", tmp_path / "o.avi")
    assert proc.returncode == 0
    assert_clean(proc.stderr)
    with av.open(str(tmp_path / "o.avi")) as c:
        assert sum(1 for _ in c.decode(video=0)) == len(truth)


def test_json_to_stdout_keeps_the_summary_and_a_closed_pipe_ends_quietly(clips, face_model_path):
    clip, truth = clips("h264.mp4", ClipSpec(frames=20))
    proc = zerocopy_cli("detect", clip, "--json", "-")
    assert proc.returncode == 0 and len(proc.stdout.splitlines()) == len(truth)
    assert f"{len(truth)} frames" in proc.stderr  # only --quiet silences the summary
    long_clip, _ = clips("h264-long.mp4", ClipSpec(frames=150, width=320, height=180))
    p = subprocess.Popen([sys.executable, "-m", "zerocopy", "detect", str(long_clip), "--json", "-"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = p.stdout.readline()  # read one line, then go away like `| head -1`
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait(timeout=60) == 141 and json.loads(first)["frame"] == 0
    assert_clean(err)


def test_two_quick_ctrl_c_end_without_noise(tmp_path, face_model_path):
    clip = tmp_path / "long.mp4"
    write_clip(clip, ClipSpec(frames=600, width=320, height=180))
    out = tmp_path / "d.jsonl"
    for pause in (0.0, 0.01, 0.03, 0.06):
        out.unlink(missing_ok=True)
        proc = subprocess.Popen([sys.executable, "-m", "zerocopy", "detect", str(clip), "--json", str(out)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wait_for_lines(out, 10)
        proc.send_signal(signal.SIGINT)
        time.sleep(pause)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 130, err.decode()
        assert_clean(err.decode())
        assert "zerocopy: interrupted" in err.decode()  # the second Ctrl-C may abort before the summary
        assert [line["frame"] for line in read_jsonl(out)] == list(range(len(read_jsonl(out))))


def test_the_summary_separates_the_video_encoder_from_the_pipeline(clips, tmp_path, face_model_path):
    clip, _ = clips("h264-720p.mp4", ClipSpec(frames=30, width=1280, height=720))
    report = tmp_path / "r.json"
    proc = zerocopy_cli("detect", clip, "--output", tmp_path / "o.mp4", "--report", report)
    assert proc.returncode == 0
    sinks = json.loads(report.read_text())["sinks"]
    assert 0 < sinks["share"] < 1 and sinks["fps_without"] > json.loads(report.read_text())["fps"]
    if sinks["share"] >= 0.2:
        assert "writing the annotated video took" in proc.stderr and "without it: roughly" in proc.stderr


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


def test_a_first_use_says_what_it_downloads_and_how_big(clips, tmp_path):
    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    proc = zerocopy_cli("detect", clip, "--quiet", timeout=300,
                        env=dict(os.environ, ZEROCOPY_CACHE=str(tmp_path / "cache")))
    assert proc.returncode == 0, proc.stderr
    assert "first use of the" in proc.stderr and "downloading" in proc.stderr and " MB)" in proc.stderr
    assert_clean(proc.stderr, tmp_path)


def test_an_output_that_names_an_input_is_refused_before_it_is_destroyed(clips, tmp_path, face_model_path):
    import shutil

    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    mine = tmp_path / "mine.mp4"
    shutil.copy(clip, mine)
    before = mine.read_bytes()
    for option in ("--output", "--json", "--report"):
        proc = zerocopy_cli("detect", mine, option, mine)
        assert proc.returncode == 1 and "it is an input of this run" in proc.stderr, proc.stderr
        assert mine.read_bytes() == before


@pytest.mark.parametrize("consent,sends", [(None, False), ("0", False), ("1", True)])
def test_the_cli_sends_openvino_telemetry_only_to_a_user_who_opted_in(tmp_path, consent, sends):
    """`import openvino` sends a usage event unless opted out; zerocopy's CLI keeps it quiet unless
    the consent file (OpenVINO's `opt_in_out`) says yes. Where it is kept quiet, OpenVINO still
    imports (on its own no-op stand-in); where the user opted in, nothing is imported here (that
    would send the event from this test)."""
    if consent is not None:
        (tmp_path / "intel").mkdir()
        (tmp_path / "intel" / "openvino_telemetry").write_text(consent)
    code = ("import sys; from zerocopy.infer.telemetry import keep_openvino_quiet; keep_openvino_quiet(); "
            "quiet = 'openvino_telemetry' in sys.modules and sys.modules['openvino_telemetry'] is None\n"
            "if quiet:\n    import openvino; assert openvino.convert_model\n"
            "print(not quiet)")
    env = {**os.environ, "HOME": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == str(sends), out.stderr
