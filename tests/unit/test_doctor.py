"""zerocopy.doctor on this machine: real probes, a verdict per path, a stable JSON form."""

import json

import av
from conftest import run_cli

from zerocopy.doctor import SCHEMA, _tiny_h264


def test_doctor_json_has_a_verdict_for_every_path(capsys):
    assert run_cli("doctor", "--json") == 0
    info = json.loads(capsys.readouterr().out)
    assert info["schema"] == SCHEMA
    for key in ("pyav", "render_nodes", "openvino", "opencl", "native_bridge", "paths"):
        assert key in info
    assert set(info["paths"]) == {"zero-copy", "copy", "software", "baseline"}
    assert info["paths"]["software"] == {"available": True, "reasons": []}
    for status in info["paths"].values():
        assert set(status) == {"available", "reasons"}
        assert status["available"] == (not status["reasons"]) and all(isinstance(r, str) for r in status["reasons"])
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
