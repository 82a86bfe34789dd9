"""The real command in its own process: what a terminal shows, Ctrl-C, pipes, telemetry."""

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import av
import pytest
from conftest import read_jsonl, streaming, wait_for_lines

from zerocopy.samples import ClipSpec, write_clip, write_photo_clip


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


def _start_long_run(tmp_path, frames=1500):
    """A run over a clip long enough to be mid-run when signalled, writing all three outputs."""
    clip = tmp_path / "long.mp4"
    write_clip(clip, ClipSpec(frames=frames, width=320, height=180))
    out, video, report = tmp_path / "d.jsonl", tmp_path / "o.mp4", tmp_path / "r.json"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    proc = subprocess.Popen([sys.executable, "-m", "zerocopy", "detect", str(clip), "--json", str(out),
                             "--output", str(video), "--report", str(report), "--nireq", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    return proc, out, video, report


@pytest.mark.parametrize("sig,code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_ctrl_c_or_sigterm_leaves_complete_outputs(sig, code, tmp_path, face_model_path):
    """SIGTERM (`docker stop`, systemd) stops a run as the first Ctrl-C does; only the exit code differs."""
    proc, out, video, report = _start_long_run(tmp_path)
    wait_for_lines(streaming(out, proc.pid), 20)  # JSON Lines stream into the temporary until the end
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err.decode()
    assert b"Traceback" not in err
    lines = read_jsonl(out)  # every line is complete JSON
    assert 20 <= len(lines) < 1500
    assert [x["frame"] for x in lines] == list(range(len(lines)))
    with av.open(str(video)) as c:
        assert len(list(c.decode(video=0))) == len(lines)
    assert json.loads(report.read_text())["interrupted"] is True
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.jsonl", "long.mp4", "o.mp4", "r.json"]


def test_sigkill_leaves_whole_json_lines_and_a_playable_video_and_the_old_results(tmp_path, face_model_path):
    """A killed run cannot close anything: what it wrote stays in the temporaries (whole JSON Lines, an MP4
    playable up to its last fragment, one every 2 s of video), and the previous results stay in place."""
    (tmp_path / "d.jsonl").write_text("old\n")
    (tmp_path / "o.mp4").write_bytes(b"old")
    proc, out, video, report = _start_long_run(tmp_path)
    temp = streaming(out, proc.pid)
    wait_for_lines(temp, 200)  # 8 s of video at 25 fps: several fragments
    proc.kill()
    proc.communicate(timeout=60)
    lines = read_jsonl(temp)
    assert [x["frame"] for x in lines] == list(range(len(lines)))
    with av.open(str(streaming(video, proc.pid))) as c:
        decoded = sum(1 for _ in c.decode(video=0))
    assert decoded >= len(lines) - 3 * 25 - 10, (decoded, len(lines))  # up to the last fragment (≤ 2 s + in flight)
    assert out.read_text() == "old\n" and video.read_bytes() == b"old" and not report.exists()


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
    ("--output", "/proc/nope.mp4", "cannot write --output /proc/nope.mp4: no such file"),
    ("--json", "/dev/full", "cannot write --json /dev/full: no space left on device"),
    ("--report", "/dev/full", "cannot write --report /dev/full: no space left on device"),
])
def test_outputs_that_cannot_be_written_are_one_clear_line(option, target, expect, clips, face_model_path,
                                                           tmp_path):
    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    proc = zerocopy_cli("detect", clip, option, target, cwd=tmp_path)
    assert proc.returncode == 1
    assert_clean(proc.stderr, tmp_path)
    assert len(proc.stderr.strip().splitlines()) == 1 and expect in proc.stderr, proc.stderr


def test_a_full_disk_is_one_line_and_every_previous_output_stays(tmp_path, face_model_path):
    """A disk that fills up mid-run (a real 150 KB tmpfs): one line naming the output, exit 1, no temporary
    or lock left, and none of the run's outputs renamed into place: each previous file stays as it was."""
    from smalldisk import small_disk

    clip = tmp_path / "long.mkv"
    write_clip(clip, ClipSpec(frames=250, noise=4.0, pan=True))
    previous = {"d.jsonl": '{"frame": 0}\n', "o.mp4": "the previous video", "r.json": '{"frames": 1}\n'}
    with small_disk(tmp_path / "small", "150k") as small:
        for name, text in previous.items():
            (small / name).write_text(text)
        proc = zerocopy_cli("detect", clip, "--json", small / "d.jsonl", "--output", small / "o.mp4",
                            "--report", small / "r.json")
        assert proc.returncode == 1
        assert_clean(proc.stderr, tmp_path)
        assert re.fullmatch(rf"zerocopy: cannot write --(json|output) {small}/(d.jsonl|o.mp4): "
                            r"no space left on device\n", proc.stderr), proc.stderr
        assert {p.name: p.read_text() for p in small.iterdir()} == previous


def test_json_lines_on_a_full_stdout_are_one_line(clips, face_model_path):
    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "zerocopy", "detect", str(clip), "--json", "-"], stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    assert proc.returncode == 1
    assert_clean(proc.stderr)
    assert proc.stderr == "zerocopy: cannot write --json -: no space left on device\n"


def test_a_cache_setting_naming_a_file_is_one_line(clips, tmp_path):
    """`ZEROCOPY_CACHE` naming a file: one line naming the setting (it was "internal error: NotADirectoryError")."""
    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    proc = zerocopy_cli("detect", clip, env=dict(os.environ, ZEROCOPY_CACHE=str(clip)))
    assert proc.returncode == 1
    assert_clean(proc.stderr, tmp_path)
    assert proc.stderr == f"zerocopy: cannot use ZEROCOPY_CACHE={clip}: it is a file, not a folder (name a folder)\n"


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
        wait_for_lines(streaming(out, proc.pid), 10)
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
        import re

        rough = re.search(r"roughly ([0-9.e+]+) fps", proc.stderr).group(1)  # two significant figures, no more
        assert len(rough.replace(".", "").lstrip("0").rstrip("0")) <= 2, rough


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


def test_process_writes_a_readable_video_and_a_map_summary_per_frame(tmp_path):
    """`zerocopy process` in its own process: text-map over a page of text, the video and the JSON Lines."""
    page = tmp_path / "page.mp4"
    write_photo_clip(page, "page", "rocket", 0.5, frames=6)  # a page of text at half the height, moving
    out, lines = tmp_path / "out.mp4", tmp_path / "out.jsonl"
    proc = zerocopy_cli("process", page, "--model", "text-map", "--output", out, "--json", lines)
    assert proc.returncode == 0, proc.stderr
    assert_clean(proc.stderr, tmp_path)
    with av.open(str(out)) as c:
        assert c.streams.video[0].width == 640
        assert sum(1 for _ in c.decode(video=0)) == 6
    records = read_jsonl(lines)
    assert [rec["frame"] for rec in records] == list(range(6))
    for rec in records:
        assert set(rec["map"]) == {"share", "max", "mean"} and rec["detections"] == []
        assert 0.01 < rec["map"]["share"] < 0.2 and rec["map"]["max"] > 0.5  # the page's text: 0.043 measured


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
