"""zerocopy.doctor on this machine: real probes, a verdict per path, a stable JSON form."""

import json

import av
from conftest import run_cli

from zerocopy.doctor import SCHEMA, _tiny_h264
from zerocopy.refusals import Code


def test_doctor_json_has_a_verdict_for_every_path(capsys):
    assert run_cli("doctor", "--json") == 0
    info = json.loads(capsys.readouterr().out)
    assert info["schema"] == SCHEMA
    for key in ("pyav", "render_nodes", "openvino", "opencl", "native_bridge", "paths"):
        assert key in info
    assert set(info["paths"]) == {"zero-copy", "copy", "software", "baseline"}
    assert info["paths"]["software"] == {"available": True, "reasons": [], "codes": [], "summary": ""}
    codes = {c.value for c in Code}
    for status in info["paths"].values():
        assert set(status) == {"available", "reasons", "codes", "summary"}
        assert status["available"] == (not status["reasons"]) and all(isinstance(r, str) for r in status["reasons"])
        assert len(status["codes"]) == len(status["reasons"]) and set(status["codes"]) <= codes
        assert bool(status["summary"]) == bool(status["reasons"])
    if "vaapi" not in info["pyav"]["hwdevices"]:  # PyPI's PyAV: the VA paths are refused for that, by code
        assert "no-vaapi-in-pyav" in info["paths"]["copy"]["codes"]
        assert "no VA-API in PyAV" in info["paths"]["copy"]["summary"]
    assert info["pyav"]["ffmpeg"]["libavutil"] == ".".join(map(str, av.library_versions["libavutil"]))
    assert "CPU" in info["openvino"]["devices"]
    assert info["native_bridge"]["status"]
    if not info["opencl"]["available"]:
        assert info["opencl"]["detail"]


def test_doctor_text_names_each_section(capsys):
    assert run_cli("doctor") == 0
    out = capsys.readouterr().out
    for word in ("PyAV", "render nodes", "OpenVINO", "OpenCL", "native bridge", "zero-copy", "software"):
        assert word in out


def test_the_va_probe_clip_is_a_real_h264_stream():
    with av.open(_tiny_h264()) as c:
        assert c.streams.video[0].codec_context.name == "h264"
        assert len(list(c.decode(video=0))) == 2
