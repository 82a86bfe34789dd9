"""zerocopy.cli: usage errors and refusals that end a command before any clip is run."""

import json
import os
from pathlib import Path

import av
import numpy as np
import openvino as ov
import openvino.opset13 as ops
import pytest
from conftest import detect_quiet, one_line_error, run_cli

from zerocopy.catalog import CATALOG
from zerocopy.samples import ClipSpec


@pytest.fixture
def broken(tmp_path):
    def make(name: str, data: bytes) -> Path:
        p = tmp_path / name
        p.write_bytes(data)
        return p
    return make


def _save(model: ov.Model, path: Path) -> Path:
    ov.save_model(model, path)
    return path


def test_models_list_and_pull_commands(face_model_path, capsys):
    assert run_cli("models", "list") == 0
    out = capsys.readouterr().out
    for name in CATALOG:
        assert name in out
    assert run_cli("models", "pull", "face") == 0
    assert str(face_model_path) in capsys.readouterr().out
    assert run_cli("models", "pull", "face", "nosuch") == 2  # every name checked before anything is pulled
    captured = capsys.readouterr()
    assert captured.out == "" and "unknown model 'nosuch'" in captured.err


@pytest.mark.parametrize("name,data,expect", [
    ("empty.mp4", b"", "empty file"),
    ("random.mp4", np.random.default_rng(0).integers(0, 256, 20000, dtype=np.uint8).tobytes(), "cannot open"),
    ("notes.mp4", b"this is a text file, not a video\n" * 50, "cannot open"),
    # FFmpeg draws .txt/.nfo files as ANSI art, frame after frame: refused
    ("notes.txt", b"this is a text file, not a video\n" * 200, "not a video: a text file"),
    ("readme.nfo", b"release notes\n" * 300, "not a video: a text file"),
])
def test_unreadable_inputs_fail_with_one_line(broken, capsys, name, data, expect, face_model_path):
    assert detect_quiet(broken(name, data)) == 1
    assert expect in one_line_error(capsys)


def test_missing_file_and_directory(tmp_path, capsys, face_model_path):
    assert detect_quiet(tmp_path / "nope.mp4") == 1
    assert "no such file" in one_line_error(capsys)
    assert detect_quiet("admin:s3cret@127.0.0.1/live") == 1  # a camera URL without its scheme: no password shown
    assert one_line_error(capsys) == "zerocopy: admin:***@127.0.0.1/live: no such file (a URL needs its scheme: rtsp://…)"
    assert detect_quiet("-") == 1
    assert "reading a video from stdin is not supported" in one_line_error(capsys)
    assert detect_quiet(tmp_path) == 1
    assert "a directory with no video or image files" in one_line_error(capsys)


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


@pytest.mark.parametrize("command", [["detect"], ["process"], ["bench"], ["serve"], ["doctor"], ["models", "pull"]])
def test_every_commands_help_shows(command, capsys):
    """argparse formats help texts with %: a setting's text with a bare % would crash --help."""
    with pytest.raises(SystemExit) as e:
        run_cli(*command, "--help")
    assert e.value.code == 0 and "usage:" in capsys.readouterr().out


def test_missing_or_broken_model(clips, tmp_path, capsys, broken):
    path, _ = clips("h264.mp4", ClipSpec(frames=20))
    assert detect_quiet(path, "--model", tmp_path / "none.xml") == 2  # a usage error: nothing to run
    assert "neither a catalogue name" in one_line_error(capsys)
    assert detect_quiet(path, "--model", "text-map") == 2  # a model of another command
    assert "use it with zerocopy process --model text-map" in one_line_error(capsys)
    assert detect_quiet(path, "--postprocess", "yolo") == 2  # a catalogue model's decoding is its own
    assert "face-wide's outputs are decoded as anchor-ssd; --postprocess is for model files" in one_line_error(capsys)
    assert detect_quiet(path, "--model", broken("junk.onnx", b"\x00garbage" * 100)) == 1
    assert "cannot read model" in one_line_error(capsys)


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


def test_outputs_per_input_never_overwrite_an_input(clips, tmp_path, capsys, face_model_path):
    """`--output out.mp4` with two inputs writes out-1.mp4 and out-2.mp4: an input named out-2.mp4 is refused."""
    import shutil

    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    (tmp_path / "ow").mkdir()
    a, second = tmp_path / "ow" / "a.mp4", tmp_path / "ow" / "out-2.mp4"
    shutil.copy(clip, a)
    shutil.copy(clip, second)
    before = second.read_bytes()
    assert detect_quiet(a, second, "--output", tmp_path / "ow" / "out.mp4") == 1
    assert "out-2.mp4, which is an input of this run" in one_line_error(capsys)
    assert second.read_bytes() == before and not (tmp_path / "ow" / "out-1.mp4").exists()


@pytest.mark.parametrize("first,second,name", [("--json", "--report", "x"), ("--output", "--report", "y.mp4"),
                                               ("--json", "--output", "z.mp4")])
def test_outputs_that_name_the_same_file_are_refused(first, second, name, clips, tmp_path, capsys):
    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    assert detect_quiet(clip, first, tmp_path / name, second, tmp_path / name) == 1
    assert "writes the same file" in one_line_error(capsys)
    assert not (tmp_path / name).exists()


