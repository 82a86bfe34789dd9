"""Path selection on this machine, for real: no VA-API in PyPI's PyAV, no render node, no GPU."""

import json

import pytest
from conftest import run_cli

from zerocopy.errors import PathUnavailable
from zerocopy.paths import choose
from zerocopy.probe import Facts, gather, refusals
from zerocopy.samples import ClipSpec


def test_auto_ends_on_software_with_a_reason_for_each_gpu_path():
    facts = gather()
    choice = choose("auto", facts)
    assert choice.name == "software"
    assert set(choice.refused) == {"zero-copy", "copy"}
    if "vaapi" not in facts.hwdevices:
        assert "without VA-API" in choice.refused["zero-copy"]
    if not facts.render_nodes:
        assert "no /dev/dri render node" in choice.refused["copy"]
    if "GPU" not in facts.ov_devices:
        assert "OpenVINO sees no GPU" in choice.refused["zero-copy"]


@pytest.mark.parametrize("path", ["zero-copy", "copy"])
def test_explicit_gpu_path_fails_with_its_reasons(path, clips, capsys):
    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    assert run_cli("detect", clip, "--path", path) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"zerocopy: the {path} path cannot run here: ")


def test_report_names_the_path_and_why_the_better_ones_did_not_run(clips, tmp_path, face_model_path, capsys):
    clip, truth = clips("h264.mp4", ClipSpec(frames=20))
    report = tmp_path / "r.json"
    assert run_cli("detect", clip, "--report", report) == 0
    r = json.loads(report.read_text())
    assert r["path"] == "software" and set(r["refused"]) == {"zero-copy", "copy"}
    assert r["frames"] == len(truth) and r["fps"] > 0 and r["device"] == "CPU"
    for stage in ("decode", "preprocess", "inference", "postprocess"):
        assert r["stages"][stage]["mean_ms"] > 0
    assert r["cpu"]["ms_per_frame"] > 0 and r["peak_rss_mb"] > 0
    err = capsys.readouterr().err
    assert "path: software (zero-copy refused:" in err


def test_an_absent_device_is_a_clear_error(clips, capsys, face_model_path):
    clip, _ = clips("h264.mp4", ClipSpec(frames=20))
    if "GPU" in gather().ov_devices:
        pytest.skip("this machine has a GPU: the refusal cannot be observed here")
    assert run_cli("detect", clip, "--device", "GPU", "--quiet") == 1
    assert "OpenVINO sees no GPU device" in capsys.readouterr().err


def test_refusal_reasons_follow_the_facts():
    nothing = Facts(("cuda", "qsv", "drm", "amf"), False, (), ("CPU",))
    r = refusals(nothing)
    assert "without VA-API" in r["copy"] and "no /dev/dri" in r["copy"] and "GPU" not in r["copy"]
    assert "OpenVINO sees no GPU" in r["zero-copy"]
    no_filter = Facts(("vaapi",), False, ("/dev/dri/renderD128",), ("CPU", "GPU"))
    assert refusals(no_filter)["zero-copy"] == "PyAV's FFmpeg has no scale_vaapi filter"
    with pytest.raises(PathUnavailable) as e:
        choose("copy", nothing)
    assert set(e.value.reasons) == {"copy"}
