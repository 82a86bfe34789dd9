"""Path selection on this machine, for real, through the CLI: PyPI's PyAV has no VA-API, there is no
render node, no GPU, and the native bridge cannot be built for PyAV's FFmpeg. Every refusal must say so."""

import json

import openvino as ov
import pytest
from conftest import run_cli

from zerocopy.budget import default_decode_threads
from zerocopy.probe import gather, refusals
from zerocopy.samples import ClipSpec


def test_auto_ends_on_software_and_names_each_refusal(clips, tmp_path, face_model_path, capsys):
    clip, truth = clips("h264.mp4", ClipSpec(frames=20))
    report = tmp_path / "r.json"
    assert run_cli("detect", clip, "--report", report) == 0
    r = json.loads(report.read_text())
    assert r["path"] == "software" and set(r["refused"]) == {"zero-copy", "copy"}
    facts = gather()
    for path in ("zero-copy", "copy"):
        why = r["refused"][path]
        if "vaapi" not in facts.hwdevices:
            assert "PyAV was built without VA-API" in why
        if not facts.render_nodes:
            assert "no /dev/dri render node" in why
        if facts.bridge != "ok":
            assert "native bridge:" in why
    if not facts.has_gpu:
        assert "OpenVINO sees no GPU" in r["refused"]["zero-copy"]
    assert r["frames"] == len(truth) and r["fps"] > 0 and r["device"] == "CPU"
    assert r["runs_on"] == "decoding and inferring on the CPU"
    for stage in ("decode", "preprocess", "inference", "postprocess"):
        assert r["stages"][stage]["mean_ms"] > 0
    assert r["cpu"]["ms_per_frame"] > 0 and r["peak_rss_mb"] > 0
    assert r["decode_threads"] == default_decode_threads()
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if "path: software" in x)
    assert line.startswith("zerocopy: path: software, decoding and inferring on the CPU (better paths refused: ") \
        and line.endswith(
        "`zerocopy doctor` explains)") and len(line) < 200, line
    assert "ZEROCOPY_FFMPEG_PREFIX" not in err  # advice that cannot work with PyPI's PyAV


@pytest.mark.parametrize("path", ["zero-copy", "copy"])
def test_explicit_gpu_path_exits_1_with_its_reasons_on_one_line(path, clips, capsys):
    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    assert run_cli("detect", clip, "--path", path) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert all(line.startswith(f"zerocopy: the {path} path cannot run here: ") for line in lines), err
    reasons = [line.split(": ", 2)[2] for line in lines]
    assert len(set(reasons)) == len(reasons)
    # one line per reason this machine gives: with a VA-API PyAV and a working bridge (the VA stack
    # root) the render node alone may be left
    expected = refusals(gather()).get(path, [])  # none before starting: the device is refused when opened
    assert len(lines) >= 1 and all(any(r in line for line in lines) for r in expected), (expected, err)


def test_an_absent_device_is_a_clear_error(clips, capsys, face_model_path):
    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    if gather(check_bridge=False).has_gpu:
        pytest.skip(reason="this machine has a GPU: the refusal cannot be observed here")
    assert run_cli("detect", clip, "--device", "GPU", "--quiet", "--path", "software") == 1
    assert "OpenVINO sees no GPU device" in capsys.readouterr().err
    assert run_cli("detect", clip, "--device", "NPU", "--quiet") == 1  # auto: one line, not one per path
    assert capsys.readouterr().err.strip().splitlines() == ["zerocopy: OpenVINO sees no NPU device (it sees "
                                                            f"{', '.join(ov.Core().available_devices)})"]