@pytest.mark.parametrize("why", ["missing input", "refused path"])
def test_a_run_that_fails_before_its_first_frame_keeps_the_old_results(why, clips, tmp_path, capsys,
                                                                       face_model_path):
    """The report too: a run that fails before its first frame leaves every previous output as it was."""
    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    old, report = tmp_path / "d.jsonl", tmp_path / "r.json"
    old.write_text('{"frame": 0}\n')
    report.write_text('{"frames": 20}\n')
    args = [tmp_path / "missing.mp4"] if why == "missing input" else [clip, "--path", "zero-copy", "--device", "CPU"]
    from zerocopy.probe import gather, refusals

    if why == "refused path" and not refusals(gather()).get("zero-copy"):
        pytest.skip(reason="the zero-copy path runs here")
    assert detect_quiet(*args, "--json", old, "--report", report) == 1
    capsys.readouterr()
    assert old.read_text() == '{"frame": 0}\n' and report.read_text() == '{"frames": 20}\n'
    assert sorted(os.listdir(tmp_path)) == ["d.jsonl", "r.json"]


def test_the_report_of_a_run_that_fails_before_its_first_frame_still_goes_to_stdout(tmp_path, capsys,
                                                                                    face_model_path):
    """Nothing to keep on stdout: `--report -` still says what failed."""
    assert detect_quiet(tmp_path / "missing.mp4", "--report", "-") == 1
    report = json.loads(capsys.readouterr().out)
    assert report["frames"] == 0 and "no such file" in report["inputs"][0]["error"]


def test_an_output_another_run_holds_is_refused(clips, tmp_path, capsys):
    from zerocopy.sinks.files import Target, claim

    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    out = tmp_path / "d.jsonl"
    with claim([Target("--json", str(out), str(out))], []):  # what another running zerocopy holds
        assert detect_quiet(clip, "--json", out) == 1
        assert "another zerocopy run is writing it" in one_line_error(capsys)
    assert not out.exists()


def test_a_planted_lock_symlink_is_refused_in_one_line_and_its_target_untouched(clips, tmp_path, capsys):
    """Issue 26, item 7: `.out.mp4.zerocopy.lock` planted as a link to another file: the run would have written
    its PID into that file."""
    from zerocopy.sinks.files import lock_name

    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    out = tmp_path / "out.mp4"
    os.symlink(victim, lock_name(out))
    assert detect_quiet(clip, "--output", out) == 1
    assert "its lock file" in one_line_error(capsys)
    assert victim.read_text() == "precious\n" and not out.exists()


def test_report_dash_prints_the_report_on_stdout(clips, tmp_path, capsys, monkeypatch, face_model_path):
    import json

    clip, truth = clips("h264.mp4", ClipSpec(frames=20))
    monkeypatch.chdir(tmp_path)
    assert detect_quiet(clip, "--report", "-") == 0
    assert json.loads(capsys.readouterr().out)["frames"] == len(truth)
    assert not (tmp_path / "-").exists()
    assert detect_quiet(clip, "--report", "-", "--json", "-") == 2  # a usage error
    assert "stdout" in one_line_error(capsys)
    assert detect_quiet(clip, "--events", "-", "--json", "-") == 2  # two streams of lines would interleave
    assert "cannot write --events -: --json - writes to stdout too" in one_line_error(capsys)
    assert detect_quiet(clip, "--events", "/dev/stdout", "--report", "-") == 2
    assert "stdout" in one_line_error(capsys)


def test_json_to_dev_stdout_is_stdout(clips, capsys, face_model_path):
    """`--json /dev/stdout` is `-`: opening the name anew was refused for a pipe and truncated a file the
    shell redirected stdout to."""
    clip, truth = clips("h264.mp4", ClipSpec(frames=20))
    assert run_cli("detect", clip, "--model", face_model_path, "--json", "/dev/stdout", "--quiet") == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == len(truth) and json.loads(lines[0])["frame"] == 0


def test_progress_without_a_terminal_is_a_line_now_and_then(capsys):
    from zerocopy.cli.progress import ProgressLines

    bar = ProgressLines("rtsp://admin:s3cret@127.0.0.1/live", 300, every=30.0)
    bar.update(5)
    assert capsys.readouterr().err == ""  # a short run says nothing
    bar.every = bar.next = 0.0
    bar.update(5)
    line = capsys.readouterr().err
    assert line.startswith("zerocopy: rtsp://admin:***@127.0.0.1/live: 10 of 300 frames, ") and "s3cret" not in line
    bar.close()


def test_an_mp4_cut_before_its_index_is_called_cut(clips, tmp_path, capsys, face_model_path):
    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    half = tmp_path / "half.mp4"
    half.write_bytes(Path(clip).read_bytes()[: Path(clip).stat().st_size // 2])
    assert detect_quiet(half) == 1
    assert "moov atom not found): the MP4 is cut short, or still being written" in one_line_error(capsys)


def test_the_path_line_says_where_a_path_decodes_and_infers():
    from zerocopy.paths import where_it_runs

    assert where_it_runs("software", "GPU") == "decoding on the CPU, inferring on the GPU"  # the middle path
    assert where_it_runs("software", "GPU.1") == "decoding on the CPU, inferring on the GPU"
    assert where_it_runs("software", "CPU") == "decoding and inferring on the CPU"
    assert where_it_runs("baseline", "CPU") == "decoding and inferring on the CPU"
    assert where_it_runs("zero-copy", "GPU") == "decoding and inferring on the GPU"
    assert where_it_runs("copy", "CPU") == "decoding on the GPU, inferring on the CPU"
