"""Path selection on this machine, for real: PyPI's PyAV has no VA-API, there is no render node, no GPU,
and the native bridge cannot be built for PyAV's FFmpeg. Every refusal must say so."""

import json
from fractions import Fraction

import pytest
from conftest import run_cli

from zerocopy.budget import decode_threads
from zerocopy.probe import Facts, gather, refusals, verdicts
from zerocopy.samples import ClipSpec

NOTHING = Facts(("cuda", "qsv", "drm", "amf"), {"scale_vaapi": False, "pad_vaapi": False, "hwdownload": True},
                (), ("CPU",), "the FFmpeg headers found (libavutil 57.28.100) are not those PyAV links")
EVERYTHING = Facts(("vaapi", "drm"), {"scale_vaapi": True, "pad_vaapi": True, "hwdownload": True},
                   ("/dev/dri/renderD128",), ("CPU", "GPU"), "ok")


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
    for stage in ("decode", "preprocess", "inference", "postprocess"):
        assert r["stages"][stage]["mean_ms"] > 0
    assert r["cpu"]["ms_per_frame"] > 0 and r["peak_rss_mb"] > 0
    assert r["decode_threads"] == decode_threads()
    err = capsys.readouterr().err
    line = next(x for x in err.splitlines() if "path: software" in x)
    assert line.startswith("zerocopy: path: software (better paths refused: ") and line.endswith(
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


def test_refusals_follow_the_facts():
    r = {path: "; ".join(why) for path, why in refusals(NOTHING).items()}
    for path in ("zero-copy", "copy"):
        assert "without VA-API" in r[path] and "no /dev/dri" in r[path] and "native bridge" in r[path]
    assert "OpenVINO sees no GPU" in r["zero-copy"] and "GPU" not in r["copy"]
    assert refusals(EVERYTHING) == {}
    no_pad = Facts(**{**EVERYTHING.__dict__, "filters": {"scale_vaapi": True, "pad_vaapi": False,
                                                         "hwdownload": True}})
    assert any("pad_vaapi" in why for why in refusals(no_pad)["zero-copy"])
    assert refusals(no_pad, letterbox=False) == {}


def test_batches_and_cpu_inference_rule_out_zero_copy_only():
    r = refusals(EVERYTHING, batch=4)
    assert set(r) == {"zero-copy"} and "cannot be batched" in r["zero-copy"][0]
    r = refusals(EVERYTHING, device="CPU")
    assert set(r) == {"zero-copy"} and "infers on the GPU" in r["zero-copy"][0]


def test_verdicts_cover_every_path():
    v = verdicts(NOTHING)
    assert set(v) == {"zero-copy", "copy", "software", "baseline"}
    assert v["software"] == "available" and v["zero-copy"].startswith("unavailable: ")
    assert verdicts(EVERYTHING)["zero-copy"] == "available"


def _unconfigurable_graph(frame):
    """A real FFmpeg graph failure: a filter whose output is connected to nothing."""
    import av.filter

    graph = av.filter.Graph()
    src = graph.add_buffer(width=frame.width, height=frame.height, format=frame.format.name, time_base=Fraction(1, 25))
    scale = graph.add("scale", "w=64:h=64")
    src.link_to(scale)
    graph.configure()


def _wrong_layout(frame):
    from zerocopy.bridge import LayoutError

    raise LayoutError("AVFrame layout does not match PyAV's")


@pytest.mark.parametrize("prepare,expected", [(_wrong_layout, "failed on the first frame: AVFrame layout"),
                                              (_unconfigurable_graph, "failed on the first frame: ")])
def test_a_first_frame_the_va_stages_cannot_handle_is_a_refusal_not_a_crash(prepare, expected, clips):
    """`_prime_va` turns what the bridge, the filter graph or the driver raise on the first frame into
    `PathUnavailable` (so `auto` moves on), and closes the input."""
    from zerocopy.decode.pyav import PyAVDecoder
    from zerocopy.errors import PathUnavailable
    from zerocopy.paths import _prime_va, _Stream

    path, _ = clips("h264.mp4", ClipSpec(frames=20))
    decoder = PyAVDecoder(path)
    stream = _Stream(decoder, prepare)
    with pytest.raises(PathUnavailable) as e:
        _prime_va("zero-copy", stream, path)
    assert expected in e.value.reasons["zero-copy"][0]
    assert not decoder._log.active  # closed: FFmpeg's log is no longer captured


def test_doctor_keeps_each_reason_whole_even_with_a_semicolon_inside():
    from zerocopy.probe import path_status

    facts = Facts(**{**NOTHING.__dict__, "bridge": "headers differ; and PyPI's PyAV bundles its FFmpeg"})
    status = path_status(facts)
    assert "native bridge: headers differ; and PyPI's PyAV bundles its FFmpeg" in status["copy"]["reasons"]
    assert not status["copy"]["available"] and status["software"] == {"available": True, "reasons": []}
