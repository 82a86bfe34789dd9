"""zerocopy.doctor on this machine: real probes, a verdict per path, a stable JSON form."""

import json

import av
import pytest
from conftest import run_cli

from zerocopy import doctor
from zerocopy.doctor import SCHEMA, _tiny_h264
from zerocopy.probe import Facts
from zerocopy.refusals import Code


def test_doctor_json_has_a_verdict_for_every_path(capsys):
    assert run_cli("doctor", "--json") == 0
    info = json.loads(capsys.readouterr().out)
    assert info["schema"] == SCHEMA
    for key in ("pyav", "render_nodes", "openvino", "opencl", "native_bridge", "paths"):
        assert key in info
    assert set(info["paths"]) == {"zero-copy", "copy", "software", "baseline"}
    assert info["paths"]["software"] == {"available": True, "reasons": [], "codes": [], "summary": "", "fix": None}
    assert info["best"]["path"] in info["paths"] and info["best"]["words"]
    codes = {c.value for c in Code}
    for status in info["paths"].values():
        assert set(status) == {"available", "reasons", "codes", "summary", "fix"}
        assert (status["fix"] is None) == status["available"]
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


def _status(*codes):
    return {"available": not codes, "codes": [c.value for c in codes], "reasons": [c.value for c in codes],
            "summary": ""}


NODE_OK = {"path": "/dev/dri/renderD128", "intel": True, "access": True}
NODE_LOCKED = {"path": "/dev/dri/renderD128", "intel": True, "access": False}


@pytest.mark.parametrize(("codes", "nodes", "want"), [
    ((Code.NO_VAAPI, Code.NO_RENDER_NODE, Code.NO_BRIDGE, Code.NO_GPU), [], doctor.SETUP_GPU),  # PyPI's PyAV
    ((Code.PYAV_TOO_OLD,), [NODE_OK], doctor.SETUP_GPU),
    ((Code.NO_RENDER_NODE, Code.NO_GPU), [], doctor.NO_NODE),  # after setup-gpu, on a machine without a GPU
    ((Code.VA_DEVICE, Code.NO_GPU), [NODE_LOCKED], doctor.RENDER_GROUP),  # the user is not in `render`
    ((Code.VA_DEVICE,), [NODE_OK], doctor.VA_DRIVER),  # the node opens, no VA display: the media driver
    ((Code.NO_GPU,), [NODE_OK], doctor.OPENCL),  # VA-API works, OpenVINO has no GPU: the OpenCL runtime
    ((Code.NO_GPU,), [NODE_LOCKED], doctor.RENDER_GROUP),
    ((Code.NO_OPENCV,), [], "make setup   (installs OpenCV, the baseline's decoder, into the venv)"),
    ((), [NODE_OK], None),
])
def test_each_refused_path_ends_with_the_one_command_that_changes_it(codes, nodes, want):
    assert doctor.fix(_status(*codes), nodes) == want


def _info(zero=(Code.NO_VAAPI, Code.NO_GPU), copy=(Code.NO_VAAPI,), gpu=None, nodes=()):
    paths = {"zero-copy": _status(*zero), "copy": _status(*copy), "software": _status(), "baseline": _status()}
    for p in paths.values():
        p["fix"] = doctor.fix(p, list(nodes))
    return {"paths": paths, "openvino": {"gpu": gpu}, "render_nodes": list(nodes)}


def test_the_middle_path_is_said_plainly_when_openvino_has_the_gpu_but_the_va_paths_are_refused():
    """Issue 30: decoding on the CPU, inferring on the GPU (what --device auto picks), and how to get further."""
    b = doctor.best(_info(zero=(Code.NO_VAAPI,), gpu="Intel(R) UHD Graphics 770 (iGPU)", nodes=[NODE_OK]))
    assert (b["path"], b["device"]) == ("software", "GPU")
    assert b["words"].startswith("decoding on the CPU, inferring on the GPU (Intel(R) UHD Graphics 770 (iGPU))")
    assert "--device auto" in b["words"] and b["next"] == doctor.SETUP_GPU
    text = doctor.render(_rendered(_info(zero=(Code.NO_VAAPI,), gpu="Intel(R) UHD Graphics 770 (iGPU)",
                                         nodes=[NODE_OK])))
    assert "best here: software, decoding on the CPU, inferring on the GPU" in text
    assert f"  next: {doctor.SETUP_GPU}" in text


def test_an_intel_gpu_openvino_cannot_use_yet_is_one_command_from_the_middle_path():
    b = doctor.best(_info(nodes=[NODE_OK]))
    assert (b["path"], b["device"]) == ("software", "CPU") and "one step away" in b["words"]
    assert b["next"] == doctor.OPENCL
    assert doctor.best(_info(nodes=[NODE_LOCKED]))["next"] == doctor.RENDER_GROUP  # the render group first
    assert doctor.best(_info())["next"] is None  # no GPU at all: nothing to install
    assert doctor.best(_info(zero=(), copy=()))["path"] == "zero-copy"
    copy = doctor.best(_info(zero=(Code.NO_GPU,), copy=(), nodes=[NODE_OK]))
    assert copy["path"] == "copy" and copy["device"] == "CPU" and copy["next"] == doctor.OPENCL


def test_the_hardware_types_of_pypis_ffmpeg_are_explained_not_offered():
    """Issue 30: "its FFmpeg offers: cuda, qsv, drm, amf" read as "Quick Sync is available"."""
    line = doctor.hardware_types_line(["cuda", "qsv", "drm", "amf"])
    assert "not what this machine has" in line and "VA-API (vaapi) only, which this build lacks" in line
    assert "qsv: Intel Quick Sync through oneVPL; zerocopy does not use it" in line
    assert "cuda: NVIDIA; not used by zerocopy" in line
    assert doctor.hardware_types_line(["vaapi", "drm"]).endswith("zerocopy's GPU paths use vaapi, which is there")
    assert "none" in doctor.hardware_types_line([])
    from zerocopy.probe import va_reasons

    why = va_reasons(Facts(hwdevices=("cuda", "qsv"), filters={}, render_nodes=(), ov_devices=("CPU",),
                           bridge="ok"), letterbox=True, download=False)[0]
    assert why == ("PyAV was built without VA-API, the only hardware decoding zerocopy uses (its FFmpeg has cuda, qsv "
                   "instead, none of which zerocopy uses)")
    assert "offers" not in why


def _rendered(info):
    """A full doctor info around `info`'s paths, for render()."""
    full = {"zerocopy": "0", "python": "3", "platform": "Linux",
            "pyav": {"version": "18.1.0", "ffmpeg": {"libavutil": "60", "libavcodec": "62"},
                     "hwdevices": ["cuda", "qsv"], "va_filters": {"scale_vaapi": False}},
            "render_nodes": [], "openvino": {"version": "x", "devices": ["CPU"], "gpu": info["openvino"]["gpu"]},
            "opencl": {"detail": "none", "platforms": []},
            "native_bridge": {"status": "ok", "headers": {"error": "none"}}, "paths": info["paths"]}
    full["best"] = doctor.best(info)
    return full


def test_doctor_text_ends_each_refused_path_with_its_command(capsys):
    assert run_cli("doctor") == 0
    out = capsys.readouterr().out
    info = doctor.collect()
    for name, status in info["paths"].items():
        if status["fix"]:
            assert f"to change it: {status['fix']}" in out, name
    assert "best here: " in out and "its FFmpeg offers" not in out
